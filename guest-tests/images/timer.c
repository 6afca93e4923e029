// SPDX-License-Identifier: BSD-2-Clause
/*
 * timer: SBI TIME set_timer delivers an S timer interrupt (scause 5) no
 * earlier than the deadline, set_timer(-1) cancels, a later call replaces an
 * earlier one; the interrupt also arrives in U-mode; with Sstc, stimecmp
 * written directly works as well.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("timer");

#define CSR_STIMECMP_NUM 0x14d

static volatile unsigned long fired;
static volatile uint64_t fired_time;
static volatile unsigned long fired_cause;
static volatile bool sstc_mode;

static void timer_irq(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	fired_time = gt_rdtime();
	fired_cause = f->scause;
	if (sstc_mode)
		csr_write(CSR_STIMECMP_NUM, -1UL);
	else
		gt_sbi_set_timer(-1ULL);
	gt_atomic_add(&fired, 1);
}

static unsigned long user_spin(unsigned long arg)
{
	unsigned long i;

	for (i = 0; i < 400000000UL && gt_atomic_load(&fired) == arg; i++)
		;
	return gt_atomic_load(&fired) == arg + 1 ? 0x600d : 0xbad;
}

/* WFI in U-mode: an illegal instruction, as natively (with S-mode), so it returns at once */
static unsigned long user_wfi(unsigned long arg)
{
	(void)arg;
	asm volatile("wfi");
	return 0x600d;
}

void gt_main(unsigned long hartid, const void *fdt)
{
	uint64_t t0, t1, deadline, ms = gt_us_to_ticks(1000), sec = gt_us_to_ticks(1000000);
	unsigned long n, i;
	struct sbi_ret r;

	(void)fdt;
	gt_printf("timer: timebase %lu Hz\n", (unsigned long)gt_timebase());
	GT_CHECK_GE("timebase-nonzero", gt_timebase(), 1000);

	t0 = gt_rdtime();
	gt_delay_ticks(10);
	t1 = gt_rdtime();
	GT_CHECK_GE("time-advances", t1, t0 + 10);

	gt_irq_register(IRQ_S_TIMER, timer_irq);
	csr_set(sie, SIE_STIE);
	gt_irq_enable();

	/* 1: SBI set_timer 10 ms ahead, polled */
	deadline = gt_rdtime() + 10 * ms;
	r = gt_sbi_set_timer(deadline);
	GT_CHECK_SBI("sbi-set-timer-ok", r, SBI_SUCCESS);
	gt_wait_ge(&fired, 1, deadline - gt_rdtime() + 2 * sec);
	GT_CHECK_EQ("sbi-timer-fired", gt_atomic_load(&fired), 1);
	GT_CHECK_EQ("sbi-timer-scause", fired_cause, SCAUSE_IRQ | IRQ_S_TIMER);
	GT_CHECK_GE("sbi-timer-not-early", fired_time, deadline);
	GT_CHECK_LE("sbi-timer-latency", fired_time, deadline + sec);
	GT_CHECK_BITS("sbi-timer-stip-cleared", csr_read(sip), SIP_STIP, 0);
	if (gt_atomic_load(&fired) != 1)
		gt_exit(); /* no timer interrupt: WFI below could wait forever */

	/* 2: the same with WFI */
	deadline = gt_rdtime() + 5 * ms;
	gt_sbi_set_timer(deadline);
	gt_wfi_wait_ge(&fired, 2, 2 * sec);
	GT_CHECK_EQ("wfi-timer-fired", gt_atomic_load(&fired), 2);
	GT_CHECK_GE("wfi-timer-not-early", fired_time, deadline);

	/* 3: set_timer(-1) cancels a pending deadline */
	/* (interrupts masked so that host delays cannot race the cancel) */
	gt_irq_disable();
	gt_sbi_set_timer(gt_rdtime() + 2 * ms);
	r = gt_sbi_set_timer(-1ULL);
	gt_irq_enable();
	GT_CHECK_SBI("cancel-ok", r, SBI_SUCCESS);
	gt_delay_ticks(20 * ms);
	GT_CHECK_EQ("cancel-no-interrupt", gt_atomic_load(&fired), 2);
	GT_CHECK_BITS("cancel-stip-clear", csr_read(sip), SIP_STIP, 0);

	/* 4: a far-future deadline also clears it */
	gt_irq_disable();
	gt_sbi_set_timer(gt_rdtime() + 2 * ms);
	gt_sbi_set_timer(gt_rdtime() + 1000 * sec);
	gt_irq_enable();
	gt_delay_ticks(20 * ms);
	GT_CHECK_EQ("far-future-no-interrupt", gt_atomic_load(&fired), 2);

	/* 5: a later call replaces an earlier one (10 s -> 5 ms) */
	gt_irq_disable();
	t0 = gt_rdtime();
	gt_sbi_set_timer(t0 + 10 * sec);
	deadline = gt_rdtime() + 5 * ms;
	gt_sbi_set_timer(deadline);
	gt_irq_enable();
	gt_wait_ge(&fired, 3, 3 * sec);
	GT_CHECK_EQ("reprogram-fired", gt_atomic_load(&fired), 3);
	GT_CHECK_GE("reprogram-not-early", fired_time, deadline);
	GT_CHECK_LE("reprogram-not-late", fired_time, t0 + 5 * sec);

	/* 6: a deadline in the past fires at once */
	gt_sbi_set_timer(1);
	gt_wait_ge(&fired, 4, sec);
	GT_CHECK_EQ("past-deadline-fired", gt_atomic_load(&fired), 4);

	/* 7: the interrupt arrives while running in U-mode */
	n = gt_atomic_load(&fired);
	gt_sbi_set_timer(gt_rdtime() + 5 * ms);
	GT_CHECK_EQ("user-timer-ret", gt_run_user(user_spin, n), 0x600d);
	GT_CHECK_EQ("user-timer-fired", gt_atomic_load(&fired), n + 1);
	GT_CHECK_EQ("user-timer-scause", fired_cause, SCAUSE_IRQ | IRQ_S_TIMER);

	/* 7b: WFI in U-mode is illegal, the instruction in stval: it does not wait */
	gt_expect_trap(EXC_ILLEGAL_INSN);
	GT_CHECK_EQ("user-wfi-ret", gt_run_user(user_wfi, 0), 0x600d);
	GT_CHECK_EQ("user-wfi-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	GT_CHECK_EQ("user-wfi-stval", gt_this_hart()->trapped_stval, 0x10500073UL);
	GT_CHECK_EQ("user-wfi-from-u", gt_this_hart()->trapped_spp, 0);

	/* 8: WFI with sstatus.SIE = 0 still wakes up on a pending, enabled interrupt */
	n = gt_atomic_load(&fired);
	gt_irq_disable();
	deadline = gt_rdtime() + 5 * ms;
	gt_sbi_set_timer(deadline);
	for (i = 0; i < 1000 && !(csr_read(sip) & SIP_STIP); i++)
		gt_wfi();
	GT_CHECK_BITS("wfi-sie-off-stip-pending", csr_read(sip), SIP_STIP, SIP_STIP);
	GT_CHECK_GE("wfi-sie-off-after-deadline", gt_rdtime(), deadline);
	GT_CHECK_EQ("wfi-sie-off-no-trap", gt_atomic_load(&fired), n);
	gt_irq_enable();
	/* enabling interrupts takes it at once */
	GT_CHECK_EQ("wfi-sie-off-taken", gt_atomic_load(&fired), n + 1);
	gt_printf("timer: WFI with SIE off returned after %lu early wake-up(s)\n", i);

	/* 9: Sstc: stimecmp written directly */
	if (gt_hart_has_ext(hartid, "sstc")) {
		gt_printf("timer: cpu lists sstc, testing stimecmp\n");
		n = gt_atomic_load(&fired);
		sstc_mode = true;
		deadline = gt_rdtime() + 5 * ms;
		/*
		 * Interrupts off until it is read back: a vCPU switch between the
		 * write and the read can outlast the deadline (10 ms slices among
		 * the 5 guests of many-guests), and the handler writes UINT64_MAX.
		 */
		gt_irq_disable();
		csr_write(CSR_STIMECMP_NUM, deadline);
		GT_CHECK_EQ("sstc-readback", csr_read(CSR_STIMECMP_NUM), deadline);
		gt_irq_enable();
		gt_wfi_wait_ge(&fired, n + 1, 2 * sec);
		GT_CHECK_EQ("sstc-fired", gt_atomic_load(&fired), n + 1);
		GT_CHECK_GE("sstc-not-early", fired_time, deadline);
		GT_CHECK_EQ("sstc-scause", fired_cause, SCAUSE_IRQ | IRQ_S_TIMER);
		GT_CHECK_BITS("sstc-stip-cleared", csr_read(sip), SIP_STIP, 0);
		/* past value: pending at once, far future: cleared */
		gt_irq_disable();
		csr_write(CSR_STIMECMP_NUM, 0);
		gt_delay_ticks(ms);
		GT_CHECK_BITS("sstc-past-pending", csr_read(sip), SIP_STIP, SIP_STIP);
		csr_write(CSR_STIMECMP_NUM, -1UL);
		GT_CHECK_BITS("sstc-future-clear", csr_read(sip), SIP_STIP, 0);
		gt_irq_enable();
		GT_CHECK_EQ("sstc-masked-no-interrupt", gt_atomic_load(&fired), n + 1);
		/* SBI set_timer still works after direct use */
		sstc_mode = false;
		deadline = gt_rdtime() + 5 * ms;
		gt_sbi_set_timer(deadline);
		gt_wfi_wait_ge(&fired, n + 2, 2 * sec);
		GT_CHECK_EQ("sbi-after-sstc-fired", gt_atomic_load(&fired), n + 2);
		GT_CHECK_GE("sbi-after-sstc-not-early", fired_time, deadline);
	} else {
		gt_printf("timer: cpu does not list sstc, stimecmp not tested\n");
	}
	csr_clear(sie, SIE_STIE);
}
