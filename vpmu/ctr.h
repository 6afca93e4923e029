/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private to vpmu/'s logic: the per-counter state machine.
 *
 *               CONFIG                    START
 *  UNCONFIGURED -------> CONFIGURED (stopped) -------> STARTED
 *       ^                 |   ^   (CONFIG again:        |
 *       |     RESET       |   |    SKIP_MATCH)   STOP   |
 *       +-----------------+   +-------------------------+
 *       ^                                               |
 *       +-----------------------RESET (stop + forget)---+
 *
 * ctr_transition is the one place where a counter changes state, one case
 * per operation; each does the physical side effect when the vCPU is
 * loaded and returns an SBI error code, changing nothing on error. Every
 * caller names its operation, so a single-counter START or STOP (perf's
 * every context switch) compiles to that case alone. START, STOP and RESET
 * are inline here; CONFIG, which places the counter, is in place.c.
 */
#ifndef VPMU_CTR_H
#define VPMU_CTR_H

#include "vpmu/place.h"

enum vpmu_op {
	OP_CONFIG, /* map an event (UNCONFIGURED or CONFIGURED -> CONFIGURED) */
	OP_START,  /* CONFIGURED -> STARTED */
	OP_STOP,   /* STARTED -> CONFIGURED */
	OP_RESET,  /* any -> UNCONFIGURED; the physical counter stays configured, stopped */
};

struct op_args {
	unsigned long event_idx;
	uint64_t event_data;
	unsigned long flags; /* OP_CONFIG: guest filter flags */
	int key;	     /* OP_CONFIG: acceptance cache key */
	bool set_value;	     /* OP_START: load value first */
	uint64_t value;
	bool near; /* OP_START, out: a hardware counter started near its top (the deadline moves) */
};

/* Map an event (place.c): UNCONFIGURED or CONFIGURED -> CONFIGURED */
long ctr_config(struct vpmu *v, unsigned int i, const struct op_args *a);

/*
 * Everything but the physical start first: after it, only the synced bit
 * is left to set, and the caller's frame keeps little. Until then the
 * counter is not synced, so an overflow scan the start makes
 * (ovf_before_start) leaves it alone.
 */
static inline long ctr_start(struct vpmu *v, unsigned int i, struct op_args *a)
{
	struct vpmu_ctr *c = ctr_of(v, i);
	uint32_t bit = 1U << (i % VPMU_MAX_HW);
	bool hw;

	a->near = false;
	if (c->state == VPMU_CTR_UNCONFIGURED)
		return SBI_ERR_INVALID_PARAM;
	if (c->state == VPMU_CTR_STARTED)
		return SBI_ERR_ALREADY_STARTED;
	/* a configured counter is a hardware one exactly when configured_hw has it */
	hw = i < VPMU_MAX_HW && (v->configured_hw & bit);
	if (a->set_value)
		c->value = a->value & (hw ? layout.hw_width_mask[i % VPMU_MAX_HW] : ~0ULL);
	c->state = VPMU_CTR_STARTED;
	if (hw) {
		a->near = near_top(i, c->value);
		v->started_hw |= bit;
		/* a sampler: what the deadline learned holds, up to DEADLINE_KEPT_TICKS */
		if (a->near && v->backoff > DEADLINE_KEPT_TICKS)
			v->backoff = DEADLINE_KEPT_TICKS;
		/* not loaded (or not placed): started from its value at the next load */
		v->synced &= ~bit;
		if ((v->placed & bit) && v->loaded &&
		    (unlikely(layout.start_prep) ? place_start_waiting(v, i, c->value)
						 : vpmu_phys_start(i, c->value)) == SBI_SUCCESS)
			v->synced |= bit;
	}
	ovf_clear(v, i);
	return SBI_SUCCESS;
}

/* The physical stop and read last: the caller's frame keeps little across it */
static inline long ctr_stop(struct vpmu *v, unsigned int i)
{
	struct vpmu_ctr *c = ctr_of(v, i);
	uint32_t bit = 1U << (i % VPMU_MAX_HW);

	if (c->state != VPMU_CTR_STARTED)
		return SBI_ERR_ALREADY_STOPPED;
	c->state = VPMU_CTR_CONFIGURED;
	/* a started counter is a hardware one exactly when started_hw has it */
	if (i >= VPMU_MAX_HW || !(v->started_hw & bit))
		return SBI_SUCCESS;
	v->started_hw &= ~bit;
	/* synced stays as it was: an unsynced counter's physical value is not its own */
	if ((v->placed & v->synced & bit) && v->loaded)
		save_value(v, c, i,
			   vpmu_phys_stop_read_one(i) & layout.hw_width_mask[i % VPMU_MAX_HW]);
	return SBI_SUCCESS;
}

static inline long ctr_reset(struct vpmu *v, unsigned int i)
{
	struct vpmu_ctr *c = ctr_of(v, i);
	bool hw = is_hw(i);

	if (hw)
		place_unload_ctr(v, i);
	c->state = VPMU_CTR_UNCONFIGURED;
	c->event_idx = 0;
	c->event_data = 0;
	c->flags = 0;
	if (hw) {
		v->started_hw &= ~(1U << i);
		v->configured_hw &= ~(1U << i);
	}
	ovf_clear(v, i);
	return SBI_SUCCESS;
}

static inline long ctr_transition(struct vpmu *v, unsigned int i, enum vpmu_op op,
				  struct op_args *a)
{
	switch (op) {
	case OP_CONFIG: /* UNCONFIGURED or CONFIGURED -> CONFIGURED */
		return ctr_config(v, i, a);
	case OP_START: /* CONFIGURED -> STARTED */
		return ctr_start(v, i, a);
	case OP_STOP: /* STARTED -> CONFIGURED */
		return ctr_stop(v, i);
	case OP_RESET: /* any -> UNCONFIGURED */
		return ctr_reset(v, i);
	}
	return SBI_ERR_FAILED;
}

#endif
