// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-overflow: a counter armed near the top and re-armed from the handler,
 * sampling, no LCOFI where none is due (stopped, never started, a host
 * without Sscofpmf), and the snapshot's overflow bit
 */
#include "guest-tests/images/pmu-overflow/pmu-overflow.h"

/* Loads one word from each of 2048 pages per pass, flushing the TLB between passes */
static volatile uint8_t pages[2048 * 4096] __attribute__((aligned(4096)));
unsigned long vs_touch(unsigned long passes)
{
	unsigned long sum = 0;

	for (unsigned long p = 0; p < passes; p++) {
		for (unsigned long i = 0; i < sizeof(pages); i += 4096)
			sum += pages[i];
		asm volatile("sfence.vma" ::: "memory");
	}
	return sum;
}

/*
 * Arm once near the top and re-arm `rearms` times from the handler:
 * exactly rearms + 1 interrupts while the workload runs in U-mode.
 */
void overflow_run(const char *what, unsigned long event, bool via_snapshot, unsigned long rearms,
		  unsigned long (*work)(unsigned long), unsigned long arg, bool in_vs)
{
	char name[64];
	struct sbi_ret r;
	long idx = configure(event, in_vs ? SBI_PMU_CFG_FLAG_SET_UINH : SBI_PMU_CFG_FLAG_SET_SINH);

	gt_snprintf(name, sizeof(name), "%s-configure", what);
	if (!GT_CHECK_CTR(name, idx, 3)) /* a programmable counter */
		return;
	reset_stats();
	rearm_value = -NEAR_TOP;
	rearms_left = rearms;
	ctr = idx;
	if (via_snapshot) {
		shmem[1] = -NEAR_TOP; /* slot 0 relative to base = idx */
		r = gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0);
	} else {
		r = gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE,
				 -NEAR_TOP);
	}
	gt_snprintf(name, sizeof(name), "%s-start", what);
	GT_CHECK_SBI(name, r, SBI_SUCCESS);
	if (in_vs) {
		csr_set(sstatus, 2UL); /* SIE: take the LCOFI in VS-mode */
		work(arg);
		csr_clear(sstatus, 2UL);
	} else
		gt_run_user(work, arg);
	ctr = -1;
	gt_snprintf(name, sizeof(name), "%s-interrupts", what);
	GT_CHECK_EQ(name, nirq, rearms + 1);
	gt_snprintf(name, sizeof(name), "%s-scause-13", what);
	GT_CHECK_EQ(name, bad_scause, 0);
	gt_snprintf(name, sizeof(name), "%s-ovf-bit-in-snapshot", what);
	GT_CHECK_EQ(name, ovf_missing, 0);
	gt_snprintf(name, sizeof(name), "%s-value-wrapped", what);
	GT_CHECK_EQ(name, not_wrapped, 0);
	gt_snprintf(name, sizeof(name), "%s-stop-ok", what);
	GT_CHECK_EQ(name, stop_errors, 0);
	gt_pmu_release((unsigned long)idx);
}

/*
 * A TLB event counted from 0 first (perf stat), then released: the
 * hypervisor may keep its physical counter configured, and the next
 * configuration of the event (overflow_run's, near its top) takes it over
 * without the host. Under -icount that counter must still run with its OF
 * bit set (QEMU quirk tlb-overflow), or QEMU aborts at the wrap.
 */
void counted_first(const char *what, unsigned long event)
{
	char name[64];
	long idx = configure(event, SBI_PMU_CFG_FLAG_SET_UINH);
	unsigned long v;

	gt_snprintf(name, sizeof(name), "%s-counted-first-configure", what);
	if (!GT_CHECK_CTR(name, idx, 3))
		return;
	gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0);
	vs_touch(2);
	gt_pmu_stop((unsigned long)idx, 1, 0);
	v = gt_pmu_read_csr((unsigned long)idx);
	gt_printf("pmu-overflow: %s counted %lu from 0\n", what, v);
	gt_snprintf(name, sizeof(name), "%s-counted-first", what);
	GT_CHECK_GE(name, v, 2 * 2048);
	gt_snprintf(name, sizeof(name), "%s-counted-first-sane", what);
	GT_CHECK_LE(name, v, 2 * 2048 + 64);
	gt_pmu_release((unsigned long)idx);
}

void sampling(unsigned long period, unsigned long loop_n)
{
	unsigned long l = GT_PMU_USER_LOOP_COUNT(loop_n);
	char name[64];
	long idx = configure(EV_INSTRUCTIONS, SBI_PMU_CFG_FLAG_SET_SINH);

	reset_stats();
	rearm_value = -period;
	rearms_left = ~0UL;
	ctr = idx;
	gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -period);
	gt_run_user(gt_pmu_user_loop, loop_n);
	gt_pmu_stop((unsigned long)idx, 1, 0);
	ctr = -1;
	gt_snprintf(name, sizeof(name), "sampling-p%lu-l%lu", period, l);
	GT_CHECK_EQ(name, nirq, l / period);
	GT_CHECK_EQ("sampling-scause-13", bad_scause, 0);
	gt_pmu_release((unsigned long)idx);
}

void no_spurious(void)
{
	long a = configure(EV_INSTRUCTIONS, SBI_PMU_CFG_FLAG_SET_SINH);
	long b = configure(EV_INSTRUCTIONS, 0);
	unsigned long va, vb;

	if (!GT_CHECK_CTR("no-spurious-configure-a", a, 3) ||
	    !GT_CHECK_CTR("no-spurious-configure-b", b, 3))
		return;
	reset_stats();
	/* a: 1,000 below its top, configured again (its value kept), never started again */
	GT_CHECK_SBI("no-spurious-a-start",
		     gt_pmu_start((unsigned long)a, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -1000UL),
		     SBI_SUCCESS);
	GT_CHECK_SBI("no-spurious-a-stop", gt_pmu_stop((unsigned long)a, 1, 0), SBI_SUCCESS);
	GT_CHECK_SBI("no-spurious-a-configured-again",
		     gt_pmu_cfg((unsigned long)a, 1,
				SBI_PMU_CFG_FLAG_SKIP_MATCH | SBI_PMU_CFG_FLAG_SET_SINH,
				EV_INSTRUCTIONS, 0),
		     SBI_SUCCESS);
	/* b: started 1,000 below its top, then stopped */
	GT_CHECK_SBI("no-spurious-b-start",
		     gt_pmu_start((unsigned long)b, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -1000UL),
		     SBI_SUCCESS);
	GT_CHECK_SBI("no-spurious-b-stop", gt_pmu_stop((unsigned long)b, 1, 0), SBI_SUCCESS);
	va = gt_pmu_read_csr((unsigned long)a);
	vb = gt_pmu_read_csr((unsigned long)b);
	GT_CHECK_EQ("no-spurious-a-near-top", va, -1000UL); /* SINH: VS-mode did not count */
	GT_CHECK_GE("no-spurious-b-near-top", vb, -1000UL);
	gt_run_user(gt_pmu_user_loop, 200000);
	GT_CHECK_EQ("no-lcofi-unstarted-or-stopped", nirq, 0);
	GT_CHECK_EQ("no-spurious-a-holds", gt_pmu_read_csr((unsigned long)a), va);
	GT_CHECK_EQ("no-spurious-b-holds", gt_pmu_read_csr((unsigned long)b), vb);
	gt_pmu_release((unsigned long)a);
	gt_pmu_release((unsigned long)b);
}

/* A host without Sscofpmf: a counter wraps, and the guest is told nothing */
void no_overflow(unsigned long hw_mask)
{
	/* counter 2 there: programmable counters are not offered (no filtering) */
	long idx = gt_pmu_cfg_idx(0, hw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRUCTIONS);
	struct sbi_ret r;

	GT_CHECK_EQ("no-sscofpmf-not-in-isa", gt_hart_has_ext(0, "sscofpmf"), 0);
	if (!GT_CHECK_EQ("no-sscofpmf-configure", idx >= 0, 1))
		return;
	reset_stats();
	/* LCOFIE and SIE: an LCOFI raised for the guest would be taken at once */
	csr_set(sie, SIP_LCOFIP);
	csr_set(sstatus, SSTATUS_SIE);
	r = gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -1000UL);
	GT_CHECK_SBI("no-sscofpmf-start", r, SBI_SUCCESS);
	gt_run_user(gt_pmu_user_loop, 10000); /* 20,004 user instructions: it wraps */
	/* what the snapshot must overwrite */
	shmem[0] = shmem[1] = 0x5a5a5a5a5a5a5a5aUL;
	r = gt_pmu_stop((unsigned long)idx, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	csr_clear(sstatus, SSTATUS_SIE);
	GT_CHECK_SBI("no-sscofpmf-stop", r, SBI_SUCCESS);
	GT_CHECK_EQ("no-sscofpmf-no-lcofi", nirq, 0);
	GT_CHECK_BITS("no-sscofpmf-no-lcofi-pending", csr_read(sip), SIP_LCOFIP, 0);
	csr_clear(sie, SIP_LCOFIP);
	GT_CHECK_EQ("no-sscofpmf-bitmap-zero", shmem[0], 0);
	/* wrapped: 20,004 user instructions and the VS code around the loop, less 1,000 */
	GT_CHECK_GE("no-sscofpmf-value-wrapped", shmem[1], 19004);
	GT_CHECK_LE("no-sscofpmf-value-wrapped-bound", shmem[1], 30000);
	gt_pmu_release((unsigned long)idx);
}

/*
 * Counter idx wraps once in VS-mode with SIE off (its LCOFI stays pending)
 * and is stopped with a snapshot: checks <prefix>-start, -stop, -overflowed.
 */
void wrap_once(unsigned long idx, const char *prefix)
{
	struct sbi_ret start, stop;
	char name[64];

	start = gt_pmu_start(idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -NEAR_TOP);
	gt_pmu_user_loop(NEAR_TOP);
	stop = gt_pmu_stop(idx, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	gt_snprintf(name, sizeof(name), "%s-start", prefix);
	GT_CHECK_SBI(name, start, SBI_SUCCESS);
	gt_snprintf(name, sizeof(name), "%s-stop", prefix);
	GT_CHECK_SBI(name, stop, SBI_SUCCESS);
	gt_snprintf(name, sizeof(name), "%s-overflowed", prefix);
	GT_CHECK_EQ(name, shmem[0] & 1, 1);
}

/*
 * SBI: the snapshot's overflow bitmap holds "overflown counters". A counter
 * that overflowed, then was released with STOP(RESET) and configured again
 * for a new event, has not overflowed: its bit must not come back.
 */
void reset_forgets_overflow(void)
{
	long idx = configure(EV_INSTRUCTIONS, SBI_PMU_CFG_FLAG_SET_UINH);
	struct sbi_ret r;

	if (!GT_CHECK_CTR("reset-forgets-ovf-configure", idx, 3))
		return;
	ctr = -1; /* the handler must not consume the overflow */
	wrap_once((unsigned long)idx, "reset-forgets-ovf");
	r = gt_pmu_stop((unsigned long)idx, 1, SBI_PMU_STOP_FLAG_RESET);
	GT_CHECK_SBI("reset-forgets-ovf-reset", r, SBI_ERR_ALREADY_STOPPED);
	csr_clear(sip, SIP_LCOFIP);
	r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_CFG_MATCH, (unsigned long)idx, 1,
			SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTRUCTIONS, 0, 0);
	GT_CHECK_SBI("reset-forgets-ovf-reconfigure", r, SBI_SUCCESS);
	GT_CHECK_EQ("reset-forgets-ovf-same-counter", r.value, (unsigned long)idx);
	shmem[0] = ~0ULL;
	r = gt_pmu_stop((unsigned long)idx, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_SBI("reset-forgets-ovf-take", r, SBI_ERR_ALREADY_STOPPED);
	GT_CHECK_EQ("reset-forgets-ovf-bitmap-zero", shmem[0], 0);
	gt_pmu_release((unsigned long)idx);
}
