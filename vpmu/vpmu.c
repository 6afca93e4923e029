/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Virtual PMU logic: counter layout, the per-counter state machine and the
 * nine SBI PMU functions. See docs/vpmu.md for the design and for every
 * decision where the SBI specification leaves room.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/riscv/sbi_spec.h"
#include "arch/riscv/nospec.h"
#include "vpmu/bits.h"
#include "vpmu/vpmu.h"
#include "vpmu/vpmu_host.h"
#include "vpmu/vpmu_phys.h"
#include "vpmu/vpmu_sbi.h"

#define EVENT_TYPE(e)	(((e) >> 16) & 0xf)
#define EVENT_CODE(e)	((e)&0xffff)
#define EVENT_IDX(t, c) (((unsigned long)(t) << 16) | (c))
#define EV_CYCLES	EVENT_IDX(SBI_PMU_EVENT_TYPE_HW, SBI_PMU_HW_CPU_CYCLES)
#define EV_INSTRET	EVENT_IDX(SBI_PMU_EVENT_TYPE_HW, SBI_PMU_HW_INSTRUCTIONS)

/* Visit the set bits of a counter mask only (masks are sparse, 64 bits wide) */
#define for_each_bit(i, m)                                                                         \
	for (unsigned long __m = (m); __m && ((i) = lowest_bit(__m), 1); __m &= __m - 1)

#define CTR_TIME    1
#define CTR_INSTRET 2
#define FIRST_PROG  3

#define FW_CTR_INFO    (SBI_PMU_CTR_INFO_FW | (63UL << 12)) /* 64 bits, CSR 0 */
#define RAW_DATA_BITS  48
#define RAW2_DATA_BITS 56 /* SBI v3.0: raw event v2 data is event_data[55:0] */
#define FILTER_FLAGS                                                                               \
	(SBI_PMU_CFG_FLAG_SET_VUINH | SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_UINH |     \
	 SBI_PMU_CFG_FLAG_SET_SINH | SBI_PMU_CFG_FLAG_SET_MINH)

/*
 * What the host can count where, probed once at boot for general (key =
 * code 1..10) and cache events (key = 11 + code, code <= 6 << 3 | 2 << 1 |
 * 1): bit p of can[key] = the host configures the event on physical counter
 * p. It never changes afterwards, so no answer depends on what other
 * guests happen to use. Raw events (event_data dependent) are asked live.
 */
#define EV_KEYS 65
/* Counters further than this from wrapping need no deadline */
#define FAR_COUNTS (1ULL << 48)
/*
 * The deadline is a fallback for overflows the platform does not signal:
 * never sooner than this many timer ticks (a trap costs several), and
 * twice as late each time it finds nothing, up to the maximum (a counter
 * that does not advance, e.g. a second counter of one event on QEMU, or a
 * guest staying in a filtered mode, must not cost a trap every tick).
 */
#define DEADLINE_MIN_TICKS 32
#define DEADLINE_MAX_TICKS (1UL << 17)

static struct {
	bool sscofpmf;	     /* the host has counter overflow (OF bits, LCOFI) */
	bool start_keeps_of; /* ... and a start leaves OF set while LCOFI is pending */
	unsigned int num_hw; /* H */
	uint32_t hw_valid;
	unsigned long info[VPMU_MAX_COUNTERS]; /* counter_get_info's answer for each index */
	uint64_t hw_width_mask[VPMU_MAX_HW];   /* all ones up to the counter's top bit */
	bool prog_counts[2];	       /* [0] cycles, [1] instret on programmable counters */
	bool event_exclusive;	       /* the host counts an event on one counter per hart only */
	bool other_harts;	       /* counters are charged with other harts' instructions */
	unsigned long counts_per_tick; /* the fastest a counter advances per timer tick */
	uint32_t can[EV_KEYS];
} layout;

/* Guests are offered the extension: the host has an SBI PMU (vpmu_global_init) */
bool vpmu_offered;
/* The core runs counting vCPUs alone: ask it before a start (vpmu_set_exclusive) */
static bool vpmu_exclusive;

void vpmu_set_exclusive(bool on)
{
	vpmu_exclusive = on;
}

/* ---------------------------------------------------------------- helpers */

static const struct vpmu_policy no_policy;

static unsigned int num_total(void)
{
	return vpmu_offered ? layout.num_hw + VPMU_NUM_FW : 0;
}

/* What this guest sees: firmware counters may be switched off by policy */
static unsigned int num_visible_of(const struct vpmu *v)
{
	if (!vpmu_offered)
		return 0;
	return v->policy->no_firmware ? layout.num_hw : num_total();
}

/* Kept with the vCPU (vpmu_vcpu_set_policy): every PMU call asks */
static unsigned int num_visible(const struct vpmu *v)
{
	return v->nr_visible;
}

static uint32_t hw_allowed(const struct vpmu *v)
{
	uint32_t m = v->policy->counters_mask;

	return layout.hw_valid & (m ? m : ~0U);
}

static bool rule_has(const struct vpmu_event_rule *r, unsigned int n, unsigned long ev)
{
	for (unsigned int i = 0; i < n; i++)
		if (ev >= r[i].first && ev <= r[i].last)
			return true;
	return false;
}

/*
 * May the guest count event_idx, and on which hardware counters? Denied
 * events and, when an allow table exists, unlisted hardware events are not.
 */
static bool event_allowed(const struct vpmu *v, unsigned long ev, bool fw, uint32_t *counters)
{
	const struct vpmu_policy *p = v->policy;

	*counters = hw_allowed(v);
	if (rule_has(p->deny, p->nr_deny, ev))
		return false;
	if (fw)
		return !p->no_firmware;
	if (!p->nr_allow)
		return true;
	for (unsigned int i = 0; i < p->nr_allow; i++)
		if (ev >= p->allow[i].first && ev <= p->allow[i].last) {
			*counters &= p->allow[i].counters;
			return true;
		}
	return false;
}

static bool is_fw(unsigned long idx)
{
	return idx >= layout.num_hw && idx < num_total();
}

_Static_assert(VPMU_MAX_COUNTERS <= VPMU_CTR_SLOTS && (VPMU_CTR_SLOTS & (VPMU_CTR_SLOTS - 1)) == 0,
	       "ctr[] holds every counter, and its size is a power of two");

/* Counter i's slot (i checked below VPMU_MAX_COUNTERS): no speculative access leaves ctr[] */
static inline struct vpmu_ctr *ctr_of(struct vpmu *v, unsigned long i)
{
	return &v->ctr[array_index_pow2(i, VPMU_CTR_SLOTS)];
}

static bool is_hw(unsigned long idx)
{
	return idx < layout.num_hw && ((layout.hw_valid >> idx) & 1);
}

/* The firmware counters' indices, above the hardware ones */
static uint64_t fw_counters(void)
{
	unsigned int n = num_total();

	_Static_assert(VPMU_MAX_COUNTERS < 64, "counter masks: no shift reaches 64");
	return n > layout.num_hw && n < 64 ? ((1ULL << n) - 1) & ~((1ULL << layout.num_hw) - 1) : 0;
}

/* The counters this guest may use: the host has them and the policy allows them */
static uint64_t visible_mask_of(const struct vpmu *v)
{
	return hw_allowed(v) | (v->policy->no_firmware ? 0 : fw_counters());
}

static uint64_t visible_mask(const struct vpmu *v)
{
	return v->visible;
}

static bool is_visible(const struct vpmu *v, unsigned long idx)
{
	return idx < VPMU_MAX_COUNTERS && ((visible_mask(v) >> idx) & 1);
}

static uint64_t width_mask(unsigned long idx)
{
	return is_hw(idx) ? layout.hw_width_mask[array_index_nospec(idx, VPMU_MAX_HW)] : ~0ULL;
}

/* Could the host count the event on physical counter p? Raw events: maybe (ask it) */
static bool host_can(int key, unsigned int p)
{
	return key < 0 || (p < 32 && ((layout.can[key] >> p) & 1));
}

/* Host filter flags for a guest counter: guest S/U are the host's VS/VU */
static unsigned long host_flags(unsigned long guest_flags)
{
	unsigned long f =
		SBI_PMU_CFG_FLAG_SET_SINH | SBI_PMU_CFG_FLAG_SET_UINH | SBI_PMU_CFG_FLAG_SET_MINH;

	if (guest_flags & SBI_PMU_CFG_FLAG_SET_SINH)
		f |= SBI_PMU_CFG_FLAG_SET_VSINH;
	if (guest_flags & SBI_PMU_CFG_FLAG_SET_UINH)
		f |= SBI_PMU_CFG_FLAG_SET_VUINH;
	return f;
}

static struct sbi_ret ret_err(long err)
{
	return (struct sbi_ret){err, 0};
}

static struct sbi_ret ret_val(unsigned long val)
{
	return (struct sbi_ret){SBI_SUCCESS, val};
}

/*
 * A set of counters: INVALID_PARAM unless the mask is non-empty and every
 * bit names a valid counter (no overflow of base + bit).
 */
static long check_set(const struct vpmu *v, unsigned long base, unsigned long mask)
{
	/*
	 * The visible counters lie below num_visible (< 64): the shift stays
	 * below 64, and a bit of mask that would name a counter at or past
	 * num_visible (or past 63) meets a 0 in visible >> base.
	 */
	if (base >= num_visible(v) || !mask || (mask & ~(visible_mask(v) >> base)))
		return SBI_ERR_INVALID_PARAM;
	return SBI_SUCCESS;
}

/* ------------------------------------------------------------ event kinds */

enum ev_kind {
	EVK_BAD = -2,	      /* not an encoding the spec defines */
	EVK_UNSUPPORTED = -1, /* well formed, but pmuvisor cannot count it */
	EVK_HW = 0,
	EVK_FW = 1,
};

static int classify(unsigned long event_idx, uint64_t data, int *key)
{
	unsigned int type = EVENT_TYPE(event_idx), code = EVENT_CODE(event_idx);

	*key = -1;
	if (event_idx >> 20)
		return EVK_BAD;
	switch (type) {
	case SBI_PMU_EVENT_TYPE_HW:
		if (code < SBI_PMU_HW_CPU_CYCLES || code > SBI_PMU_HW_REF_CPU_CYCLES || data)
			return EVK_UNSUPPORTED;
		*key = (int)code;
		return EVK_HW;
	case SBI_PMU_EVENT_TYPE_CACHE:
		/* code = cache_id[15:3] op_id[2:1] result_id[0] */
		if ((code >> 3) > 6 || ((code >> 1) & 3) > 2 || data)
			return EVK_UNSUPPORTED;
		*key = 11 + (int)code;
		return EVK_HW;
	case SBI_PMU_EVENT_TYPE_RAW:
		if (code)
			return EVK_BAD;
		return (data >> RAW_DATA_BITS) ? EVK_UNSUPPORTED : EVK_HW;
	case SBI_PMU_EVENT_TYPE_RAW_V2:
		if (code)
			return EVK_BAD;
		return (data >> RAW2_DATA_BITS) ? EVK_UNSUPPORTED : EVK_HW;
	case SBI_PMU_EVENT_TYPE_FW:
		/*
		 * Only the events the hypervisor counts (misaligned and access
		 * faults go to the guest without it; the guest has no HFENCE);
		 * no SBI_PMU_FW_PLATFORM nor implementation events.
		 */
		if (code >= SBI_PMU_FW_MAX || data || !((vpmu_host_fw_events() >> code) & 1))
			return EVK_UNSUPPORTED;
		return EVK_FW;
	default:
		return EVK_UNSUPPORTED; /* a type the spec reserves: nothing counts it */
	}
}

/* classify and event_allowed, remembered for the next call's same event */
static __attribute__((noinline)) int event_accept_anew(struct vpmu *v, unsigned long event_idx,
						       uint64_t data)
{
	struct vpmu_ev_seen *s = &v->ev_seen;
	int key, kind = classify(event_idx, data, &key);
	uint32_t allowed;

	if (kind < 0 || !event_allowed(v, event_idx, kind == EVK_FW, &allowed))
		return EVK_UNSUPPORTED;
	s->event_idx = event_idx;
	s->event_data = data;
	s->allowed = allowed;
	s->key = key;
	s->kind = kind;
	return kind;
}

/* The event's kind (< 0: the guest may not count it), its key and allowed counters */
static inline int event_accept(struct vpmu *v, unsigned long event_idx, uint64_t data, int *key,
			       uint32_t *allowed)
{
	const struct vpmu_ev_seen *s = &v->ev_seen;
	int kind = s->kind;

	if (kind < 0 || s->event_idx != event_idx || s->event_data != data)
		kind = event_accept_anew(v, event_idx, data);
	*key = s->key;
	*allowed = s->allowed;
	return kind;
}

/*
 * Hardware counters that may count event_idx for v, and in which order: the
 * programmable ones ascending, and for cycles and instret their fixed
 * counter (*fixed, else -1) last: programmable counters have an overflow
 * interrupt, so events there can be sampled (OpenSBI places them the same
 * way). On hosts that count an event on one programmable counter per hart
 * only (QEMU), a second counter of the same event would read 0 there: then
 * the fixed counter comes first (*fixed_first), as it does where
 * programmable counters cannot count the event at all.
 */
static uint32_t hw_candidate_set(const struct vpmu *v, unsigned long event_idx, int *fixed,
				 bool *fixed_first)
{
	int f = event_idx == EV_CYCLES ? 0 : event_idx == EV_INSTRET ? CTR_INSTRET : -1;
	bool prog = f < 0 || layout.prog_counts[f == CTR_INSTRET];
	uint32_t set = prog ? layout.hw_valid & ~((1U << FIRST_PROG) - 1) : 0;
	bool first = !prog;
	unsigned int i;

	if (f >= 0 && prog && layout.event_exclusive)
		for_each_bit (i, v->configured_hw & ~((1U << FIRST_PROG) - 1))
			if (v->ctr[i].event_idx == event_idx) {
				first = true;
				break;
			}
	if (f >= 0 && is_hw((unsigned long)f))
		set |= 1U << f;
	else
		f = -1;
	*fixed = f;
	*fixed_first = first;
	return set;
}

/* The same, as a list in that order */
static unsigned int hw_candidates(const struct vpmu *v, unsigned long event_idx,
				  unsigned int out[VPMU_MAX_HW])
{
	int fixed;
	bool first;
	uint32_t set = hw_candidate_set(v, event_idx, &fixed, &first);
	unsigned int i, n = 0;

	if (fixed >= 0) {
		set &= ~(1U << fixed);
		if (first)
			out[n++] = (unsigned int)fixed;
	}
	for_each_bit (i, set)
		out[n++] = i;
	if (fixed >= 0 && !first)
		out[n++] = (unsigned int)fixed;
	return n;
}

static bool hw_candidate(const struct vpmu *v, unsigned long event_idx, unsigned int idx)
{
	int fixed;
	bool first;

	return idx < 32 && ((hw_candidate_set(v, event_idx, &fixed, &first) >> idx) & 1);
}

/* ---------------------------------------------------- physical counters */

/* Counter i of v is configured on the physical counter of the hart we run on */
/* Bit i of a hardware counter mask (placed, synced); no bit for other indices */
static bool hw_bit(uint32_t mask, unsigned int i)
{
	return i < VPMU_MAX_HW && ((mask >> i) & 1);
}

static void set_hw_bit(uint32_t *mask, unsigned int i, bool on)
{
	uint32_t bit;

	if (i >= VPMU_MAX_HW)
		return;
	bit = 1U << i;
	*mask = on ? *mask | bit : *mask & ~bit;
}

/* Those of mask whose physical counters on hart h v still owns (nobody took them since) */
static uint32_t still_owned(const struct vpmu *v, const struct vpmu_hart *h, uint32_t mask)
{
	uint32_t m = mask;
	unsigned int i;

	for_each_bit_dense (i, m)
		if (h->owner[i] != v)
			mask &= ~(1U << i);
	return mask;
}

/* A loaded vCPU's resident hart is this one (vpmu_vcpu_load): no lookup */
static bool on_this_hart(const struct vpmu *v, unsigned int i)
{
	return hw_bit(v->placed, i) && v->resident &&
	       (v->loaded || v->resident == vpmu_host_hart()) && v->resident->owner[i] == v;
}

/*
 * The one place where an overflow is recorded: once per wrap, until the
 * guest starts the counter again, and the guest's LCOFI goes with it.
 * Without Sscofpmf on the host there is no overflow for guests at all.
 */
static void record_overflow(struct vpmu *v, unsigned int i)
{
	if (!layout.sscofpmf || ((v->overflow >> i) & 1))
		return;
	v->overflow |= 1ULL << i;
	v->nr_overflows++;
	if (i < FIRST_PROG || !((vpmu_phys_overflowed() >> i) & 1))
		v->nr_unsignalled++; /* the platform did not flag it (yet); phys == i */
	vpmu_host_raise_lcofi(v);
}

/* The guest cleared counter i's overflow (start, new event, reset) */
static void clear_overflow(struct vpmu *v, unsigned int i)
{
	uint64_t was = v->overflow;

	v->overflow &= ~(1ULL << i);
	if (was && !v->overflow)
		vpmu_host_cancel_lcofi(v);
}

/*
 * Wraps of the running counters: a value below the one the counter was
 * started (or resumed) from. The platform's OF bits are not needed: QEMU
 * sets them late or never in some cases (docs/vpmu.md).
 */
/* Those of run (started, not wrapped) that are on this hart's physical counters now */
static __attribute__((noinline)) uint32_t on_hart_now(const struct vpmu *v, uint32_t run)
{
	const struct vpmu_hart *h = v->resident;

	if (!h || h != vpmu_host_hart())
		return 0;
	return still_owned(v, h, run & v->synced & v->placed);
}

/*
 * The started counters of the loaded vCPU that count on this hart's
 * physical counters now and have not wrapped yet: the ones a wrap or a
 * deadline concerns. Inline up to the first test: most calls stop there.
 */
static inline uint32_t running_unwrapped(const struct vpmu *v)
{
	uint32_t run = v->started_hw & ~(uint32_t)v->overflow;

	return run && v->loaded && layout.sscofpmf ? on_hart_now(v, run) : 0;
}

static void scan_overflows(struct vpmu *v)
{
	unsigned int i;

	for_each_bit (i, running_unwrapped(v))
		if ((vpmu_phys_read(i) & width_mask(i)) < v->ctr[i].value)
			record_overflow(v, i);
}

static __attribute__((noinline)) uint64_t deadline_of(struct vpmu *v, uint32_t run)
{
	uint64_t best = UINT64_MAX, now = 0;
	unsigned int i;

	for_each_bit (i, run) {
		uint64_t w = width_mask(i), left, wait;

		left = w - (vpmu_phys_read(i) & w);
		if (left >= FAR_COUNTS)
			continue;
		wait = left / layout.counts_per_tick + 1;
		if (wait < v->backoff)
			wait = v->backoff;
		if (!now)
			now = vpmu_host_now();
		if (now + wait < best)
			best = now + wait;
	}
	return best;
}

/*
 * When must the hart look again? A counter advances at most
 * layout.counts_per_tick per timer tick, so none of them can wrap before
 * v->deadline. The core arms the hart's timer for it.
 */
static void update_deadline(struct vpmu *v)
{
	uint32_t run = running_unwrapped(v);

	v->deadline = run ? deadline_of(v, run) : UINT64_MAX;
}

/*
 * Before the host starts a counter: an LCOFI still pending would make
 * OpenSBI leave the counter's overflow flag set, and it would never
 * interrupt again. Record what overflowed and clear it first. The
 * delegation backend clears the flag itself: nothing to do there
 * (layout.start_keeps_of false), and the interrupt is taken as it comes.
 */
static void phys_prepare_start(struct vpmu *v)
{
	if (layout.start_keeps_of && vpmu_phys_irq_pending())
		vpmu_overflow_irq(v);
}

/*
 * Save a stopped counter's value; a value below the one it ran from means
 * it wrapped. c: counter i's slot, as the caller has it
 */
static void save_value(struct vpmu *v, struct vpmu_ctr *c, unsigned long i, uint64_t now)
{
	if (now < c->value)
		record_overflow(v, (unsigned int)i);
	c->value = now;
}

/* Free physical counter p of this hart, whoever configured it */
static void phys_release(struct vpmu_hart *h, unsigned int p)
{
	vpmu_phys_stop(p, 1);
	h->owner[p] = NULL;
	h->owned &= ~(1U << p);
	h->owners_changed++;
	h->configs_changed++;
}

/* Free every physical counter of hart h that still holds a configuration of v's */
static void phys_release_all_of(const struct vpmu *v, struct vpmu_hart *h)
{
	for (unsigned int p = 0; p < layout.num_hw; p++)
		if (h->owner[p] == v)
			phys_release(h, p);
}

/* Physical counter q of hart h holds one of v's configured counters (not a stale entry) */
static bool owns_live(const struct vpmu *v, const struct vpmu_hart *h, unsigned int q)
{
	return h->owner[q] == v && v->resident == h && hw_bit(v->placed, q) &&
	       v->ctr[q].state != VPMU_CTR_UNCONFIGURED;
}

/* A started, synced counter's stop and save, out of line: a RESET's caller keeps a small frame */
static __attribute__((noinline)) void phys_stop_save(struct vpmu *v, unsigned int i)
{
	save_value(v, &v->ctr[i], i, vpmu_phys_stop_read_one(i) & width_mask(i));
}

/*
 * The host configured some other counter q than asked (fixed-counter
 * fallback for cycles/instret): undo it. If q holds one of our own loaded
 * counters, its filter bits were overwritten: configure it again, keeping
 * its value and run state. Anyone else's configuration there is gone.
 */
static void phys_undo(struct vpmu *v, unsigned long q)
{
	struct vpmu_hart *h = v->resident;
	struct vpmu_ctr *c;
	bool run;

	if (q >= VPMU_MAX_HW)
		return;
	c = &v->ctr[q];
	if (!v->loaded || !owns_live(v, h, (unsigned int)q)) {
		phys_release(h, (unsigned int)q);
		return;
	}
	/* started from its value in the hardware; a load's taken-over one starts later */
	run = c->state == VPMU_CTR_STARTED && hw_bit(v->synced, (unsigned int)q);
	if (run)
		phys_stop_save(v, (unsigned int)q);
	h->configs_changed++;
	vpmu_phys_config((unsigned int)q, host_flags(c->flags), c->event_idx, c->event_data);
	if (run) {
		phys_prepare_start(v);
		set_hw_bit(&v->synced, (unsigned int)q,
			   vpmu_phys_start((unsigned int)q, c->value) == SBI_SUCCESS);
	}
}

/*
 * Would a counter p configured with ev count it if taken over as it is?
 * Yes where the platform's one-counter-per-event map gives ev to p, or to a
 * live counter of v's own (the guest asked twice: configuring p again would
 * not change that). Not where it gives ev to a counter v does not use: a
 * new configuration of p releases that one first and gets the event.
 */
static inline __attribute__((always_inline)) bool
counts_as_taken(const struct vpmu *v, const struct vpmu_hart *h, unsigned int p, unsigned long ev)
{
	int q;

	if (!layout.event_exclusive)
		return true;
	q = vpmu_phys_event_counter_on(h, p, ev);
	return q == (int)p || (q >= 0 && owns_live(v, h, (unsigned int)q));
}

/*
 * Physical counter p holds exactly this configuration, stopped: put by a
 * vCPU since (or by v before a migration), and its value is written at the
 * start. Taken over as it is, with the platform's event map unchanged, two
 * vCPUs that count the same events switch without a host call per counter.
 * Only if it counts the event there (counts_as_taken): the fuzz victim's
 * instret, taken over where another vCPU had configured it twice, stood
 * still (2 fuzz-pmu runs in 3).
 */
static inline __attribute__((always_inline)) bool
can_take_over(const struct vpmu *v, const struct vpmu_hart *h, unsigned int p,
	      unsigned long event_idx, uint64_t data, uint8_t flags, int key)
{
	return h->owner[p] && h->event_idx[p] == event_idx && h->event_data[p] == data &&
	       h->flags[p] == flags && host_can(key, p) && counts_as_taken(v, h, p, event_idx);
}

static void take_over(struct vpmu *v, struct vpmu_hart *h, unsigned int p)
{
	h->owner[p] = v;
	h->owned |= 1U << p;
	h->owners_changed++;
}

/* phys_try_config's host configuration, out of line: a take-over keeps a small frame */
static __attribute__((noinline)) bool phys_config_anew(struct vpmu *v, struct vpmu_hart *h,
						       unsigned int p, unsigned long guest_flags,
						       unsigned long event_idx, uint64_t data,
						       int key)
{
	uint8_t flags = (uint8_t)host_flags(guest_flags);
	struct sbi_ret r;

	if (h->owner[p])
		phys_release(h, p);
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

		for_each_bit (q, h->owned & ~(1U << p) & ~((1U << FIRST_PROG) - 1))
			if (h->event_idx[q] == event_idx && h->event_data[q] == data &&
			    !owns_live(v, h, q))
				phys_release(h, q);
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
		phys_undo(v, r.value);
	return false;
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
static bool phys_try_config(struct vpmu *v, unsigned int p, unsigned long guest_flags,
			    unsigned long event_idx, uint64_t data, int key)
{
	struct vpmu_hart *h = v->resident;

	if (p >= VPMU_MAX_HW)
		return false;
	if (can_take_over(v, h, p, event_idx, data, (uint8_t)host_flags(guest_flags), key)) {
		take_over(v, h, p);
		return true;
	}
	return phys_config_anew(v, h, p, guest_flags, event_idx, data, key);
}

static void phys_load_ctr(struct vpmu *v, unsigned int i)
{
	struct vpmu_ctr *c = &v->ctr[i];

	set_hw_bit(&v->placed, i, false);
	set_hw_bit(&v->synced, i, false);
	if (!phys_try_config(v, i, c->flags, c->event_idx, c->event_data, c->key))
		return;
	set_hw_bit(&v->placed, i, true);
	if (c->state == VPMU_CTR_STARTED) {
		phys_prepare_start(v);
		set_hw_bit(&v->synced, i, vpmu_phys_start(i, c->value) == SBI_SUCCESS);
	}
}

/*
 * Stop and save the physical counter behind hardware counter i, and leave
 * it configured, stopped, as a put leaves it: v's next configuration of the
 * same event there (Linux's add after its del, a RESET) takes it over
 * without configuring it again (phys_try_config), and anyone else's evicts
 * it. Released at once if its OF bit is set: guests of the SBI backend
 * read scountovf without a trap.
 */
static void phys_unload_ctr(struct vpmu *v, unsigned int i)
{
	const struct vpmu_ctr *c = &v->ctr[i];

	if (on_this_hart(v, i)) {
		/* a RESET after the stop (Linux's del) only checks the OF bit */
		if (c->state == VPMU_CTR_STARTED && v->loaded && hw_bit(v->synced, i))
			phys_stop_save(v, i);
		if (layout.sscofpmf && ((vpmu_phys_overflowed() >> i) & 1))
			phys_release(v->resident, i);
	}
	set_hw_bit(&v->placed, i, false);
	set_hw_bit(&v->synced, i, false);
}

/* The next deadline: none while nothing is started (what update_deadline would find) */
static void sync_deadline(struct vpmu *v, bool deadline_moved)
{
	if (!v->started_hw)
		v->deadline = UINT64_MAX;
	else if (deadline_moved)
		update_deadline(v);
}

/* After every change of what runs: the hcounteren bits and the next deadline */
static void sync_hw_deadline(struct vpmu *v, bool deadline_moved)
{
	if (!v->loaded)
		return;
	vpmu_phys_set_counteren_on(v->resident, vpmu_hcounteren(v));
	sync_deadline(v, deadline_moved);
}

static void sync_hw(struct vpmu *v)
{
	sync_hw_deadline(v, true);
}

/*
 * Counters FAR_COUNTS or more below their top take no part in the deadline:
 * unless a start or stop concerns a nearer one, the deadline computed
 * before still holds (the others' wraps are no nearer than it said; after a
 * stop it may be early, and then the timer finds nothing and computes it
 * again). With none left started it goes at once: vpmu_timer looks only
 * while some counter is started, and a deadline left in the past would make
 * the hart's timer fire again and again.
 */
static bool near_width_top(uint64_t width_mask, uint64_t value)
{
	return width_mask - value < FAR_COUNTS;
}

static bool near_top(unsigned int i, uint64_t value) /* i: a hardware counter */
{
	return near_width_top(layout.hw_width_mask[i % VPMU_MAX_HW], value);
}

/*
 * A start that must first wait for exclusive counting or take a pending
 * LCOFI (phys_prepare_start): out of line, the common one is a single call
 */
static __attribute__((noinline)) long phys_start_waiting(struct vpmu *v, unsigned int i,
							 uint64_t value)
{
	if (vpmu_exclusive)
		vpmu_host_counting_starts(v);
	phys_prepare_start(v);
	return vpmu_phys_start_on(v->resident, i, value);
}

/* ------------------------------------------------------- state machine */

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

/*
 * The state machine: ctr_transition is the one place where a counter
 * changes state, one case per operation. Each returns an SBI error code; on
 * error the counter is unchanged. The dispatcher is inlined, so a caller
 * naming its operation (all do) calls that case alone: start, stop and
 * reset, the hot ones, are inlined in their turn, configuration is not.
 */
static __attribute__((noinline)) long ctr_config(struct vpmu *v, unsigned int i,
						 const struct op_args *a)
{
	struct vpmu_ctr *c = ctr_of(v, i);
	bool hw = is_hw(i);

	if (c->state == VPMU_CTR_STARTED)
		return SBI_ERR_NOT_SUPPORTED;
	if (hw && v->loaded) {
		bool had = hw_bit(v->placed, i);

		if (had)
			phys_unload_ctr(v, i);
		if (!phys_try_config(v, i, a->flags, a->event_idx, a->event_data, a->key)) {
			if (had)
				phys_load_ctr(v, i);
			return SBI_ERR_NOT_SUPPORTED;
		}
		set_hw_bit(&v->placed, i, true);
		set_hw_bit(&v->synced, i, false);
	}
	c->event_idx = (uint32_t)a->event_idx;
	c->event_data = a->event_data;
	c->key = (int8_t)a->key;
	c->flags = a->flags & FILTER_FLAGS;
	c->state = VPMU_CTR_CONFIGURED;
	if (hw)
		v->configured_hw |= 1U << i;
	clear_overflow(v, i); /* a new event has not overflowed */
	return SBI_SUCCESS;
}

/*
 * Everything but the physical start first: after it, only the synced bit
 * is left to set, and the caller's frame keeps little. Until then the
 * counter is not synced, so an overflow scan the start makes
 * (phys_prepare_start) leaves it alone.
 */
static inline __attribute__((always_inline)) long ctr_start(struct vpmu *v, unsigned int i,
							    struct op_args *a)
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
		bool near = near_top(i, c->value);

		__asm__("" : "+r"(near)); /* found now: across the start the frame keeps a flag */
		a->near = near;
		v->started_hw |= bit;
		v->backoff = DEADLINE_MIN_TICKS;
		/* not loaded (or not placed): started from its value at the next load */
		v->synced &= ~bit;
		if ((v->placed & bit) && v->loaded &&
		    (vpmu_exclusive || layout.start_keeps_of
			     ? phys_start_waiting(v, i, c->value)
			     : vpmu_phys_start_on(v->resident, i, c->value)) == SBI_SUCCESS)
			v->synced |= bit;
	}
	clear_overflow(v, i);
	return SBI_SUCCESS;
}

/* The physical stop and read last: the caller's frame keeps little across it */
static inline __attribute__((always_inline)) long ctr_stop(struct vpmu *v, unsigned int i)
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

static inline __attribute__((always_inline)) long ctr_reset(struct vpmu *v, unsigned int i)
{
	struct vpmu_ctr *c = ctr_of(v, i);
	bool hw = is_hw(i);

	if (hw)
		phys_unload_ctr(v, i);
	c->state = VPMU_CTR_UNCONFIGURED;
	c->event_idx = 0;
	c->event_data = 0;
	c->flags = 0;
	if (hw) {
		v->started_hw &= ~(1U << i);
		v->configured_hw &= ~(1U << i);
	}
	clear_overflow(v, i);
	return SBI_SUCCESS;
}

static inline __attribute__((always_inline)) long ctr_transition(struct vpmu *v, unsigned int i,
								 enum vpmu_op op, struct op_args *a)
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

/* -------------------------------------------------------------- global */

/* The event of a capability key, or 0 for keys that name no valid event */
static unsigned long key_event(unsigned int key)
{
	unsigned int code = key - 11;

	if (key >= SBI_PMU_HW_CPU_CYCLES && key <= SBI_PMU_HW_REF_CPU_CYCLES)
		return EVENT_IDX(SBI_PMU_EVENT_TYPE_HW, key);
	if (key >= 11 && (code >> 3) <= 6 && ((code >> 1) & 3) <= 2)
		return EVENT_IDX(SBI_PMU_EVENT_TYPE_CACHE, code);
	return 0;
}

/*
 * Ask the host, counter by counter, where it can count each general and
 * cache event. Every programmable counter ends up released (mhpmevent 0,
 * so no stale overflow flag either), whatever the firmware left there.
 */
static void probe_capabilities(void)
{
	for (unsigned int key = 0; key < EV_KEYS; key++) {
		unsigned long ev = key_event(key);

		for (unsigned int p = 0; ev && p < layout.num_hw; p++) {
			struct sbi_ret r;

			if (!is_hw(p))
				continue;
			r = vpmu_phys_config(p, host_flags(0), ev, 0);
			if (r.error)
				continue;
			if (r.value == p)
				layout.can[key] |= 1U << p;
			vpmu_phys_stop((unsigned int)r.value, 1);
		}
	}
	vpmu_hart_init();
}

/*
 * Every hart, once: release every programmable counter. OpenSBI leaves
 * them with mhpmevent.OF set; released, they all read 0 in scountovf, so
 * what a guest sees there never depends on other guests (docs/vpmu.md).
 */
void vpmu_hart_init(void)
{
	for (unsigned int p = FIRST_PROG; vpmu_offered && p < layout.num_hw; p++)
		if (is_hw(p) && !vpmu_phys_config(p, host_flags(0), EV_INSTRET, 0).error)
			vpmu_phys_stop(p, 1);
}

/*
 * A counter the host cannot keep the hypervisor and the firmware out of
 * would count them for the guest: it is not offered. Measured with cycles
 * or instret where the host puts them on the counter; otherwise (a counter
 * for TLB events only) OpenSBI sets the inhibit bits of mhpmevent only when
 * the hart has Sscofpmf.
 */
static void keep_filtered_counters(void)
{
	uint32_t dropped = 0;
	unsigned int p;

	for (p = 0; p < layout.num_hw; p++) {
		int f = -1;

		if (!is_hw(p))
			continue;
		if ((layout.can[SBI_PMU_HW_CPU_CYCLES] >> p) & 1)
			f = vpmu_phys_event_filtered(p, EV_CYCLES);
		if (f < 0 && ((layout.can[SBI_PMU_HW_INSTRUCTIONS] >> p) & 1))
			f = vpmu_phys_event_filtered(p, EV_INSTRET);
		if (f < 0)
			f = p < FIRST_PROG || layout.sscofpmf;
		if (!f)
			dropped |= 1U << p;
	}
	if (!dropped)
		return;
	layout.hw_valid &= ~dropped;
	for (unsigned int key = 0; key < EV_KEYS; key++)
		layout.can[key] &= ~dropped;
	layout.num_hw = layout.hw_valid ? 32 - (unsigned int)__builtin_clz(layout.hw_valid) : 0;
	if (layout.num_hw < FIRST_PROG)
		layout.num_hw = FIRST_PROG;
	hv_printf("vpmu: counters 0x%x cannot leave out the hypervisor's modes: not offered\n",
		  dropped);
}

/* First programmable counter the host puts ev on, or 0 */
static unsigned int first_prog_for(unsigned int key)
{
	for (unsigned int p = FIRST_PROG; p < layout.num_hw; p++)
		if ((layout.can[key] >> p) & 1)
			return p;
	return 0;
}

void vpmu_global_init(void)
{
	unsigned long n, i;
	unsigned int k, p;
	uint32_t wide;

	__builtin_memset(&layout, 0, sizeof(layout));
	vpmu_offered = false;
	if (!vpmu_phys_available()) {
		hv_printf("vpmu: the host has no SBI PMU: not offered to guests\n");
		return;
	}
	hv_printf("vpmu: physical counters through %s\n", vpmu_phys_init());
	n = vpmu_phys_num_counters();
	for (i = 0; i < n && i < VPMU_MAX_HW; i++) {
		struct sbi_ret r = vpmu_phys_counter_info(i);
		unsigned int bits;

		if (r.error || (r.value & SBI_PMU_CTR_INFO_FW) || i == CTR_TIME ||
		    SBI_PMU_CTR_INFO_CSR(r.value) != 0xc00 + i)
			continue;
		layout.hw_valid |= 1U << i;
		layout.info[i] = r.value;
		bits = SBI_PMU_CTR_INFO_WIDTH(r.value) + 1;
		layout.hw_width_mask[i] = bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
		layout.num_hw = (unsigned int)i + 1;
	}
	if (layout.num_hw < FIRST_PROG)
		layout.num_hw = FIRST_PROG;
	wide = 0;
	for (p = FIRST_PROG; p < layout.num_hw; p++)
		if (is_hw(p) && layout.hw_width_mask[p] == ~0ULL)
			wide |= 1U << p;
	vpmu_phys_set_wide(wide); /* before the probes start counters */
	vpmu_offered = true;
	layout.sscofpmf = vpmu_host_has_sscofpmf();
	layout.start_keeps_of = layout.sscofpmf && vpmu_phys_start_keeps_of();
	probe_capabilities();
	keep_filtered_counters();
	/* the firmware counters follow the last hardware one, wherever it ended up */
	for (i = layout.num_hw; i < layout.num_hw + VPMU_NUM_FW; i++)
		layout.info[i] = FW_CTR_INFO;

	/* Do programmable counters count cycles / instret? Probe one each. */
	for (k = 0; k < 2; k++) {
		p = first_prog_for(k ? SBI_PMU_HW_INSTRUCTIONS : SBI_PMU_HW_CPU_CYCLES);
		layout.prog_counts[k] =
			p && vpmu_phys_event_counts(p, k ? EV_INSTRET : EV_CYCLES) > 0;
	}
	/* Two programmable counters with instret: do both count? */
	for (p = FIRST_PROG; p + 1 < layout.num_hw; p++)
		if (is_hw(p) && is_hw(p + 1)) {
			layout.event_exclusive = vpmu_phys_event_shared(p, p + 1, EV_INSTRET) == 0;
			break;
		}
	layout.counts_per_tick = vpmu_phys_counts_per_tick();
	if (!layout.counts_per_tick)
		layout.counts_per_tick = 1;
	hv_printf("vpmu: %u hardware counters (mask 0x%x), %u firmware, cycles %s, instret %s%s",
		  layout.num_hw, layout.hw_valid, VPMU_NUM_FW,
		  layout.prog_counts[0] ? "any" : "fixed only",
		  layout.prog_counts[1] ? "any" : "fixed only",
		  layout.event_exclusive ? ", one counter per event" : "");
	if (layout.sscofpmf)
		hv_printf(", %lu counts per timer tick at most\n", layout.counts_per_tick);
	else
		hv_printf(", no overflow (no Sscofpmf)\n");
}

/*
 * Count, on this hart, instructions of a spin loop of iters iterations (2
 * instructions each), or what another hart executes while this one sleeps
 * (other != 0): with HS-mode-only filters, so nothing but this hart's own
 * HS work should count.
 */
#define PROBE_ITERS 50000
static uint64_t probe_count(unsigned int p, unsigned long iters, bool other, bool *ok)
{
	unsigned long hs_only = SBI_PMU_CFG_FLAG_SET_UINH | SBI_PMU_CFG_FLAG_SET_VSINH |
				SBI_PMU_CFG_FLAG_SET_VUINH | SBI_PMU_CFG_FLAG_SET_MINH;
	struct sbi_ret r = vpmu_phys_config(p, hs_only, EV_INSTRET, 0);
	uint64_t before, after;

	*ok = false;
	if (r.error || r.value != p) {
		if (!r.error)
			vpmu_phys_stop((unsigned int)r.value, 1);
		return 0;
	}
	if (vpmu_phys_start(p, 0) == SBI_SUCCESS) {
		before = vpmu_phys_read(p);
		if (other)
			*ok = vpmu_host_busy_other_hart(iters);
		else {
			vpmu_phys_spin(iters);
			*ok = true;
		}
		after = vpmu_phys_read(p);
	} else {
		before = after = 0;
	}
	vpmu_phys_stop(p, 1);
	return after - before;
}

void vpmu_probe_other_harts(void)
{
	unsigned int p = first_prog_for(SBI_PMU_HW_INSTRUCTIONS);
	uint64_t one, two, other;
	bool ok1, ok2, ok3;

	if (!vpmu_offered || !p || !layout.prog_counts[1])
		return;
	/* Does this hart count instructions exactly (QEMU -icount), not time? */
	one = probe_count(p, PROBE_ITERS, false, &ok1);
	two = probe_count(p, 2UL * PROBE_ITERS, false, &ok2);
	/* And does it count what another hart runs while it sleeps? */
	other = probe_count(p, PROBE_ITERS, true, &ok3);
	layout.other_harts = ok1 && ok2 && ok3 && two - one >= 2UL * PROBE_ITERS - 16 &&
			     two - one <= 2UL * PROBE_ITERS + 16 && other >= PROBE_ITERS;
	hv_printf("vpmu: counters count %s; a sleeping hart counted %lu of another hart's "
		  "%lu instructions%s\n",
		  ok1 && ok2 && two - one == 2UL * PROBE_ITERS ? "instructions exactly" : "time",
		  (unsigned long)other, 2UL * PROBE_ITERS,
		  layout.other_harts ? ": vCPUs with running counters run alone" : "");
}

bool vpmu_counts_other_harts(void)
{
	return layout.other_harts;
}

unsigned int vpmu_num_hw(void)
{
	return layout.num_hw;
}

unsigned int vpmu_num_total(void)
{
	return num_total();
}

uint32_t vpmu_hw_valid_mask(void)
{
	return layout.hw_valid;
}

bool vpmu_prog_counts(int instret)
{
	return layout.prog_counts[instret ? 1 : 0];
}

/* ---------------------------------------------------------------- vCPU */

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
	v->visible = visible_mask_of(v);
	v->visible_fw = v->visible & fw_counters();
	v->nr_visible = num_visible_of(v);
	v->ev_seen.kind = EVK_UNSUPPORTED; /* what it accepted, the new policy may not */
}

void vpmu_vcpu_reset(struct vpmu *v)
{
	unsigned long nr_overflows, nr_unsignalled;
	const struct vpmu_policy *policy = v->policy;
	bool loaded = v->loaded;
	unsigned int i;

	for (i = 0; i < num_total(); i++)
		ctr_transition(v, i, OP_RESET, NULL);
	/* the vCPU stops or starts afresh: what the resets left configured here goes too */
	if (v->resident && v->resident == vpmu_host_hart())
		phys_release_all_of(v, v->resident);
	/* taken after the resets: a wrap their stops found is one of them */
	nr_overflows = v->nr_overflows;
	nr_unsignalled = v->nr_unsignalled;
	vpmu_vcpu_init(v);
	v->nr_overflows = nr_overflows; /* statistics outlive a reset */
	v->nr_unsignalled = nr_unsignalled;
	vpmu_vcpu_set_policy(v, policy); /* and what it lets the guest see */
	v->loaded = loaded;
	if (loaded)
		v->resident = vpmu_host_hart();
	sync_hw(v);
}

_Static_assert(sizeof(struct vpmu_ctr) % sizeof(uint64_t) == 0, "ctr[].value as a strided array");

/* Start the counters of mask, placed but not synced, each from its value */
static void start_placed(struct vpmu *v, uint32_t mask)
{
	unsigned int i;

	phys_prepare_start(v);
	if (mask & (mask - 1)) {
		v->synced |= vpmu_phys_start_values(mask, &v->ctr[0].value,
						    sizeof(struct vpmu_ctr) / sizeof(uint64_t));
	} else {
		i = lowest_bit(mask);
		set_hw_bit(&v->synced, i, vpmu_phys_start(i, v->ctr[i].value) == SBI_SUCCESS);
	}
}

/*
 * A load's counters not still in place: phys_load_ctr for each, except
 * that those another vCPU left configured exactly as needed are taken over
 * and started together after (vpmu_phys_start_values). True if a started
 * one that has not overflowed is near its top (it needs the deadline).
 */
static __attribute__((noinline)) bool load_counters(struct vpmu *v, struct vpmu_hart *h,
						    uint32_t load)
{
	uint32_t taken = 0;
	bool near = false;
	unsigned int i;

	for_each_bit_dense (i, load) {
		struct vpmu_ctr *c = &v->ctr[i];

		if (c->state == VPMU_CTR_STARTED && !((v->overflow >> i) & 1))
			near |= near_top(i, c->value);
		if (!can_take_over(v, h, i, c->event_idx, c->event_data,
				   (uint8_t)host_flags(c->flags), c->key)) {
			phys_load_ctr(v, i);
			continue;
		}
		take_over(v, h, i);
		v->placed |= 1U << i; /* at once: owns_live() for the next ones */
		v->synced &= ~(1U << i);
		taken |= 1U << i;
	}
	taken &= v->started_hw & v->placed; /* placed: still, after the others' configurations */
	if (taken)
		start_placed(v, taken);
	return near;
}

/*
 * Nothing on this hart was configured or released since v's put
 * (configs_seen): every counter v had placed there holds v's configuration
 * still, taken over by another vCPU since or not, and counts its event as
 * it did (the event map is unchanged). One pass takes them back without a
 * test, and every started one starts from its value: those another vCPU
 * ran need it, and for the others it is the value they hold. *near if one
 * is near its top (put noted those in step; the others are tested).
 */
static __attribute__((noinline)) void take_back(struct vpmu *v, struct vpmu_hart *h, bool *near)
{
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
	for_each_bit_dense (i, run & ~v->synced)
		if (near_top(i, v->ctr[i].value))
			*near = true;
	if (v->near_hw & run)
		*near = true;
	h->owned |= back;
	h->owners_changed++;
	v->synced &= ~(run | stopped);
	if (run)
		start_placed(v, run);
}

/*
 * Counters still configured on this hart since the vCPU was put here, and
 * untouched by anyone since, just continue: one start call for all of them.
 * Those other vCPUs only took over come back without a test (take_back);
 * the others are taken over or configured again (load_counters), and all
 * of those start from their saved values.
 */
void vpmu_vcpu_load(struct vpmu *v)
{
	struct vpmu_hart *h = vpmu_host_hart();
	uint32_t here, cont, of, load;
	bool near = false;
	unsigned int i;

	v->loaded = true;
	if (v->resident != h) {
		/* what it left here during an earlier stay is stale now */
		phys_release_all_of(v, h);
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
		if (i < layout.num_hw && h->owner[i] && !owns_live(v, h, i))
			phys_release(h, i);
	/* others took counters over, but nobody configured any: take v's back */
	if (h->owners_changed != v->owners_seen && h->configs_changed == v->configs_seen) {
		take_back(v, h, &near);
		cont = 0;
		load = v->configured_hw & ~v->placed;
	} else {
		/* still here (resident is h), values unchanged since put: the started ones continue */
		here = v->configured_hw & v->placed & (~v->started_hw | v->synced);
		if (h->owners_changed != v->owners_seen)
			here = still_owned(v, h, here);
		cont = here & v->started_hw;
		load = v->configured_hw & ~here;
	}
	if (load && load_counters(v, h, load))
		near = true;
	if (cont)
		phys_prepare_start(v);
	if (cont && vpmu_phys_start_mask(cont) != SBI_SUCCESS) {
		/* the host refused the batch: start them one by one */
		for_each_bit (i, cont) {
			vpmu_phys_stop(i, 0);
			set_hw_bit(&v->synced, i,
				   vpmu_phys_start(i, v->ctr[i].value) == SBI_SUCCESS);
		}
	}
	vpmu_phys_set_counteren_on(h, vpmu_hcounteren(v));
	/* every counter it placed is its own now (a put can trust that) */
	v->owners_seen = h->owners_changed;
	/* only a counter near its top needs a deadline (those that continue: as put found them) */
	if ((v->near_hw & cont) || near)
		update_deadline(v);
	else
		v->deadline = UINT64_MAX;
}

void vpmu_overflow_irq(struct vpmu *v)
{
	vpmu_phys_irq_clear();
	if (v && v->loaded) {
		scan_overflows(v);
		update_deadline(v);
	}
}

void vpmu_timer(struct vpmu *v)
{
	unsigned long seen = v->nr_overflows;

	if (v->loaded && v->started_hw && vpmu_host_now() >= v->deadline) {
		scan_overflows(v);
		if (v->nr_overflows != seen)
			v->backoff = DEADLINE_MIN_TICKS;
		else if (v->backoff < DEADLINE_MAX_TICKS)
			v->backoff *= 2;
		update_deadline(v);
	}
}

bool vpmu_overflow_available(void)
{
	return vpmu_offered && layout.sscofpmf && layout.num_hw > FIRST_PROG;
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
			own = still_owned(v, h, placed);
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
}

unsigned long vpmu_hcounteren(const struct vpmu *v)
{
	/* only a loaded vCPU's counters are in the hardware */
	if (!v->loaded)
		return 0;
	return v->configured_hw & v->placed & v->synced;
}

uint64_t vpmu_ctr_value(struct vpmu *v, unsigned int i)
{
	struct vpmu_ctr *c;

	if (i >= VPMU_MAX_COUNTERS)
		return 0;
	c = &v->ctr[i];
	if (is_hw(i) && c->state == VPMU_CTR_STARTED && hw_bit(v->placed & v->synced, i))
		return vpmu_phys_read(i) & width_mask(i);
	return c->value;
}

int vpmu_csr_read(struct vpmu *v, unsigned int csr, unsigned long *val)
{
	unsigned int i = csr - 0xc00;

	if (csr == VPMU_CSR_SCOUNTOVF) {
		/* the guest's own OF bits of hpmcounter3..31, not the hart's */
		if (!layout.sscofpmf)
			return -1;
		scan_overflows(v);
		*val = (unsigned long)(v->overflow & hw_allowed(v) & ~7ULL);
		return 0;
	}

	if (csr < 0xc00 || i >= VPMU_MAX_HW || i == CTR_TIME || !is_hw(i))
		return -1;
	i = (unsigned int)array_index_nospec(i, VPMU_MAX_HW);
	if (v->ctr[i].state == VPMU_CTR_UNCONFIGURED)
		return -1;
	*val = (unsigned long)vpmu_ctr_value(v, i);
	return 0;
}

void vpmu_fw_event(struct vpmu *v, unsigned int fw_event)
{
	unsigned int i;

	if (fw_event >= SBI_PMU_FW_MAX)
		return;
	for (i = layout.num_hw; i < num_total(); i++) {
		struct vpmu_ctr *c = &v->ctr[i];

		if (c->state == VPMU_CTR_STARTED &&
		    c->event_idx == EVENT_IDX(SBI_PMU_EVENT_TYPE_FW, fw_event))
			c->value++;
	}
}

/* ------------------------------------------------------- SBI functions */

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

/* Configure the first counter of set (hw_candidate_set's order) taking the event; one frame */
static inline __attribute__((always_inline)) long config_first(struct vpmu *v, uint32_t set,
							       int fixed, bool fixed_first,
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
	kind = event_accept(v, event_idx, event_data, &a.key, &allowed);
	if (kind < 0)
		return ret_err(SBI_ERR_NOT_SUPPORTED);

	if (flags & SBI_PMU_CFG_FLAG_SKIP_MATCH) {
		/* Unconditionally the first counter of the set */
		for (i = 0; !((mask >> i) & 1); i++)
			;
		idx = (unsigned int)(base + i);
		if (kind == EVK_FW ? !is_fw(idx)
				   : !hw_candidate(v, event_idx, idx) || !((allowed >> idx) & 1))
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
			uint32_t set = hw_candidate_set(v, event_idx, &fixed, &first) & allowed &
				       (uint32_t)(mask << base);

			err = config_first(v, set & ~v->configured_hw, fixed, first, &a, &idx);
			if (err)
				err = config_first(v, set & v->configured_hw & ~v->started_hw,
						   fixed, first, &a, &idx);
		}
	}
	if (err) {
		sync_hw(v); /* a refused reconfiguration reloads the old event */
		return ret_err(err);
	}

	if (flags & SBI_PMU_CFG_FLAG_CLEAR_VALUE) {
		v->ctr[idx].value = 0;
		if (idx < VPMU_MAX_HW) /* a firmware counter has no synced bit */
			set_hw_bit(&v->synced, idx, false);
	}
	if (flags & SBI_PMU_CFG_FLAG_AUTO_START) {
		struct op_args from_value = {0};

		ctr_transition(v, idx, OP_START, &from_value);
	}
	sync_hw(v);
	return ret_val(idx);
}

/* Start counter idx of a checked set; *near: close enough to its top to need a deadline */
static long start_one(struct vpmu *v, unsigned int idx, struct op_args *a, bool *near)
{
	long err = ctr_transition(v, idx, OP_START, a);

	if (a->near)
		*near = true;
	return err;
}

/* A counter of the set is unconfigured: START refuses the set whole */
static bool set_unconfigured(const struct vpmu *v, unsigned long base, unsigned long mask)
{
	unsigned int i;

	for_each_bit (i, mask)
		if (v->ctr[base + i].state == VPMU_CTR_UNCONFIGURED)
			return true;
	return false;
}

/* Any set (checked, none unconfigured): each counter from a->value, or its snapshot slot */
static __attribute__((noinline)) long start_set(struct vpmu *v, unsigned long base,
						unsigned long mask, struct op_args *a,
						const uint64_t *snap, bool *near, bool *already)
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

/* INIT_SNAPSHOT: each counter of the set from its slot of the snapshot area */
static __attribute__((noinline)) long start_from_snapshot(struct vpmu *v, unsigned long base,
							  unsigned long mask, bool *near,
							  bool *already)
{
	struct op_args a = {0, 0, 0, -1, true, 0, false};
	unsigned int top = 63 - (unsigned int)__builtin_clzl(mask);
	uint64_t snap[64];

	if (set_unconfigured(v, base, mask))
		return SBI_ERR_INVALID_PARAM;
	if (!v->shmem_set)
		return SBI_ERR_NO_SHMEM;
	if (vpmu_host_read_guest(v, v->shmem_gpa + SBI_PMU_SNAPSHOT_VALUES_OFFSET, snap,
				 (top + 1) * sizeof(uint64_t)))
		return SBI_ERR_FAILED;
	return start_set(v, base, mask, &a, snap, near, already);
}

/* Several counters, or from the snapshot area (flags checked) */
static __attribute__((noinline)) long start_many(struct vpmu *v, unsigned long base,
						 unsigned long mask, unsigned long flags,
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
			      : start_set(v, base, mask, &a, NULL, &near, &already);
	if (err)
		return err;
	sync_hw_deadline(v, near); /* near_top */
	return already ? SBI_ERR_ALREADY_STARTED : SBI_SUCCESS;
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
		return start_many(v, base, mask, flags, ival);
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
 * near its top or when none is left started (what update_deadline then finds).
 */
static __attribute__((noinline)) long stop_one(struct vpmu *v, unsigned int idx)
{
	long err = ctr_transition(v, idx, OP_STOP, NULL);

	/* sync_deadline's rule, near_top only asked while something still runs */
	if (!err && v->loaded)
		sync_deadline(v, v->started_hw && is_hw(idx) && near_top(idx, v->ctr[idx].value));
	return err;
}

/* One counter stopped with RESET (what Linux does when it deletes an event) */
static __attribute__((noinline)) long reset_one(struct vpmu *v, unsigned int idx)
{
	const struct vpmu_ctr *c = &v->ctr[idx];
	bool started = c->state == VPMU_CTR_STARTED;

	ctr_transition(v, idx, OP_RESET, NULL);
	sync_hw_deadline(v, started && is_hw(idx) && near_top(idx, c->value));
	return started ? SBI_SUCCESS : SBI_ERR_ALREADY_STOPPED;
}

/* Several counters, or a snapshot taken (flags and set checked) */
static __attribute__((noinline)) long stop_many(struct vpmu *v, unsigned long base,
						unsigned long mask, unsigned long flags)
{
	bool already = false, near = false, snap = flags & SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT;
	uint64_t ovf = 0;
	long err = SBI_SUCCESS;
	unsigned int i;

	if (snap && !v->shmem_set)
		return SBI_ERR_NO_SHMEM;
	if (snap)
		scan_overflows(v); /* the bitmap must include what just overflowed */

	for_each_bit (i, mask) {
		unsigned int idx = (unsigned int)(base + i);
		struct vpmu_ctr *c;
		uint8_t prev;

		c = &v->ctr[idx];
		prev = c->state;
		if (prev != VPMU_CTR_STARTED)
			already = true;
		else if (!(flags & SBI_PMU_STOP_FLAG_RESET))
			ctr_transition(v, idx, OP_STOP, NULL);
		if (snap && prev != VPMU_CTR_UNCONFIGURED) {
			uint64_t val;

			/* RESET saves the value too; take it before the event is forgotten */
			if (flags & SBI_PMU_STOP_FLAG_RESET)
				ctr_transition(v, idx, OP_STOP, NULL);
			val = c->value;
			if ((v->overflow >> idx) & 1)
				ovf |= 1ULL << i;
			if (vpmu_host_write_guest(v,
						  v->shmem_gpa + SBI_PMU_SNAPSHOT_VALUES_OFFSET +
							  i * sizeof(uint64_t),
						  &val, sizeof(val)))
				err = SBI_ERR_FAILED;
		}
		if (flags & SBI_PMU_STOP_FLAG_RESET)
			ctr_transition(v, idx, OP_RESET, NULL);
		if (prev == VPMU_CTR_STARTED && is_hw(idx) && near_top(idx, c->value))
			near = true;
	}
	if (snap &&
	    vpmu_host_write_guest(v, v->shmem_gpa + SBI_PMU_SNAPSHOT_OVF_OFFSET, &ovf, sizeof(ovf)))
		err = SBI_ERR_FAILED;
	sync_hw_deadline(v, near); /* near_top */
	if (err)
		return err;
	return already ? SBI_ERR_ALREADY_STOPPED : SBI_SUCCESS;
}

long vpmu_counter_stop(struct vpmu *v, unsigned long base, unsigned long mask, unsigned long flags)
{
	if (flags & ~SBI_PMU_STOP_FLAG_MASK)
		return SBI_ERR_INVALID_PARAM;
	if (check_set(v, base, mask))
		return SBI_ERR_INVALID_PARAM;
	if ((flags & SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT) || (mask & (mask - 1)))
		return stop_many(v, base, mask, flags);
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

struct sbi_ret vpmu_snapshot_set_shmem(struct vpmu *v, unsigned long lo, unsigned long hi,
				       unsigned long flags)
{
	static const uint64_t zero[32];
	uint64_t probe;
	unsigned int off;

	if (flags)
		return ret_err(SBI_ERR_INVALID_PARAM);
	if (lo == ~0UL && hi == ~0UL) {
		v->shmem_set = false;
		v->shmem_gpa = 0;
		return ret_val(0);
	}
	if (lo & (SBI_PMU_SNAPSHOT_SIZE - 1))
		return ret_err(SBI_ERR_INVALID_PARAM);
	/* RV64: a non-zero upper half lies beyond any guest RAM */
	if (hi)
		return ret_err(SBI_ERR_INVALID_ADDRESS);
	if (lo > ~0UL - SBI_PMU_SNAPSHOT_SIZE ||
	    vpmu_host_read_guest(v, lo, &probe, sizeof(probe)) ||
	    vpmu_host_read_guest(v, lo + SBI_PMU_SNAPSHOT_SIZE - sizeof(probe), &probe,
				 sizeof(probe)))
		return ret_err(SBI_ERR_INVALID_ADDRESS);
	for (off = 0; off < SBI_PMU_SNAPSHOT_SIZE; off += sizeof(zero))
		if (vpmu_host_write_guest(v, lo + off, zero, sizeof(zero)))
			return ret_err(SBI_ERR_INVALID_ADDRESS);
	v->shmem_gpa = lo;
	v->shmem_set = true;
	return ret_val(0);
}

struct event_info_entry {
	uint32_t event_idx;
	uint32_t output;
	uint64_t event_data;
};
_Static_assert(sizeof(struct event_info_entry) == 16, "SBI v3.0 event info entry");

/*
 * Could config_matching find a counter for this hardware event, with the
 * counters the guest may use, if none of them were busy? For general and
 * cache events the boot probe knows. A raw event is tried on a counter the
 * guest does not use itself (evicting another vCPU's stopped one if need
 * be); if it has none free, the answer is "no" (documented in vpmu.md).
 */
static bool hw_event_supported(struct vpmu *v, unsigned long event_idx, uint64_t data, int key,
			       uint32_t allowed)
{
	unsigned int c[VPMU_MAX_HW], n, i;

	if (key >= 0) { /* the boot probe's answer: any candidate will do */
		int fixed;
		bool first;

		return (hw_candidate_set(v, event_idx, &fixed, &first) & allowed &
			layout.can[key]) != 0;
	}
	n = hw_candidates(v, event_idx, c);
	for (i = 0; i < n; i++) {
		unsigned int p = c[i];

		if (!((allowed >> p) & 1))
			continue;
		if (v->ctr[p].state != VPMU_CTR_UNCONFIGURED) {
			if (v->ctr[p].event_idx == event_idx && v->ctr[p].event_data == data)
				return true;
			continue;
		}
		if (v->loaded && phys_try_config(v, p, 0, event_idx, data, key)) {
			phys_release(v->resident, p);
			return true;
		}
	}
	return false;
}

/*
 * EVENT_GET_INFO may name up to ~2^60 entries, and a raw one costs a host
 * call: the call is answered in slices of at most this much work (units:
 * an entry read or answered from tables is 1, a host probe 32), about
 * 0.5 M instructions. After each slice the guest re-executes its ecall
 * (VPMU_RET_RESTART, the other vCPUs of the hart may run meanwhile) and
 * the call resumes where it stopped, as long as the guest asks the same.
 */
#define EVINFO_SLICE 2048

static bool evinfo_entry(struct vpmu *v, unsigned long lo, unsigned long i,
			 struct event_info_entry *e)
{
	return !vpmu_host_read_guest(v, lo + i * sizeof(*e), e, sizeof(*e));
}

/* Event data is only meaningful for raw (2, 3) and firmware (15) events */
static uint64_t evinfo_data(const struct event_info_entry *e)
{
	return EVENT_TYPE(e->event_idx) <= SBI_PMU_EVENT_TYPE_CACHE ? 0 : e->event_data;
}

struct sbi_ret vpmu_event_get_info(struct vpmu *v, unsigned long lo, unsigned long hi,
				   unsigned long num, unsigned long flags)
{
	struct vpmu_evinfo *st = &v->evinfo;
	struct event_info_entry e;
	unsigned long work = 0;
	uint32_t allowed;
	int key;

	if (flags || !num || (lo & 0xf))
		return ret_err(SBI_ERR_INVALID_PARAM);
	if (hi || num > (~0UL - lo) / sizeof(e))
		return ret_err(SBI_ERR_INVALID_ADDRESS);
	/* guest RAM is one range: both ends inside means all of it, checked in O(1) */
	if (!evinfo_entry(v, lo, 0, &e) || !evinfo_entry(v, lo, num - 1, &e))
		return ret_err(SBI_ERR_INVALID_ADDRESS);
	if (!st->busy || st->lo != lo || st->num != num) {
		st->busy = true;
		st->lo = lo;
		st->num = num;
		st->next = 0;
		st->checked = false;
		st->raw_known = false;
	}
	/* First pass: every entry readable and well formed, nothing written */
	for (; !st->checked && st->next < num; st->next++, work++) {
		if (work >= EVINFO_SLICE)
			return ret_err(VPMU_RET_RESTART);
		if (!evinfo_entry(v, lo, st->next, &e)) {
			st->busy = false;
			return ret_err(SBI_ERR_INVALID_ADDRESS);
		}
		if (classify(e.event_idx, evinfo_data(&e), &key) == EVK_BAD) {
			st->busy = false;
			return ret_err(SBI_ERR_INVALID_PARAM);
		}
	}
	if (!st->checked) {
		st->checked = true;
		st->next = 0;
	}
	for (; st->next < num; st->next++) {
		uint32_t out = 0;
		int kind;

		if (work >= EVINFO_SLICE) {
			sync_hw(v);
			return ret_err(VPMU_RET_RESTART);
		}
		if (!evinfo_entry(v, lo, st->next, &e)) {
			st->busy = false;
			sync_hw(v);
			return ret_err(SBI_ERR_INVALID_ADDRESS);
		}
		kind = classify(e.event_idx, evinfo_data(&e), &key);
		if (kind >= 0 && !event_allowed(v, e.event_idx, kind == EVK_FW, &allowed))
			kind = EVK_UNSUPPORTED;
		if (kind == EVK_FW) {
			out = 1;
		} else if (kind == EVK_HW && key < 0 && st->raw_known &&
			   st->raw_idx == e.event_idx && st->raw_data == e.event_data) {
			out = st->raw_out; /* the same raw event as the entry before */
		} else if (kind == EVK_HW) {
			out = hw_event_supported(v, e.event_idx, evinfo_data(&e), key, allowed);
			if (key < 0) {
				work += 31; /* a host probe */
				st->raw_known = true;
				st->raw_idx = e.event_idx;
				st->raw_data = e.event_data;
				st->raw_out = out;
			}
		}
		work++;
		if (vpmu_host_write_guest(v,
					  lo + st->next * sizeof(e) +
						  offsetof(struct event_info_entry, output),
					  &out, sizeof(out))) {
			st->busy = false;
			sync_hw(v);
			return ret_err(SBI_ERR_INVALID_ADDRESS);
		}
	}
	st->busy = false;
	sync_hw(v); /* probing may have had to undo a host fallback */
	return ret_val(0);
}
