/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A vCPU's vPMU over its life: init, policy, reset (reboot, HSM stop), and
 * load / put at the switch point on its hart (lazy: put stops and saves the
 * running counters and leaves them configured; load continues, takes back
 * or restores them).
 */
#include "vpmu/ctr.h"
#include "vpmu/place.h"

static const struct vpmu_policy no_policy;

void vpmu_vcpu_init(struct vpmu *v)
{
	__builtin_memset(v, 0, sizeof(*v));
	vpmu_vcpu_set_policy(v, NULL);
	v->deadline = UINT64_MAX;
	v->backoff = DEADLINE_MIN_TICKS;
}

void vpmu_vcpu_set_policy(struct vpmu *v, const struct vpmu_policy *p)
{
	v->policy = p ? p : &no_policy;
	prof_setup(v); /* before the masks: they leave its counter out */
	v->allowed_hw = hw_allowed_of(v);
	v->visible = visible_mask_of(v);
	v->visible_fw = v->visible & fw_counters();
	v->nr_visible = num_visible_of(v);
	v->ev_seen.kind = EVK_UNSUPPORTED; /* what it accepted, the new policy may not */
	if (v->loaded && v->prof_mask != phys_this_hart()->hidden)
		vpmu_phys_hide(v->prof_mask);
	sync_hw(v); /* loaded: hcounteren and the deadline for the sampling counter */
}

void vpmu_vcpu_set_guest(struct vpmu *v, unsigned int guest)
{
	v->guest = guest;
}

void vpmu_vcpu_reset(struct vpmu *v)
{
	unsigned long nr_overflows, nr_unsignalled, nr_samples;
	const struct vpmu_policy *policy = v->policy;
	unsigned int guest = v->guest;
	bool loaded = v->loaded;
	unsigned int i;

	for (i = 0; i < num_total(); i++)
		ctr_transition(v, i, OP_RESET, NULL);
	/* the vCPU stops or starts afresh: what the resets left configured here goes too */
	if (v->resident && v->resident == vpmu_host_hart())
		place_release_all_of(v, v->resident);
	/* taken after the resets: a wrap their stops found is one of them */
	nr_overflows = v->nr_overflows;
	nr_unsignalled = v->nr_unsignalled;
	nr_samples = v->nr_samples;
	vpmu_vcpu_init(v);
	v->nr_overflows = nr_overflows; /* statistics outlive a reset */
	v->nr_unsignalled = nr_unsignalled;
	v->nr_samples = nr_samples;
	v->guest = guest;
	v->loaded = loaded;
	if (loaded)
		v->resident = vpmu_host_hart();
	/* what it lets the guest see, and the hypervisor's profile runs on (placed if loaded) */
	vpmu_vcpu_set_policy(v, policy);
	sync_hw(v);
}

/*
 * Counters still configured on this hart since the vCPU was put here, and
 * untouched by anyone since, just continue: one start call for all of them.
 * Those other vCPUs only took over come back without a test (place_take_back);
 * the others are taken over or configured again (place_load_all), and all
 * of those start from their saved values.
 */
void vpmu_vcpu_load(struct vpmu *v)
{
	struct vpmu_hart *h = vpmu_host_hart();
	uint32_t here, cont, of, load, near = 0;
	unsigned int i;

	v->loaded = true;
	if (v->resident != h) {
		/* what it left here during an earlier stay is stale now */
		place_release_all_of(v, h);
		v->resident = h;
		v->placed = 0;
		v->synced = 0;
	}
	/*
	 * Other vCPUs' stopped counters must not show their overflow flags to
	 * this one (a guest may read scountovf without a trap): release those.
	 */
	of = layout.sscofpmf ? vpmu_phys_overflowed() : 0;
	for_each_bit (i, of)
		if (i < layout.num_hw && h->owner[i] && !place_owns_live(v, h, i))
			place_release(h, i);
	/* others took counters over, but nobody configured any: take v's back */
	if (h->owners_changed != v->owners_seen && h->configs_changed == v->configs_seen) {
		near = place_take_back(v, h);
		cont = 0;
		load = v->configured_hw & ~v->placed;
	} else {
		/* still here (resident is h), values unchanged since put: the started ones continue */
		here = v->configured_hw & v->placed & (~v->started_hw | v->synced);
		if (h->owners_changed != v->owners_seen)
			here = place_still_owned(v, h, here);
		cont = here & v->started_hw;
		load = v->configured_hw & ~here;
	}
	if (load)
		near |= place_load_all(v, h, load);
	if (cont)
		ovf_before_start(v);
	if (cont && vpmu_phys_start_mask(cont) != SBI_SUCCESS) {
		/* the host refused the batch: start them one by one */
		for_each_bit (i, cont) {
			vpmu_phys_stop(i);
			set_hw_bit(&v->synced, i,
				   vpmu_phys_start(i, v->ctr[i].value) == SBI_SUCCESS);
		}
	}
	/* the sampling counter of a profiled vCPU, none of another's */
	if (unlikely(v->prof_mask != phys_this_hart()->hidden))
		vpmu_phys_hide(v->prof_mask);
	vpmu_phys_set_counteren(vpmu_hcounteren(v));
	/* every counter it placed is its own now (a put can trust that) */
	v->owners_seen = h->owners_changed;
	/*
	 * Only a counter near its top needs a deadline. Those that continue hold
	 * the value put read: near as put found them (near_hw), the others far.
	 */
	near |= v->near_hw & cont;
	if (near)
		ovf_update_deadline_of(v, near);
	else
		v->deadline = UINT64_MAX;
	VPMU_DEBUG_CHECK(v, "a vCPU load");
}

void vpmu_vcpu_put(struct vpmu *v)
{
	const struct vpmu_hart *h = v->resident;
	uint32_t run = 0, near = 0;

	if (!v->loaded)
		return;
	/* one stop for every counter counting on its physical counter here now */
	if (h && h == vpmu_host_hart()) {
		uint32_t placed = v->configured_hw & v->placed, own = placed;

		/* nobody changed owners since the load made them all its own: no need to look */
		if (h->owners_changed != v->owners_seen)
			own = place_still_owned(v, h, placed);
		run = own & v->started_hw & v->synced;
		/* the same tests for the next load */
		v->owners_seen = own == placed ? h->owners_changed : h->owners_changed - 1;
		v->configs_seen = own == placed ? h->configs_changed : h->configs_changed - 1;
	}
	if (run) {
		uint64_t now[VPMU_MAX_HW];

		vpmu_phys_stop_read(run, now);
		/* hardware counters: i < VPMU_MAX_HW; an index as wide as a pointer needs no extension */
		for (unsigned long i = lowest_bit(run), m = run >> i; m; m >>= 1, i++) {
			uint64_t w, val;

			if (!(m & 1))
				continue;
			w = layout.hw_width_mask[i];
			val = now[i] & w;
			save_value(v, &v->ctr[i], i, val);
			if (near_width_top(w, val))
				near |= 1U << i;
		}
	}
	v->near_hw = near;
	/* wraps are all recorded by value now: a pending LCOFI says nothing more */
	if (layout.sscofpmf && vpmu_phys_irq_pending())
		vpmu_phys_irq_clear();
	vpmu_phys_set_counteren(0);
	v->deadline = UINT64_MAX;
	v->loaded = false;
	VPMU_DEBUG_CHECK(v, "a vCPU put");
}
