/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: random guest registers into the PMU dispatcher, mixed
 * with firmware events, guest execution, vCPU put/load, CSR reads and
 * resets. Asserts that every error is one the SBI spec lists for that FID
 * and that the virtual and fake physical state stay consistent (no leaked
 * physical counter, hcounteren bits only where the value is exact).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"
#include "arch/riscv/sbi_spec.h"
#include "vpmu/vpmu.h"
#include "vpmu/vpmu_host.h"
#include "vpmu/vpmu_sbi.h"

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);      \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t byte(struct input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint64_t u64(struct input *in)
{
	uint64_t x = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		x = (x << 8) | byte(in);
	return x;
}

static const unsigned long events[] = {
	0x1,	 0x2,	  0x3,	   0x10019, 0x1001b, 0x10021, 0x10000, 0x20000, 0x30000,
	0xf0000, 0xf0005, 0xf0015, 0xf0016, 0xfffff, 0x1234,  0x0,     0x40000, 0x100001,
};

static unsigned long arg(struct input *in)
{
	uint8_t b = byte(in);

	switch (b % 10) {
	case 0:
		return u64(in);
	case 1:
		return byte(in);
	case 2:
		return 1UL << (byte(in) % 64);
	case 3:
		return FAKE_RAM_BASE + (unsigned long)byte(in) * 0x100 + (byte(in) % 3) * 8;
	case 4:
		return events[byte(in) % (sizeof(events) / sizeof(events[0]))];
	case 5:
		return ~0UL;
	case 6:
		return 0;
	case 7:
		return ((unsigned long)byte(in) << 8 | byte(in)) & 0x7fffd;
	case 8:
		return FAKE_RAM_BASE + (unsigned long)(byte(in) % 16) * 0x1000;
	default:
		return (unsigned long)byte(in) << 19;
	}
}

static bool allowed(unsigned long fid, long err)
{
	/*
	 * Stricter than the spec: pmuvisor implements SNAPSHOT_SET_SHMEM and
	 * EVENT_GET_INFO, and neither fails "for other reasons"
	 */
	if ((fid == SBI_EXT_PMU_SNAPSHOT_SET_SHMEM || fid == SBI_EXT_PMU_EVENT_GET_INFO) &&
	    (err == SBI_ERR_FAILED || err == SBI_ERR_NOT_SUPPORTED))
		return false;
	return sbi_pmu_error_allowed(fid, err);
}

/*
 * vpmu's own invariants (vpmu_check), then what only the fake physical
 * host knows: the physical counters agree with the virtual state.
 */
static void check_state(struct vpmu *v)
{
	const char *why = vpmu_check(v);
	unsigned int i, nhw = vpmu_num_hw();
	unsigned long en = vpmu_hcounteren(v);

	if (why) {
		fprintf(stderr, "vpmu_check: %s\n", why);
		abort();
	}
	CHECK(vpmu_num_total() == nhw + VPMU_NUM_FW);
	CHECK(!(en & 2));
	/* the hypervisor's sampling counter: never the guest's to read, always counting */
	CHECK(!(fake.counteren & v->prof_mask));
	CHECK(!v->prof_mask || v->ctr[vpmu_profile_counter(v)].state == VPMU_CTR_STARTED);
	CHECK(fake.counteren == (v->loaded ? en & ~(unsigned long)v->prof_mask : 0));
	for (i = 0; i < VPMU_MAX_HW; i++) {
		const struct vpmu_ctr *c = &v->ctr[i];
		bool placed = (v->placed >> i) & 1, synced = (v->synced >> i) & 1;

		if (placed) {
			/* put is lazy: a put vCPU's counters stay configured here, stopped */
			CHECK(fake.c[i].configured);
			CHECK(fake.c[i].running ==
			      (v->loaded && c->state == VPMU_CTR_STARTED && synced));
		}
		if ((en >> i) & 1) {
			CHECK(placed && synced);
			CHECK(fake.c[i].value == vpmu_ctr_value(v, i));
		}
	}
	/* every recorded overflow raised exactly one LCOFI */
	CHECK(fake.nr_lcofi == v->nr_overflows);
	/*
	 * No leaked programmable counter: a single vCPU owns this hart. One it
	 * no longer uses (a RESET keeps the configuration) is stopped, without
	 * an overflow flag, and still on the hart's books as v's.
	 */
	for (i = 3; i < FAKE_NCTR; i++)
		if (fake.c[i].configured && !((v->placed >> i) & 1)) {
			/* the fake flags wraps without Sscofpmf too, where no OF bit exists */
			CHECK(!fake.c[i].running && !(fake.sscofpmf && fake.c[i].of));
			CHECK(fake_hart->owner[i] == v);
		}
}

/*
 * What the guest must read, from the SBI spec and the events the fake
 * hardware counted, not from the vPMU's state: a counter's value is known
 * from a CLEAR_VALUE configuration or a start with SET_INIT_VALUE that
 * succeeded, and then grows by what its physical counter counted (the
 * vPMU places counter i on physical counter i) or, for a firmware counter,
 * by the firmware events of its event code while started. Anything the
 * model cannot tell (an INIT_SNAPSHOT start, a reset, a call that failed
 * partway) makes the counter unknown until it is set again.
 */
struct model_ctr {
	bool known, on;
	uint64_t val;
	unsigned int fw_code; /* a firmware counter's event code */
};
static struct model_ctr model[64];

static uint64_t width_mask(unsigned int i)
{
	unsigned int w = i >= vpmu_num_hw() ? 64 : i < 3 ? 64 : fake.prog_width;

	return w >= 64 ? ~0ULL : (1ULL << w) - 1;
}

/* The counters of a set the spec accepted (check_set passed: no bit past 63) */
static void model_set(unsigned long base, unsigned long mask, void (*fn)(unsigned int, void *),
		      void *arg)
{
	for (unsigned int b = 0; b < 64; b++)
		if (((mask >> b) & 1) && base + b < 64)
			fn((unsigned int)(base + b), arg);
}

static void forget(unsigned int i, void *arg)
{
	(void)arg;
	model[i].known = false;
}

struct start_args {
	unsigned long flags, init;
	bool all_stopped; /* SUCCESS: none of the set had started */
};

static void model_start(unsigned int i, void *arg)
{
	const struct start_args *a = arg;
	struct model_ctr *m = &model[i];

	if (a->flags & SBI_PMU_START_FLAG_INIT_SNAPSHOT) {
		m->known = false;
		return;
	}
	if (a->flags & SBI_PMU_START_FLAG_SET_INIT_VALUE) {
		if (a->all_stopped || (m->known && !m->on)) {
			m->known = true;
			m->val = a->init & width_mask(i);
		}
	}
	m->on = true;
}

static void model_stop(unsigned int i, void *arg)
{
	model[i].on = false;
	if (*(const unsigned long *)arg & SBI_PMU_STOP_FLAG_RESET)
		model[i].known = false;
}

static void model_call(unsigned long fid, const unsigned long *a, struct sbi_ret r)
{
	switch (fid) {
	case SBI_EXT_PMU_COUNTER_CFG_MATCH:
		if (r.error)
			return;
		if (a[2] & SBI_PMU_CFG_FLAG_CLEAR_VALUE) {
			model[r.value].known = true;
			model[r.value].val = 0;
		}
		model[r.value].on = a[2] & SBI_PMU_CFG_FLAG_AUTO_START;
		model[r.value].fw_code = (unsigned int)(a[3] & 0xffff);
		break;
	case SBI_EXT_PMU_COUNTER_START: {
		struct start_args s = {a[2], a[3], r.error == SBI_SUCCESS};

		if (r.error == SBI_SUCCESS || r.error == SBI_ERR_ALREADY_STARTED)
			model_set(a[0], a[1], model_start, &s);
		else if (r.error != SBI_ERR_INVALID_PARAM && r.error != SBI_ERR_NO_SHMEM)
			model_set(a[0], a[1], forget, NULL);
		break;
	}
	case SBI_EXT_PMU_COUNTER_STOP:
		if (r.error == SBI_SUCCESS || r.error == SBI_ERR_ALREADY_STOPPED)
			model_set(a[0], a[1], model_stop, (void *)&a[2]);
		else if (r.error != SBI_ERR_INVALID_PARAM && r.error != SBI_ERR_NO_SHMEM)
			model_set(a[0], a[1], forget, NULL);
		break;
	case SBI_EXT_PMU_COUNTER_FW_READ:
		if (!r.error && a[0] < 64 && model[a[0]].known)
			CHECK(r.value == model[a[0]].val);
		break;
	default:
		break;
	}
}

/*
 * One SBI PMU call as a guest makes it (a long EVENT_GET_INFO comes back in
 * slices: the guest asks again), its error code one the spec allows, and
 * the model told what it did
 */
static struct sbi_ret checked_call(struct vpmu *v, unsigned long fid, const unsigned long *args)
{
	struct sbi_ret r = vpmu_sbi_call(v, fid, args);

	for (unsigned int k = 0; fid == SBI_EXT_PMU_EVENT_GET_INFO && r.error == VPMU_RET_RESTART;
	     k++) {
		CHECK(k < 64); /* the fake's RAM holds at most 4096 entries */
		r = vpmu_sbi_call(v, fid, args);
	}
	if (!allowed(fid, r.error)) {
		fprintf(stderr, "fid %lu -> error %ld\n", fid, r.error);
		abort();
	}
	model_call(fid, args, r);
	return r;
}

/* The events the fake hardware counted go to the counters placed there */
static void model_advance(struct vpmu *v, uint64_t n)
{
	uint64_t before[VPMU_MAX_HW];
	unsigned int i, prof = vpmu_profile_counter(v);

	for (i = 0; i < VPMU_MAX_HW; i++)
		before[i] = fake.c[i].value;
	fake_advance(n);
	for (i = 0; i < VPMU_MAX_HW; i++) {
		uint64_t delta = (fake.c[i].value - before[i]) & width_mask(i);

		if (!((v->placed >> i) & 1) || (prof && i == prof) || !model[i].known)
			continue;
		CHECK(model[i].on || delta == 0); /* a stopped counter counts nothing */
		model[i].val = (model[i].val + delta) & width_mask(i);
	}
}

/*
 * Every counter the model knows reads what it says: a hardware counter as
 * the guest's CSR read would (vpmu_ctr_value, what vpmu_csr_read answers
 * and what an exposed counter holds: check_state), a firmware one through
 * FW_READ
 */
static void check_model(struct vpmu *v)
{
	unsigned int i, prof = vpmu_profile_counter(v);

	for (i = 0; i < vpmu_num_total() && i < 64; i++) {
		if (!model[i].known || (prof && i == prof) || i == 1)
			continue;
		if (i < vpmu_num_hw()) {
			CHECK(v->ctr[i].state != VPMU_CTR_UNCONFIGURED);
			CHECK(vpmu_ctr_value(v, i) == model[i].val);
		} else {
			unsigned long a[6] = {i, 0, 0, 0, 0, 0};
			struct sbi_ret r = vpmu_sbi_call(v, SBI_EXT_PMU_COUNTER_FW_READ, a);

			CHECK(r.error == SBI_SUCCESS && r.value == model[i].val);
		}
	}
}

static void model_fw_event(unsigned int e, unsigned int k)
{
	for (unsigned int i = vpmu_num_hw(); i < vpmu_num_total() && i < 64; i++)
		if (model[i].known && model[i].on && model[i].fw_code == e)
			model[i].val += k;
}

/*
 * Calls a guest driver makes (a configuration, then starts and stops of the
 * counter it got), which random registers rarely hit; answered as any call
 */
static void well_formed_call(struct vpmu *v, unsigned int op, struct input *in)
{
	unsigned long args[6] = {0, 0, 0, 0, 0, 0}, fid;
	unsigned int i, n = 0, pick = byte(in), configured[64];

	for (i = 0; i < vpmu_num_total() && i < 64; i++)
		if (i != 1 && v->ctr[i].state != VPMU_CTR_UNCONFIGURED &&
		    !(vpmu_profile_counter(v) && i == vpmu_profile_counter(v)))
			configured[n++] = i;
	if (op == 7) {
		fid = SBI_EXT_PMU_COUNTER_CFG_MATCH;
		args[1] = vpmu_num_total() >= 64 ? ~0UL : (1UL << vpmu_num_total()) - 1;
		args[2] = SBI_PMU_CFG_FLAG_CLEAR_VALUE | (pick & SBI_PMU_CFG_FLAG_AUTO_START);
		args[3] = events[byte(in) % (sizeof(events) / sizeof(events[0]))];
		args[4] = (pick & 8) ? FAKE_RAW_OK : FAKE_RAW2_OK;
	} else {
		if (!n)
			return;
		args[0] = configured[pick % n];
		args[1] = 1;
		if (op == 8) {
			fid = SBI_EXT_PMU_COUNTER_START;
			args[2] = SBI_PMU_START_FLAG_SET_INIT_VALUE;
			args[3] = arg(in);
		} else {
			fid = SBI_EXT_PMU_COUNTER_STOP;
			args[2] = byte(in) % 2 ? 0 : SBI_PMU_STOP_FLAG_RESET;
		}
	}
	checked_call(v, fid, args);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vcpu vc;
	struct vpmu *v = &vc.vpmu;
	struct input in = {data, size};
	uint8_t cfg = byte(&in), cfg2 = byte(&in);
	unsigned int steps = 0;

	fake_reset();
	fake.prog_cycles_count = cfg & 1;
	fake.prog_width = (cfg & 2) ? 48 : 64;
	if (cfg & 4) {
		fake.num_hw = 9;
		fake.hw_mask = 0x5 | 0x150; /* holes */
	}
	if (cfg & 8)
		fake.cycles_map = 0x78;
	fake.lose_of = cfg & 16; /* the platform loses overflow interrupts */
	fake.sscofpmf = !(cfg & 32);
	fake.event_exclusive = !(cfg & 64);
	/* the delegation backend's start (clears OF itself), and exclusive counting off */
	fake.start_keeps_of = !(cfg2 & 1);
	vpmu_set_exclusive(!(cfg2 & 2));
	vpmu_global_init();
	vpmu_vcpu_init(v);
	vpmu_vcpu_load(v);
	memset(model, 0, sizeof(model));
	/* the hypervisor profiles the guest: a counter of its own among the guest's */
	if (cfg2 & 4) {
		static struct vpmu_policy prof;

		memset(&prof, 0, sizeof(prof));
		prof.profile.event_idx = (cfg2 & 8) ? 0x10019 : 0x1;
		prof.profile.period = 1000 + (cfg2 >> 4) * 997UL;
		vpmu_vcpu_set_policy(v, &prof);
	}

	while (in.n && steps++ < 64) {
		uint8_t op = byte(&in);
		unsigned long val;

		switch (op % 16) {
		default: {
			unsigned long fid = byte(&in) % 10, args[6];
			struct sbi_ret r;
			unsigned int k;

			for (k = 0; k < 6; k++)
				args[k] = arg(&in);
			r = checked_call(v, fid, args);
			if (fid == SBI_EXT_PMU_COUNTER_CFG_MATCH && !r.error)
				CHECK(r.value < vpmu_num_total() &&
				      v->ctr[r.value].state != VPMU_CTR_UNCONFIGURED);
			if (fid == SBI_EXT_PMU_COUNTER_FW_READ_HI && !r.error)
				CHECK(r.value == 0);
			if (fid == SBI_EXT_PMU_NUM_COUNTERS)
				CHECK(r.value == vpmu_num_total());
			break;
		}
		case 7: /* a well-formed configuration over all counters */
		case 8: /* a start of one configured counter from a value */
		case 9: /* a stop of one configured counter */
			well_formed_call(v, op % 16, &in);
			break;
		case 10: {
			unsigned int e = byte(&in) % 24, k = 1 + byte(&in) % 4;

			vpmu_fw_event(v, e, k);
			model_fw_event(e, k);
		} break;
		case 11:
			model_advance(v, byte(&in));
			break;
		case 12:
			if (v->loaded)
				vpmu_vcpu_put(v);
			else
				vpmu_vcpu_load(v);
			break;
		case 13: {
			unsigned int i = byte(&in) % 40;
			/* vpmu_profile_counter says 0 for none: counter 0 is the guest's then */
			bool prof = vpmu_profile_counter(v) && i == vpmu_profile_counter(v);

			if (vpmu_csr_read(v, 0xc00 + i, &val) == 0) {
				CHECK(i < vpmu_num_hw() && i != 1 && !prof);
				CHECK(v->ctr[i].state != VPMU_CTR_UNCONFIGURED);
				CHECK(!model[i].known || val == model[i].val);
			} else {
				CHECK(i >= vpmu_num_hw() || i == 1 || prof ||
				      v->ctr[i].state == VPMU_CTR_UNCONFIGURED ||
				      !((vpmu_hw_valid_mask() >> i) & 1));
			}
			break;
		}
		case 14:
			if (byte(&in) == 0x5a) {
				vpmu_vcpu_reset(v);
				memset(model, 0, sizeof(model));
			}
			break;
		case 15: {
			uint8_t what = byte(&in);

			if (what < 128) { /* time passes with no event: the timer fires */
				fake.now += what;
				vpmu_timer(v);
			} else if (what < 192) {
				if (v->loaded)
					vpmu_overflow_irq(v);
			} else if (fake.sscofpmf) {
				CHECK(vpmu_csr_read(v, VPMU_CSR_SCOUNTOVF, &val) == 0);
				CHECK(val == (v->overflow & 0xfffffff8UL));
			}
			break;
		}
		}
		check_state(v);
		check_model(v);
	}
	vpmu_vcpu_set_policy(v, NULL); /* no profile left to re-arm at the reset */
	vpmu_vcpu_reset(v);
	vpmu_vcpu_put(v);
	check_state(v);
	for (unsigned int i = 3; i < FAKE_NCTR; i++)
		CHECK(!fake.c[i].configured);
	return 0;
}
