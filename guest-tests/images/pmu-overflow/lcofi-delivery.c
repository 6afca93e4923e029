// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-overflow: when LCOFI is taken: before a timer interrupt that became
 * pending with it, a stale one, gated by sie.LCOFIE, sip.LCOFIP pending
 * until the handler clears it
 */
#include "guest-tests/images/pmu-overflow/pmu-overflow.h"

/* Busy for t ticks of the time CSR, interrupts as they are */
static void spin_ticks(unsigned long t)
{
	for (unsigned long t0 = gt_rdtime(); gt_rdtime() - t0 < t;)
		;
}

static void set_timer(uint64_t when)
{
	if (sstc)
		csr_write(CSR_STIMECMP_NUM, when);
	else
		gt_sbi_set_timer(when);
}

/* Like Linux: the tick, then its softirqs with interrupts on again */
static void timer_handler(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	(void)f;
	timer_irqs++;
	set_timer(-1ULL);
	csr_set(sstatus, SSTATUS_SIE);
	asm volatile("nop; nop; nop; nop" ::: "memory");
	csr_clear(sstatus, SSTATUS_SIE);
}

/*
 * One overflow PERIOD user instructions into the loop and one timer
 * interrupt d ticks after the start, d swept in steps of one tick across the
 * overflow and the hypervisor's handling of it: in every round both arrive
 * once, and LCOFI is never taken in S-mode.
 */
#define LBT_PERIOD 3000UL
#define LBT_ROUNDS 80UL
void lcofi_before_timer(void)
{
	long idx = configure(EV_INSTRUCTIONS, SBI_PMU_CFG_FLAG_SET_SINH);
	unsigned long rounds_bad = 0;

	if (!GT_CHECK_CTR("lcofi-before-timer-configure", idx, 3))
		return;
	gt_printf("pmu-overflow: lcofi-before-timer: timer through %s\n",
		  sstc ? "stimecmp (Sstc)" : "SBI SET_TIMER");
	gt_irq_register(IRQ_S_TIMER, timer_handler);
	csr_set(sie, SIE_STIE);
	reset_stats();
	for (unsigned long d = 0; d < LBT_ROUNDS; d++) {
		unsigned long before = nirq, timers = timer_irqs;

		rearms_left = 0;
		rearm_value = -LBT_PERIOD;
		ctr = idx;
		gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -LBT_PERIOD);
		set_timer(gt_rdtime() + d);
		/* 20,004 user instructions: both have fired long before the end */
		gt_run_user(gt_pmu_user_loop, 10000);
		ctr = -1;
		set_timer(-1ULL);
		if (nirq != before + 1 || timer_irqs != timers + 1)
			rounds_bad++;
	}
	csr_clear(sie, SIE_STIE);
	gt_pmu_stop((unsigned long)idx, 1, 0);
	GT_CHECK_EQ("lcofi-before-timer-one-of-each", rounds_bad, 0);
	GT_CHECK_EQ("lcofi-before-timer-lcofi-interrupts", nirq, LBT_ROUNDS);
	GT_CHECK_EQ("lcofi-before-timer-timer-interrupts", timer_irqs, LBT_ROUNDS);
	GT_CHECK_EQ("lcofi-before-timer-never-from-s-mode", lcofi_from_s, 0);
	GT_CHECK_EQ("lcofi-before-timer-scause-13", bad_scause, 0);
	gt_pmu_release((unsigned long)idx);
}

/*
 * An overflow in VS-mode with interrupts off, then the counter restarted
 * (Linux does that around a context switch) before interrupts are on again.
 * Where the hypervisor delivers LCOFI by software (sie.LCOFIE reads 0) it
 * drops the interrupt whose cause is gone: delivered, Linux would find no
 * overflow bit and leave its counters stopped. With hvip, sip.LCOFIP stays
 * pending until the guest clears it, as on hardware.
 */
void stale_lcofi(void)
{
	bool software = lcofi_software;
	long idx = configure(EV_INSTRUCTIONS, SBI_PMU_CFG_FLAG_SET_UINH);
	struct sbi_ret r;

	if (!GT_CHECK_CTR("stale-lcofi-configure", idx, 3))
		return;
	reset_stats();
	rearms_left = 0;
	rearm_value = 0;
	wrap_once((unsigned long)idx, "stale-lcofi");
	r = gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0);
	GT_CHECK_SBI("stale-lcofi-restart", r, SBI_SUCCESS);
	ctr = idx;
	csr_set(sstatus, SSTATUS_SIE);
	for (unsigned long t0 = gt_rdtime(); gt_rdtime() < t0 + 1000;) /* 100 us: rechecks */
		;
	csr_clear(sstatus, SSTATUS_SIE);
	ctr = -1;
	GT_CHECK_EQ(software ? "stale-lcofi-software-dropped" : "stale-lcofi-hvip-stays-pending",
		    nirq, software ? 0 : 1);
	gt_pmu_stop((unsigned long)idx, 1, 0);
	gt_pmu_release((unsigned long)idx);
}

/*
 * instret counting VS-mode on a programmable counter, the handler's (no
 * re-arm), statistics reset: its index, or -1 (checks <prefix>-configure)
 */
static long vs_counter(const char *prefix)
{
	long idx = configure(EV_INSTRUCTIONS, SBI_PMU_CFG_FLAG_SET_UINH);
	char name[64];

	gt_snprintf(name, sizeof(name), "%s-configure", prefix);
	if (!GT_CHECK_CTR(name, idx, 3))
		return -1;
	reset_stats();
	rearms_left = 0;
	rearm_value = -NEAR_TOP;
	ctr = idx;
	return idx;
}

/*
 * A counter wraps in VS-mode with SIE set but sie.LCOFIE clear: nothing is
 * taken for 1 ms (it is pending). LCOFIE set, then an SBI call: it is taken
 * by the call's end at the latest, once. (Hardware takes it when LCOFIE is
 * set. QEMU 10 does not look at pending VS interrupts when vsie is written,
 * rmw_vsie64, so on the hvip path it comes at the guest's next exit; the
 * software path looks every 10 us, an exit too.) Before issue 28 the
 * software path delivered it at once, LCOFIE or not.
 */
void lcofie_gates(void)
{
	long idx = vs_counter("lcofie");
	unsigned long held, t0;
	struct sbi_ret r;

	if (idx < 0)
		return;
	csr_clear(sie, SIP_LCOFIP);
	csr_set(sstatus, SSTATUS_SIE);
	r = gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -NEAR_TOP);
	gt_pmu_user_loop(NEAR_TOP); /* VS-mode: it wraps */
	spin_ticks(gt_timebase() / 1000);
	held = nirq;
	csr_set(sie, SIP_LCOFIP);
	gt_sbi_call(SBI_EXT_BASE, SBI_EXT_BASE_GET_SPEC_VERSION, 0, 0, 0, 0, 0, 0);
	for (t0 = gt_rdtime(); !nirq && gt_rdtime() - t0 < gt_timebase() / 1000;)
		;
	spin_ticks(gt_timebase() / 10000); /* 100 us more: no second one */
	csr_clear(sstatus, SSTATUS_SIE);
	ctr = -1;
	GT_CHECK_SBI("lcofie-start", r, SBI_SUCCESS);
	GT_CHECK_EQ("lcofie-clear-not-taken", held, 0);
	GT_CHECK_EQ("lcofie-set-taken-once", nirq, 1);
	GT_CHECK_EQ("lcofie-ovf-bit-in-snapshot", ovf_missing, 0);
	gt_pmu_stop((unsigned long)idx, 1, 0);
	gt_pmu_release((unsigned long)idx);
}

/*
 * hvip path: an overflow in VS-mode with SIE set; the handler finds
 * sip.LCOFIP set and returns the first time without clearing it: the
 * interrupt is taken again at once, the second handler clears it, nothing
 * more. (The hypervisor used to clear it before the handler ran: read 0,
 * taken once.)
 */
void lcofip_stays_pending(void)
{
	long idx = vs_counter("lcofip");
	struct sbi_ret r;

	if (idx < 0)
		return;
	leave_pending = 1;
	csr_set(sstatus, SSTATUS_SIE);
	r = gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -NEAR_TOP);
	gt_pmu_user_loop(2 * NEAR_TOP); /* VS-mode: it wraps once */
	spin_ticks(gt_timebase() / 10000);
	csr_clear(sstatus, SSTATUS_SIE);
	ctr = -1;
	GT_CHECK_SBI("lcofip-start", r, SBI_SUCCESS);
	GT_CHECK_EQ("lcofip-set-in-handler", lcofip_seen, 2);
	GT_CHECK_EQ("lcofip-taken-until-cleared", nirq, 2);
	GT_CHECK_EQ("lcofip-cleared-by-guest", csr_read(sip) & SIP_LCOFIP, 0);
	gt_pmu_stop((unsigned long)idx, 1, 0);
	gt_pmu_release((unsigned long)idx);
}
