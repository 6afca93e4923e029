/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The hypervisor's own sampling counter (docs/profiling.md): when the
 * guest's policy asks for a profile, one hardware counter of the vCPU,
 * outside what the guest is offered, counts the profile's event in the
 * guest's VS and VU modes only. It is an ordinary counter to the rest of
 * the logic (state STARTED, placed, saved and restored with the vCPU,
 * exclusive counting, deadlines), except that its wraps are samples for
 * the core (vpmu_host_sample), never the guest's overflows: no OF bit in
 * the guest's view, no LCOFI.
 */
#include "vpmu/ctr.h"
#include "vpmu/place.h"

/* The value the counter starts from: period events before its wrap */
static uint64_t prof_start_value(const struct vpmu *v)
{
	return -v->policy->profile.period & layout.hw_width_mask[v->prof_ctr];
}

/*
 * The highest programmable counter the host can count the event on (the
 * guest keeps the low ones, which perf tries first). 0: none.
 */
static unsigned int prof_choose(int key)
{
	uint32_t can = layout.hw_valid & ~((1U << FIRST_PROG) - 1);

	if (key >= 0)
		can &= layout.can[key];
	return can ? 31 - (unsigned int)__builtin_clz(can) : 0;
}

/* Arm the sampling counter the policy asks for, if the host can; the masks follow */
static void prof_arm(struct vpmu *v)
{
	const struct vpmu_profile *p = &v->policy->profile;
	struct op_args a = {p->event_idx, p->event_data, 0, -1, false, 0, false};
	unsigned int i;

	/* a wrap is a sample only where the host has overflow; a hardware event */
	if (!p->period || !layout.sscofpmf || !vpmu_offered ||
	    ev_classify(p->event_idx, p->event_data, &a.key) != EVK_HW)
		return;
	i = prof_choose(a.key);
	if (!i || p->period > layout.hw_width_mask[i])
		return;
	/* guest filter flags 0: both guest modes count, never the host's */
	if (ctr_transition(v, i, OP_CONFIG, &a))
		return;
	v->prof_ctr = i;
	v->prof_mask = 1U << i;
	a.set_value = true;
	a.value = prof_start_value(v);
	ctr_transition(v, i, OP_START, &a);
}

void prof_setup(struct vpmu *v)
{
	if (v->prof_mask)
		ctr_transition(v, v->prof_ctr, OP_RESET, NULL);
	v->prof_mask = 0;
	v->prof_ctr = 0;
	prof_arm(v);
}

uint64_t prof_wrapped(struct vpmu *v)
{
	/* the hardware holds the wrapped value, no longer the counter's */
	v->synced &= ~v->prof_mask;
	v->nr_samples++;
	vpmu_host_sample(v);
	return prof_start_value(v);
}

void prof_overflow(struct vpmu *v)
{
	unsigned int i = v->prof_ctr;
	struct vpmu_ctr *c = &v->ctr[i];

	/* not synced until it restarts: a scan the start makes must not find this wrap again */
	c->value = prof_wrapped(v);
	vpmu_phys_stop(i);
	if ((unlikely(layout.start_prep) ? place_start_waiting(v, i, c->value)
					 : vpmu_phys_start(i, c->value)) == SBI_SUCCESS)
		v->synced |= v->prof_mask;
	/* the deadline stays: it was no later than this wrap, and the next one is later */
}

unsigned int vpmu_profile_counter(const struct vpmu *v)
{
	return v->prof_ctr;
}
