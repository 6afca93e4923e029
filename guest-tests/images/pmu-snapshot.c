// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-snapshot: SNAPSHOT_SET_SHMEM and the two snapshot flags. Address and
 * flag errors, the area zeroed when set (over a pattern), disabling with
 * all ones (then the snapshot flags answer NO_SHMEM), STOP+TAKE_SNAPSHOT
 * writing each counter's value at counter_values[i] relative to
 * counter_idx_base (other slots untouched) and the overflow bitmap at
 * offset 0, START+INIT_SNAPSHOT loading the initial values (round trip)
 * and refusing a set with an unconfigured counter whole.
 * Hardware counters are configured with every inhibit flag, so their
 * values are exact; firmware counters count SET_TIMER calls, exactly.
 *
 * OpenSBI 1.5 has no snapshot area for S-mode (SET_SHMEM: NOT_SUPPORTED,
 * platform.md): natively only that answer is checked.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("pmu-snapshot");

#define EV_INSTRET SBI_PMU_HW_INSTRUCTIONS
#define PATTERN	   0xa5a5a5a5a5a5a5a5UL

static volatile uint64_t area[512] __attribute__((aligned(4096)));
static volatile uint64_t area2[512] __attribute__((aligned(4096)));
static struct gt_pmu_layout pl;

#define SLOT(i) GT_PMU_SNAPSHOT_SLOT(i)

static void check_set_shmem(void)
{
	unsigned long a = (unsigned long)area;
	unsigned long ram_end = gt_ram_base() + gt_ram_size();
	struct sbi_ret r;

	GT_CHECK_SBI("shmem-unaligned-8", gt_pmu_snapshot_set(a + 8, 0, 0), SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("shmem-unaligned-2048", gt_pmu_snapshot_set(a + 2048, 0, 0),
		     SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("shmem-flags-1", gt_pmu_snapshot_set(a, 0, 1), SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("shmem-flags-high", gt_pmu_snapshot_set(a, 0, 1UL << 63),
		     SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("shmem-below-ram", gt_pmu_snapshot_set(0x1000, 0, 0), SBI_ERR_INVALID_ADDRESS);
	GT_CHECK_SBI("shmem-ram-end", gt_pmu_snapshot_set(ram_end, 0, 0), SBI_ERR_INVALID_ADDRESS);
	GT_CHECK_SBI("shmem-hi-nonzero", gt_pmu_snapshot_set(a, 1, 0), SBI_ERR_INVALID_ADDRESS);
	GT_CHECK_SBI("shmem-top-page", gt_pmu_snapshot_set(~0UL & ~0xfffUL, 0, 0),
		     SBI_ERR_INVALID_ADDRESS);
	/* disabling when nothing is set is fine */
	GT_CHECK_SBI("shmem-disable-unset", gt_pmu_snapshot_set(~0UL, ~0UL, 0), SBI_SUCCESS);

	/* the last page of RAM is fine, and zeroed */
	r = gt_pmu_snapshot_set(ram_end - 4096, 0, 0);
	GT_CHECK_SBI("shmem-last-ram-page", r, SBI_SUCCESS);

	gt_pmu_snapshot_fill(area, PATTERN);
	r = gt_pmu_snapshot_set(a, 0, 0);
	GT_CHECK_SBI("shmem-set-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("shmem-set-value-0", r.value, 0);
	GT_CHECK_EQ("shmem-zeroed", gt_pmu_snapshot_differing(area, 0, ~0U, ~0U), 0);

	/* disable: the snapshot flags answer NO_SHMEM, nothing written */
	GT_CHECK_SBI("shmem-disable", gt_pmu_snapshot_set(~0UL, ~0UL, 0), SBI_SUCCESS);
	gt_pmu_snapshot_fill(area, PATTERN);
	r = gt_pmu_cfg(0, pl.fw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		       GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("disabled-start-init-snapshot",
		     gt_pmu_start(r.value, 1, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0),
		     SBI_ERR_NO_SHMEM);
	gt_pmu_start(r.value, 1, 0, 0);
	GT_CHECK_SBI("disabled-stop-take-snapshot",
		     gt_pmu_stop(r.value, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT), SBI_ERR_NO_SHMEM);
	/* NO_SHMEM came before the counter was stopped */
	GT_CHECK_SBI("disabled-counter-still-running",
		     gt_pmu_stop(r.value, 1, SBI_PMU_STOP_FLAG_RESET), SBI_SUCCESS);
	GT_CHECK_EQ("disabled-area-untouched", gt_pmu_snapshot_differing(area, PATTERN, ~0U, ~0U),
		    0);
}

/*
 * INIT_SNAPSHOT refuses a set holding an unconfigured counter whole, like a
 * plain START: nothing of it started, not even its configured counters.
 * Called with the area set and every counter released.
 */
static void check_init_unconfigured(void)
{
	unsigned long q, u, base, mask;
	struct sbi_ret r;

	r = gt_pmu_cfg(0, pl.prog_mask, GT_PMU_NO_COUNT | SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET,
		       0);
	if (!GT_CHECK_SBI("init-unconf-cfg", r, SBI_SUCCESS))
		return;
	q = r.value;
	mask = pl.prog_mask & ~(1UL << q);
	if (!GT_CHECK_NE("init-unconf-has-second", mask, 0)) {
		gt_pmu_release(q);
		return;
	}
	u = __builtin_ctzl(mask);
	gt_pmu_snapshot_fill(area, 0);
	r = gt_pmu_start(u, 1, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0);
	GT_CHECK_SBI("init-snapshot-unconfigured", r, SBI_ERR_INVALID_PARAM);
	base = q < u ? q : u;
	r = gt_pmu_start(base, (1UL << (q - base)) | (1UL << (u - base)),
			 SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0);
	GT_CHECK_SBI("init-snapshot-set-unconfigured", r, SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("init-snapshot-set-configured-not-started", gt_pmu_stop(q, 1, 0),
		     SBI_ERR_ALREADY_STOPPED);
	gt_pmu_release(q);
}

static void check_take_and_init(void)
{
	unsigned long a = (unsigned long)area, p, f, d, k;
	struct sbi_ret r;

	/* p: an exact hardware counter, f: a SET_TIMER firmware counter, d = f - p */
	r = gt_pmu_cfg(0, pl.prog_mask, GT_PMU_NO_COUNT | SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET,
		       0);
	GT_CHECK_SBI("snap-cfg-hw", r, SBI_SUCCESS);
	p = r.value;
	r = gt_pmu_cfg(0, pl.fw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		       GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("snap-cfg-fw", r, SBI_SUCCESS);
	f = r.value;
	d = f - p;
	if (!GT_CHECK_LE("snap-counters-within-64", d, 63))
		return;

	GT_CHECK_SBI("snap-set", gt_pmu_snapshot_set(a, 0, 0), SBI_SUCCESS);
	gt_pmu_start(p, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0x1111);
	gt_pmu_start(f, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0x2222);
	gt_sbi_set_timer(~0UL);
	gt_sbi_set_timer(~0UL);
	gt_sbi_set_timer(~0UL);

	/* one hardware counter, base = its index: slot 0 */
	gt_pmu_snapshot_fill(area, PATTERN);
	r = gt_pmu_stop(p, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_SBI("take-hw-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("take-hw-slot-0", area[SLOT(0)], 0x1111);
	GT_CHECK_EQ("take-hw-ovf-word", area[0], 0);
	GT_CHECK_EQ("take-hw-others-untouched",
		    gt_pmu_snapshot_differing(area, PATTERN, 0, SLOT(0)), 0);
	GT_CHECK_EQ("take-hw-counter-stopped", gt_pmu_read_csr(p), 0x1111);

	/* one firmware counter, base = f - 2: slot 2 */
	gt_pmu_snapshot_fill(area, PATTERN);
	r = gt_pmu_stop(f - 2, 1UL << 2, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_SBI("take-fw-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("take-fw-slot-2", area[SLOT(2)], 0x2222 + 3);
	GT_CHECK_EQ("take-fw-ovf-word", area[0], 0);
	GT_CHECK_EQ("take-fw-others-untouched",
		    gt_pmu_snapshot_differing(area, PATTERN, 0, SLOT(2)), 0);
	gt_sbi_set_timer(~0UL);
	GT_CHECK_EQ("take-fw-counter-stopped", gt_pmu_fw_read(f).value, 0x2222 + 3);

	/* both, base = p: slots 0 and d; already stopped ones are written too */
	gt_pmu_snapshot_fill(area, PATTERN);
	r = gt_pmu_stop(p, 1 | (1UL << d), SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_SBI("take-stopped-pair-already-stopped", r, SBI_ERR_ALREADY_STOPPED);
	GT_CHECK_EQ("take-pair-slot-0", area[SLOT(0)], 0x1111);
	GT_CHECK_EQ("take-pair-slot-d", area[SLOT(d)], 0x2222 + 3);
	GT_CHECK_EQ("take-pair-ovf-word", area[0], 0);
	GT_CHECK_EQ("take-pair-others-untouched",
		    gt_pmu_snapshot_differing(area, PATTERN, SLOT(0), SLOT(d)), 1);

	/* INIT_SNAPSHOT: values from slots 0 and d, base = p */
	gt_pmu_snapshot_fill(area, 0);
	area[SLOT(0)] = 0x123456789UL;
	area[SLOT(d)] = 777;
	r = gt_pmu_start(p, 1 | (1UL << d), SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0x5555);
	GT_CHECK_SBI("init-snapshot-ok", r, SBI_SUCCESS);
	gt_sbi_set_timer(~0UL);
	gt_sbi_set_timer(~0UL);
	gt_pmu_snapshot_fill(area, PATTERN);
	r = gt_pmu_stop(p, 1 | (1UL << d), SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_SBI("round-trip-stop-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("round-trip-hw", area[SLOT(0)], 0x123456789UL);
	GT_CHECK_EQ("round-trip-fw", area[SLOT(d)], 779);
	GT_CHECK_EQ("round-trip-hw-csr", gt_pmu_read_csr(p), 0x123456789UL);
	GT_CHECK_EQ("round-trip-fw-read", gt_pmu_fw_read(f).value, 779);

	/* INIT_SNAPSHOT with a base below the counter: slot p - base */
	k = p >= 3 ? 3 : p;
	gt_pmu_snapshot_fill(area, 0);
	area[SLOT(k)] = 4242;
	r = gt_pmu_start(p - k, 1UL << k, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0);
	GT_CHECK_SBI("init-snapshot-base-ok", r, SBI_SUCCESS);
	gt_pmu_stop(p, 1, 0);
	GT_CHECK_EQ("init-snapshot-base-slot", gt_pmu_read_csr(p), 4242);

	/* START of a started counter keeps it: only the others load their slot */
	gt_pmu_start(f, 1, 0, 0);
	gt_pmu_snapshot_fill(area, 0);
	area[SLOT(0)] = 99;
	area[SLOT(d)] = 1;
	r = gt_pmu_start(p, 1 | (1UL << d), SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0);
	GT_CHECK_SBI("init-snapshot-partly-started", r, SBI_ERR_ALREADY_STARTED);
	GT_CHECK_EQ("init-snapshot-started-kept", gt_pmu_fw_read(f).value, 779);
	gt_pmu_stop(p, 1, 0);
	GT_CHECK_EQ("init-snapshot-other-loaded", gt_pmu_read_csr(p), 99);

	/* RESET with TAKE_SNAPSHOT: the value before release, then released */
	gt_pmu_snapshot_fill(area, PATTERN);
	r = gt_pmu_stop(p, 1 | (1UL << d),
			SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT | SBI_PMU_STOP_FLAG_RESET);
	GT_CHECK_SBI("take-reset-already-stopped", r, SBI_ERR_ALREADY_STOPPED);
	GT_CHECK_EQ("take-reset-hw", area[SLOT(0)], 99);
	GT_CHECK_EQ("take-reset-fw", area[SLOT(d)], 779);
	GT_CHECK_SBI("take-reset-released", gt_pmu_fw_read(f), SBI_ERR_INVALID_PARAM);
	/* an unconfigured counter's slot is not written */
	gt_pmu_snapshot_fill(area, PATTERN);
	gt_pmu_stop(p, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_EQ("take-unconfigured-slot-untouched", area[SLOT(0)], PATTERN);
	check_init_unconfigured();

	/* setting another area replaces the first one */
	gt_pmu_snapshot_fill(area, PATTERN);
	gt_pmu_snapshot_fill(area2, PATTERN);
	GT_CHECK_SBI("shmem-replace", gt_pmu_snapshot_set((unsigned long)area2, 0, 0), SBI_SUCCESS);
	GT_CHECK_EQ("shmem-replace-zeroed", gt_pmu_snapshot_differing(area2, 0, ~0U, ~0U), 0);
	r = gt_pmu_cfg(0, pl.fw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE | SBI_PMU_CFG_FLAG_AUTO_START,
		       GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	gt_sbi_set_timer(~0UL);
	gt_pmu_stop(r.value, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT | SBI_PMU_STOP_FLAG_RESET);
	GT_CHECK_EQ("shmem-replace-new-area-written", area2[SLOT(0)], 1);
	GT_CHECK_EQ("shmem-replace-old-area-untouched",
		    gt_pmu_snapshot_differing(area, PATTERN, ~0U, ~0U), 0);
	gt_pmu_snapshot_set(~0UL, ~0UL, 0);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	struct sbi_ret r;

	(void)hartid;
	(void)fdt;
	gt_pmu_layout(&pl);
	GT_CHECK_NE("has-programmable", pl.prog_mask, 0);
	GT_CHECK_NE("has-fw", pl.nfw, 0);
	if (gt_native()) {
		r = gt_pmu_snapshot_set((unsigned long)area, 0, 0);
		GT_CHECK_SBI("native-shmem-not-supported", r, SBI_ERR_NOT_SUPPORTED);
		gt_exit();
	}
	check_set_shmem();
	check_take_and_init();
	gt_exit();
}
