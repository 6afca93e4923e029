/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SBI PMU functions (vpmu_sbi.h): argument checks as the spec words
 * them, NUM_COUNTERS, COUNTER_GET_INFO, CONFIG_MATCHING, FW_READ(_HI), and
 * START and STOP of one counter (perf's every context switch: inline, the
 * state machine's case alone). Sets and the snapshot area: sets.c.
 */
#include "vpmu/ctr.h"
#include "vpmu/internal.h"

struct sbi_ret vpmu_num_counters(struct vpmu *v)
{
	return ret_val(num_visible(v));
}

struct sbi_ret vpmu_counter_get_info(struct vpmu *v, unsigned long idx)
{
	if (!is_visible(v, idx))
		return ret_err(SBI_ERR_INVALID_PARAM);
	return ret_val(layout.info[array_index_nospec(idx, VPMU_MAX_COUNTERS)]);
}

/* Configure the first counter of set (ev_candidate_set's order) taking the event; one frame */
static inline long config_first(struct vpmu *v, uint32_t set, int fixed, bool fixed_first,
				struct op_args *a, unsigned int *idx)
{
	uint32_t f = fixed >= 0 ? set & (1U << fixed) : 0;
	unsigned int i;

	if (f && fixed_first && !ctr_transition(v, (unsigned int)fixed, OP_CONFIG, a)) {
		*idx = (unsigned int)fixed;
		return SBI_SUCCESS;
	}
	for_each_bit (i, set & ~f)
		if (!ctr_transition(v, i, OP_CONFIG, a)) {
			*idx = i;
			return SBI_SUCCESS;
		}
	if (f && !fixed_first && !ctr_transition(v, (unsigned int)fixed, OP_CONFIG, a)) {
		*idx = (unsigned int)fixed;
		return SBI_SUCCESS;
	}
	return SBI_ERR_NOT_SUPPORTED;
}

struct sbi_ret vpmu_counter_config_matching(struct vpmu *v, unsigned long base, unsigned long mask,
					    unsigned long flags, unsigned long event_idx,
					    uint64_t event_data)
{
	struct op_args a = {event_idx, event_data, flags, -1, false, 0, false};
	int kind;
	unsigned int i, idx = 0;
	long err = SBI_ERR_NOT_SUPPORTED;
	uint32_t allowed;

	if (flags & ~SBI_PMU_CFG_FLAG_MASK)
		return ret_err(SBI_ERR_INVALID_PARAM);
	if (check_set(v, base, mask))
		return ret_err(SBI_ERR_INVALID_PARAM);
	kind = ev_accept(v, event_idx, event_data, &a.key, &allowed);
	if (kind < 0)
		return ret_err(SBI_ERR_NOT_SUPPORTED);

	if (flags & SBI_PMU_CFG_FLAG_SKIP_MATCH) {
		/* Unconditionally the first counter of the set */
		for (i = 0; !((mask >> i) & 1); i++)
			;
		idx = (unsigned int)(base + i);
		if (kind == EVK_FW ? !is_fw(idx)
				   : !ev_candidate(v, event_idx, idx) || !((allowed >> idx) & 1))
			return ret_err(SBI_ERR_NOT_SUPPORTED);
		err = ctr_transition(v, idx, OP_CONFIG, &a);
	} else {
		/*
		 * Any counter that is not started may be chosen: unconfigured
		 * ones first, then configured but stopped ones (reconfigured).
		 */
		if (kind == EVK_FW) {
			/* check_set: mask << base lost no bit */
			uint64_t set = (mask << base) & fw_counters();
			unsigned int pass;

			for (pass = 0; pass < 2 && err; pass++)
				for_each_bit (i, set) {
					if (v->ctr[i].state !=
					    (pass ? VPMU_CTR_CONFIGURED : VPMU_CTR_UNCONFIGURED))
						continue;
					idx = i;
					err = ctr_transition(v, idx, OP_CONFIG, &a);
					if (!err)
						break;
				}
		} else {
			int fixed;
			bool first;
			/* check_set: mask << base lost no bit; hardware counters are below 32 */
			uint32_t set = ev_candidate_set(v, event_idx, &fixed, &first) & allowed &
				       (uint32_t)(mask << base);

			err = config_first(v, set & ~v->configured_hw, fixed, first, &a, &idx);
			if (err)
				err = config_first(v, set & v->configured_hw & ~v->started_hw,
						   fixed, first, &a, &idx);
		}
	}
	/*
	 * Configuring moves no started counter, so the next wrap is where it
	 * was: only hcounteren changes (a refused reconfiguration reloads
	 * the old event).
	 */
	if (err) {
		sync_hw_deadline(v, false);
		return ret_err(err);
	}

	if (flags & SBI_PMU_CFG_FLAG_CLEAR_VALUE) {
		ctr_of(v, idx)->value = 0;
		if (idx < VPMU_MAX_HW) /* a firmware counter has no synced bit */
			set_hw_bit(&v->synced, idx, false);
	}
	/* a START of this counter from its value, as the guest could make it next */
	if (flags & SBI_PMU_CFG_FLAG_AUTO_START)
		set_start(v, idx, 1, 0, 0); /* syncs, the deadline too if near its top */
	else
		sync_hw_deadline(v, false);
	return ret_val(idx);
}

/*
 * One counter (what Linux starts at every context switch) apart from the
 * set walks, so without their registers saved; the same transition.
 */
long vpmu_counter_start(struct vpmu *v, unsigned long base, unsigned long mask, unsigned long flags,
			uint64_t ival)
{
	bool set_value = flags & SBI_PMU_START_FLAG_SET_INIT_VALUE;
	struct op_args a = {0, 0, 0, -1, set_value, ival, false};
	unsigned int idx;
	long err;

	if (flags & ~SBI_PMU_START_FLAG_MASK)
		return SBI_ERR_INVALID_PARAM;
	if ((flags & SBI_PMU_START_FLAG_SET_INIT_VALUE) &&
	    (flags & SBI_PMU_START_FLAG_INIT_SNAPSHOT))
		return SBI_ERR_INVALID_PARAM;
	if (check_set(v, base, mask))
		return SBI_ERR_INVALID_PARAM;
	if ((flags & SBI_PMU_START_FLAG_INIT_SNAPSHOT) || (mask & (mask - 1)))
		return set_start(v, base, mask, flags, ival);
	idx = (unsigned int)base + lowest_bit(mask);
	err = ctr_transition(v, idx, OP_START, &a);
	if (err == SBI_ERR_INVALID_PARAM) /* unconfigured */
		return err;
	sync_hw_deadline(v, a.near);
	return err;
}

/*
 * One counter without a snapshot (what Linux stops at every context
 * switch): the same transitions. A plain stop changes no bit of hcounteren
 * (configured, placed and synced stay), and the deadline only for a counter
 * near its top or when none is left started (what ovf_update_deadline then finds).
 */
static long stop_one(struct vpmu *v, unsigned int idx)
{
	long err = ctr_transition(v, idx, OP_STOP, NULL);

	/* sync_deadline's rule, near_top only asked while something still runs */
	if (!err && v->loaded)
		sync_deadline(v,
			      v->started_hw && is_hw(idx) && near_top(idx, ctr_of(v, idx)->value));
	return err;
}

/* One counter stopped with RESET (what Linux does when it deletes an event) */
static long reset_one(struct vpmu *v, unsigned int idx)
{
	const struct vpmu_ctr *c = ctr_of(v, idx);
	bool started = c->state == VPMU_CTR_STARTED;

	ctr_transition(v, idx, OP_RESET, NULL);
	sync_hw_deadline(v, started && is_hw(idx) && near_top(idx, c->value));
	return started ? SBI_SUCCESS : SBI_ERR_ALREADY_STOPPED;
}

long vpmu_counter_stop(struct vpmu *v, unsigned long base, unsigned long mask, unsigned long flags)
{
	if (flags & ~SBI_PMU_STOP_FLAG_MASK)
		return SBI_ERR_INVALID_PARAM;
	if (check_set(v, base, mask))
		return SBI_ERR_INVALID_PARAM;
	if ((flags & SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT) || (mask & (mask - 1)))
		return set_stop(v, base, mask, flags);
	if (flags & SBI_PMU_STOP_FLAG_RESET)
		return reset_one(v, (unsigned int)base + lowest_bit(mask));
	return stop_one(v, (unsigned int)base + lowest_bit(mask));
}

static long fw_check(struct vpmu *v, unsigned long idx)
{
	if (idx >= VPMU_MAX_COUNTERS || !((v->visible_fw >> idx) & 1) ||
	    ctr_of(v, idx)->state == VPMU_CTR_UNCONFIGURED)
		return SBI_ERR_INVALID_PARAM;
	return SBI_SUCCESS;
}

struct sbi_ret vpmu_counter_fw_read(struct vpmu *v, unsigned long idx)
{
	if (fw_check(v, idx))
		return ret_err(SBI_ERR_INVALID_PARAM);
	return ret_val((unsigned long)ctr_of(v, idx)->value);
}

struct sbi_ret vpmu_counter_fw_read_hi(struct vpmu *v, unsigned long idx)
{
	if (fw_check(v, idx))
		return ret_err(SBI_ERR_INVALID_PARAM);
	return ret_val(0); /* RV64: the whole value fits FW_READ */
}

void vpmu_fw_event(struct vpmu *v, unsigned int fw_event, uint64_t n)
{
	unsigned int i;

	if (fw_event >= SBI_PMU_FW_MAX)
		return;
	for (i = layout.num_hw; i < num_total(); i++) {
		struct vpmu_ctr *c = &v->ctr[i];

		if (c->state == VPMU_CTR_STARTED &&
		    c->event_idx == EVENT_IDX(SBI_PMU_EVENT_TYPE_FW, fw_event))
			c->value += n;
	}
}
