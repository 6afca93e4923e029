// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench: guest-visible cost of SBI calls, PMU functions, counter CSR reads
 * and vCPU switches, in instructions, for `make bench` (tools/bench.py,
 * docs/performance.md). Runs on pmuvisor and directly on OpenSBI.
 *
 * Under QEMU -icount shift=0 one instruction is one ns of virtual time, so
 * the 10 MHz `time` CSR ticks once per 100 instructions executed on the
 * hart, whatever the mode: guest, hypervisor and firmware alike. A figure
 * is the time of n repetitions minus the time of the same loop without the
 * measured instruction, divided by n. Each interval is taken between tick
 * edges: it starts right after the tick changes, and at its end the number
 * of 3-instruction spins until the next edge is subtracted, so an interval
 * is exact to 3 instructions, not to one tick.
 *
 * The SBI and CSR figures are taken on the fresh vCPU, then again (named
 * ovf_<name>, busy_<name>) in the state a Linux guest running `perf record`
 * lives in: after a counter overflow, with counters running (bench_steady).
 *
 * Output, one line per figure (parsed by tools/bench.py):
 *   BENCH <name> <instructions, 3 decimals> err=<SBI error of the call> n=<n> ...
 *   BENCH-INFO ..., BENCH-SKIP ..., BENCH-DONE
 *
 * Modes, by /chosen/bootargs (natively: none):
 *   (none)          SBI/CSR costs; with a second vCPU, the vCPU switch between
 *                   two vCPUs of this guest using the same counters;
 *   switch-timer    guest A of dts/bench/bench-partition.dts: the vCPU switch
 *   switch-worker   guest B: two guests on one hart with disjoint counters-mask;
 *   switch-timer-shared, switch-worker-shared: the same two guests counting the
 *                   same events on the same counters (dts/bench/bench-shared.dts).
 * The two partition guests share no memory: A prints its intervals
 * (BENCH-SWA), B its run-period records (BENCH-SWB, BENCH-REC) and
 * tools/bench.py computes the switch cost from both, as bench_switch() does.
 */
#include "guest-tests/images/bench/bench.h"

GT_IMAGE("bench");

unsigned long ipt;	 /* instructions per tick: 1e9 / timebase */
struct gt_pmu_layout pl; /* NUM_COUNTERS and COUNTER_GET_INFO */

/* ---------------------------------------------------------- exact timing */

/* Wait for a tick edge; returns the new tick (read at most 3 instructions after the edge) */
uint64_t edge_begin(void)
{
	unsigned long t0, t1;

	for (;;) {
		asm volatile("rdtime %0\n"
			     "1:	rdtime %1\n"
			     "	beq %1, %0, 1b\n"
			     : "=&r"(t0), "=&r"(t1)::"memory");
		if (t1 == t0 + 1)
			return t1;
		/* a vCPU switch inside the spin: try again */
	}
}

int inexact; /* an end spin was interrupted by a vCPU switch */

/* Instructions since edge_begin() returned `start` (plus a constant), exact to 3 */
uint64_t edge_end(uint64_t start, uint64_t *end_tick)
{
	unsigned long t0, t1, spins;

	asm volatile("rdtime %0\n"
		     "	li %2, 0\n"
		     "1:	rdtime %1\n"
		     "	addi %2, %2, 1\n"
		     "	beq %1, %0, 1b\n"
		     : "=&r"(t0), "=&r"(t1), "=&r"(spins)::"memory");
	if (t1 != t0 + 1)
		inexact = 1;
	if (end_tick)
		*end_tick = t1;
	return (t1 - start) * ipt - 3 * spins;
}

/* ---------------------------------------------------------------- output */

/* before every figure's name: "ovf_", "busy_" in the steady state (bench_steady) */
const char *fig_prefix = "";
/* after every figure: the event of the counter-3 figures when not instructions (calls.c) */
const char *fig_note;

void print_figure(const char *name, int64_t ins, unsigned long n, long err, const char *extra)
{
	int64_t milli = (ins * 1000 + (int64_t)n / 2) / (int64_t)n;
	const char *sign = milli < 0 ? "-" : "";

	if (milli < 0)
		milli = -milli;
	gt_printf("BENCH %s%s %s%lu.%03lu err=%ld n=%lu%s%s%s%s\n", fig_prefix, name, sign,
		  (unsigned long)(milli / 1000), (unsigned long)(milli % 1000), err, n,
		  extra ? " " : "", extra ? extra : "", fig_note ? " " : "",
		  fig_note ? fig_note : "");
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_native() ? NULL : gt_fdt_getprop("/chosen", "bootargs", NULL);

	(void)hartid;
	(void)fdt;
	ipt = 1000000000UL / gt_timebase();
	gt_pmu_layout(&pl);
	gt_printf("BENCH-INFO native=%d timebase=%lu insn_per_tick=%lu harts=%lu counters=%lu "
		  "hw_mask=0x%lx fw_mask=0x%lx\n",
		  gt_native() ? 1 : 0, (unsigned long)gt_timebase(), ipt, gt_nr_harts(), pl.num,
		  pl.hw_mask, pl.fw_mask);
	if (args && !__builtin_strncmp(args, "switch-timer", 12)) {
		bench_partition(true, args[12] == '-');
	} else if (args && !__builtin_strncmp(args, "switch-worker", 13)) {
		bench_partition(false, args[13] == '-');
	} else {
		bench_sbi(false);
		bench_steady();
		bench_switch();
	}
	gt_printf("BENCH-DONE\n");
}
