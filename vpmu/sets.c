/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * START and STOP of several counters at once, and through the snapshot
 * area (INIT_SNAPSHOT, TAKE_SNAPSHOT): the same transitions as one counter,
 * walked over the set. SNAPSHOT_SET_SHMEM, which sets up that area.
 */
#include "vpmu/ctr.h"
#include "vpmu/internal.h"

/* Start counter idx of a checked set; *near: close enough to its top to need a deadline */
static long start_one(struct vpmu *v, unsigned int idx, struct op_args *a, bool *near)
{
	long err = ctr_transition(v, idx, OP_START, a);

	if (a->near)
		*near = true;
	return err;
}

/* A counter of the set is unconfigured: START refuses the set whole */
static bool set_unconfigured(struct vpmu *v, unsigned long base, unsigned long mask)
{
	unsigned int i;

	for_each_bit (i, mask)
		if (ctr_of(v, base + i)->state == VPMU_CTR_UNCONFIGURED)
			return true;
	return false;
}

/*
 * Any set (checked, none unconfigured): each counter from a->value, or its
 * slot of the snapshot area, read once (the guest may write it meanwhile)
 */
static long start_each(struct vpmu *v, unsigned long base, unsigned long mask, struct op_args *a,
		       const volatile uint64_t *snap, bool *near, bool *already)
{
	unsigned int i;

	for_each_bit (i, mask) {
		if (snap)
			a->value = snap[i];
		if (start_one(v, (unsigned int)(base + i), a, near) == SBI_ERR_ALREADY_STARTED)
			*already = true;
	}
	return SBI_SUCCESS;
}

/* The snapshot area's words (SBI_PMU_SNAPSHOT_*_OFFSET): the overflow bitmap, the values */
static inline volatile uint64_t *snap_ovf(struct vpmu *v)
{
	return v->shmem + SBI_PMU_SNAPSHOT_OVF_OFFSET / sizeof(uint64_t);
}

static inline volatile uint64_t *snap_values(struct vpmu *v)
{
	return v->shmem + SBI_PMU_SNAPSHOT_VALUES_OFFSET / sizeof(uint64_t);
}

/* INIT_SNAPSHOT: each counter of the set from its slot of the snapshot area */
static long start_from_snapshot(struct vpmu *v, unsigned long base, unsigned long mask, bool *near,
				bool *already)
{
	struct op_args a = {0, 0, 0, -1, true, 0, false};

	if (set_unconfigured(v, base, mask))
		return SBI_ERR_INVALID_PARAM;
	if (!v->shmem)
		return SBI_ERR_NO_SHMEM;
	return start_each(v, base, mask, &a, snap_values(v), near, already);
}

/* Several counters, or from the snapshot area (flags checked) */
long set_start(struct vpmu *v, unsigned long base, unsigned long mask, unsigned long flags,
	       uint64_t ival)
{
	bool set_value = flags & SBI_PMU_START_FLAG_SET_INIT_VALUE;
	struct op_args a = {0, 0, 0, -1, set_value, ival, false};
	bool already = false, near = false;
	long err;

	if (flags & SBI_PMU_START_FLAG_INIT_SNAPSHOT)
		err = start_from_snapshot(v, base, mask, &near, &already);
	else
		err = set_unconfigured(v, base, mask)
			      ? SBI_ERR_INVALID_PARAM
			      : start_each(v, base, mask, &a, NULL, &near, &already);
	if (err)
		return err;
	sync_hw_deadline(v, near); /* near_top */
	return already ? SBI_ERR_ALREADY_STARTED : SBI_SUCCESS;
}

/* Several counters, or a snapshot taken (flags and set checked) */
long set_stop(struct vpmu *v, unsigned long base, unsigned long mask, unsigned long flags)
{
	bool already = false, near = false, snap = flags & SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT;
	uint64_t ovf = 0;
	unsigned int i;

	if (snap && !v->shmem)
		return SBI_ERR_NO_SHMEM;
	if (snap)
		ovf_scan(v); /* the bitmap must include what just overflowed */

	for_each_bit (i, mask) {
		unsigned int idx = (unsigned int)(base + i);
		struct vpmu_ctr *c;
		uint8_t prev;

		c = ctr_of(v, idx);
		prev = c->state;
		if (prev != VPMU_CTR_STARTED)
			already = true;
		else if (!(flags & SBI_PMU_STOP_FLAG_RESET))
			ctr_transition(v, idx, OP_STOP, NULL);
		if (snap && prev != VPMU_CTR_UNCONFIGURED) {
			/* RESET saves the value too; take it before the event is forgotten */
			if (flags & SBI_PMU_STOP_FLAG_RESET)
				ctr_transition(v, idx, OP_STOP, NULL);
			snap_values(v)[i] = c->value;
			if ((v->overflow >> idx) & 1)
				ovf |= 1ULL << i;
		}
		if (flags & SBI_PMU_STOP_FLAG_RESET)
			ctr_transition(v, idx, OP_RESET, NULL);
		if (prev == VPMU_CTR_STARTED && is_hw(idx) && near_top(idx, c->value))
			near = true;
	}
	if (snap)
		*snap_ovf(v) = ovf;
	sync_hw_deadline(v, near); /* near_top */
	return already ? SBI_ERR_ALREADY_STOPPED : SBI_SUCCESS;
}

struct sbi_ret vpmu_snapshot_set_shmem(struct vpmu *v, unsigned long lo, unsigned long hi,
				       unsigned long flags)
{
	uint64_t *area;

	if (flags)
		return ret_err(SBI_ERR_INVALID_PARAM);
	if (lo == ~0UL && hi == ~0UL) {
		v->shmem = NULL;
		return ret_val(0);
	}
	if (lo & (SBI_PMU_SNAPSHOT_SIZE - 1))
		return ret_err(SBI_ERR_INVALID_PARAM);
	/* RV64: a non-zero upper half lies beyond any guest RAM */
	if (hi)
		return ret_err(SBI_ERR_INVALID_ADDRESS);
	area = vpmu_host_guest_ram(v, lo, SBI_PMU_SNAPSHOT_SIZE);
	if (!area)
		return ret_err(SBI_ERR_INVALID_ADDRESS);
	__builtin_memset(area, 0, SBI_PMU_SNAPSHOT_SIZE);
	v->shmem = area;
	return ret_val(0);
}
