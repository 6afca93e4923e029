/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Virtual PMU logic: counter layout, the per-counter state machine and the
 * nine SBI PMU functions. See docs/vpmu.md for the design and for every
 * decision where the SBI specification leaves room.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sbi_spec.h"
#include "vpmu.h"
#include "vpmu_host.h"
#include "vpmu_phys.h"

#define EVENT_TYPE(e)	(((e) >> 16) & 0xf)
#define EVENT_CODE(e)	((e)&0xffff)
#define EVENT_IDX(t, c) (((unsigned long)(t) << 16) | (c))
#define EV_CYCLES	EVENT_IDX(SBI_PMU_EVENT_TYPE_HW, SBI_PMU_HW_CPU_CYCLES)
#define EV_INSTRET	EVENT_IDX(SBI_PMU_EVENT_TYPE_HW, SBI_PMU_HW_INSTRUCTIONS)

/* Visit the set bits of a counter mask only (masks are sparse, 64 bits wide) */
#define for_each_bit(i, m)                                                                         \
	for (unsigned long __m = (m); __m && ((i) = (unsigned int)__builtin_ctzl(__m), 1);         \
	     __m &= __m - 1)

#define CTR_TIME    1
#define CTR_INSTRET 2
#define FIRST_PROG  3

#define FW_CTR_INFO    (SBI_PMU_CTR_INFO_FW | (63UL << 12)) /* 64 bits, CSR 0 */
#define RAW_DATA_BITS  48
#define RAW2_DATA_BITS 58
#define FILTER_FLAGS                                                                               \
	(SBI_PMU_CFG_FLAG_SET_VUINH | SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_UINH |     \
	 SBI_PMU_CFG_FLAG_SET_SINH | SBI_PMU_CFG_FLAG_SET_MINH)

/*
 * Host acceptance cache for general (key = code 1..10) and cache events
 * (key = 11 + code, code <= 6 << 3 | 2 << 1 | 1): bit p of ok/bad = the host
 * accepted/refused the event on physical counter p. Raw events (event_data
 * dependent) are not cached.
 */
#define EV_KEYS 65

static struct {
	bool available;
	unsigned int num_hw; /* H */
	uint32_t hw_valid;
	unsigned long hw_info[VPMU_MAX_HW];
	bool prog_counts[2];  /* [0] cycles, [1] instret on programmable counters */
	bool event_exclusive; /* the host counts an event on one counter per hart only */
	uint32_t ev_ok[EV_KEYS];
	uint32_t ev_bad[EV_KEYS];
} layout;

/* ---------------------------------------------------------------- helpers */

static const struct vpmu_policy no_policy;

static unsigned int num_total(void)
{
	return layout.available ? layout.num_hw + VPMU_NUM_FW : 0;
}

/* What this guest sees: firmware counters may be switched off by policy */
static unsigned int num_visible(const struct vpmu *v)
{
	if (!layout.available)
		return 0;
	return v->policy->no_firmware ? layout.num_hw : num_total();
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

static bool is_hw(unsigned long idx)
{
	return idx < layout.num_hw && ((layout.hw_valid >> idx) & 1);
}

/* A counter this guest may use: the host has it and the policy allows it */
static bool is_visible(const struct vpmu *v, unsigned long idx)
{
	if (is_hw(idx))
		return (hw_allowed(v) >> idx) & 1;
	return is_fw(idx) && !v->policy->no_firmware;
}

static uint64_t width_mask(unsigned long idx)
{
	unsigned int bits;

	if (!is_hw(idx))
		return ~0ULL;
	bits = SBI_PMU_CTR_INFO_WIDTH(layout.hw_info[idx]) + 1;
	return bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
}

static void cache_mark(uint32_t *set, int key, unsigned int p)
{
	if (key >= 0 && p < 32)
		__atomic_fetch_or(&set[key], 1U << p, __ATOMIC_RELAXED);
}

static bool cache_has(const uint32_t *set, int key, unsigned int p)
{
	return key >= 0 && p < 32 && ((__atomic_load_n(&set[key], __ATOMIC_RELAXED) >> p) & 1);
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
	struct sbi_ret r = {err, 0};
	return r;
}

static struct sbi_ret ret_val(unsigned long val)
{
	struct sbi_ret r = {SBI_SUCCESS, val};
	return r;
}

/*
 * A set of counters: INVALID_PARAM unless the mask is non-empty and every
 * bit names a valid counter (no overflow of base + bit).
 */
static long check_set(const struct vpmu *v, unsigned long base, unsigned long mask)
{
	unsigned long n = num_visible(v);
	unsigned int i;

	if (!mask || base >= n)
		return SBI_ERR_INVALID_PARAM;
	for_each_bit(i, mask) if (i >= n - base ||
				  !is_visible(v, base + i)) return SBI_ERR_INVALID_PARAM;
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
		/* pmuvisor has no SBI_PMU_FW_PLATFORM nor implementation events */
		if (code >= SBI_PMU_FW_MAX || data)
			return EVK_UNSUPPORTED;
		return EVK_FW;
	default:
		return EVK_BAD;
	}
}

/*
 * Hardware counters that may count event_idx, in preference order. Other
 * events never go to the fixed counters. instret: programmable counters
 * first (they can overflow, for sampling), then counter 2. cycles: counter
 * 0 first (QEMU 10 counts guest cycles exactly only there), then the
 * programmable counters if the boot probe saw them count cycles.
 */
static unsigned int hw_candidates(unsigned long event_idx, unsigned int out[VPMU_MAX_HW])
{
	int fixed = event_idx == EV_CYCLES ? 0 : event_idx == EV_INSTRET ? CTR_INSTRET : -1;
	bool prog = fixed < 0 || layout.prog_counts[fixed == CTR_INSTRET];
	unsigned int i, n = 0;

	if (fixed == 0 && is_hw(0))
		out[n++] = 0;
	if (prog) {
		for (i = FIRST_PROG; i < layout.num_hw; i++)
			if (is_hw(i))
				out[n++] = i;
	}
	if (fixed == CTR_INSTRET && is_hw(CTR_INSTRET))
		out[n++] = CTR_INSTRET;
	return n;
}

static bool hw_candidate(unsigned long event_idx, unsigned int idx)
{
	unsigned int c[VPMU_MAX_HW], n = hw_candidates(event_idx, c), i;

	for (i = 0; i < n; i++)
		if (c[i] == idx)
			return true;
	return false;
}

/* ---------------------------------------------------- physical counters */

/*
 * Before the host starts a counter: an LCOFI still pending would make
 * OpenSBI leave the counter's overflow flag set, and it would never
 * interrupt again. Record what overflowed and clear it first.
 */
static void phys_prepare_start(struct vpmu *v)
{
	if (!vpmu_phys_irq_pending())
		return;
	vpmu_overflow_check(v);
	vpmu_phys_irq_clear();
}

/*
 * Save a stopped counter's value. The value it ran from is still in
 * c->value: a smaller one means it wrapped. Hardware flags that in
 * mhpmevent.OF; QEMU without -icount raises it late from a timer and drops
 * it once the counter is stopped, so record the overflow here too.
 */
static void save_value(struct vpmu *v, unsigned int i, uint64_t now)
{
	struct vpmu_ctr *c = &v->ctr[i];

	if (now < c->value && !((v->overflow >> i) & 1)) {
		v->overflow |= 1ULL << i;
		v->irq_pending = true;
		v->nr_overflows++;
	}
	c->value = now;
}

/* Free physical counter p of this hart, whoever configured it */
static void phys_release(struct vpmu_hart *h, unsigned int p)
{
	vpmu_phys_stop(p, 1);
	h->owner[p] = NULL;
}

/* Counter i of v is configured on the physical counter of the hart we run on */
static bool on_this_hart(const struct vpmu *v, unsigned int i)
{
	const struct vpmu_ctr *c = &v->ctr[i];

	return c->phys >= 0 && v->resident && v->resident == vpmu_host_hart() &&
	       v->resident->owner[c->phys] == v;
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
	if (!v->loaded || !on_this_hart(v, (unsigned int)q) || c->phys != (int)q) {
		phys_release(h, (unsigned int)q);
		return;
	}
	run = c->state == VPMU_CTR_STARTED;
	if (run) {
		vpmu_phys_stop((unsigned int)q, 0);
		c->value = vpmu_phys_read((unsigned int)q) & width_mask(q);
	}
	vpmu_phys_config((unsigned int)q, host_flags(c->flags), c->event_idx, c->event_data);
	if (run) {
		phys_prepare_start(v);
		c->synced = vpmu_phys_start((unsigned int)q, c->value) == SBI_SUCCESS;
	}
}

/*
 * Configure an event on physical counter p exactly; true on success. A
 * stopped configuration another vCPU left there is evicted first.
 */
static bool phys_try_config(struct vpmu *v, unsigned int p, unsigned long guest_flags,
			    unsigned long event_idx, uint64_t data, int key)
{
	struct vpmu_hart *h = v->resident;
	struct sbi_ret r;

	if (cache_has(layout.ev_bad, key, p))
		return false;
	if (h->owner[p] && h->owner[p] != v)
		phys_release(h, p);
	/*
	 * QEMU counts an event on one programmable counter per hart only: a
	 * stopped configuration another vCPU left with the same event would
	 * leave ours at zero. Hardware with no such limit loses nothing.
	 */
	for (unsigned int q = FIRST_PROG; layout.event_exclusive && q < layout.num_hw; q++)
		if (q != p && h->owner[q] && h->owner[q] != v && h->event_idx[q] == event_idx &&
		    h->event_data[q] == data)
			phys_release(h, q);
	r = vpmu_phys_config(p, host_flags(guest_flags), event_idx, data);
	if (r.error == SBI_SUCCESS && r.value == p) {
		cache_mark(layout.ev_ok, key, p);
		h->owner[p] = v;
		h->event_idx[p] = (uint32_t)event_idx;
		h->event_data[p] = data;
		return true;
	}
	if (r.error == SBI_SUCCESS)
		phys_undo(v, r.value);
	cache_mark(layout.ev_bad, key, p);
	return false;
}

static void phys_load_ctr(struct vpmu *v, unsigned int i)
{
	struct vpmu_ctr *c = &v->ctr[i];
	int key;

	c->phys = -1;
	c->synced = 0;
	classify(c->event_idx, c->event_data, &key);
	if (!phys_try_config(v, i, c->flags, c->event_idx, c->event_data, key))
		return;
	c->phys = (int8_t)i;
	if (c->state == VPMU_CTR_STARTED) {
		phys_prepare_start(v);
		c->synced = vpmu_phys_start(i, c->value) == SBI_SUCCESS;
	}
}

/* Stop, save and release the physical counter behind hardware counter i */
static void phys_unload_ctr(struct vpmu *v, unsigned int i)
{
	struct vpmu_ctr *c = &v->ctr[i];

	if (on_this_hart(v, i)) {
		phys_release(v->resident, (unsigned int)c->phys);
		if (c->state == VPMU_CTR_STARTED && v->loaded)
			c->value = vpmu_phys_read((unsigned int)c->phys) & width_mask(i);
	}
	c->phys = -1;
	c->synced = 0;
}

static void sync_counteren(struct vpmu *v)
{
	if (v->loaded)
		vpmu_phys_set_counteren(vpmu_hcounteren(v));
}

/* ------------------------------------------------------- state machine */

enum vpmu_op {
	OP_CONFIG, /* map an event (UNCONFIGURED or CONFIGURED -> CONFIGURED) */
	OP_START,  /* CONFIGURED -> STARTED */
	OP_STOP,   /* STARTED -> CONFIGURED */
	OP_RESET,  /* any -> UNCONFIGURED, releasing the counter */
};

struct op_args {
	unsigned long event_idx;
	uint64_t event_data;
	unsigned long flags; /* OP_CONFIG: guest filter flags */
	int key;	     /* OP_CONFIG: acceptance cache key */
	bool set_value;	     /* OP_START: load value first */
	uint64_t value;
};

/*
 * The one place where a counter changes state. Returns an SBI error code;
 * on error the counter is unchanged.
 */
static long ctr_transition(struct vpmu *v, unsigned int i, enum vpmu_op op, const struct op_args *a)
{
	struct vpmu_ctr *c = &v->ctr[i];
	bool hw = is_hw(i);

	switch (op) {
	case OP_CONFIG:
		if (c->state == VPMU_CTR_STARTED)
			return SBI_ERR_NOT_SUPPORTED;
		if (hw && v->loaded) {
			bool had = c->phys >= 0;

			if (had)
				phys_unload_ctr(v, i);
			if (!phys_try_config(v, i, a->flags, a->event_idx, a->event_data, a->key)) {
				if (had)
					phys_load_ctr(v, i);
				return SBI_ERR_NOT_SUPPORTED;
			}
			c->phys = (int8_t)i;
			c->synced = 0;
		}
		c->event_idx = (uint32_t)a->event_idx;
		c->event_data = a->event_data;
		c->flags = a->flags & FILTER_FLAGS;
		c->state = VPMU_CTR_CONFIGURED;
		return SBI_SUCCESS;

	case OP_START:
		if (c->state == VPMU_CTR_UNCONFIGURED)
			return SBI_ERR_INVALID_PARAM;
		if (c->state == VPMU_CTR_STARTED)
			return SBI_ERR_ALREADY_STARTED;
		if (a && a->set_value)
			c->value = a->value & width_mask(i);
		if (hw && c->phys >= 0) {
			phys_prepare_start(v);
			c->synced = vpmu_phys_start((unsigned int)c->phys, c->value) == SBI_SUCCESS;
		}
		v->overflow &= ~(1ULL << i);
		c->state = VPMU_CTR_STARTED;
		return SBI_SUCCESS;

	case OP_STOP:
		if (c->state != VPMU_CTR_STARTED)
			return SBI_ERR_ALREADY_STOPPED;
		if (hw && c->phys >= 0) {
			vpmu_phys_stop((unsigned int)c->phys, 0);
			save_value(v, i, vpmu_phys_read((unsigned int)c->phys) & width_mask(i));
			c->synced = 1;
		}
		c->state = VPMU_CTR_CONFIGURED;
		return SBI_SUCCESS;

	case OP_RESET:
		if (hw)
			phys_unload_ctr(v, i);
		c->state = VPMU_CTR_UNCONFIGURED;
		c->event_idx = 0;
		c->event_data = 0;
		c->flags = 0;
		return SBI_SUCCESS;
	}
	return SBI_ERR_FAILED;
}

/* -------------------------------------------------------------- global */

void vpmu_global_init(void)
{
	unsigned long n, i;
	unsigned int c[VPMU_MAX_HW], k, j;

	__builtin_memset(&layout, 0, sizeof(layout));
	if (!vpmu_phys_available()) {
		hv_printf("vpmu: the host has no SBI PMU: not offered to guests\n");
		return;
	}
	n = vpmu_phys_num_counters();
	for (i = 0; i < n && i < VPMU_MAX_HW; i++) {
		struct sbi_ret r = vpmu_phys_counter_info(i);

		if (r.error || (r.value & SBI_PMU_CTR_INFO_FW) || i == CTR_TIME ||
		    SBI_PMU_CTR_INFO_CSR(r.value) != 0xc00 + i)
			continue;
		layout.hw_valid |= 1U << i;
		layout.hw_info[i] = r.value;
		layout.num_hw = (unsigned int)i + 1;
	}
	if (layout.num_hw < FIRST_PROG)
		layout.num_hw = FIRST_PROG;
	layout.available = true;

	/* Can programmable counters count cycles / instret? Probe one each. */
	for (k = 0; k < 2; k++) {
		unsigned long ev = k ? EV_INSTRET : EV_CYCLES;

		layout.prog_counts[k] = true; /* so hw_candidates lists them */
		n = hw_candidates(ev, c);
		layout.prog_counts[k] = false;
		for (j = 0; j < n; j++) {
			int r;

			if (c[j] < FIRST_PROG)
				continue;
			r = vpmu_phys_event_counts(c[j], ev);
			if (r >= 0) {
				layout.prog_counts[k] = r > 0;
				break;
			}
		}
	}
	/* Two programmable counters with instret: do both count? */
	for (j = FIRST_PROG; j + 1 < layout.num_hw; j++)
		if (is_hw(j) && is_hw(j + 1)) {
			layout.event_exclusive = vpmu_phys_event_shared(j, j + 1, EV_INSTRET) == 0;
			break;
		}
	hv_printf("vpmu: %u hardware counters (mask 0x%x), %u firmware, cycles %s, instret %s%s\n",
		  layout.num_hw, layout.hw_valid, VPMU_NUM_FW,
		  layout.prog_counts[0] ? "any" : "fixed only",
		  layout.prog_counts[1] ? "any" : "fixed only",
		  layout.event_exclusive ? ", one counter per event" : "");
}

bool vpmu_available(void)
{
	return layout.available;
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
	unsigned int i;

	__builtin_memset(v, 0, sizeof(*v));
	v->policy = &no_policy;
	for (i = 0; i < VPMU_MAX_COUNTERS; i++)
		v->ctr[i].phys = -1;
}

void vpmu_vcpu_set_policy(struct vpmu *v, const struct vpmu_policy *p)
{
	v->policy = p ? p : &no_policy;
}

void vpmu_vcpu_reset(struct vpmu *v)
{
	unsigned long nr_overflows = v->nr_overflows;
	const struct vpmu_policy *policy = v->policy;
	bool loaded = v->loaded;
	unsigned int i;

	for (i = 0; i < num_total(); i++)
		ctr_transition(v, i, OP_RESET, NULL);
	vpmu_vcpu_init(v);
	v->nr_overflows = nr_overflows; /* statistics outlive a reset */
	v->policy = policy;
	v->loaded = loaded;
	if (loaded)
		v->resident = vpmu_host_hart();
	sync_counteren(v);
}

/*
 * Counters still configured on this hart since the vCPU was put here, and
 * untouched by anyone since, just continue: one start call for all of them.
 * The others are configured again and started from their saved values.
 */
void vpmu_vcpu_load(struct vpmu *v)
{
	struct vpmu_hart *h = vpmu_host_hart();
	uint32_t cont = 0;
	unsigned int i;

	v->loaded = true;
	if (v->resident != h) {
		for (i = 0; i < layout.num_hw; i++)
			v->ctr[i].phys = -1;
		v->resident = h;
	}
	for (i = 0; i < layout.num_hw; i++) {
		struct vpmu_ctr *c = &v->ctr[i];

		if (!is_hw(i) || c->state == VPMU_CTR_UNCONFIGURED)
			continue;
		if (on_this_hart(v, i)) {
			if (c->state == VPMU_CTR_STARTED) {
				cont |= 1U << i;
				c->synced = 1;
			}
			continue;
		}
		phys_load_ctr(v, i);
	}
	if (cont)
		phys_prepare_start(v);
	if (cont && vpmu_phys_start_mask(cont) != SBI_SUCCESS) {
		/* the host refused the batch: start them one by one */
		for (i = 0; i < layout.num_hw; i++)
			if ((cont >> i) & 1) {
				vpmu_phys_stop(i, 0);
				v->ctr[i].synced =
					vpmu_phys_start(i, v->ctr[i].value) == SBI_SUCCESS;
			}
	}
	sync_counteren(v);
}

void vpmu_overflow_check(struct vpmu *v)
{
	uint32_t of;
	unsigned int i;

	if (!v->loaded)
		return;
	of = vpmu_phys_overflowed();
	for (i = 0; of && i < layout.num_hw; i++) {
		struct vpmu_ctr *c = &v->ctr[i];

		if (c->state != VPMU_CTR_STARTED || c->phys < 0 || !((of >> c->phys) & 1) ||
		    ((v->overflow >> i) & 1))
			continue;
		v->overflow |= 1ULL << i;
		v->irq_pending = true;
		v->nr_overflows++;
	}
}

bool vpmu_take_irq(struct vpmu *v)
{
	bool r = v->irq_pending;

	v->irq_pending = false;
	return r;
}

bool vpmu_overflow_available(void)
{
	return layout.available && layout.num_hw > 0;
}

void vpmu_vcpu_put(struct vpmu *v)
{
	unsigned int i;
	uint32_t run = 0;

	if (!v->loaded)
		return;
	vpmu_overflow_check(v);
	vpmu_phys_irq_clear(); /* recorded: it must not block the next vCPU's starts */
	/* one stop for every running counter; they stay configured here */
	for (i = 0; i < layout.num_hw; i++)
		if (v->ctr[i].state == VPMU_CTR_STARTED && on_this_hart(v, i))
			run |= 1U << i;
	if (run) {
		vpmu_phys_stop_mask(run);
		for (i = 0; i < layout.num_hw; i++)
			if ((run >> i) & 1)
				save_value(v, i, vpmu_phys_read(i) & width_mask(i));
	}
	vpmu_phys_set_counteren(0);
	v->loaded = false;
}

unsigned long vpmu_hcounteren(const struct vpmu *v)
{
	unsigned long bits = 0;
	unsigned int i;

	/* only a loaded vCPU's counters are in the hardware */
	if (!v->loaded)
		return 0;
	for (i = 0; i < layout.num_hw; i++) {
		const struct vpmu_ctr *c = &v->ctr[i];

		if (is_hw(i) && c->state != VPMU_CTR_UNCONFIGURED && c->phys == (int)i && c->synced)
			bits |= 1UL << i;
	}
	return bits;
}

uint64_t vpmu_ctr_value(struct vpmu *v, unsigned int i)
{
	struct vpmu_ctr *c;

	if (i >= VPMU_MAX_COUNTERS)
		return 0;
	c = &v->ctr[i];
	if (is_hw(i) && c->state == VPMU_CTR_STARTED && c->phys >= 0 && c->synced)
		return vpmu_phys_read((unsigned int)c->phys) & width_mask(i);
	return c->value;
}

int vpmu_csr_read(struct vpmu *v, unsigned int csr, unsigned long *val)
{
	unsigned int i = csr - 0xc00;

	if (csr < 0xc00 || i >= VPMU_MAX_HW || i == CTR_TIME || !is_hw(i) ||
	    v->ctr[i].state == VPMU_CTR_UNCONFIGURED)
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
	return ret_val(is_fw(idx) ? FW_CTR_INFO : layout.hw_info[idx]);
}

struct sbi_ret vpmu_counter_config_matching(struct vpmu *v, unsigned long base, unsigned long mask,
					    unsigned long flags, unsigned long event_idx,
					    uint64_t event_data)
{
	struct op_args a = {event_idx, event_data, flags, -1, false, 0};
	int kind;
	unsigned int i, idx = 0;
	long err = SBI_ERR_NOT_SUPPORTED;
	uint32_t allowed;

	if (flags & ~SBI_PMU_CFG_FLAG_MASK)
		return ret_err(SBI_ERR_INVALID_PARAM);
	if (check_set(v, base, mask))
		return ret_err(SBI_ERR_INVALID_PARAM);
	kind = classify(event_idx, event_data, &a.key);
	if (kind < 0 || !event_allowed(v, event_idx, kind == EVK_FW, &allowed))
		return ret_err(SBI_ERR_NOT_SUPPORTED);

	if (flags & SBI_PMU_CFG_FLAG_SKIP_MATCH) {
		/* Unconditionally the first counter of the set */
		for (i = 0; !((mask >> i) & 1); i++)
			;
		idx = (unsigned int)(base + i);
		if (kind == EVK_FW ? !is_fw(idx)
				   : !hw_candidate(event_idx, idx) || !((allowed >> idx) & 1))
			return ret_err(SBI_ERR_NOT_SUPPORTED);
		err = ctr_transition(v, idx, OP_CONFIG, &a);
	} else if (kind == EVK_FW) {
		for (i = 0; i < 64 && err; i++) {
			idx = (unsigned int)(base + i);
			if (((mask >> i) & 1) && is_fw(idx) &&
			    v->ctr[idx].state == VPMU_CTR_UNCONFIGURED)
				err = ctr_transition(v, idx, OP_CONFIG, &a);
		}
	} else {
		unsigned int c[VPMU_MAX_HW], n = hw_candidates(event_idx, c);

		for (i = 0; i < n && err; i++) {
			idx = c[i];
			if (idx >= base && idx - base < 64 && ((mask >> (idx - base)) & 1) &&
			    ((allowed >> idx) & 1) && v->ctr[idx].state == VPMU_CTR_UNCONFIGURED)
				err = ctr_transition(v, idx, OP_CONFIG, &a);
		}
	}
	if (err) {
		sync_counteren(v); /* a refused reconfiguration reloads the old event */
		return ret_err(err);
	}

	if (flags & SBI_PMU_CFG_FLAG_CLEAR_VALUE) {
		v->ctr[idx].value = 0;
		v->ctr[idx].synced = 0;
	}
	if (flags & SBI_PMU_CFG_FLAG_AUTO_START)
		ctr_transition(v, idx, OP_START, NULL);
	sync_counteren(v);
	return ret_val(idx);
}

struct sbi_ret vpmu_counter_start(struct vpmu *v, unsigned long base, unsigned long mask,
				  unsigned long flags, uint64_t ival)
{
	struct op_args a = {0, 0, 0, -1, false, ival};
	uint64_t snap[64];
	bool already = false;
	unsigned int i;

	if (flags & ~SBI_PMU_START_FLAG_MASK)
		return ret_err(SBI_ERR_INVALID_PARAM);
	if ((flags & SBI_PMU_START_FLAG_SET_INIT_VALUE) &&
	    (flags & SBI_PMU_START_FLAG_INIT_SNAPSHOT))
		return ret_err(SBI_ERR_INVALID_PARAM);
	if (check_set(v, base, mask))
		return ret_err(SBI_ERR_INVALID_PARAM);
	for_each_bit(i, mask) if (v->ctr[base + i].state ==
				  VPMU_CTR_UNCONFIGURED) return ret_err(SBI_ERR_INVALID_PARAM);
	if (flags & SBI_PMU_START_FLAG_INIT_SNAPSHOT) {
		unsigned int top = 63 - (unsigned int)__builtin_clzl(mask);

		if (!v->shmem_set)
			return ret_err(SBI_ERR_NO_SHMEM);
		if (vpmu_host_read_guest(v, v->shmem_gpa + SBI_PMU_SNAPSHOT_VALUES_OFFSET, snap,
					 (top + 1) * sizeof(uint64_t)))
			return ret_err(SBI_ERR_FAILED);
	}
	a.set_value =
		flags & (SBI_PMU_START_FLAG_SET_INIT_VALUE | SBI_PMU_START_FLAG_INIT_SNAPSHOT);

	for_each_bit(i, mask)
	{
		if (flags & SBI_PMU_START_FLAG_INIT_SNAPSHOT)
			a.value = snap[i];
		if (ctr_transition(v, (unsigned int)(base + i), OP_START, &a) ==
		    SBI_ERR_ALREADY_STARTED)
			already = true;
	}
	sync_counteren(v);
	return ret_err(already ? SBI_ERR_ALREADY_STARTED : SBI_SUCCESS);
}

struct sbi_ret vpmu_counter_stop(struct vpmu *v, unsigned long base, unsigned long mask,
				 unsigned long flags)
{
	bool already = false, snap = flags & SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT;
	uint64_t ovf = 0;
	long err = SBI_SUCCESS;
	unsigned int i;

	if (flags & ~SBI_PMU_STOP_FLAG_MASK)
		return ret_err(SBI_ERR_INVALID_PARAM);
	if (check_set(v, base, mask))
		return ret_err(SBI_ERR_INVALID_PARAM);
	if (snap && !v->shmem_set)
		return ret_err(SBI_ERR_NO_SHMEM);
	vpmu_overflow_check(v); /* the bitmap must include what just overflowed */

	for_each_bit(i, mask)
	{
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
	}
	if (snap &&
	    vpmu_host_write_guest(v, v->shmem_gpa + SBI_PMU_SNAPSHOT_OVF_OFFSET, &ovf, sizeof(ovf)))
		err = SBI_ERR_FAILED;
	sync_counteren(v);
	if (err)
		return ret_err(err);
	return ret_err(already ? SBI_ERR_ALREADY_STOPPED : SBI_SUCCESS);
}

static long fw_check(struct vpmu *v, unsigned long idx)
{
	if (!is_fw(idx) || !is_visible(v, idx) || v->ctr[idx].state == VPMU_CTR_UNCONFIGURED)
		return SBI_ERR_INVALID_PARAM;
	return SBI_SUCCESS;
}

struct sbi_ret vpmu_counter_fw_read(struct vpmu *v, unsigned long idx)
{
	if (fw_check(v, idx))
		return ret_err(SBI_ERR_INVALID_PARAM);
	return ret_val((unsigned long)v->ctr[idx].value);
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

/* Could config_matching find a counter for this hardware event? */
static bool hw_event_supported(struct vpmu *v, unsigned long event_idx, uint64_t data, int key,
			       uint32_t allowed)
{
	unsigned int c[VPMU_MAX_HW], n = hw_candidates(event_idx, c), i;

	for (i = 0; i < n; i++) {
		unsigned int p = c[i];
		struct vpmu_ctr *ctr = &v->ctr[p];

		if (!((allowed >> p) & 1))
			continue;
		if (cache_has(layout.ev_ok, key, p))
			return true;
		if (ctr->state != VPMU_CTR_UNCONFIGURED) {
			if (ctr->event_idx == event_idx && ctr->event_data == data)
				return true;
			continue; /* busy: cannot probe it */
		}
		if (!v->loaded || cache_has(layout.ev_bad, key, p))
			continue;
		if (phys_try_config(v, p, 0, event_idx, data, key)) {
			vpmu_phys_stop(p, 1);
			return true;
		}
	}
	return false;
}

struct sbi_ret vpmu_event_get_info(struct vpmu *v, unsigned long lo, unsigned long hi,
				   unsigned long num, unsigned long flags)
{
	struct event_info_entry e;
	unsigned long i;
	uint32_t allowed;
	int key;

	if (flags || !num || (lo & 0xf))
		return ret_err(SBI_ERR_INVALID_PARAM);
	if (hi || num > (~0UL - lo) / sizeof(e))
		return ret_err(SBI_ERR_INVALID_ADDRESS);
	/* guest RAM is one range: both ends inside means all of it, checked in O(1) */
	if (vpmu_host_read_guest(v, lo, &e, sizeof(e)) ||
	    vpmu_host_read_guest(v, lo + (num - 1) * sizeof(e), &e, sizeof(e)))
		return ret_err(SBI_ERR_INVALID_ADDRESS);
	/* First pass: every entry readable and well formed, nothing written */
	for (i = 0; i < num; i++) {
		if (vpmu_host_read_guest(v, lo + i * sizeof(e), &e, sizeof(e)))
			return ret_err(SBI_ERR_INVALID_ADDRESS);
		if (classify(e.event_idx, e.event_data, &key) == EVK_BAD)
			return ret_err(SBI_ERR_INVALID_PARAM);
	}
	for (i = 0; i < num; i++) {
		uint32_t out = 0;
		int kind;

		if (vpmu_host_read_guest(v, lo + i * sizeof(e), &e, sizeof(e)))
			return ret_err(SBI_ERR_INVALID_ADDRESS);
		kind = classify(e.event_idx, e.event_data, &key);
		if (kind >= 0 && !event_allowed(v, e.event_idx, kind == EVK_FW, &allowed))
			kind = EVK_UNSUPPORTED;
		if (kind == EVK_FW)
			out = 1;
		else if (kind == EVK_HW)
			out = hw_event_supported(v, e.event_idx, e.event_data, key, allowed);
		if (vpmu_host_write_guest(
			    v, lo + i * sizeof(e) + offsetof(struct event_info_entry, output), &out,
			    sizeof(out))) {
			sync_counteren(v);
			return ret_err(SBI_ERR_INVALID_ADDRESS);
		}
	}
	sync_counteren(v); /* probing may have had to undo a host fallback */
	return ret_val(0);
}
