/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * QEMU 10's PMU quirks and their workarounds, all of them here, wrapped
 * around whichever backend drives the counters (phys.c chose it). Read from
 * QEMU 10.0.2's target/riscv/pmu.c and csr.c; docs/quirks.md has one row per
 * quirk with its symptom, detection, test and how to delete it.
 *
 * stale-deadline (QEMU_STALE_DEADLINE). riscv_pmu_setup_timer keeps, per counter, an
 *    irq_overflow_left whenever a counter is written (or started) so far
 *    from its top that the deadline passes INT64_MAX ns, as for every
 *    counter Linux starts for counting (2^63 + 1), and never clears it when
 *    the counter is written again: the next timer expiry for that counter,
 *    its first overflow as a sampler, is swallowed and re-armed about a
 *    second of virtual time later. pmu_timer_trigger_irq consumes the stale
 *    value at any expiry while the counter is enabled, counting or not. So
 *    before a counter that was started far from its top starts near it, it
 *    runs CONSUME_COUNTS below its top while the hart spins 2 x that many
 *    HS-mode instructions (it counts none of them: the timer expires within
 *    the spin, consumes the stale value and re-arms itself every 256 ns
 *    until the stop), then starts properly. Not closer to the top: a timer
 *    re-armed every nanosecond gives each hart's round-robin slice under
 *    -icount 1/2 instruction, rounded down to 0 for the second hart, which
 *    would never run again. qemu_hart.far remembers the far starts.
 * event-map (QEMU_EVENT_MAP). One counter per event and hart: the event -> counter
 *    map that decides what a programmable counter counts admits one counter
 *    per event. A write of mhpmevent (M-mode's, or sireg2's: rmw_cd_mhpmevent)
 *    maps its event only when no counter holds it yet and keeps the
 *    counter's earlier event mapped; only event 0 removes the counter's
 *    entry (riscv_pmu_update_event_map). So each hart keeps the map
 *    (qemu_hart.ev, .released); a configuration that would change it goes
 *    through the host, which first releases the stale holder of the event;
 *    the logic learns it is on (vpmu_phys_event_exclusive) and evicts other
 *    configurations of an event.
 * bias (QEMU_BIAS). Values below 2^63 livelock QEMU. riscv_pmu_setup_timer,
 *    given the value v of a counter that counts cycles/instret, computes the
 *    distance to its top (2^64 - v) in int64 arithmetic; for v < 2^63 that
 *    overflows into a deadline in the past, and at that expiry it calls
 *    setup_timer again. With one such counter for each event, out of phase,
 *    the two re-arm each other forever in QEMU's main loop with the big lock
 *    held: QEMU spins until killed. So when a counter that may count one
 *    timed event starts below 2^63 while one that may count the other runs
 *    there unbiased, it runs biased by 2^63 (2^62 for values from 2^62 on:
 *    at least 2^62 counts, 146 years at 1 GHz, from a wrap on the host);
 *    reads take the bias off, and hcounteren hides biased counters from
 *    direct guest reads. Only counters 64 bits wide; raw events count as
 *    either event.
 * QEMU_OTHER_HARTS. Under -icount a hart's mode-filtered counters advance
 *    with every instruction any hart executes while it is in the counted
 *    mode (icount deltas are global). Detected by a boot probe
 *    (vpmu_phys_other_harts_charged); the workaround is the core's exclusive
 *    counting (core/excl.c): this switch only lets it be turned off.
 * QEMU_TLB_OVERFLOW. A TLB-event overflow under -icount aborts QEMU: its
 *    workaround starts such counters with their OF bit held (qemu_tlb.c).
 * QEMU_NEAR_TOP. A counter that counts only guest modes and stands one
 *    count below its top while its hart is in HS-mode does not advance, and
 *    at each expiry of its overflow timer (pmu_timer_trigger_irq) QEMU
 *    arms it again 1 ns ahead (riscv_pmu_setup_timer: 2^64 - value). Under
 *    -icount the round robin gives each hart its share of the time to the
 *    next deadline, half an instruction, rounded down to none for the
 *    second hart: that hart never runs again while another one is busy.
 *    The hypervisor's sampling counter does it whenever its hart traps at
 *    that count (guests' own counters run alone under exclusive counting).
 *    The workaround is the core's (core/unstarve.c): this switch turns it
 *    on, under -icount only.
 */
#include "arch/riscv/cpu.h"
#include "vpmu/bits.h"
#include "vpmu/phys/qemu.h"
#include "vpmu/phys/qemu_internal.h"
#include "vpmu/vpmu_host.h"

unsigned int qemu_quirks;
uint32_t qemu_ever_biased;

/* The backend's own operations, which the workarounds call */
struct phys_ops qemu_raw;
/* bias: the 64-bit programmable counters; 0 while bias is off, so that nothing is ever biased */
static uint32_t wide;
/* stale-deadline: the far marks a hart starts with (firmware and probes started all far) */
static uint32_t far_all;
/* tlb-overflow: ~0 while its workaround runs (QEMU and -icount), else 0 */
static uint32_t tlb_all;
/* near-top: QEMU and -icount, the workaround on */
static bool harts_may_starve;

/* ------------------------------------------------------------------ stale-deadline */

#define CONSUME_COUNTS 256

/* Far from the top: QEMU arms its overflow timer beyond INT64_MAX ns (2^63 + 1 included) */
static inline bool far_from_top(uint64_t v)
{
	return v == 0 || -v > (1ULL << 62);
}

static inline void far_init(struct qemu_hart *q)
{
	if (!q->init) {
		q->far = far_all;
		q->init = true;
	}
}

/* Counter idx (< 32) is about to run from value: must the stale deadline go first? */
static inline bool stale_deadline(struct qemu_hart *q, unsigned int idx, uint64_t value)
{
	if (idx < PHYS_FIRST_PROG)
		return false;
	if (far_from_top(value)) {
		q->far |= (1U << idx) & far_all;
		return false;
	}
	if (!((q->far >> idx) & 1))
		return false;
	q->far &= ~(1U << idx);
	return true;
}

/* Run idx near its top for a moment and stop it again: the stale deadline expires meanwhile */
static void consume_stale_deadline(unsigned int idx)
{
	qemu_raw.start(idx, -(uint64_t)CONSUME_COUNTS);
	cpu_spin(2UL * CONSUME_COUNTS);
	qemu_raw.stop(idx);
}

/* A start that must consume a stale deadline first: once per counter and sampling run */
static __cold long start_consuming(unsigned int idx, uint64_t value)
{
	consume_stale_deadline(idx);
	return qemu_raw.start(idx, value);
}

/* ------------------------------------------------------------------ event-map */

int qemu_holder_of(const struct qemu_hart *q, unsigned long ev)
{
	for (unsigned int i = PHYS_FIRST_PROG; i < PHYS_MAX_HW; i++)
		if (q->ev[i] == ev)
			return (int)i;
	return -1;
}

/* The logic's question (vpmu/phys.h), answered from the map this hart keeps */
int vpmu_phys_event_holder(unsigned int idx, unsigned long event_idx)
{
	const struct qemu_hart *q = qemu_this_hart();

	if (idx < PHYS_FIRST_PROG || idx >= PHYS_MAX_HW || q->ev[idx] == event_idx)
		return (int)idx;
	return qemu_holder_of(q, event_idx);
}

/*
 * A configuration of ev on idx leaves QEMU's map as it is: ev is mapped to
 * idx already, or idx has no mapping and a live counter keeps ev (the
 * host's configuration would not map it either: idx counts nothing, as the
 * second counter of an event does on this platform).
 */
static bool map_unchanged(const struct qemu_hart *q, unsigned int idx, unsigned long ev)
{
	int h;

	if (q->ev[idx] == ev)
		return true;
	if (q->ev[idx])
		return false;
	h = qemu_holder_of(q, ev);
	return h >= 0 && !((q->released >> h) & 1);
}

/* ------------------------------------------------------------------ bias */

static uint64_t bias_of(const struct qemu_hart *q, unsigned int idx)
{
	return ((uint64_t)((q->bias63 >> idx) & 1) << 63) |
	       ((uint64_t)((q->bias62 >> idx) & 1) << 62);
}

uint64_t qemu_bias_of(unsigned int idx)
{
	return bias_of(qemu_this_hart(), idx);
}

unsigned long qemu_hide_biased(unsigned long bits)
{
	const struct qemu_hart *q = qemu_this_hart();

	return bits & ~(unsigned long)(q->bias63 | q->bias62);
}

void qemu_set_wide(uint32_t mask)
{
	wide = qemu_quirks & QEMU_BIAS ? mask & ~((1U << PHYS_FIRST_PROG) - 1) : 0;
}

/*
 * Which of QEMU's two timed events counter idx may count (raw events could
 * be either), and whether QEMU counts its event in the TLB fill
 */
static void note_event(struct qemu_hart *q, unsigned int idx, unsigned long ev,
		       unsigned long host_flags)
{
	unsigned int type = (unsigned int)(ev >> 16) & 0xf;
	bool raw_ev = type == SBI_PMU_EVENT_TYPE_RAW || type == SBI_PMU_EVENT_TYPE_RAW_V2;
	uint32_t bit = 1U << idx;

	q->cyc &= ~bit;
	q->ins &= ~bit;
	q->tlb &= ~bit;
	if ((ev == 0x10019 || ev == 0x1001b || ev == 0x10021) && tlb_all) { /* DTLB, ITLB */
		q->tlb |= bit;
		q->tlb_ev[idx] = (uint32_t)ev;
		q->tlb_flags[idx] = (uint8_t)host_flags;
	}
	if (ev == SBI_PMU_HW_CPU_CYCLES || raw_ev)
		q->cyc |= bit & wide;
	if (ev == SBI_PMU_HW_INSTRUCTIONS || raw_ev)
		q->ins |= bit & wide;
}

/*
 * What a start adds to a value below 2^63 so that the host counter runs in
 * [2^63, 2^63 + 2^62), at least 2^62 counts from its own wrap; values from
 * 2^63 on run as they are.
 */
static inline uint64_t upper_half_bias(uint64_t value)
{
	if (value >> 63)
		return 0;
	return value >> 62 ? 1ULL << 62 : 1ULL << 63;
}

/*
 * Must counter idx, about to run from value, be biased? Only if value is
 * below 2^63, idx may count a timed event, and a counter that may count the
 * other one already runs low: QEMU needs one of each to loop. So a guest
 * that counts one event from 0 keeps its direct reads.
 */
static inline bool needs_bias(const struct qemu_hart *q, unsigned int idx, uint64_t value)
{
	uint32_t other = 0;

	if (value >> 63)
		return false;
	if ((q->cyc >> idx) & 1)
		other |= q->ins;
	if ((q->ins >> idx) & 1)
		other |= q->cyc;
	return (q->low & other & ~(1U << idx)) != 0;
}

/* What counter idx started from value with this bias now runs as */
static inline void note_start(struct qemu_hart *q, unsigned int idx, uint64_t value, uint64_t bias)
{
	uint32_t bit = 1U << idx;

	q->low &= ~bit;
	if (!(value >> 63) && !bias)
		q->low |= bit & wide;
	if (bias || ((q->bias63 | q->bias62) & bit)) {
		q->bias63 = (q->bias63 & ~bit) | ((uint32_t)(bias >> 63) << idx);
		q->bias62 = (q->bias62 & ~bit) | ((uint32_t)((bias >> 62) & 1) << idx);
		__atomic_fetch_or(&qemu_ever_biased, bit, __ATOMIC_RELAXED);
		phys_this_hart()->counteren = ~0UL; /* hcounteren must hide it, or show it again */
	}
}

/* ---------------------------------------------------------- tlb-overflow */

/* Before any guest configures a counter: note_event keeps tlb bits only while it runs */
void qemu_note_icount(bool exact)
{
	tlb_all = exact && (qemu_quirks & QEMU_TLB_OVERFLOW) ? ~0U : 0;
	harts_may_starve = exact && (qemu_quirks & QEMU_NEAR_TOP);
}

bool vpmu_phys_harts_may_starve(void)
{
	return harts_may_starve;
}

/* ------------------------------------------------------ the wrapped operations */

/*
 * A start from below 2^63, or of a counter biased before (Linux starts at
 * 2^63 + 1): the bias, then stale-deadline on the value the host counter gets. A start
 * the backend refuses (only the SBI backend's host can) still leaves the
 * marks of the value it was given: a stale low bit only biases more often,
 * and the logic never reads a counter whose start failed before starting it
 * again.
 */
static __cold long start_biased(struct qemu_hart *q, unsigned int idx, uint64_t value)
{
	uint64_t bias = 0;

	if (needs_bias(q, idx, value))
		bias = upper_half_bias(value);
	note_start(q, idx, value, bias);
	if (stale_deadline(q, idx, value + bias))
		return start_consuming(idx, value + bias);
	return qemu_raw.start(idx, value + bias);
}

static long qemu_start(unsigned int idx, uint64_t value)
{
	struct qemu_hart *q = qemu_this_hart();
	uint32_t bit = 1U << idx;

	far_init(q);
	if (value >> 63) {
		/*
		 * A TLB event under -icount near its top (it is above 2^63) must not
		 * run with its OF bit clear; from further away (counting, Linux's
		 * 2^63 + 1) it would need 2^62 events to come near it
		 */
		if (unlikely((qemu_ever_biased | q->tlb) & bit)) {
			if ((q->tlb & bit) && !far_from_top(value))
				return qemu_start_tlb(q, idx, value);
			if (qemu_ever_biased & bit)
				return start_biased(q, idx, value);
		}
		if (unlikely(stale_deadline(q, idx, value)))
			return start_consuming(idx, value);
		return qemu_raw.start(idx, value);
	}
	if (((q->bias63 | q->bias62) & bit) || needs_bias(q, idx, value))
		return start_biased(q, idx, value);
	/* below 2^63, unbiased before and now: it runs low, far from its top (nothing stale) */
	q->low = (q->low & ~bit) | (bit & wide);
	if (idx >= PHYS_FIRST_PROG)
		q->far |= bit & far_all;
	return qemu_raw.start(idx, value);
}

/*
 * Counters continue from their values. bias: one that may count a timed
 * event, sits below 2^63 unbiased and would make a pair with another such
 * counter starts on its own instead, from the same value, biased; one
 * already running low was checked when it started low (no pair has formed
 * since: a counter of the other event starting low then was biased). stale-deadline: a
 * counter marked far is far still, since coming within 2^62 of its top
 * takes 2^62 counts (146 years at 1 GHz); of the others, only one that
 * wrapped to far since needs marking, and one near its top continues as it
 * is, as nothing stale was left for it.
 */
static long qemu_start_mask(uint32_t mask)
{
	struct qemu_hart *q = qemu_this_hart();
	uint32_t timed = mask & wide & (q->cyc | q->ins) & ~(q->bias63 | q->bias62 | q->low);
	uint32_t alone = 0, near;
	long err = SBI_SUCCESS;
	unsigned int i;

	far_init(q);
	while (timed) {
		uint64_t v;

		i = lowest_bit(timed);
		timed &= timed - 1;
		v = phys_read_csr(i);
		if (v >> 63)
			continue;
		if (needs_bias(q, i, v))
			alone |= 1U << i;
		else
			q->low |= 1U << i;
	}
	near = mask & ~((1U << PHYS_FIRST_PROG) - 1) & ~q->far & far_all;
	for_each_bit_dense (i, near)
		if (far_from_top(phys_read_csr(i)))
			q->far |= 1U << i;
	/* TLB events near their tops (one marked far is far still): each with its OF bit held */
	timed = mask & q->tlb & ~q->far;
	for_each_bit_dense (i, timed)
		if (!far_from_top(phys_read_csr(i)))
			alone |= 1U << i;
	if (mask & ~alone)
		err = qemu_raw.start_mask(mask & ~alone);
	while (alone && err == SBI_SUCCESS) {
		i = lowest_bit(alone);
		alone &= alone - 1;
		err = qemu_start(i, phys_read_csr(i));
	}
	return err;
}

/*
 * A vCPU load's counters taken over from another vCPU: qemu_start's
 * bookkeeping for each, lowest first, then the backend writes every value
 * and starts them together. One near its top and marked far (a stale
 * deadline to consume first) starts alone.
 */
static void qemu_start_values(uint32_t mask, const uint64_t *values, size_t stride)
{
	struct qemu_hart *q = qemu_this_hart();
	uint64_t w[PHYS_MAX_HW]; /* the values to write, bias included */
	uint32_t m = mask, alone, plain, held_ones, low = 0, far = 0;
	unsigned int i;

	far_init(q);
	/* never biased, and their low bits take no part in needs_bias(): set after */
	plain = mask & wide & ~(q->cyc | q->ins | q->bias63 | q->bias62);
	/* a pointer-wide index: no extension per counter */
	for (unsigned long k = plain ? lowest_bit(plain) : 0, p = plain >> k; p; p >>= 1, k++) {
		if (!(p & 1))
			continue;
		w[k] = values[k * stride];
		if (!(w[k] >> 63))
			low |= 1U << k;
		if (far_from_top(w[k]))
			far |= 1U << k;
	}
	alone = plain & ~far & q->far;
	q->far |= far & far_all;
	m &= ~plain;
	while (m) {
		uint32_t bit;
		uint64_t bias = 0;

		i = lowest_bit(m) % PHYS_MAX_HW;
		bit = 1U << i;
		m &= m - 1;
		if (!((values[i * stride] >> 63) && !(qemu_ever_biased & bit))) {
			if (needs_bias(q, i, values[i * stride]))
				bias = upper_half_bias(values[i * stride]);
			note_start(q, i, values[i * stride], bias);
		}
		w[i] = values[i * stride] + bias;
		if (i < PHYS_FIRST_PROG)
			continue;
		if (far_from_top(w[i])) {
			q->far |= bit & far_all;
			far |= bit;
		} else if (q->far & bit) {
			alone |= bit;
		}
	}
	q->low = (q->low & ~plain) | low;
	held_ones = mask & q->tlb & ~far; /* TLB events near their tops */
	alone &= ~held_ones;
	if (mask & ~alone & ~held_ones)
		qemu_raw.start_values(mask & ~alone & ~held_ones, w, 1);
	q->far &= ~alone; /* what stale_deadline does for each of them */
	while (alone) {
		i = lowest_bit(alone);
		alone &= alone - 1;
		start_consuming(i, w[i]);
	}
	while (held_ones) {
		i = lowest_bit(held_ones);
		held_ones &= held_ones - 1;
		qemu_start_tlb(q, i, w[i]);
	}
}

/*
 * event-map: where the backend has release_host (cdeleg, whose own release
 * writes event 0 through sireg2) the counter's event stays in the map as a
 * released holder, which the next configuration of the event elsewhere
 * releases through the host first; elsewhere (the SBI backend: the host's
 * stop with reset) it leaves the map. QEMU unmaps the counter at either
 * release. The kept entry sends a configuration elsewhere through the host,
 * and one on the same counter maps the event there again, unless a sireg2
 * write meanwhile (a held start, an OF clear) mapped the event to another
 * counter configured for it: the holder then counts nothing. bias: a
 * released counter no longer runs low.
 */
long qemu_release(unsigned int idx)
{
	struct qemu_hart *q = qemu_this_hart();
	uint32_t bit = 1U << idx;

	q->low &= ~bit;
	if (idx >= PHYS_FIRST_PROG && (qemu_quirks & QEMU_EVENT_MAP)) {
		if (qemu_raw.release_host)
			q->released |= bit;
		else
			q->ev[idx] = 0;
	}
	return qemu_raw.release(idx);
}

/* Configuration, event-map's map kept: whatever would change it goes through the host */
struct sbi_ret qemu_config(unsigned int idx, unsigned long flags, unsigned long ev, uint64_t data)
{
	struct qemu_hart *q = qemu_this_hart();
	bool map = (qemu_quirks & QEMU_EVENT_MAP) && idx >= PHYS_FIRST_PROG && idx < PHYS_MAX_HW;
	struct sbi_ret r;
	int h;

	if (qemu_raw.config_direct && (!map || map_unchanged(q, idx, ev)) &&
	    qemu_raw.config_direct(idx, flags, ev, data)) {
		q->released &= ~(1U << idx);
		note_event(q, idx, ev, flags);
		return (struct sbi_ret){SBI_SUCCESS, idx};
	}
	if (map && qemu_raw.release_host) {
		/* the host releases idx first; and a holder we released keeps ev until it is reset */
		q->ev[idx] = 0;
		h = qemu_holder_of(q, ev);
		if (h >= 0 && ((q->released >> h) & 1)) {
			qemu_raw.release_host((unsigned int)h);
			q->ev[h] = 0;
		}
	}
	r = qemu_raw.config_host(idx, flags, ev, data);
	if (r.error != SBI_SUCCESS || r.value >= PHYS_MAX_HW)
		return r;
	note_event(q, (unsigned int)r.value, ev, flags);
	if (r.value >= PHYS_FIRST_PROG && (qemu_quirks & QEMU_EVENT_MAP)) {
		q->released &= ~(1U << r.value);
		/* QEMU maps ev here unless another counter (live) keeps it */
		if (qemu_holder_of(q, ev) < 0)
			q->ev[r.value] = (uint32_t)ev;
	}
	return r;
}

/* ------------------------------------------------------------------ boot */

static const struct {
	const char *name;
	unsigned int bit;
} quirk_names[] = {
	{"stale-deadline", QEMU_STALE_DEADLINE},
	{"event-map", QEMU_EVENT_MAP},
	{"bias", QEMU_BIAS},
	{"other-harts", QEMU_OTHER_HARTS},
	{"tlb-overflow", QEMU_TLB_OVERFLOW},
	{"near-top", QEMU_NEAR_TOP},
};
#define NR_QUIRK_NAMES (sizeof(quirk_names) / sizeof(quirk_names[0]))

static bool word_is(const char *p, const char *w)
{
	while (*w && *p == *w) {
		p++;
		w++;
	}
	return !*w && (*p == ',' || *p == ' ' || *p == '\0');
}

/*
 * pmu-quirks=none | all | name[,name...] in the hypervisor's bootargs;
 * without it, all of them on QEMU's virt machine (its host DT), none
 * elsewhere.
 */
static unsigned int quirks_wanted(void)
{
	const char *p = vpmu_host_option_value("pmu-quirks");
	unsigned int on = 0;

	if (!p)
		return vpmu_host_is_qemu() ? QEMU_QUIRKS_ALL : 0;
	if (word_is(p, "all"))
		return QEMU_QUIRKS_ALL;
	while (*p && *p != ' ') {
		for (unsigned int i = 0; i < NR_QUIRK_NAMES; i++)
			if (word_is(p, quirk_names[i].name))
				on |= quirk_names[i].bit;
		while (*p && *p != ',' && *p != ' ')
			p++;
		if (*p == ',')
			p++;
	}
	return on;
}

void qemu_quirks_init(struct phys_ops *ops)
{
	qemu_quirks = quirks_wanted();
	if (!ops->start_held)
		qemu_quirks &= ~QEMU_TLB_OVERFLOW; /* a backend that cannot hold OF set */
	far_all = qemu_quirks & QEMU_STALE_DEADLINE ? ~0U : 0;
	hv_printf("vpmu: QEMU quirk workarounds:");
	for (unsigned int i = 0; i < NR_QUIRK_NAMES; i++)
		if (qemu_quirks & quirk_names[i].bit)
			hv_printf(" %s", quirk_names[i].name);
	hv_printf("%s\n", qemu_quirks ? "" : " none");
	if (!(qemu_quirks & (QEMU_STALE_DEADLINE | QEMU_EVENT_MAP | QEMU_BIAS | QEMU_TLB_OVERFLOW)))
		return;
	qemu_raw = *ops;
	ops->start = qemu_start;
	ops->start_mask = qemu_start_mask;
	if (ops->start_values)
		ops->start_values = qemu_start_values;
	ops->release = qemu_release;
}
