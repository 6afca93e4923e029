// SPDX-License-Identifier: BSD-2-Clause
/*
 * hsm: SBI HSM on a 2-vCPU guest. Start/stop/restart of the second hart with
 * its entry state (a0 = hart id, a1 = opaque, SIE = 0, satp = 0), status
 * transitions, error codes, retentive suspend woken by the timer, the boot
 * hart stopping itself and being restarted by the other one, and finally a
 * non-retentive suspend resuming at a given address. A hart that stops
 * loses its PMU state, as with OpenSBI and KVM: after its restart, the
 * firmware counter it had started is unconfigured and its snapshot area is
 * forgotten.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("hsm");

#define OPAQUE1 0x5a5a1234abcdef01UL
#define OPAQUE2 0x0123456789abcdefUL
#define OPAQUE3 0xfeedface00c0ffeeUL
#define OPAQUE4 0x4444333322221111UL

static volatile unsigned long sec_runs, sec_hartid, sec_opaque, sec_sstatus, sec_satp;
static volatile unsigned long go_stop;
static volatile uint64_t resume_deadline;
static volatile unsigned long boot_seen_stopped = ~0UL, restart_error = ~0UL, restarter_hart;
static volatile unsigned long restart_returned;
/* the secondary's PMU: what it set up on its first run, what it found on the second */
static uint64_t sec_shmem[512] __attribute__((aligned(4096)));
static volatile long sec_fw_cfg = -100, sec_fw_read_after = -100, sec_snap_after = -100;
static volatile unsigned long sec_sip = ~0UL;

static void boot_restarted(unsigned long hartid, unsigned long opaque);

/* On the other hart: wait for the boot hart to stop, start it again */
static void restarter(unsigned long hartid, unsigned long boot)
{
	restarter_hart = hartid;
	boot_seen_stopped =
		(unsigned long)gt_wait_hart_state(boot, SBI_HSM_STATE_STOPPED, 5 * gt_timebase());
	restart_error = (unsigned long)gt_hart_start(boot, boot_restarted, OPAQUE4).error;
	gt_atomic_store(&restart_returned, 1);
}

static void secondary(unsigned long hartid, unsigned long opaque)
{
	struct gt_hart *h = gt_this_hart();
	unsigned long run;

	sec_hartid = hartid;
	sec_opaque = opaque;
	sec_sstatus = h->entry_sstatus;
	sec_satp = h->entry_satp;
	sec_sip = csr_read(sip); /* SIE is clear: what was pending at the start stays so */
	run = gt_atomic_add(&sec_runs, 1) + 1;
	if (run == 1) {
		/* a started firmware counter and a snapshot area, then hart_stop */
		struct gt_pmu_layout pl;

		gt_pmu_layout(&pl);
		/*
		 * Base 0, as Linux asks: OpenSBI before 1.8 (ac16c6b6) looks a
		 * firmware counter up by its bit in the mask, not its index
		 */
		if (pl.fw_first < 64)
			sec_fw_cfg =
				gt_pmu_cfg_idx(0, 1UL << pl.fw_first, SBI_PMU_CFG_FLAG_AUTO_START,
					       GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER));
		gt_pmu_snapshot_set((unsigned long)sec_shmem, 0, 0);
	} else if (run == 2 && sec_fw_cfg >= 0) {
		sec_fw_read_after = gt_sbi3(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_FW_READ,
					    (unsigned long)sec_fw_cfg, 0, 0)
					    .error;
		sec_snap_after =
			gt_pmu_stop((unsigned long)sec_fw_cfg, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT)
				.error;
	}
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
	/* what woke it is still pending, as natively: the SBI timer stays armed */
	GT_CHECK_BITS("nonret-resume-stip-pending", csr_read(sip), SIP_STIP, SIP_STIP);
	gt_sbi_set_timer(-1ULL);
	GT_CHECK_BITS("nonret-resume-stip-cleared", csr_read(sip), SIP_STIP, 0);
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
		    gt_wait_hart_state(other, SBI_HSM_STATE_STOPPED, 5 * sec),
		    SBI_HSM_STATE_STOPPED);

	/* a start address outside guest RAM is rejected and the hart stays stopped */
	if (!gt_native()) {
		r = gt_sbi3(SBI_EXT_HSM, SBI_EXT_HSM_HART_START, other, 0x1000, 0);
		GT_CHECK_SBI("start-invalid-address", r, SBI_ERR_INVALID_ADDRESS);
		r = gt_sbi3(SBI_EXT_HSM, SBI_EXT_HSM_HART_START, other,
			    gt_ram_base() + gt_ram_size(), 0);
		GT_CHECK_SBI("start-address-past-ram", r, SBI_ERR_INVALID_ADDRESS);
		GT_CHECK_EQ("start-invalid-address-stopped", gt_sbi_hart_status(other).value,
			    SBI_HSM_STATE_STOPPED);
	}

	/*
	 * An IPI sent to a stopped hart is not pending when it starts again:
	 * OpenSBI sends none to a stopped hart, KVM's vCPU reset clears its
	 * pending interrupts.
	 */
	r = gt_sbi_send_ipi(1UL, other);
	GT_CHECK_SBI("ipi-to-stopped-ok", r, SBI_SUCCESS);

	/* and starts again with a new opaque */
	r = gt_hart_start(other, secondary, OPAQUE2);
	GT_CHECK_SBI("restart-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("restart-ran", gt_wait_ge(&sec_runs, 2, 5 * sec), 1);
	GT_CHECK_EQ("restart-a0-hartid", sec_hartid, other);
	GT_CHECK_EQ("restart-a1-opaque", sec_opaque, OPAQUE2);
	GT_CHECK_BITS("restart-ipi-sent-while-stopped-dropped", sec_sip, SIP_SSIP, 0);
	GT_CHECK_EQ("restart-status-started", gt_sbi_hart_status(other).value,
		    SBI_HSM_STATE_STARTED);
	gt_atomic_store(&go_stop, 2);
	GT_CHECK_EQ("restart-stopped", gt_wait_hart_state(other, SBI_HSM_STATE_STOPPED, 5 * sec),
		    SBI_HSM_STATE_STOPPED);
	GT_CHECK_EQ("secondary-runs", gt_atomic_load(&sec_runs), 2);
	GT_CHECK_EQ("pmu-fw-counter-configured-before-stop", sec_fw_cfg >= 0, 1);
	GT_CHECK_EQ("pmu-fw-counter-reset-by-stop", sec_fw_read_after, SBI_ERR_INVALID_PARAM);
	GT_CHECK_EQ("pmu-snapshot-forgotten-by-stop", sec_snap_after, SBI_ERR_NO_SHMEM);

	/* a reserved suspend type is rejected */
	r = gt_sbi_hart_suspend(0x12345, 0, 0);
	GT_CHECK_SBI("suspend-reserved-type", r, SBI_ERR_INVALID_PARAM);
	/* a non-retentive suspend resuming outside guest RAM is rejected; the hart runs on */
	if (!gt_native()) {
		r = gt_sbi_hart_suspend(SBI_HSM_SUSPEND_NON_RET_DEFAULT, 0x1000, 0);
		GT_CHECK_SBI("suspend-nonret-invalid-address", r, SBI_ERR_INVALID_ADDRESS);
		r = gt_sbi_hart_suspend(SBI_HSM_SUSPEND_NON_RET_DEFAULT,
					gt_ram_base() + gt_ram_size(), 0);
		GT_CHECK_SBI("suspend-nonret-address-past-ram", r, SBI_ERR_INVALID_ADDRESS);
	}

	/* retentive suspend returns after the timer interrupt becomes pending */
	gt_irq_register(IRQ_S_TIMER, timer_irq);
	gt_irq_disable();
	csr_set(sie, SIE_STIE);
	deadline = gt_rdtime() + 10 * ms;
	gt_sbi_set_timer(deadline);
	for (tries = 0; tries < 100; tries++) {
		/* suspend_type is a uint32_t: the upper half of a0 is not part of it */
		r = gt_sbi3(SBI_EXT_HSM, SBI_EXT_HSM_HART_SUSPEND,
			    0xffffffff00000000UL | SBI_HSM_SUSPEND_RET_DEFAULT, 0, 0);
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

	/*
	 * The boot hart stops itself; the other hart sees it STOPPED and starts
	 * it again at boot_restarted(), which goes on with the test.
	 */
	r = gt_hart_start(other, restarter, hartid);
	GT_CHECK_SBI("restarter-start-ok", r, SBI_SUCCESS);
	r = gt_sbi_hart_stop();
	GT_CHECK_SBI("boot-hart-stop", r, SBI_SUCCESS); /* not reached on success */
}

/* Second part, on the boot hart after it was stopped and restarted */
static void boot_restarted(unsigned long hartid, unsigned long opaque)
{
	uint64_t ms = gt_us_to_ticks(1000);
	struct sbi_ret r;

	GT_CHECK_EQ("boot-restart-a0", hartid, gt_boot_hartid());
	GT_CHECK_EQ("boot-restart-a1", opaque, OPAQUE4);
	GT_CHECK_EQ("boot-seen-stopped", boot_seen_stopped, SBI_HSM_STATE_STOPPED);
	/* the boot hart may run before hart_start has returned to the restarter */
	GT_CHECK_EQ("boot-restart-returned", gt_wait_ge(&restart_returned, 1, 5 * gt_timebase()),
		    1);
	GT_CHECK_EQ("boot-restart-error", restart_error, SBI_SUCCESS);
	GT_CHECK_EQ("restarter-stopped",
		    gt_wait_hart_state(restarter_hart, SBI_HSM_STATE_STOPPED, 5 * gt_timebase()),
		    SBI_HSM_STATE_STOPPED);

	/* non-retentive suspend resumes at gt_secondary_entry -> resumed() */
	gt_irq_register(IRQ_S_TIMER, timer_irq);
	gt_irq_disable();
	csr_set(sie, SIE_STIE);
	gt_harts[hartid].start_fn = resumed;
	resume_deadline = gt_rdtime() + 10 * ms;
	gt_sbi_set_timer(resume_deadline);
	/* a uint32_t in a register, as the RV64 psABI passes one: sign-extended */
	r = gt_sbi3(SBI_EXT_HSM, SBI_EXT_HSM_HART_SUSPEND,
		    (unsigned long)(long)(int32_t)SBI_HSM_SUSPEND_NON_RET_DEFAULT,
		    (unsigned long)gt_secondary_entry, OPAQUE3);
	/* only reached if the suspend failed */
	gt_sbi_set_timer(-1ULL);
	GT_CHECK_SBI("nonret-suspend", r, SBI_SUCCESS);
	gt_exit();
}
