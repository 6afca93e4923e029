/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Counter overflow (Sscofpmf) as the guest sees it: a started counter whose
 * value fell below the value it was started from has wrapped. Each wrap is
 * recorded once (until the guest starts that counter again) and raises the
 * guest's LCOFI. The platform's own interrupt is only a hint: loads, puts,
 * PMU calls and a timer deadline look too, so a wrap is never lost and
 * never reported twice. Also the emulated counter CSR reads. The
 * hypervisor's own sampling counter wraps too: profile.c takes those.
 */
#include "vpmu/place.h"

/*
 * The one place where an overflow is recorded: once per wrap, until the
 * guest starts the counter again, and the guest's LCOFI goes with it.
 * A guest not told of Sscofpmf (the host has none, or no programmable
 * counter to need it) has no overflow at all: its snapshot's overflow
 * bitmap "must be zero" (SBI v3.0, PMU snapshot).
 */
void ovf_record(struct vpmu *v, unsigned int i)
{
	if (!vpmu_overflow_available() || ((v->overflow >> i) & 1))
		return;
	v->overflow |= 1ULL << i;
	v->nr_overflows++;
	if (i < FIRST_PROG || !((vpmu_phys_overflowed() >> i) & 1))
		v->nr_unsignalled++; /* the platform did not flag it (yet); phys == i */
	vpmu_host_raise_lcofi(v);
}

void ovf_wrapped(struct vpmu *v, struct vpmu_ctr *c, unsigned int i, uint64_t now)
{
	if ((v->prof_mask >> i) & 1) {
		c->value = prof_wrapped(v);
		return;
	}
	ovf_record(v, i);
	c->value = now;
}

/*
 * Wraps of the running counters: a value below the one the counter was
 * started (or resumed) from. The platform's OF bits are not needed: QEMU
 * sets them late or never in some cases (docs/vpmu.md).
 */
/* Those of run (started, not wrapped) that are on this hart's physical counters now */
static uint32_t on_hart_now(const struct vpmu *v, uint32_t run)
{
	const struct vpmu_hart *h = v->resident;

	if (!h || h != vpmu_host_hart())
		return 0;
	return place_still_owned(v, h, run & v->synced & v->placed);
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

void ovf_scan(struct vpmu *v)
{
	unsigned int i;

	for_each_bit (i, running_unwrapped(v))
		if ((vpmu_phys_read(i) & width_mask(i)) < v->ctr[i].value) {
			if ((v->prof_mask >> i) & 1)
				prof_overflow(v);
			else
				ovf_record(v, i);
		}
}

static uint64_t deadline_of(struct vpmu *v, uint32_t run)
{
	uint64_t best = UINT64_MAX, now = 0;
	unsigned int i;

	for_each_bit (i, run) {
		uint64_t w = width_mask(i), left, wait;

		left = w - (vpmu_phys_read(i) & w);
		if (left >= FAR_COUNTS)
			continue;
		wait = left / layout.counts_per_tick + v->backoff;
		if (!now)
			now = vpmu_host_now();
		if (now + wait < best)
			best = now + wait;
	}
	return best;
}

/*
 * When must the hart look again? A counter advances at most
 * layout.counts_per_tick per timer tick, so none of them can wrap sooner
 * than the backoff before v->deadline. The core arms the hart's timer for it.
 */
void ovf_update_deadline_of(struct vpmu *v, uint32_t near)
{
	uint32_t run = running_unwrapped(v) & near;

	v->deadline = run ? deadline_of(v, run) : UINT64_MAX;
}

void vpmu_overflow_irq(struct vpmu *v)
{
	vpmu_phys_irq_clear();
	if (v && v->loaded) {
		ovf_scan(v);
		ovf_update_deadline(v);
	}
}

void vpmu_timer(struct vpmu *v)
{
	unsigned long seen = v->nr_overflows;

	/* the sampling counter gave its event to the guest's: its own again when it can */
	if (unlikely(v->prof_mask & ~v->placed) && v->loaded)
		place_resume_sampler(v);
	if (v->loaded && v->started_hw && vpmu_host_now() >= v->deadline) {
		ovf_scan(v);
		if (v->nr_overflows != seen)
			v->backoff = DEADLINE_MIN_TICKS;
		else if (v->backoff < DEADLINE_MAX_TICKS)
			v->backoff *= 2;
		ovf_update_deadline(v);
	}
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
		ovf_scan(v);
		*val = (unsigned long)(v->overflow & hw_allowed(v) & ~7ULL);
		return 0;
	}

	/* the counters the guest may use: not the hypervisor's sampling counter */
	if (csr < 0xc00 || i >= VPMU_MAX_HW || i == CTR_TIME || !((hw_allowed(v) >> i) & 1))
		return -1;
	i = (unsigned int)array_index_nospec(i, VPMU_MAX_HW);
	if (v->ctr[i].state == VPMU_CTR_UNCONFIGURED)
		return -1;
	*val = (unsigned long)vpmu_ctr_value(v, i);
	return 0;
}
