// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-snapshot: SNAPSHOT_SET_SHMEM and the two snapshot flags. Address and
 * flag errors, the area zeroed when set (over a pattern), disabling with
 * all ones (then the snapshot flags answer NO_SHMEM), STOP+TAKE_SNAPSHOT
 * writing each counter's value at counter_values[i] relative to
 * counter_idx_base (other slots untouched) and the overflow bitmap at
 * offset 0, START+INIT_SNAPSHOT loading the initial values (round trip).
 * Hardware counters are configured with every inhibit flag, so their
 * values are exact; firmware counters count SET_TIMER calls, exactly.
 *
 * OpenSBI 1.5 has no snapshot area for S-mode (SET_SHMEM: NOT_SUPPORTED,
 * platform.md): natively only that answer is checked.
 */
#include "gt.h"

GT_IMAGE("pmu-snapshot");

#define EV_INSTRET SBI_PMU_HW_INSTRUCTIONS
#define EV_FW(c)   ((0xfUL << 16) | (c))
#define NO_COUNT                                                                                   \
	(SBI_PMU_CFG_FLAG_SET_VUINH | SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_UINH |     \
	 SBI_PMU_CFG_FLAG_SET_SINH | SBI_PMU_CFG_FLAG_SET_MINH)
#define PATTERN 0xa5a5a5a5a5a5a5a5UL

static volatile uint64_t area[512] __attribute__((aligned(4096)));
static volatile uint64_t area2[512] __attribute__((aligned(4096)));
static unsigned long num, prog_mask, fw_first, nfw;

static struct sbi_ret pmu(unsigned long fid, unsigned long a0, unsigned long a1, unsigned long a2,
			  unsigned long a3)
{
	return gt_sbi_call(SBI_EXT_PMU, fid, a0, a1, a2, a3, 0, 0);
}

static struct sbi_ret shmem(unsigned long lo, unsigned long hi, unsigned long flags)
{
	return pmu(SBI_EXT_PMU_SNAPSHOT_SET_SHMEM, lo, hi, flags, 0);
}

static struct sbi_ret cfg(unsigned long base, unsigned long mask, unsigned long flags,
			  unsigned long event)
{
	return gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_CFG_MATCH, base, mask, flags, event, 0,
			   0);
}

static struct sbi_ret start(unsigned long base, unsigned long mask, unsigned long flags,
			    unsigned long ival)
{
	return pmu(SBI_EXT_PMU_COUNTER_START, base, mask, flags, ival);
}

static struct sbi_ret stop(unsigned long base, unsigned long mask, unsigned long flags)
{
	return pmu(SBI_EXT_PMU_COUNTER_STOP, base, mask, flags, 0);
}

static unsigned long read_counter(unsigned long idx)
{
#define RD(n)                                                                                      \
	case n:                                                                                    \
		return csr_read(0xc00 + n)
	switch (idx) {
		RD(0);
		RD(2);
		RD(3);
		RD(4);
		RD(5);
		RD(6);
		RD(7);
		RD(8);
		RD(9);
		RD(10);
		RD(11);
		RD(12);
		RD(13);
		RD(14);
		RD(15);
		RD(16);
		RD(17);
		RD(18);
		RD(19);
		RD(20);
		RD(21);
		RD(22);
		RD(23);
		RD(24);
		RD(25);
		RD(26);
		RD(27);
		RD(28);
		RD(29);
		RD(30);
		RD(31);
	}
#undef RD
	return ~0UL;
}

static void fill(volatile uint64_t *a, uint64_t v)
{
	for (unsigned int i = 0; i < 512; i++)
		a[i] = v;
}

/* Number of words of a that differ from v, except word `skip1` and `skip2` */
static unsigned long differing(volatile uint64_t *a, uint64_t v, unsigned int skip1,
			       unsigned int skip2)
{
	unsigned long n = 0;

	for (unsigned int i = 0; i < 512; i++)
		if (i != skip1 && i != skip2 && a[i] != v)
			n++;
	return n;
}

#define SLOT(i) (1 + (i)) /* counter_values[i] is word 1 + i (offset 8 + 8i) */

static void layout(void)
{
	struct sbi_ret r = pmu(SBI_EXT_PMU_NUM_COUNTERS, 0, 0, 0, 0);
	unsigned long i;

	num = r.value < 64 ? r.value : 63;
	fw_first = ~0UL;
	for (i = 0; i < num; i++) {
		r = pmu(SBI_EXT_PMU_COUNTER_GET_INFO, i, 0, 0, 0);
		if (r.error)
			continue;
		if (r.value & SBI_PMU_CTR_INFO_FW) {
			if (fw_first == ~0UL)
				fw_first = i;
			nfw++;
		} else if (i >= 3) {
			prog_mask |= 1UL << i;
		}
	}
}

static void check_set_shmem(void)
{
	unsigned long a = (unsigned long)area;
	unsigned long ram_end = gt_ram_base() + gt_ram_size();
	struct sbi_ret r;

	GT_CHECK_SBI("shmem-unaligned-8", shmem(a + 8, 0, 0), SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("shmem-unaligned-2048", shmem(a + 2048, 0, 0), SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("shmem-flags-1", shmem(a, 0, 1), SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("shmem-flags-high", shmem(a, 0, 1UL << 63), SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("shmem-below-ram", shmem(0x1000, 0, 0), SBI_ERR_INVALID_ADDRESS);
	GT_CHECK_SBI("shmem-ram-end", shmem(ram_end, 0, 0), SBI_ERR_INVALID_ADDRESS);
	GT_CHECK_SBI("shmem-hi-nonzero", shmem(a, 1, 0), SBI_ERR_INVALID_ADDRESS);
	GT_CHECK_SBI("shmem-top-page", shmem(~0UL & ~0xfffUL, 0, 0), SBI_ERR_INVALID_ADDRESS);
	/* disabling when nothing is set is fine */
	GT_CHECK_SBI("shmem-disable-unset", shmem(~0UL, ~0UL, 0), SBI_SUCCESS);

	/* the last page of RAM is fine, and zeroed */
	r = shmem(ram_end - 4096, 0, 0);
	GT_CHECK_SBI("shmem-last-ram-page", r, SBI_SUCCESS);

	fill(area, PATTERN);
	r = shmem(a, 0, 0);
	GT_CHECK_SBI("shmem-set-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("shmem-set-value-0", r.value, 0);
	GT_CHECK_EQ("shmem-zeroed", differing(area, 0, ~0U, ~0U), 0);

	/* disable: the snapshot flags answer NO_SHMEM, nothing written */
	GT_CHECK_SBI("shmem-disable", shmem(~0UL, ~0UL, 0), SBI_SUCCESS);
	fill(area, PATTERN);
	r = cfg(0, ((1UL << nfw) - 1) << fw_first, SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		EV_FW(SBI_PMU_FW_SET_TIMER));
	GT_CHECK_SBI("disabled-start-init-snapshot",
		     start(r.value, 1, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0), SBI_ERR_NO_SHMEM);
	start(r.value, 1, 0, 0);
	GT_CHECK_SBI("disabled-stop-take-snapshot",
		     stop(r.value, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT), SBI_ERR_NO_SHMEM);
	/* NO_SHMEM came before the counter was stopped */
	GT_CHECK_SBI("disabled-counter-still-running", stop(r.value, 1, SBI_PMU_STOP_FLAG_RESET),
		     SBI_SUCCESS);
	GT_CHECK_EQ("disabled-area-untouched", differing(area, PATTERN, ~0U, ~0U), 0);
}

static void check_take_and_init(void)
{
	unsigned long a = (unsigned long)area, p, f, d, k;
	struct sbi_ret r;

	/* p: an exact hardware counter, f: a SET_TIMER firmware counter, d = f - p */
	r = cfg(0, prog_mask, NO_COUNT | SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET);
	GT_CHECK_SBI("snap-cfg-hw", r, SBI_SUCCESS);
	p = r.value;
	r = cfg(0, ((1UL << nfw) - 1) << fw_first, SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		EV_FW(SBI_PMU_FW_SET_TIMER));
	GT_CHECK_SBI("snap-cfg-fw", r, SBI_SUCCESS);
	f = r.value;
	d = f - p;
	if (!GT_CHECK_LE("snap-counters-within-64", d, 63))
		return;

	GT_CHECK_SBI("snap-set", shmem(a, 0, 0), SBI_SUCCESS);
	start(p, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0x1111);
	start(f, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0x2222);
	gt_sbi_set_timer(~0UL);
	gt_sbi_set_timer(~0UL);
	gt_sbi_set_timer(~0UL);

	/* one hardware counter, base = its index: slot 0 */
	fill(area, PATTERN);
	r = stop(p, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_SBI("take-hw-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("take-hw-slot-0", area[SLOT(0)], 0x1111);
	GT_CHECK_EQ("take-hw-ovf-word", area[0], 0);
	GT_CHECK_EQ("take-hw-others-untouched", differing(area, PATTERN, 0, SLOT(0)), 0);
	GT_CHECK_EQ("take-hw-counter-stopped", read_counter(p), 0x1111);

	/* one firmware counter, base = f - 2: slot 2 */
	fill(area, PATTERN);
	r = stop(f - 2, 1UL << 2, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_SBI("take-fw-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("take-fw-slot-2", area[SLOT(2)], 0x2222 + 3);
	GT_CHECK_EQ("take-fw-ovf-word", area[0], 0);
	GT_CHECK_EQ("take-fw-others-untouched", differing(area, PATTERN, 0, SLOT(2)), 0);
	gt_sbi_set_timer(~0UL);
	GT_CHECK_EQ("take-fw-counter-stopped", pmu(SBI_EXT_PMU_COUNTER_FW_READ, f, 0, 0, 0).value,
		    0x2222 + 3);

	/* both, base = p: slots 0 and d; already stopped ones are written too */
	fill(area, PATTERN);
	r = stop(p, 1 | (1UL << d), SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_SBI("take-stopped-pair-already-stopped", r, SBI_ERR_ALREADY_STOPPED);
	GT_CHECK_EQ("take-pair-slot-0", area[SLOT(0)], 0x1111);
	GT_CHECK_EQ("take-pair-slot-d", area[SLOT(d)], 0x2222 + 3);
	GT_CHECK_EQ("take-pair-ovf-word", area[0], 0);
	GT_CHECK_EQ("take-pair-others-untouched", differing(area, PATTERN, SLOT(0), SLOT(d)), 1);

	/* INIT_SNAPSHOT: values from slots 0 and d, base = p */
	fill(area, 0);
	area[SLOT(0)] = 0x123456789UL;
	area[SLOT(d)] = 777;
	r = start(p, 1 | (1UL << d), SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0x5555);
	GT_CHECK_SBI("init-snapshot-ok", r, SBI_SUCCESS);
	gt_sbi_set_timer(~0UL);
	gt_sbi_set_timer(~0UL);
	fill(area, PATTERN);
	r = stop(p, 1 | (1UL << d), SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_SBI("round-trip-stop-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("round-trip-hw", area[SLOT(0)], 0x123456789UL);
	GT_CHECK_EQ("round-trip-fw", area[SLOT(d)], 779);
	GT_CHECK_EQ("round-trip-hw-csr", read_counter(p), 0x123456789UL);
	GT_CHECK_EQ("round-trip-fw-read", pmu(SBI_EXT_PMU_COUNTER_FW_READ, f, 0, 0, 0).value, 779);

	/* INIT_SNAPSHOT with a base below the counter: slot p - base */
	k = p >= 3 ? 3 : p;
	fill(area, 0);
	area[SLOT(k)] = 4242;
	r = start(p - k, 1UL << k, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0);
	GT_CHECK_SBI("init-snapshot-base-ok", r, SBI_SUCCESS);
	stop(p, 1, 0);
	GT_CHECK_EQ("init-snapshot-base-slot", read_counter(p), 4242);

	/* START of a started counter keeps it: only the others load their slot */
	start(f, 1, 0, 0);
	fill(area, 0);
	area[SLOT(0)] = 99;
	area[SLOT(d)] = 1;
	r = start(p, 1 | (1UL << d), SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0);
	GT_CHECK_SBI("init-snapshot-partly-started", r, SBI_ERR_ALREADY_STARTED);
	GT_CHECK_EQ("init-snapshot-started-kept",
		    pmu(SBI_EXT_PMU_COUNTER_FW_READ, f, 0, 0, 0).value, 779);
	stop(p, 1, 0);
	GT_CHECK_EQ("init-snapshot-other-loaded", read_counter(p), 99);

	/* RESET with TAKE_SNAPSHOT: the value before release, then released */
	fill(area, PATTERN);
	r = stop(p, 1 | (1UL << d), SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT | SBI_PMU_STOP_FLAG_RESET);
	GT_CHECK_SBI("take-reset-already-stopped", r, SBI_ERR_ALREADY_STOPPED);
	GT_CHECK_EQ("take-reset-hw", area[SLOT(0)], 99);
	GT_CHECK_EQ("take-reset-fw", area[SLOT(d)], 779);
	GT_CHECK_SBI("take-reset-released", pmu(SBI_EXT_PMU_COUNTER_FW_READ, f, 0, 0, 0),
		     SBI_ERR_INVALID_PARAM);
	/* an unconfigured counter's slot is not written */
	fill(area, PATTERN);
	stop(p, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_EQ("take-unconfigured-slot-untouched", area[SLOT(0)], PATTERN);

	/* setting another area replaces the first one */
	fill(area, PATTERN);
	fill(area2, PATTERN);
	GT_CHECK_SBI("shmem-replace", shmem((unsigned long)area2, 0, 0), SBI_SUCCESS);
	GT_CHECK_EQ("shmem-replace-zeroed", differing(area2, 0, ~0U, ~0U), 0);
	r = cfg(0, ((1UL << nfw) - 1) << fw_first,
		SBI_PMU_CFG_FLAG_CLEAR_VALUE | SBI_PMU_CFG_FLAG_AUTO_START,
		EV_FW(SBI_PMU_FW_SET_TIMER));
	gt_sbi_set_timer(~0UL);
	stop(r.value, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT | SBI_PMU_STOP_FLAG_RESET);
	GT_CHECK_EQ("shmem-replace-new-area-written", area2[SLOT(0)], 1);
	GT_CHECK_EQ("shmem-replace-old-area-untouched", differing(area, PATTERN, ~0U, ~0U), 0);
	shmem(~0UL, ~0UL, 0);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	struct sbi_ret r;

	(void)hartid;
	(void)fdt;
	layout();
	GT_CHECK_NE("has-programmable", prog_mask, 0);
	GT_CHECK_NE("has-fw", nfw, 0);
	if (gt_native()) {
		r = shmem((unsigned long)area, 0, 0);
		GT_CHECK_SBI("native-shmem-not-supported", r, SBI_ERR_NOT_SUPPORTED);
		gt_exit();
	}
	check_set_shmem();
	check_take_and_init();
	gt_exit();
}
