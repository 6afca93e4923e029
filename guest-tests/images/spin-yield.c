// SPDX-License-Identifier: BSD-2-Clause
/*
 * spin-yield: a vCPU that waits in Zawrs wrs.nto for a store another vCPU
 * must make lets that vCPU run (core/exit.c, sched_yield_spin). vCPU 1
 * spins until vCPU 0 says go, then sets a flag; vCPU 0 says go while vCPU 1
 * cannot run and waits, as Linux's spinlocks and smp_cond_load do (lr.w,
 * then wrs.nto while the word is unchanged), for the flag, counting its
 * waits. vCPU 1 cannot run: it shares vCPU 0's hart (spin-yield), or vCPU 0
 * counts instructions under exclusive counting (bootargs "count",
 * spin-yield-excl: vCPU 0's hart holds the token, vCPU 1's is parked). With
 * the yield the first wait hands over the hart or the token; without it
 * vCPU 0 waited through its slice or turn (10 ms), thousands of waits.
 * Skipped when the guest ISA has no zawrs.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("spin-yield");

/* More than the first wait, its return and one more: the flag was set meanwhile */
#define MAX_WAITS 3

static volatile unsigned int flag;
static volatile unsigned long sec_hart = ~0UL, sec_ready, go;

static bool isa_has(const char *ext)
{
	unsigned int len = 0;
	const char *p = gt_fdt_getprop("/cpus/cpu@0", "riscv,isa-extensions", &len);
	const char *end = p ? p + len : NULL;

	for (; p && p < end; p += __builtin_strlen(p) + 1)
		if (!__builtin_strcmp(p, ext))
			return true;
	return false;
}

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
	(void)opaque;
	sec_hart = hartid;
	gt_atomic_store(&sec_ready, 1);
	while (!gt_atomic_load(&go))
		;
	__atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	bool count = args && !__builtin_strcmp(args, "count");
	unsigned long other = hartid ? 0 : 1, waits;
	uint64_t t0, t1;
	long idx = -1;
	struct gt_pmu_layout pl;
	struct sbi_ret r;

	(void)fdt;
	if (!isa_has("zawrs")) {
		gt_printf("spin-yield: the guest ISA has no zawrs: nothing to check\n");
		gt_exit();
	}
	/* wrs.sto, the short wait, completes too (an exception would end the test) */
	asm volatile(".4byte 0x01d00073" ::: "memory");
	r = gt_hart_start(other, secondary, 0);
	GT_CHECK_SBI("start-vcpu1", r, SBI_SUCCESS);
	if (!GT_CHECK_EQ("vcpu1-ready", gt_wait_ge(&sec_ready, 1, gt_timebase()), 1))
		gt_exit();
	if (count) {
		gt_pmu_layout(&pl);
		idx = gt_pmu_cfg_idx(0, pl.hw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE,
				     SBI_PMU_HW_INSTRUCTIONS);
		/* an SBI error is negative: a huge index */
		if (!GT_CHECK_LE("count-cfg", (unsigned long)idx, 63))
			gt_exit();
		/* from here vCPU 1's hart is parked while ours counts */
		r = gt_pmu_start(idx, 1, 0, 0);
		GT_CHECK_SBI("count-start", r, SBI_SUCCESS);
	}
	t0 = gt_rdtime();
	gt_atomic_store(&go, 1);
	waits = wait_flag(&flag, 1000000);
	t1 = gt_rdtime();
	gt_printf("spin-yield: %s: vCPU 1 set the flag after %lu waits, %lu us\n",
		  count ? "counting" : "not counting", waits,
		  (unsigned long)((t1 - t0) * 1000000 / gt_timebase()));
	GT_CHECK_EQ("flag-set", flag, 1);
	GT_CHECK_EQ("vcpu1-ran", sec_hart, other);
	if (gt_native()) /* harts of their own: vCPU 1 runs beside the waits */
		gt_printf("spin-yield: native: waits not checked\n");
	else
		GT_CHECK_LE("waits", waits, MAX_WAITS);
	if (count)
		gt_pmu_release(idx);
}
