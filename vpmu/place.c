/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Placement: which physical counter of a hart holds which vCPU's
 * configuration (struct vpmu_hart's owner table), configuring, taking over,
 * releasing and restoring them. A vCPU's counters stay configured on the
 * hart after it is put (lazy), so coming back to a hart nobody else used
 * costs one start, and a configuration another vCPU left exactly as needed
 * is taken over without a host call. docs/vpmu.md, "load / put".
 */
#include "vpmu/ctr.h"
#include "vpmu/place.h"

/* Those of mask whose physical counters on hart h v still owns (nobody took them since) */
uint32_t place_still_owned(const struct vpmu *v, const struct vpmu_hart *h, uint32_t mask)
{
	uint32_t m = mask;
	unsigned int i;

	for_each_bit_dense (i, m)
		if (h->owner[i] != v)
			mask &= ~(1U << i);
	return mask;
}

/* A started, synced counter's stop and save, out of line: a RESET's caller keeps a small frame */
static void place_stop_save(struct vpmu *v, unsigned int i)
{
	save_value(v, &v->ctr[i], i, vpmu_phys_stop_read_one(i) & width_mask(i));
}

/*
 * The host configured some other counter q than asked (fixed-counter
 * fallback for cycles/instret): undo it. If q holds one of our own loaded
 * counters, its filter bits were overwritten: configure it again, keeping
 * its value and run state. Anyone else's configuration there is gone.
 */
static void place_undo(struct vpmu *v, unsigned long q)
{
	struct vpmu_hart *h = v->resident;
	struct vpmu_ctr *c;
	bool run;

	if (q >= VPMU_MAX_HW)
		return;
	c = &v->ctr[q];
	if (!v->loaded || !place_owns_live(v, h, (unsigned int)q)) {
		place_release(h, (unsigned int)q);
		return;
	}
	/* started from its value in the hardware; a load's taken-over one starts later */
	run = c->state == VPMU_CTR_STARTED && hw_bit(v->synced, (unsigned int)q);
	if (run)
		place_stop_save(v, (unsigned int)q);
	h->configs_changed++;
	vpmu_phys_config((unsigned int)q, host_flags(c->flags), c->event_idx, c->event_data);
	if (run) {
		ovf_before_start(v);
		set_hw_bit(&v->synced, (unsigned int)q,
			   vpmu_phys_start((unsigned int)q, c->value) == SBI_SUCCESS);
	}
}

static void place_load_ctr(struct vpmu *v, unsigned int i);

/*
 * Take v's counter i off its physical counter: stopped and saved if it ran,
 * released, no longer placed. The hypervisor's sampling counter gives its
 * event up so to a guest counter on a platform that counts an event on one
 * counter only; it is placed again when it can (place_resume_sampler).
 */
void place_unplace(struct vpmu *v, unsigned int i)
{
	if (v->ctr[i].state == VPMU_CTR_STARTED && v->loaded && hw_bit(v->synced, i))
		place_stop_save(v, i);
	place_release(v->resident, i);
	set_hw_bit(&v->placed, i, false);
	set_hw_bit(&v->synced, i, false);
}

/* The sampling counter, off its physical counter for a guest's (place_unplace): back if it can */
void place_resume_sampler(struct vpmu *v)
{
	unsigned int i = v->prof_ctr;

	place_load_ctr(v, i);
	if (hw_bit(v->placed, i))
		ovf_update_deadline(v); /* it runs near its top */
}

/* place_try_config's host configuration, out of line: a take-over keeps a small frame */
bool place_config_anew(struct vpmu *v, struct vpmu_hart *h, unsigned int p,
		       unsigned long guest_flags, unsigned long event_idx, uint64_t data, int key)
{
	uint8_t flags = (uint8_t)host_flags(guest_flags);
	struct sbi_ret r;

	if (h->owner[p])
		place_release(h, p);
	if (!host_can(key, p))
		return false;
	/*
	 * QEMU counts an event on one programmable counter per hart only: any
	 * other configuration with the same event (a stopped one of another
	 * vCPU, a stale one of ours) would leave ours at zero. v's own live
	 * counters stay: the guest asked for the event twice, as on hardware.
	 */
	if (layout.event_exclusive) {
		unsigned int q;

		for_each_bit (q, h->owned & ~(1U << p) & ~((1U << FIRST_PROG) - 1)) {
			if (h->event_idx[q] != event_idx || h->event_data[q] != data)
				continue;
			if (!place_owns_live(v, h, q))
				place_release(h, q);
			else if ((v->prof_mask >> q) & 1)
				place_unplace(v, q); /* the guest's counter gets the event */
			else if ((v->prof_mask >> p) & 1)
				return false; /* the sampling counter waits for the guest's to go */
		}
	}
	h->configs_changed++;
	r = vpmu_phys_config(p, host_flags(guest_flags), event_idx, data);
	if (r.error == SBI_SUCCESS && r.value == p) {
		h->owner[p] = v;
		h->owned |= 1U << p;
		h->owners_changed++;
		h->event_idx[p] = (uint32_t)event_idx;
		h->event_data[p] = data;
		h->flags[p] = flags;
		return true;
	}
	if (r.error == SBI_SUCCESS)
		place_undo(v, r.value);
	return false;
}

static void place_load_ctr(struct vpmu *v, unsigned int i)
{
	struct vpmu_ctr *c = &v->ctr[i];

	set_hw_bit(&v->placed, i, false);
	set_hw_bit(&v->synced, i, false);
	if (!place_try_config(v, i, c->flags, c->event_idx, c->event_data, c->key))
		return;
	set_hw_bit(&v->placed, i, true);
	if (c->state == VPMU_CTR_STARTED) {
		ovf_before_start(v);
		set_hw_bit(&v->synced, i, vpmu_phys_start(i, c->value) == SBI_SUCCESS);
	}
}

/*
 * Stop and save the physical counter behind hardware counter i, and leave
 * it configured, stopped, as a put leaves it: v's next configuration of the
 * same event there (Linux's add after its del, a RESET) takes it over
 * without configuring it again (place_try_config), and anyone else's evicts
 * it. Released at once if its OF bit is set: guests of the SBI backend
 * read scountovf without a trap.
 */
void place_unload_ctr(struct vpmu *v, unsigned int i)
{
	const struct vpmu_ctr *c = &v->ctr[i];

	if (place_on_this_hart(v, i)) {
		/* a RESET after the stop (Linux's del) only checks the OF bit */
		if (c->state == VPMU_CTR_STARTED && v->loaded && hw_bit(v->synced, i))
			place_stop_save(v, i);
		if (layout.sscofpmf && ((vpmu_phys_overflowed() >> i) & 1))
			place_release(v->resident, i);
	}
	set_hw_bit(&v->placed, i, false);
	set_hw_bit(&v->synced, i, false);
}

/*
 * A start that must first wait for exclusive counting or take a pending
 * LCOFI (ovf_before_start): out of line, the common one is a single call
 */
long place_start_waiting(struct vpmu *v, unsigned int i, uint64_t value)
{
	if (vpmu_exclusive && !((v->prof_mask >> i) & 1))
		vpmu_host_counting_starts(v);
	ovf_before_start(v);
	return vpmu_phys_start(i, value);
}

/*
 * The state machine: ctr_transition is the one place where a counter
 * changes state, one case per operation. Each returns an SBI error code; on
 * error the counter is unchanged. The dispatcher is inlined, so a caller
 * naming its operation (all do) calls that case alone: start, stop and
 * reset, the hot ones, are inlined in their turn, configuration is not.
 */
long ctr_config(struct vpmu *v, unsigned int i, const struct op_args *a)
{
	struct vpmu_ctr *c = ctr_of(v, i);
	bool hw = is_hw(i);

	if (c->state == VPMU_CTR_STARTED)
		return SBI_ERR_NOT_SUPPORTED;
	if (hw && v->loaded) {
		bool had = hw_bit(v->placed, i);

		if (had)
			place_unload_ctr(v, i);
		if (!place_try_config(v, i, a->flags, a->event_idx, a->event_data, a->key)) {
			if (had)
				place_load_ctr(v, i);
			return SBI_ERR_NOT_SUPPORTED;
		}
		set_hw_bit(&v->placed, i, true);
		set_hw_bit(&v->synced, i, false);
	} else if (hw) {
		/*
		 * put: the old configuration stays on its resident hart for the
		 * next load to take over or evict, but not with an overflow flag,
		 * as at a loaded vCPU's (place_unload_ctr); the load places the new
		 */
		place_unload_ctr(v, i);
	}
	c->event_idx = (uint32_t)a->event_idx;
	c->event_data = a->event_data;
	c->key = (int8_t)a->key;
	c->flags = a->flags & FILTER_FLAGS;
	c->state = VPMU_CTR_CONFIGURED;
	if (hw)
		v->configured_hw |= 1U << i;
	ovf_clear(v, i); /* a new event has not overflowed */
	return SBI_SUCCESS;
}

_Static_assert(sizeof(struct vpmu_ctr) % sizeof(uint64_t) == 0, "ctr[].value as a strided array");

/* Start the counters of mask, placed but not synced, each from its value */
static void place_start_placed(struct vpmu *v, uint32_t mask)
{
	unsigned int i;

	ovf_before_start(v);
	if (mask & (mask - 1)) {
		v->synced |= vpmu_phys_start_values(mask, &v->ctr[0].value,
						    sizeof(struct vpmu_ctr) / sizeof(uint64_t));
	} else {
		i = lowest_bit(mask);
		set_hw_bit(&v->synced, i, vpmu_phys_start(i, v->ctr[i].value) == SBI_SUCCESS);
	}
}

/*
 * A load's counters not still in place: place_load_ctr for each, except
 * that those another vCPU left configured exactly as needed are taken over
 * and started together after (vpmu_phys_start_values). Returns those of
 * them started, not overflowed and near their top (they need the deadline).
 */
uint32_t place_load_all(struct vpmu *v, struct vpmu_hart *h, uint32_t load)
{
	uint32_t taken = 0, near = 0;
	unsigned int i;

	for_each_bit_dense (i, load) {
		struct vpmu_ctr *c = &v->ctr[i];

		if (c->state == VPMU_CTR_STARTED && !((v->overflow >> i) & 1) &&
		    near_top(i, c->value))
			near |= 1U << i;
		if (!place_can_take_over(v, h, i, c->event_idx, c->event_data,
					 (uint8_t)host_flags(c->flags), c->key)) {
			place_load_ctr(v, i);
			continue;
		}
		place_take_over(v, h, i);
		v->placed |= 1U << i; /* at once: place_owns_live() for the next ones */
		v->synced &= ~(1U << i);
		taken |= 1U << i;
	}
	taken &= v->started_hw & v->placed; /* placed: still, after the others' configurations */
	if (taken)
		place_start_placed(v, taken);
	return near;
}

/*
 * Nothing on this hart was configured or released since v's put
 * (configs_seen): every counter v had placed there holds v's configuration
 * still, taken over by another vCPU since or not, and counts its event as
 * it did (the event map is unchanged). One pass takes them back without a
 * test, and every started one starts from its value: those another vCPU
 * ran need it, and for the others it is the value they hold. Returns the
 * started ones near their top (put noted those in step; the others are tested).
 */
uint32_t place_take_back(struct vpmu *v, struct vpmu_hart *h)
{
	uint32_t near;
	uint32_t back = v->configured_hw & v->placed, run = back & v->started_hw, stopped = 0;
	unsigned int i;

	for_each_bit_dense (i, run)
		h->owner[i] = v;
	/* a stopped one another vCPU ran no longer holds its value */
	for_each_bit_dense (i, back & ~run)
		if (h->owner[i] != v) {
			h->owner[i] = v;
			stopped |= 1U << i;
		}
	near = v->near_hw & run;
	for_each_bit_dense (i, run & ~v->synced)
		if (near_top(i, v->ctr[i].value))
			near |= 1U << i;
	h->owned |= back;
	h->owners_changed++;
	v->synced &= ~(run | stopped);
	if (run)
		place_start_placed(v, run);
	return near;
}
