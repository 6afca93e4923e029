/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Events and the guest's policy: which encodings the SBI spec defines and
 * pmuvisor can count (classify), what the policy allows, CONFIG_MATCHING's
 * acceptance cache, the order in which hardware counters are tried, and
 * EVENT_GET_INFO, which asks all of that for a list of events.
 */
#include "vpmu/place.h"

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
static bool ev_allowed(const struct vpmu *v, unsigned long ev, bool fw, uint32_t *counters)
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

int ev_classify(unsigned long event_idx, uint64_t data, int *key)
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
	/* a raw code other than 0 is a reserved value, not a reserved bit */
	case SBI_PMU_EVENT_TYPE_RAW:
		return (code || (data >> RAW_DATA_BITS)) ? EVK_UNSUPPORTED : EVK_HW;
	case SBI_PMU_EVENT_TYPE_RAW_V2:
		return (code || (data >> RAW2_DATA_BITS)) ? EVK_UNSUPPORTED : EVK_HW;
	case SBI_PMU_EVENT_TYPE_FW:
		/*
		 * Every standard event, as a host's SBI offers them: those the
		 * hypervisor never sees (misaligned and access faults go to the
		 * guest without it; a guest has no HFENCE to ask for) count 0, as
		 * on a host whose firmware never takes them, and perf schedules
		 * them with the others. No SBI_PMU_FW_PLATFORM nor implementation
		 * events.
		 */
		if (code >= SBI_PMU_FW_MAX || data)
			return EVK_UNSUPPORTED;
		return EVK_FW;
	default:
		return EVK_UNSUPPORTED; /* a type the spec reserves: nothing counts it */
	}
}

/* ev_classify and ev_allowed, remembered for the next call's same event */
int ev_accept_anew(struct vpmu *v, unsigned long event_idx, uint64_t data)
{
	struct vpmu_ev_seen *s = &v->ev_seen;
	int key, kind = ev_classify(event_idx, data, &key);
	uint32_t allowed;

	if (kind < 0 || !ev_allowed(v, event_idx, kind == EVK_FW, &allowed))
		return EVK_UNSUPPORTED;
	s->event_idx = event_idx;
	s->event_data = data;
	s->allowed = allowed;
	s->key = key;
	s->kind = kind;
	return kind;
}

bool ev_seen_holds(struct vpmu *v)
{
	const struct vpmu_ev_seen *s = &v->ev_seen;
	uint32_t allowed;
	int key, kind;

	if (s->kind < 0)
		return true;
	kind = ev_classify(s->event_idx, s->event_data, &key);
	return kind == s->kind && key == s->key &&
	       ev_allowed(v, s->event_idx, kind == EVK_FW, &allowed) && allowed == s->allowed;
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
uint32_t ev_candidate_set(const struct vpmu *v, unsigned long event_idx, int *fixed,
			  bool *fixed_first)
{
	int f = event_idx == EV_CYCLES ? 0 : event_idx == EV_INSTRET ? CTR_INSTRET : -1;
	bool prog = f < 0 || layout.prog_counts[f == CTR_INSTRET];
	uint32_t set = prog ? layout.hw_valid & ~((1U << FIRST_PROG) - 1) : 0;
	bool first = !prog;
	unsigned int i;

	if (f >= 0 && prog && layout.event_exclusive)
		for_each_bit (i, v->configured_hw & ~((1U << FIRST_PROG) - 1) & ~v->prof_mask)
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
static unsigned int ev_candidates(const struct vpmu *v, unsigned long event_idx,
				  unsigned int out[VPMU_MAX_HW])
{
	int fixed;
	bool first;
	uint32_t set = ev_candidate_set(v, event_idx, &fixed, &first);
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

bool ev_candidate(const struct vpmu *v, unsigned long event_idx, unsigned int idx)
{
	int fixed;
	bool first;

	return idx < 32 && ((ev_candidate_set(v, event_idx, &fixed, &first) >> idx) & 1);
}

/* The event of a capability key, or 0 for keys that name no valid event */
unsigned long ev_of_key(unsigned int key)
{
	unsigned int code = key - 11;

	if (key >= SBI_PMU_HW_CPU_CYCLES && key <= SBI_PMU_HW_REF_CPU_CYCLES)
		return EVENT_IDX(SBI_PMU_EVENT_TYPE_HW, key);
	if (key >= 11 && (code >> 3) <= 6 && ((code >> 1) & 3) <= 2)
		return EVENT_IDX(SBI_PMU_EVENT_TYPE_CACHE, code);
	return 0;
}

/* ------------------------------------------------------------ EVENT_GET_INFO */

struct event_info_entry {
	uint32_t event_idx;
	uint32_t output;
	uint64_t event_data;
};
_Static_assert(sizeof(struct event_info_entry) == 16, "SBI v3.0 event info entry");

/*
 * EVENT_GET_INFO may name up to ~2^60 entries, and a raw one costs host
 * calls: the call is answered in slices of at most this much work (units:
 * an entry read or answered from tables is 1, a host configuration of a
 * raw event on one counter EVINFO_PROBE), about 0.5 M instructions. After
 * each slice the guest re-executes its ecall (VPMU_RET_RESTART, the other
 * vCPUs of the hart may run meanwhile) and the call resumes where it
 * stopped, in the middle of an entry's candidates if need be, as long as
 * the same ecall asks the same.
 */
#define EVINFO_SLICE 2048
#define EVINFO_PROBE 32

/*
 * Could config_matching find a counter for this hardware event, with the
 * counters the guest may use, if none of them were busy? For general and
 * cache events the boot probe knows. A raw event is tried on each counter
 * the guest does not use itself (evicting another vCPU's stopped one if
 * need be); if it has none free, the answer is "no" (documented in
 * vpmu.md). 1 or 0, or -1 when the slice's work ran out first: *from is
 * the candidate to go on with.
 */
static int hw_event_supported(struct vpmu *v, unsigned long event_idx, uint64_t data, int key,
			      uint32_t allowed, unsigned int *from, unsigned long *work)
{
	unsigned int c[VPMU_MAX_HW], n, i;

	if (key >= 0) { /* the boot probe's answer: any candidate will do */
		int fixed;
		bool first;

		return (ev_candidate_set(v, event_idx, &fixed, &first) & allowed &
			layout.can[key]) != 0;
	}
	n = ev_candidates(v, event_idx, c);
	for (i = *from; i < n; i++) {
		unsigned int p = c[i];

		if (!((allowed >> p) & 1))
			continue;
		if (v->ctr[p].state != VPMU_CTR_UNCONFIGURED) {
			if (v->ctr[p].event_idx == event_idx && v->ctr[p].event_data == data)
				return 1;
			continue;
		}
		if (!v->loaded)
			continue;
		if (*work + EVINFO_PROBE > EVINFO_SLICE) {
			*from = i;
			return -1;
		}
		*work += EVINFO_PROBE;
		if (place_try_config(v, p, 0, event_idx, data, key)) {
			place_release(v->resident, p);
			return 1;
		}
	}
	return 0;
}

/* This call's answer for a raw event asked before, or -1 */
static int raw_seen(const struct vpmu_evinfo *st, unsigned long event_idx, uint64_t data)
{
	for (unsigned int i = 0; i < st->raw_known && i < VPMU_EVINFO_RAW_SEEN; i++)
		if (st->raw[i].idx == event_idx && st->raw[i].data == data)
			return (int)st->raw[i].out;
	return -1;
}

static void raw_remember(struct vpmu_evinfo *st, unsigned long event_idx, uint64_t data,
			 uint32_t out)
{
	st->raw[st->raw_known++ % VPMU_EVINFO_RAW_SEEN] =
		(struct vpmu_evinfo_raw){(uint32_t)event_idx, data, out};
}

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
	unsigned long work = 0, pc;
	uint32_t allowed;
	int key;

	if (flags || !num || (lo & 0xf))
		return ret_err(SBI_ERR_INVALID_PARAM);
	if (hi || num > (~0UL - lo) / sizeof(e))
		return ret_err(SBI_ERR_INVALID_ADDRESS);
	/* guest RAM is one range: both ends inside means all of it, checked in O(1) */
	if (!evinfo_entry(v, lo, 0, &e) || !evinfo_entry(v, lo, num - 1, &e))
		return ret_err(SBI_ERR_INVALID_ADDRESS);
	pc = vpmu_host_ecall_pc(v);
	/* resumed only by the same ecall again: another one checks every entry anew */
	if (!st->busy || st->lo != lo || st->num != num || st->pc != pc) {
		st->busy = true;
		st->lo = lo;
		st->num = num;
		st->pc = pc;
		st->next = 0;
		st->from = 0;
		st->checked = false;
		st->raw_known = 0;
	}
	/* First pass: every entry readable and well formed, nothing written */
	for (; !st->checked && st->next < num; st->next++, work++) {
		if (work >= EVINFO_SLICE)
			return ret_err(VPMU_RET_RESTART);
		if (!evinfo_entry(v, lo, st->next, &e)) {
			st->busy = false;
			return ret_err(SBI_ERR_INVALID_ADDRESS);
		}
		if (ev_classify(e.event_idx, evinfo_data(&e), &key) == EVK_BAD) {
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
		int kind, got;

		if (work >= EVINFO_SLICE) {
			sync_hw_deadline(v, false);
			return ret_err(VPMU_RET_RESTART);
		}
		if (!evinfo_entry(v, lo, st->next, &e)) {
			st->busy = false;
			sync_hw_deadline(v, false);
			return ret_err(SBI_ERR_INVALID_ADDRESS);
		}
		kind = ev_classify(e.event_idx, evinfo_data(&e), &key);
		if (kind >= 0 && !ev_allowed(v, e.event_idx, kind == EVK_FW, &allowed))
			kind = EVK_UNSUPPORTED;
		if (kind == EVK_FW) {
			out = 1;
		} else if (kind == EVK_HW && key < 0 &&
			   (got = raw_seen(st, e.event_idx, e.event_data)) >= 0) {
			out = (uint32_t)
				got; /* a raw event this call asked the host about already */
		} else if (kind == EVK_HW) {
			got = hw_event_supported(v, e.event_idx, evinfo_data(&e), key, allowed,
						 &st->from, &work);
			if (got < 0) { /* this entry goes on in the next slice */
				sync_hw_deadline(v, false);
				return ret_err(VPMU_RET_RESTART);
			}
			st->from = 0;
			out = (uint32_t)got;
			if (key < 0)
				raw_remember(st, e.event_idx, e.event_data, out);
		}
		work++;
		if (vpmu_host_write_guest(v,
					  lo + st->next * sizeof(e) +
						  offsetof(struct event_info_entry, output),
					  &out, sizeof(out))) {
			st->busy = false;
			sync_hw_deadline(v, false);
			return ret_err(SBI_ERR_INVALID_ADDRESS);
		}
	}
	st->busy = false;
	/* probing may have evicted a stopped configuration; no started one moved */
	sync_hw_deadline(v, false);
	return ret_val(0);
}
