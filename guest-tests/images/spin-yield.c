// SPDX-License-Identifier: BSD-2-Clause
/*
 * spin-yield: a vCPU that waits in Zawrs wrs.nto for a store another vCPU
 * must make lets that vCPU run (core/exit.c, sched_yield_spin). vCPU 1
 * spins, counting, until vCPU 0 says go, then sets a flag; vCPU 0 says go
 * while vCPU 1 cannot run (its count stands still) and waits, as Linux's
 * spinlocks and smp_cond_load do (lr.w, then wrs.nto while the word is
 * unchanged), for the flag, counting its waits. vCPU 1 cannot run: it
 * shares vCPU 0's hart (spin-yield), or vCPU 0 counts instructions under
 * exclusive counting (bootargs "count", spin-yield-excl: vCPU 0's hart
 * holds the token, vCPU 1's is parked). With the yield the first wait hands
 * over the hart or the turn; without it vCPU 0 waited through its slice or
 * turn (10 ms), thousands of waits. With bootargs "count-first"
 * (spin-yield-excl-start) vCPU 0 counts before it starts vCPU 1, whose hart
 * parked with nothing to run: the start must still reach it within a turn
 * or two (it waited for as long as vCPU 0 counted).
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("spin-yield");

/* 1 expected: the first wait lets vCPU 1 set the flag; 3 leaves a margin */
#define MAX_WAITS 3

static volatile unsigned int flag;
static volatile unsigned long sec_ready, sec_spins, go;

/* Waits (wrs.nto) until *f is non-zero, or `limit` waits; returns the waits */
static unsigned long wait_flag(volatile unsigned int *f, unsigned long limit)
{
	unsigned long waits = 0;
	unsigned int v;

	while (waits < limit) {
		asm volatile("lr.w %0, (%1)" : "=r"(v) : "r"(f) : "memory");
		if (v)
			break;
		asm volatile(".4byte 0x00d00073" ::: "memory"); /* wrs.nto */
		waits++;
	}
	return waits;
}

static void secondary(unsigned long hartid, unsigned long opaque)
{
	(void)hartid;
	(void)opaque;
	gt_atomic_store(&sec_ready, 1);
	while (!gt_atomic_load(&go))
		gt_atomic_store(&sec_spins, sec_spins + 1);
	__atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
}

/* Count instructions on a counter of ours: its index, or exit */
static long count_instructions(void)
{
	struct gt_pmu_layout pl;
	struct sbi_ret r;
	long idx;

	gt_pmu_layout(&pl);
	idx = gt_pmu_cfg_idx(0, pl.hw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, SBI_PMU_HW_INSTRUCTIONS);
	/* an SBI error is negative: a huge index */
	if (!GT_CHECK_LE("count-cfg", (unsigned long)idx, 63))
		gt_exit();
	/* from here vCPU 1's hart is parked while ours counts */
	r = gt_pmu_start(idx, 1, 0, 0);
	GT_CHECK_SBI("count-start", r, SBI_SUCCESS);
	return idx;
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	bool first = args && !__builtin_strcmp(args, "count-first");
	bool count = first || (args && !__builtin_strcmp(args, "count"));
	unsigned long other = hartid ? 0 : 1, waits, spins;
	uint64_t t0, t1;
	long idx = -1;
	struct sbi_ret r;

	(void)fdt;
	if (!GT_CHECK_EQ("zawrs-in-isa", gt_hart_has_ext(0, "zawrs"), 1))
		gt_exit();
	if (first)
		idx = count_instructions();
	t0 = gt_rdtime();
	r = gt_hart_start(other, secondary, 0);
	GT_CHECK_SBI("start-vcpu1", r, SBI_SUCCESS);
	/* counting first: vCPU 1 runs once a turn of ours (10 ms) ends, at most 1 s is the bound */
	if (!GT_CHECK_EQ("vcpu1-ready", gt_wait_ge(&sec_ready, 1, gt_timebase()), 1))
		gt_exit();
	t1 = gt_rdtime();
	if (first) {
		gt_printf("spin-yield: vCPU 1 started while vCPU 0 counts after %lu us\n",
			  (unsigned long)((t1 - t0) * 1000000 / gt_timebase()));
		GT_CHECK_LE("vcpu1-ready-us", (t1 - t0) * 1000000 / gt_timebase(), 30000);
	} else if (count) {
		idx = count_instructions();
	}
	/* natively vCPU 1 has a hart of its own and runs beside everything below */
	spins = gt_atomic_load(&sec_spins);
	gt_delay_ticks(gt_us_to_ticks(1000));
	if (!gt_native())
		GT_CHECK_EQ("vcpu1-not-running", gt_atomic_load(&sec_spins), spins);
	t0 = gt_rdtime();
	gt_atomic_store(&go, 1);
	waits = wait_flag(&flag, 1000000);
	t1 = gt_rdtime();
	gt_printf("spin-yield: %s: vCPU 1 set the flag after %lu waits, %lu us\n",
		  first	  ? "counting first"
		  : count ? "counting"
			  : "not counting",
		  waits, (unsigned long)((t1 - t0) * 1000000 / gt_timebase()));
	GT_CHECK_EQ("flag-set", flag, 1);
	if (!gt_native())
		GT_CHECK_LE("waits", waits, MAX_WAITS);
	if (count)
		gt_pmu_release(idx);
}
