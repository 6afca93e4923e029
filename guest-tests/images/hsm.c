// SPDX-License-Identifier: BSD-2-Clause
/*
 * hsm: SBI HSM on a 2-vCPU guest. Start/stop/restart of the second hart with
 * its entry state (a0 = hart id, a1 = opaque, SIE = 0, satp = 0), status
 * transitions, error codes, retentive suspend woken by the timer, and
 * finally a non-retentive suspend resuming at a given address.
 */
#include "gt.h"

GT_IMAGE("hsm");

#define OPAQUE1 0x5a5a1234abcdef01UL
#define OPAQUE2 0x0123456789abcdefUL
#define OPAQUE3 0xfeedface00c0ffeeUL

static volatile unsigned long sec_runs, sec_hartid, sec_opaque, sec_sstatus, sec_satp;
static volatile unsigned long go_stop;
static volatile uint64_t resume_deadline;

static void secondary(unsigned long hartid, unsigned long opaque)
{
	struct gt_hart *h = gt_this_hart();
	unsigned long run;

	sec_hartid = hartid;
	sec_opaque = opaque;
	sec_sstatus = h->entry_sstatus;
	sec_satp = h->entry_satp;
	run = gt_atomic_add(&sec_runs, 1) + 1;
	/* stay STARTED until the boot hart has looked; then return: hart_stop */
	gt_wait_ge(&go_stop, run, 20 * gt_timebase());
}

static void timer_irq(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	(void)f;
	gt_sbi_set_timer(-1ULL);
}

/* Resumed here from the non-retentive suspend: a fresh entry */
static void resumed(unsigned long hartid, unsigned long opaque)
{
	GT_CHECK_EQ("nonret-resume-a0", hartid, gt_boot_hartid());
	GT_CHECK_EQ("nonret-resume-a1", opaque, OPAQUE3);
	GT_CHECK_BITS("nonret-resume-sie", gt_this_hart()->entry_sstatus, SSTATUS_SIE, 0);
	GT_CHECK_EQ("nonret-resume-satp", gt_this_hart()->entry_satp, 0);
	GT_CHECK_GE("nonret-resume-after-deadline", gt_rdtime(), resume_deadline);
	gt_sbi_set_timer(-1ULL);
	gt_exit();
}

void gt_main(unsigned long hartid, const void *fdt)
{
	uint64_t sec = gt_timebase(), ms = gt_us_to_ticks(1000), deadline;
	unsigned long other = ~0UL, i, tries;
	struct sbi_ret r;

	(void)fdt;
	for (i = 0; i < gt_nr_harts(); i++) {
		if (gt_hart_id_at(i) != hartid && gt_hart_id_at(i) < other)
			other = gt_hart_id_at(i);
	}
	gt_printf("hsm: boot hart %lu, %lu harts, testing hart %lu\n", hartid, gt_nr_harts(),
		  other);
	if (!GT_CHECK_GE("two-harts", gt_nr_harts(), 2))
		gt_exit();

	r = gt_sbi_hart_status(other);
	GT_CHECK_SBI("status-initial-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("status-initial-stopped", r.value, SBI_HSM_STATE_STOPPED);
	r = gt_sbi_hart_status(hartid);
	GT_CHECK_EQ("status-self-started", r.value, SBI_HSM_STATE_STARTED);

	/* start: entry state as the spec says */
	r = gt_hart_start(other, secondary, OPAQUE1);
	GT_CHECK_SBI("start-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("start-ran", gt_wait_ge(&sec_runs, 1, 5 * sec), 1);
	GT_CHECK_EQ("start-a0-hartid", sec_hartid, other);
	GT_CHECK_EQ("start-a1-opaque", sec_opaque, OPAQUE1);
	GT_CHECK_BITS("start-sie-clear", sec_sstatus, SSTATUS_SIE, 0);
	GT_CHECK_EQ("start-satp-zero", sec_satp, 0);
	r = gt_sbi_hart_status(other);
	GT_CHECK_SBI("status-started-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("status-started", r.value, SBI_HSM_STATE_STARTED);

	/* errors */
	r = gt_hart_start(other, secondary, 0);
	GT_CHECK_SBI("start-already-started", r, SBI_ERR_ALREADY_AVAILABLE);
	r = gt_hart_start(hartid, secondary, 0);
	GT_CHECK_SBI("start-self", r, SBI_ERR_ALREADY_AVAILABLE);
	r = gt_hart_start(gt_max_hart_id() + 1, secondary, 0);
	GT_CHECK_SBI("start-invalid-hart", r, SBI_ERR_INVALID_PARAM);
	r = gt_hart_start(-1UL, secondary, 0);
	GT_CHECK_SBI("start-invalid-hart-max", r, SBI_ERR_INVALID_PARAM);
	r = gt_sbi_hart_status(gt_max_hart_id() + 1);
	GT_CHECK_SBI("status-invalid-hart", r, SBI_ERR_INVALID_PARAM);

	/* it stops itself */
	gt_atomic_store(&go_stop, 1);
	GT_CHECK_EQ("status-stopped-after-stop",
		    gt_wait_hart_state(other, SBI_HSM_STATE_STOPPED, 5 * sec), SBI_HSM_STATE_STOPPED);

	/* and starts again with a new opaque */
	r = gt_hart_start(other, secondary, OPAQUE2);
	GT_CHECK_SBI("restart-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("restart-ran", gt_wait_ge(&sec_runs, 2, 5 * sec), 1);
	GT_CHECK_EQ("restart-a0-hartid", sec_hartid, other);
	GT_CHECK_EQ("restart-a1-opaque", sec_opaque, OPAQUE2);
	GT_CHECK_EQ("restart-status-started", gt_sbi_hart_status(other).value,
		    SBI_HSM_STATE_STARTED);
	gt_atomic_store(&go_stop, 2);
	GT_CHECK_EQ("restart-stopped",
		    gt_wait_hart_state(other, SBI_HSM_STATE_STOPPED, 5 * sec), SBI_HSM_STATE_STOPPED);
	GT_CHECK_EQ("secondary-runs", gt_atomic_load(&sec_runs), 2);

	/* a reserved suspend type is rejected */
	r = gt_sbi_hart_suspend(0x12345, 0, 0);
	GT_CHECK_SBI("suspend-reserved-type", r, SBI_ERR_INVALID_PARAM);

	/* retentive suspend returns after the timer interrupt becomes pending */
	gt_irq_register(IRQ_S_TIMER, timer_irq);
	gt_irq_disable();
	csr_set(sie, SIE_STIE);
	deadline = gt_rdtime() + 10 * ms;
	gt_sbi_set_timer(deadline);
	for (tries = 0; tries < 100; tries++) {
		r = gt_sbi_hart_suspend(SBI_HSM_SUSPEND_RET_DEFAULT, 0, 0);
		if (r.error || (csr_read(sip) & SIP_STIP))
			break;
	}
	GT_CHECK_SBI("suspend-ret-ok", r, SBI_SUCCESS);
	GT_CHECK_GE("suspend-ret-after-deadline", gt_rdtime(), deadline);
	GT_CHECK_BITS("suspend-ret-stip-pending", csr_read(sip), SIP_STIP, SIP_STIP);
	gt_printf("hsm: retentive suspend returned %lu time(s) early\n", tries);
	GT_CHECK_EQ("suspend-ret-status", gt_sbi_hart_status(hartid).value, SBI_HSM_STATE_STARTED);
	gt_sbi_set_timer(-1ULL);
	GT_CHECK_BITS("suspend-ret-stip-cleared", csr_read(sip), SIP_STIP, 0);
	gt_irq_enable();

	/* non-retentive suspend resumes at gt_secondary_entry -> resumed() */
	gt_irq_disable();
	csr_set(sie, SIE_STIE);
	gt_harts[hartid].start_fn = resumed;
	resume_deadline = gt_rdtime() + 10 * ms;
	gt_sbi_set_timer(resume_deadline);
	r = gt_sbi_hart_suspend(SBI_HSM_SUSPEND_NON_RET_DEFAULT,
				(unsigned long)gt_secondary_entry, OPAQUE3);
	/* only reached if the suspend failed */
	gt_sbi_set_timer(-1ULL);
	GT_CHECK_SBI("nonret-suspend", r, SBI_SUCCESS);
}
