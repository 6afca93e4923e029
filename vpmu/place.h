/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private to vpmu/'s logic, for the files that place counters: which
 * physical counter of a hart holds which vCPU's counter (owner[], placed,
 * synced), place.c's functions and the small ones inline on the SBI
 * calls' and the vCPU switch's paths.
 */
#ifndef VPMU_PLACE_H
#define VPMU_PLACE_H

#include "vpmu/internal.h"

uint32_t place_still_owned(const struct vpmu *v, const struct vpmu_hart *h, uint32_t mask);
bool place_config_anew(struct vpmu *v, struct vpmu_hart *h, unsigned int p,
		       unsigned long guest_flags, unsigned long event_idx, uint64_t data, int key);
void place_unload_ctr(struct vpmu *v, unsigned int i);
void place_unplace(struct vpmu *v, unsigned int i);
void place_resume_sampler(struct vpmu *v);
long place_start_waiting(struct vpmu *v, unsigned int i, uint64_t value);
uint32_t place_load_all(struct vpmu *v, struct vpmu_hart *h, uint32_t load);
uint32_t place_take_back(struct vpmu *v, struct vpmu_hart *h);

/* A loaded vCPU's resident hart is this one (vpmu_vcpu_load): no lookup */
static inline bool place_on_this_hart(const struct vpmu *v, unsigned int i)
{
	return hw_bit(v->placed, i) && v->resident &&
	       (v->loaded || v->resident == vpmu_host_hart()) && v->resident->owner[i] == v;
}

/* Free physical counter p of this hart, whoever configured it */
static inline void place_release(struct vpmu_hart *h, unsigned int p)
{
	vpmu_phys_release(p);
	h->owner[p] = NULL;
	h->owned &= ~(1U << p);
	h->owners_changed++;
	h->configs_changed++;
}

/* Free every physical counter of hart h that still holds a configuration of v's */
static inline void place_release_all_of(const struct vpmu *v, struct vpmu_hart *h)
{
	for (unsigned int p = 0; p < layout.num_hw; p++)
		if (h->owner[p] == v)
			place_release(h, p);
}

/* Physical counter q of hart h holds one of v's configured counters (not a stale entry) */
static inline bool place_owns_live(const struct vpmu *v, const struct vpmu_hart *h, unsigned int q)
{
	return h->owner[q] == v && v->resident == h && hw_bit(v->placed, q) &&
	       v->ctr[q].state != VPMU_CTR_UNCONFIGURED;
}

/*
 * Would a counter p configured with ev count it if taken over as it is?
 * Yes where the platform's one-counter-per-event map gives ev to p, or to a
 * live counter of v's own (the guest asked twice: configuring p again would
 * not change that). Not where it gives ev to a counter v does not use: a
 * new configuration of p releases that one first and gets the event.
 */
static inline bool place_counts_as_taken(const struct vpmu *v, const struct vpmu_hart *h,
					 unsigned int p, unsigned long ev)
{
	int q;

	if (!layout.event_exclusive)
		return true;
	q = vpmu_phys_event_counter(p, ev);
	if (q == (int)p)
		return true;
	/* the profiling sampler's counter is not the guest's to count on */
	return q >= 0 && place_owns_live(v, h, (unsigned int)q) && !((v->prof_mask >> q) & 1);
}

/*
 * Physical counter p holds exactly this configuration, stopped: put by a
 * vCPU since (or by v before a migration), and its value is written at the
 * start. Taken over as it is, with the platform's event map unchanged, two
 * vCPUs that count the same events switch without a host call per counter.
 * Only from a vCPU of the same guest: a take-over is much faster than a
 * configuration, and another guest could time it to learn what this one
 * counts. Only if it counts the event there (place_counts_as_taken): the fuzz victim's
 * instret, taken over where another vCPU had configured it twice, stood
 * still (2 fuzz-pmu runs in 3).
 */
static inline bool place_can_take_over(const struct vpmu *v, const struct vpmu_hart *h,
				       unsigned int p, unsigned long event_idx, uint64_t data,
				       uint8_t flags, int key)
{
	return h->owner[p] && h->owner[p]->guest == v->guest && h->event_idx[p] == event_idx &&
	       h->event_data[p] == data && h->flags[p] == flags && host_can(key, p) &&
	       place_counts_as_taken(v, h, p, event_idx);
}

static inline void place_take_over(struct vpmu *v, struct vpmu_hart *h, unsigned int p)
{
	h->owner[p] = v;
	h->owned |= 1U << p;
	h->owners_changed++;
}

/*
 * Configure an event on physical counter p of this hart exactly; true on
 * success. What holds that configuration already, stopped, is taken over
 * (a RESET's counter configured again: Linux's add after its del).
 * Anything else configured there is evicted first: another vCPU's stopped
 * configuration, or a stale one of v's own (left on this hart before a
 * migration, a reset elsewhere, or a RESET). A refusal is never
 * remembered: it may only mean that p was busy.
 */
static inline bool place_try_config(struct vpmu *v, unsigned int p, unsigned long guest_flags,
				    unsigned long event_idx, uint64_t data, int key)
{
	struct vpmu_hart *h = v->resident;

	if (p >= VPMU_MAX_HW)
		return false;
	if (place_can_take_over(v, h, p, event_idx, data, (uint8_t)host_flags(guest_flags), key)) {
		place_take_over(v, h, p);
		return true;
	}
	return place_config_anew(v, h, p, guest_flags, event_idx, data, key);
}

#endif
