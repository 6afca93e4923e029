// SPDX-License-Identifier: BSD-2-Clause
#include "guest-tests/images/bench/bench.h"

/*
 * The state a Linux guest running `perf record` lives in (issue 30), in two
 * steps, each followed by every SBI and CSR figure again (bench_sbi(true)):
 *   ovf_<name>:  the vCPU has a snapshot area, LCOFIE/STIE/SSIE enabled in
 *                sie, and has taken one counter overflow in VS-mode (a
 *                counter started STEADY_NEAR_TOP below its top, stopped with
 *                RESET in the handler and sip.LCOFIP cleared there, as Linux
 *                does); no counter runs. Every figure should be its fresh
 *                one: an overflow handled and cleared leaves the hypervisor
 *                nothing to do. The calls are made with sstatus.SIE clear,
 *                as Linux makes its PMU calls (perf's callbacks and its
 *                overflow handler run with interrupts off); ovf_sie_<name>:
 *                two with SIE set.
 *   busy_<name>: the same with STEADY_BUSY counters configured and running
 *                (counters 11 and up, above the rows' 3..10), started as
 *                Linux starts them: a sampler of cycles STEADY_PERIOD below
 *                its top (it does not wrap here: only guest cycles count),
 *                counting events from 2^63 + 1.
 */
#define STEADY_NEAR_TOP 10000UL
#define STEADY_PERIOD	1000000000UL
#define STEADY_BUSY	3

static uint64_t steady_area[512] __attribute__((aligned(4096)));
static volatile unsigned long steady_lcofi, steady_stray;
static volatile long steady_ctr = -1;

static void steady_lcofi_handler(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	(void)f;
	steady_lcofi++;
	if (steady_ctr >= 0)
		gt_pmu_release((unsigned long)steady_ctr);
	steady_ctr = -1;
	csr_clear(sip, SIE_LCOFIE);
}

/* No timer is armed and no IPI sent: counted, and quietened */
static void steady_stray_handler(unsigned long irq, struct gt_frame *f)
{
	(void)f;
	steady_stray++;
	if (irq == IRQ_S_TIMER)
		gt_sbi_set_timer(-1ULL);
	csr_clear(sip, SIP_SSIP);
}

/* One overflow of instructions, taken in VS-mode; the counter used, or the SBI error */
static long steady_overflow(void)
{
	long idx = gt_pmu_cfg_idx(0, pl.prog_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTR);
	uint64_t t0;

	if (idx < 0)
		return idx;
	steady_ctr = idx;
	gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -STEADY_NEAR_TOP);
	t0 = gt_rdtime();
	gt_irq_enable();
	/* 100 periods at most: KVM puts instructions on counter 2, which never interrupts */
	while (!steady_lcofi && gt_rdtime() - t0 < 100 * STEADY_NEAR_TOP / ipt)
		;
	gt_irq_disable();
	if (steady_ctr >= 0)
		gt_pmu_release((unsigned long)idx);
	steady_ctr = -1;
	return idx;
}

/* Configure ev on exactly counter i and start it from value: the SBI error, or -100 */
static long busy_start(unsigned long i, unsigned long ev, uint64_t value)
{
	long got = gt_pmu_cfg_idx(i, 1, SBI_PMU_CFG_FLAG_CLEAR_VALUE, ev);
	long e;

	if (got < 0)
		return got;
	if (got != (long)i) {
		gt_pmu_release((unsigned long)got);
		return -100;
	}
	e = gt_pmu_start(i, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, value).error;
	if (e)
		gt_pmu_release(i);
	return e;
}

void bench_steady(void)
{
	static const unsigned long busy_ev[STEADY_BUSY] = {EV_CYCLES, 0x1001b, 0x10021};
	unsigned long busy[STEADY_BUSY], nbusy = 0;
	long snap, idx, busy_err = 0;
	struct call c[MAX_SEQ];

	snap = gt_pmu_snapshot_set((unsigned long)steady_area, 0, 0).error;
	gt_irq_register(IRQ_PMU_OVF, steady_lcofi_handler);
	gt_irq_register(IRQ_S_TIMER, steady_stray_handler);
	gt_irq_register(IRQ_S_SOFT, steady_stray_handler);
	gt_sbi_set_timer(-1ULL);
	csr_set(sie, SIE_LCOFIE | SIE_STIE | SIE_SSIE);
	idx = steady_overflow();
	gt_printf("BENCH-INFO steady snapshot_err=%ld overflow_counter=%ld lcofi=%lu\n", snap, idx,
		  steady_lcofi);

	fig_prefix = "ovf_";
	bench_sbi(true);
	fig_prefix = "ovf_sie_";
	gt_irq_enable();
	c[0] = CALL(SBI_EXT_BASE, SBI_EXT_BASE_GET_SPEC_VERSION, 0, 0, 0, 0, 0);
	bench_seq("base_get_spec_version", c, 1, N_CALLS);
	if (!cfg_on(3, ev_prog)) {
		fig_note = ev_prog != EV_INSTR ? ev_note : NULL;
		c[0] = PMU(SBI_EXT_PMU_COUNTER_START, 3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0,
			   0);
		c[1] = PMU(SBI_EXT_PMU_COUNTER_STOP, 3, 1, 0, 0, 0);
		bench_seq("pmu_start_stop", c, 2, N_CALLS);
		fig_note = NULL;
		gt_pmu_release(3);
	}
	gt_irq_disable();

	/* an event that cannot go on its counter is left out (KVM: cycles on counter 0 only) */
	for (unsigned long i = pl.hw_top, k = 0; i-- > 11 && k < STEADY_BUSY;) {
		long e;

		if (!((pl.prog_mask >> i) & 1))
			continue;
		e = busy_start(i, busy_ev[k], k ? (1UL << 63) + 1 : -STEADY_PERIOD);
		k++;
		if (e)
			busy_err = e;
		else
			busy[nbusy++] = i;
	}
	gt_printf("BENCH-INFO steady busy_counters=%lu err=%ld\n", nbusy, busy_err);
	fig_prefix = "busy_";
	bench_sbi(true);
	fig_prefix = "";
	for (unsigned long i = 0; i < nbusy; i++)
		gt_pmu_release(busy[i]);
	csr_clear(sie, SIE_LCOFIE | SIE_STIE | SIE_SSIE);
	gt_pmu_snapshot_set(~0UL, ~0UL, 0);
	gt_printf("BENCH-INFO steady stray_interrupts=%lu lcofi=%lu\n", steady_stray, steady_lcofi);
}
