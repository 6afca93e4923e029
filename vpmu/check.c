/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The invariants of struct vpmu and struct vpmu_hart (vpmu_types.h names
 * them V1..V9, H1, H2, E1, E2, P1, P2), as code: the unit tests check them after
 * every call, the fuzzer after every step, and a debug build (make hv-debug)
 * after every PMU call and vCPU switch.
 */
#include "vpmu/internal.h"

#define FAIL_IF(cond, what)                                                                        \
	do {                                                                                       \
		if (cond)                                                                          \
			return what;                                                               \
	} while (0)

const char *vpmu_check_hart(const struct vpmu_hart *h)
{
	uint32_t owned = 0;

	for (unsigned int i = 0; i < VPMU_MAX_HW; i++)
		if (h->owner[i])
			owned |= 1U << i;
	FAIL_IF(owned != h->owned, "H1: owned is not the counters with an owner");
	FAIL_IF(owned & ~layout.hw_valid, "H2: a counter the layout does not offer is owned");
	FAIL_IF(layout.start_prep != (vpmu_exclusive || layout.start_keeps_of),
		"L1: start_prep is not exclusive counting or a start that keeps OF");
	return NULL;
}

/* V2, V3, V8: the masks say the states */
static const char *check_states(const struct vpmu *v)
{
	uint32_t started = 0, configured = 0;

	for (unsigned int i = 0; i < VPMU_MAX_COUNTERS; i++) {
		const struct vpmu_ctr *c = &v->ctr[i];

		FAIL_IF(c->state > VPMU_CTR_STARTED, "a counter state out of range");
		FAIL_IF(i >= num_total() && c->state != VPMU_CTR_UNCONFIGURED,
			"V8: a counter the layout does not offer is configured");
		if (!is_hw(i))
			continue;
		if (c->state == VPMU_CTR_STARTED)
			started |= 1U << i;
		if (c->state != VPMU_CTR_UNCONFIGURED)
			configured |= 1U << i;
	}
	FAIL_IF(started != v->started_hw, "V2: started_hw is not the started hardware counters");
	FAIL_IF(configured != v->configured_hw,
		"V3: configured_hw is not the configured hardware counters");
	return NULL;
}

const char *vpmu_check(struct vpmu *v)
{
	const char *why = check_states(v);
	uint64_t configured = 0;

	if (why)
		return why;
	for (unsigned int i = 0; i < VPMU_MAX_COUNTERS; i++)
		if (v->ctr[i].state != VPMU_CTR_UNCONFIGURED)
			configured |= 1ULL << i;
	FAIL_IF(v->overflow & ~configured, "V1: an unconfigured counter has overflowed");
	FAIL_IF(v->overflow && !layout.sscofpmf, "V1: an overflow without Sscofpmf");
	FAIL_IF(v->synced & ~v->placed, "V4: a synced counter is not placed");
	FAIL_IF(v->placed & ~v->configured_hw, "V4: a placed counter is not configured");
	if (v->loaded) {
		FAIL_IF(v->resident != vpmu_host_hart(), "V5: loaded, but resident elsewhere");
		for (unsigned int i = 0; i < VPMU_MAX_HW; i++)
			FAIL_IF(((v->placed >> i) & 1) && v->resident->owner[i] != v,
				"V5: loaded, but a placed counter is another vCPU's");
	}
	for (unsigned int i = 0; i < VPMU_MAX_HW; i++) {
		const struct vpmu_hart *h = v->resident;
		const struct vpmu_ctr *c = &v->ctr[i];

		if (!((v->placed >> i) & 1) || !h || h->owner[i] != v)
			continue;
		FAIL_IF(h->event_idx[i] != c->event_idx || h->event_data[i] != c->event_data ||
				h->flags[i] != (uint8_t)host_flags(c->flags),
			"V9: a placed counter's resident configuration is not the guest's");
	}
	FAIL_IF(!v->policy, "V6: no policy");
	FAIL_IF(v->visible != visible_mask_of(v), "V6: visible is not what the policy allows");
	FAIL_IF(v->visible_fw != (v->visible & fw_counters()),
		"V6: visible_fw is not the visible firmware counters");
	FAIL_IF(v->nr_visible != num_visible_of(v), "V6: nr_visible is not num_counters");
	FAIL_IF(v->allowed_hw != hw_allowed_of(v), "V6: allowed_hw is not what the policy allows");
	FAIL_IF(v->prof_mask != (v->prof_ctr ? 1U << v->prof_ctr : 0) ||
			(v->prof_mask &&
			 (v->ctr[v->prof_ctr].state == VPMU_CTR_UNCONFIGURED ||
			  v->ctr[v->prof_ctr].event_idx != v->policy->profile.event_idx)),
		"P1: the sampling counter is not configured with the profile's event");
	FAIL_IF(v->overflow & v->prof_mask, "P2: the sampling counter has a guest overflow");
	FAIL_IF((!v->loaded || !v->started_hw) && v->deadline != UINT64_MAX,
		"V7: a deadline while nothing runs");
	FAIL_IF(v->evinfo.busy && v->evinfo.next > v->evinfo.num,
		"E1: EVENT_GET_INFO past its end");
	FAIL_IF(!ev_seen_holds(v), "E2: the remembered event is not what classifying finds");
	return v->resident ? vpmu_check_hart(v->resident) : NULL;
}

void vpmu_debug_check(struct vpmu *v, const char *after)
{
	const char *why = vpmu_check(v);

	if (why)
		hv_panic("vpmu: invariant broken after %s: %s", after, why);
}
