/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private to vpmu/'s logic: the layout found at boot, small helpers every
 * file shares (inline: they sit on the SBI calls' and the vCPU switch's
 * paths), and what one file of the logic calls in another. Nothing here is
 * part of an interface to the core or the hardware.
 *
 * Files: sbi.c (the SBI functions, one counter), sets.c (START/STOP of
 * several counters, the snapshot area), ctr.h (the per-counter state
 * machine), place.c and place.h (which physical counter of a hart holds
 * what), vcpu.c
 * (a vCPU's life on a hart: init, load, put, reset), overflow.c (wraps,
 * the deadline, counter CSR reads), event.c (events, the policy,
 * EVENT_GET_INFO), probe.c (boot), check.c (the invariants, as code).
 */
#ifndef VPMU_INTERNAL_H
#define VPMU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/riscv/nospec.h"
#include "arch/riscv/sbi_spec.h"
#include "vpmu/bits.h"
#include "vpmu/phys.h"
#include "vpmu/vpmu.h"
#include "vpmu/vpmu_host.h"
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
 * this many timer ticks after the earliest time a counter could wrap (the
 * hart also runs what the counter does not count, the hypervisor's and
 * filtered modes' instructions, so the platform's own interrupt comes a
 * little after that time, and a deadline right at it would trap first),
 * and twice as late each time it finds nothing, up to the maximum (a
 * counter that does not advance, e.g. a second counter of one event on
 * QEMU, or a guest staying in a filtered mode, must not cost a trap every
 * tick).
 */
#define DEADLINE_MIN_TICKS 32
#define DEADLINE_MAX_TICKS (1UL << 17)
/*
 * ... and what a START keeps of it (about 100 us at 10 MHz): a sampler
 * restarts its counter near the top after every sample; where more than
 * DEADLINE_MIN_TICKS of uncounted work follows each START, what the
 * deadline learned holds for the next sample, up to this, so that a
 * counter that stood still does not delay a new sampler's lost wraps long.
 */
#define DEADLINE_KEPT_TICKS 1024

/* What the host offers guests, found at boot (probe.c) and never changed afterwards */
struct vpmu_layout {
	bool sscofpmf;	     /* the host has counter overflow (OF bits, LCOFI) */
	bool start_keeps_of; /* ... and a start leaves OF set while LCOFI is pending */
	/*
	 * A start must first take a pending LCOFI (start_keeps_of) or ask the
	 * core (exclusive counting): place_start_waiting, not the plain start.
	 * L1 (vpmu_check_hart): start_prep == vpmu_exclusive || start_keeps_of
	 */
	bool start_prep;
	unsigned int num_hw; /* H */
	uint32_t hw_valid;
	unsigned long info[VPMU_MAX_COUNTERS]; /* counter_get_info's answer for each index */
	uint64_t hw_width_mask[VPMU_MAX_HW];   /* all ones up to the counter's top bit */
	bool prog_counts[2];	       /* [0] cycles, [1] instret on programmable counters */
	bool event_exclusive;	       /* the host counts an event on one counter per hart only */
	bool other_harts;	       /* counters are charged with other harts' instructions */
	unsigned long counts_per_tick; /* the fastest a counter advances per timer tick */
	uint32_t can[EV_KEYS];
};
extern struct vpmu_layout layout;
/* Guests run counting vCPUs alone: the core asks to be told before a start (vpmu_set_exclusive) */
extern bool vpmu_exclusive;

/* A debug build (make DEBUG=1) checks the invariants after every vCPU switch too */
#ifdef VPMU_DEBUG
#define VPMU_DEBUG_CHECK(v, after) vpmu_debug_check(v, after)
#else
#define VPMU_DEBUG_CHECK(v, after) ((void)0)
#endif

/* ---- event.c: events and the guest's policy ---- */
/* What kind of event the encoding is (enum ev_kind) and its capability key (-1: raw) */
int ev_classify(unsigned long event_idx, uint64_t data, int *key);
int ev_accept_anew(struct vpmu *v, unsigned long event_idx, uint64_t data);
uint32_t ev_candidate_set(const struct vpmu *v, unsigned long event_idx, int *fixed,
			  bool *fixed_first);
bool ev_candidate(const struct vpmu *v, unsigned long event_idx, unsigned int idx);
unsigned long ev_of_key(unsigned int key);
/* vpmu_check: what ev_seen remembers is what classifying and the policy find again */
bool ev_seen_holds(struct vpmu *v);

/* ---- overflow.c: wraps and the deadline ---- */
void ovf_record(struct vpmu *v, unsigned int i);
/* A stopped counter's wrap: recorded, or a sample; c->value saved (now, or a new period) */
void ovf_wrapped(struct vpmu *v, struct vpmu_ctr *c, unsigned int i, uint64_t now);
void ovf_scan(struct vpmu *v);
/* The deadline, where only the counters of near can be near their top (the others are far) */
void ovf_update_deadline_of(struct vpmu *v, uint32_t near);
static inline void ovf_update_deadline(struct vpmu *v)
{
	ovf_update_deadline_of(v, ~0U);
}

/* ---- profile.c: the hypervisor's sampling counter ---- */
/* Its wrap, found while it runs: a sample, and it runs again from its start value */
void prof_overflow(struct vpmu *v);
/* Its wrap, found as it was stopped: a sample, and the value to save (its start value) */
uint64_t prof_wrapped(struct vpmu *v);
/* vpmu_vcpu_set_policy: choose the counter and arm it (not loaded) */
void prof_setup(struct vpmu *v);

/* ---- sets.c: START and STOP of several counters, or through the snapshot area ---- */
long set_start(struct vpmu *v, unsigned long base, unsigned long mask, unsigned long flags,
	       uint64_t ival);
long set_stop(struct vpmu *v, unsigned long base, unsigned long mask, unsigned long flags);

static inline unsigned int num_total(void)
{
	return vpmu_offered ? layout.num_hw + VPMU_NUM_FW : 0;
}

/* Kept with the vCPU (vpmu_vcpu_set_policy): every PMU call asks */
static inline unsigned int num_visible(const struct vpmu *v)
{
	return v->nr_visible;
}

/* The hardware counters the guest may use: the host has them, the policy allows them */
static inline uint32_t hw_allowed_of(const struct vpmu *v)
{
	uint32_t m = v->policy->counters_mask;

	return layout.hw_valid & (m ? m : ~0U) & ~v->prof_mask;
}

/* ... as vpmu_vcpu_set_policy derived it */
static inline uint32_t hw_allowed(const struct vpmu *v)
{
	return v->allowed_hw;
}

static inline bool is_fw(unsigned long idx)
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

static inline bool is_hw(unsigned long idx)
{
	return idx < layout.num_hw && ((layout.hw_valid >> idx) & 1);
}

/* The firmware counters' indices, above the hardware ones */
static inline uint64_t fw_counters(void)
{
	unsigned int n = num_total();

	_Static_assert(VPMU_MAX_COUNTERS < 64, "counter masks: no shift reaches 64");
	return n > layout.num_hw && n < 64 ? ((1ULL << n) - 1) & ~((1ULL << layout.num_hw) - 1) : 0;
}

/* What this guest sees: firmware counters may be switched off by policy */
static inline unsigned int num_visible_of(const struct vpmu *v)
{
	if (!vpmu_offered)
		return 0;
	return v->policy->no_firmware ? layout.num_hw : num_total();
}

/* The counters this guest may use: the host has them and the policy allows them */
static inline uint64_t visible_mask_of(const struct vpmu *v)
{
	return hw_allowed_of(v) | (v->policy->no_firmware ? 0 : fw_counters());
}

static inline uint64_t visible_mask(const struct vpmu *v)
{
	return v->visible;
}

static inline bool is_visible(const struct vpmu *v, unsigned long idx)
{
	return idx < VPMU_MAX_COUNTERS && ((visible_mask(v) >> idx) & 1);
}

static inline uint64_t width_mask(unsigned long idx)
{
	return is_hw(idx) ? layout.hw_width_mask[array_index_nospec(idx, VPMU_MAX_HW)] : ~0ULL;
}

/* Could the host count the event on physical counter p? Raw events: maybe (ask it) */
static inline bool host_can(int key, unsigned int p)
{
	return key < 0 || (p < 32 && ((layout.can[key] >> p) & 1));
}

/* Host filter flags for a guest counter: guest S/U are the host's VS/VU */
static inline unsigned long host_flags(unsigned long guest_flags)
{
	unsigned long f =
		SBI_PMU_CFG_FLAG_SET_SINH | SBI_PMU_CFG_FLAG_SET_UINH | SBI_PMU_CFG_FLAG_SET_MINH;

	if (guest_flags & SBI_PMU_CFG_FLAG_SET_SINH)
		f |= SBI_PMU_CFG_FLAG_SET_VSINH;
	if (guest_flags & SBI_PMU_CFG_FLAG_SET_UINH)
		f |= SBI_PMU_CFG_FLAG_SET_VUINH;
	return f;
}

static inline struct sbi_ret ret_err(long err)
{
	return (struct sbi_ret){err, 0};
}

static inline struct sbi_ret ret_val(unsigned long val)
{
	return (struct sbi_ret){SBI_SUCCESS, val};
}

/*
 * A set of counters: INVALID_PARAM unless the mask is non-empty and every
 * bit names a valid counter (no overflow of base + bit).
 */
static inline long check_set(const struct vpmu *v, unsigned long base, unsigned long mask)
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

enum ev_kind {
	EVK_BAD = -2,	      /* a reserved bit (20 and up) of event_idx is set */
	EVK_UNSUPPORTED = -1, /* well formed, but pmuvisor cannot count it */
	EVK_HW = 0,
	EVK_FW = 1,
};

/* The event's kind (< 0: the guest may not count it), its key and allowed counters */
static inline int ev_accept(struct vpmu *v, unsigned long event_idx, uint64_t data, int *key,
			    uint32_t *allowed)
{
	const struct vpmu_ev_seen *s = &v->ev_seen;
	int kind = s->kind;

	if (kind < 0 || s->event_idx != event_idx || s->event_data != data)
		kind = ev_accept_anew(v, event_idx, data);
	*key = s->key;
	*allowed = s->allowed;
	return kind;
}

/* Bit i of a hardware counter mask (placed, synced); no bit for other indices */
static inline bool hw_bit(uint32_t mask, unsigned int i)
{
	return i < VPMU_MAX_HW && ((mask >> i) & 1);
}

static inline void set_hw_bit(uint32_t *mask, unsigned int i, bool on)
{
	uint32_t bit;

	if (i >= VPMU_MAX_HW)
		return;
	bit = 1U << i;
	*mask = on ? *mask | bit : *mask & ~bit;
}

/* The guest cleared counter i's overflow (start, new event, reset) */
static inline void ovf_clear(struct vpmu *v, unsigned int i)
{
	uint64_t was = v->overflow;

	v->overflow &= ~(1ULL << i);
	if (was && !v->overflow)
		vpmu_host_cancel_lcofi(v);
}

/*
 * Before the host starts a counter: an LCOFI still pending would make
 * OpenSBI leave the counter's overflow flag set, and it would never
 * interrupt again. Record what overflowed and clear it first. The
 * delegation backend clears the flag itself: nothing to do there
 * (layout.start_keeps_of false), and the interrupt is taken as it comes.
 */
static inline void ovf_before_start(struct vpmu *v)
{
	if (layout.start_keeps_of && vpmu_phys_irq_pending())
		vpmu_overflow_irq(v);
}

/*
 * Save a stopped counter's value; a value below the one it ran from means
 * it wrapped. c: counter i's slot, as the caller has it
 */
static inline void save_value(struct vpmu *v, struct vpmu_ctr *c, unsigned long i, uint64_t now)
{
	if (unlikely(now < c->value))
		ovf_wrapped(v, c, (unsigned int)i, now);
	else
		c->value = now;
}

/* The next deadline: none while nothing is started (what ovf_update_deadline would find) */
static inline void sync_deadline(struct vpmu *v, bool deadline_moved)
{
	if (!v->started_hw)
		v->deadline = UINT64_MAX;
	else if (deadline_moved)
		ovf_update_deadline(v);
}

/* After every change of what runs: the hcounteren bits and the next deadline */
static inline void sync_hw_deadline(struct vpmu *v, bool deadline_moved)
{
	if (!v->loaded)
		return;
	vpmu_phys_set_counteren(vpmu_hcounteren(v));
	sync_deadline(v, deadline_moved);
}

static inline void sync_hw(struct vpmu *v)
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
static inline bool near_width_top(uint64_t width_mask, uint64_t value)
{
	return width_mask - value < FAR_COUNTS;
}

static inline bool near_top(unsigned int i, uint64_t value) /* i: a hardware counter */
{
	return near_width_top(layout.hw_width_mask[i % VPMU_MAX_HW], value);
}

#endif
