/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vpmu_phys.h for the hypervisor: the backend is chosen once at boot
 * (vpmu_phys_init), the calls that differ are forwarded to it, and what
 * both share lives here: counter CSR reads, hcounteren, scountovf, the
 * LCOFI pending bit, the boot probes, and QEMU's quirks.
 *
 * QEMU 10 (target/riscv/pmu.c, csr.c) quirks, in one place:
 * 1. Stale overflow deadline. riscv_pmu_setup_timer keeps, per counter, an
 *    irq_overflow_left whenever a counter is written (or started) so far
 *    from its top that the deadline passes INT64_MAX ns, as for every
 *    counter Linux starts for counting (2^63 + 1), and never clears it when
 *    the counter is written again: the next timer expiry for that counter,
 *    its first overflow as a sampler, is swallowed and re-armed about a
 *    second of virtual time later. pmu_timer_trigger_irq consumes the stale
 *    value at any expiry while the counter is enabled, counting or not. So
 *    before a counter that was started far from its top starts near it, the
 *    backend starts it PHYS_CONSUME_COUNTS below the top and spins 1024
 *    HS-mode instructions (where it counts nothing: the timer expires within
 *    the spin, consumes the stale value, and re-arms itself every 256 ns
 *    until the stop), then starts it properly. Not closer to the top: a
 *    timer re-armed every nanosecond gives each hart's round-robin slice
 *    under -icount 1/2 instruction, rounded down to 0 for the second hart,
 *    which would never run again (seen: the hart that had to stop the
 *    counter hung). vpmu_hart.phys_far remembers the far starts per hart.
 *    (vpmu's deadline would still deliver that overflow, up to a timer tick
 *    late: the last sample of a loop would be lost.)
 * 2. One counter per event and hart: the event -> counter map that decides
 *    what a programmable counter counts admits one counter per event, and
 *    an entry is removed only when mhpmevent is written with event 0
 *    (riscv_pmu_update_event_map). vpmu evicts other configurations of an
 *    event (layout.event_exclusive, measured at boot). Measured on Debian's
 *    QEMU 10.0.2: only M-mode writes of mhpmevent change that map; sireg2
 *    writes change the bits mhpmevent reads back (selector, filters, OF),
 *    and the filters and OF take effect, but a counter keeps counting the
 *    event M-mode mapped to it, and a mapping is never removed. So the
 *    delegation backend keeps, per hart, which event the map gives each
 *    counter (vpmu_hart.phys_ev), configures directly only what leaves the
 *    map as it is, and has the host configure (and release) the rest.
 * 3. MINH: sireg2 reads hide it and writes keep the bit already in
 *    mhpmevent / mcyclecfg / minstretcfg (rmw_cd_mhpmevent, rmw_cd_ctr_cfg).
 *    The delegation backend has the host set it (config_matching through
 *    the SBI, which always sets MINH) once per counter and hart.
 * 4. The overflow timer is armed by counter writes and by clearing the
 *    inhibit bit of a counter that counts cycles/instret (sireg writes and
 *    scountinhibit too: riscv_pmu_write_ctr, write_mcountinhibit), never
 *    while the counter's OF bit is set: a start clears OF first.
 * 5. Values below 2^63 livelock QEMU. riscv_pmu_setup_timer, given the
 *    value v of a counter that counts cycles/instret, computes the distance
 *    to its top (2^64 - v) in int64 arithmetic; for v < 2^63 that overflows
 *    and leaves an irq_overflow_left that pmu_timer_trigger_irq turns into
 *    a deadline in the past (timer_mod_ns_locked clamps it to 0), and at
 *    that expiry it calls setup_timer again. With one such counter for
 *    each event, out of phase, the two re-arm each other forever in the
 *    main loop with the big lock held, so the vCPU threads that could move
 *    or stop them never run: QEMU spins until killed (gdb on hung fuzz
 *    runs: timer_mod_anticipate_ns with expiry -8.6e10 ns, alternately for
 *    counters 3 and 13). QEMU does this only if the value it reads is at
 *    least the one last written (else it sets OF). So when a counter that
 *    may count one timed event starts below 2^63 while one that may count
 *    the other runs there unbiased, it runs biased by 2^63 (2^62 for values
 *    from 2^62 on: at least 2^62 counts, 146 years at 1 GHz, from a wrap on
 *    the host); reads take the bias off, and hcounteren hides biased
 *    counters from direct guest reads. Only counters 64 bits wide
 *    (vpmu_phys_set_wide); raw events count as either event.
 */
#include "arch/riscv/cpu.h"
#include "arch/riscv/csr.h"
#include "vpmu/bits.h"
#include "vpmu/phys_backend.h"
#include "vpmu/vpmu.h"
#include "vpmu/vpmu_host.h"
#include "vpmu/vpmu_phys.h"

/* Boot probes: count only HS-mode, so that mode filtering is exercised */
#define PROBE_FLAGS                                                                                \
	(SBI_PMU_CFG_FLAG_SET_UINH | SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_VUINH |     \
	 SBI_PMU_CFG_FLAG_SET_MINH)

static const struct phys_ops *ops = &phys_sbi_ops;

const char *vpmu_phys_init(void)
{
	if (vpmu_host_force_sbi_backend())
		return "host SBI PMU (counter delegation not used: pmu-backend=sbi)";
	if (!phys_cdeleg_usable())
		return "host SBI PMU";
	ops = &phys_cdeleg_ops;
	return "counter delegation (Smcdeleg/Ssccfg CSRs in HS-mode)";
}

/* ------------------------------------------------------ QEMU quirk 2 */

int phys_holder_of(const struct vpmu_hart *h, unsigned long ev)
{
	for (unsigned int q = PHYS_FIRST_PROG; q < VPMU_MAX_HW; q++)
		if (h->phys_ev[q] == ev)
			return (int)q;
	return -1;
}

int vpmu_phys_event_counter(unsigned int idx, unsigned long event_idx)
{
	const struct vpmu_hart *h;

	if (idx < PHYS_FIRST_PROG || idx >= VPMU_MAX_HW)
		return (int)idx;
	h = vpmu_host_hart();
	if (h->phys_ev[idx] == event_idx)
		return (int)idx;
	return phys_holder_of(h, event_idx);
}

/* ------------------------------------------------------ QEMU quirk 5 */

static uint32_t wide; /* programmable counters 64 bits wide, the same on every hart */
/* counters biased on some hart, ever: reads of the others skip the lookup (most reads) */
static uint32_t ever_biased;

void vpmu_phys_set_wide(uint32_t mask)
{
	wide = mask & ~((1U << PHYS_FIRST_PROG) - 1);
}

static uint64_t bias_of(const struct vpmu_hart *h, unsigned int idx)
{
	return ((uint64_t)((h->phys_bias63 >> idx) & 1) << 63) |
	       ((uint64_t)((h->phys_bias62 >> idx) & 1) << 62);
}

/*
 * Which of QEMU's two timed events counter idx may count: raw events could
 * be either. Only counters 64 bits wide: the quirk concerns no other.
 */
static void note_event(struct vpmu_hart *h, unsigned int idx, unsigned long event_idx)
{
	unsigned int type = (unsigned int)(event_idx >> 16) & 0xf;
	bool raw = type == SBI_PMU_EVENT_TYPE_RAW || type == SBI_PMU_EVENT_TYPE_RAW_V2;
	uint32_t bit = 1U << idx;

	h->phys_cyc &= ~bit;
	h->phys_ins &= ~bit;
	if (event_idx == SBI_PMU_HW_CPU_CYCLES || raw)
		h->phys_cyc |= bit & wide;
	if (event_idx == SBI_PMU_HW_INSTRUCTIONS || raw)
		h->phys_ins |= bit & wide;
}

static inline bool needs_bias(const struct vpmu_hart *h, unsigned int idx, uint64_t value)
{
	return idx < 32 && phys_needs_bias(h->phys_cyc, h->phys_ins, h->phys_low, idx, value);
}

struct sbi_ret vpmu_phys_config(unsigned int idx, unsigned long host_flags, unsigned long event_idx,
				uint64_t event_data)
{
	struct sbi_ret r = ops->config(idx, host_flags, event_idx, event_data);

	if (r.error == SBI_SUCCESS && r.value < 32)
		note_event(vpmu_host_hart(), (unsigned int)r.value, event_idx);
	return r;
}

/* ------------------------------------------------------ QEMU quirk 1 */

static inline void far_init_on(struct vpmu_hart *h)
{
	if (!h->phys_init) { /* the firmware and the boot probes started every counter far */
		h->phys_far = ~0U;
		h->phys_init = true;
	}
}

static struct vpmu_hart *far_init(void)
{
	struct vpmu_hart *h = vpmu_host_hart();

	far_init_on(h);
	return h;
}

void phys_note_far(uint32_t mask)
{
	far_init()->phys_far |= mask;
}

uint32_t phys_far_mask(void)
{
	return far_init()->phys_far;
}

/* The quirk's test and mark, on hart h (vpmu_phys_start passes the one it looked up) */
static inline bool stale_deadline(struct vpmu_hart *h, unsigned int idx, uint64_t value)
{
	if (idx < PHYS_FIRST_PROG || idx >= 32)
		return false;
	if (phys_far_from_top(value)) {
		h->phys_far |= 1U << idx;
		return false;
	}
	if (!((h->phys_far >> idx) & 1))
		return false;
	h->phys_far &= ~(1U << idx);
	return true;
}

bool phys_quirk_stale_deadline(unsigned int idx, uint64_t value)
{
	return stale_deadline(far_init(), idx, value);
}

/* What counter idx (< 32) started from value with this bias now runs as */
static inline void note_start(struct vpmu_hart *h, unsigned int idx, uint64_t value, uint64_t bias)
{
	uint32_t bit = 1U << idx;

	h->phys_low &= ~bit;
	if (!(value >> 63) && !bias)
		h->phys_low |= bit & wide;
	if (bias || ((h->phys_bias63 | h->phys_bias62) & bit)) {
		h->phys_bias63 = (h->phys_bias63 & ~bit) | ((uint32_t)(bias >> 63) << idx);
		h->phys_bias62 = (h->phys_bias62 & ~bit) | ((uint32_t)((bias >> 62) & 1) << idx);
		__atomic_fetch_or(&ever_biased, bit, __ATOMIC_RELAXED);
		h->phys_counteren = ~0UL; /* hcounteren must hide it, or show it again */
	}
}

/*
 * Bookkeeping only for counters started below 2^63 or biased before (Linux
 * starts at 2^63 + 1), all of it before the backend's start, which is a
 * tail call: no frame. A start the backend refuses (only the SBI backend's
 * host can) still leaves the marks of the value it was given: a stale
 * phys_low bit only biases more often, and vpmu never reads a counter whose
 * start failed (not synced) before starting it again.
 */
static __attribute__((noinline)) long start_biased(struct vpmu_hart *h, unsigned int idx,
						   uint64_t value)
{
	uint64_t bias = 0;

	if (needs_bias(h, idx, value)) /* below 2^63, wide, and the other event runs low */
		bias = phys_upper_half_bias(value);
	note_start(h, idx, value, bias);
	return ops->start(idx, value + bias, stale_deadline(h, idx, value + bias));
}

/* Every start passes here or start_values: the backends' start takes idx as checked */
long vpmu_phys_start_on(struct vpmu_hart *h, unsigned int idx, uint64_t value)
{
	uint32_t bit;

	if (idx >= 32 || idx == 1) /* no counter, or the time CSR */
		return SBI_ERR_INVALID_PARAM;
	bit = 1U << idx;
	far_init_on(h);
	if (value >> 63) {
		if (ever_biased & bit)
			return start_biased(h, idx, value);
		return ops->start(idx, value, stale_deadline(h, idx, value));
	}
	/* the rest is start_biased for its common case: from below 2^63, not biased */
	if (((h->phys_bias63 | h->phys_bias62) & bit) || needs_bias(h, idx, value))
		return start_biased(h, idx, value);
	/* below 2^63, unbiased before and now: it runs low, far from its top (nothing stale) */
	h->phys_low = (h->phys_low & ~bit) | (bit & wide);
	if (idx >= PHYS_FIRST_PROG)
		h->phys_far |= bit;
	return ops->start(idx, value, false);
}

long vpmu_phys_start(unsigned int idx, uint64_t value)
{
	return vpmu_phys_start_on(vpmu_host_hart(), idx, value);
}

/*
 * A stopped counter keeps its phys_low bit until released: fewer hart
 * lookups, more bias, and a vCPU switch's masked start finds its counters
 * checked already (vpmu_phys_start_mask)
 */
static __attribute__((noinline)) long phys_stop_reset(unsigned int idx)
{
	if (idx < 32)
		vpmu_host_hart()->phys_low &= ~(1U << idx);
	return ops->stop(idx, 1);
}

/* A guest's stop (reset 0) builds no frame: the release's bookkeeping is out of line */
long vpmu_phys_stop(unsigned int idx, int reset)
{
	if (reset)
		return phys_stop_reset(idx);
	return ops->stop(idx, 0);
}

/*
 * Counters continue from their values. One that may count a timed event,
 * sits below 2^63 unbiased and would make a pair with another such counter
 * is started on its own instead, from the same value, biased.
 */
long vpmu_phys_start_mask(uint32_t mask)
{
	struct vpmu_hart *h = vpmu_host_hart();
	/*
	 * One already running low was checked when it started low: no pair
	 * has formed since (a counter of the other event starting low then
	 * was biased), so it continues as it is.
	 */
	uint32_t timed = mask & wide & (h->phys_cyc | h->phys_ins) &
			 ~(h->phys_bias63 | h->phys_bias62 | h->phys_low);
	uint32_t alone = 0;
	long err = SBI_SUCCESS;

	while (timed) {
		unsigned int i = lowest_bit(timed);
		uint64_t raw = phys_read_raw(i);

		timed &= timed - 1;
		if (raw >> 63)
			continue;
		if (needs_bias(h, i, raw))
			alone |= 1U << i;
		else
			h->phys_low |= 1U << i;
	}
	if (mask & ~alone)
		err = ops->start_mask(mask & ~alone);
	while (alone && err == SBI_SUCCESS) {
		unsigned int i = lowest_bit(alone);

		alone &= alone - 1;
		err = vpmu_phys_start(i, phys_read_raw(i));
	}
	return err;
}

/*
 * A vCPU load's counters taken over from another vCPU: vpmu_phys_start's
 * bookkeeping for each, lowest first, then the backend writes every value
 * and starts them together. One near its top and marked far (quirk 1: a
 * stale deadline to consume first) starts alone, as vpmu_phys_start would.
 */
uint32_t vpmu_phys_start_values(uint32_t mask, const uint64_t *values, size_t stride)
{
	uint64_t w[VPMU_MAX_HW]; /* the values to write, bias included */
	uint32_t m = mask, alone, started = 0, plain, low = 0, far = 0;
	struct vpmu_hart *h;
	unsigned int i;

	if (!ops->start_values) {
		while (m) {
			i = lowest_bit(m);
			m &= m - 1;
			if (vpmu_phys_start(i, values[i * stride]) == SBI_SUCCESS)
				started |= 1U << i;
		}
		return started;
	}
	h = far_init();
	/* never biased, and their phys_low bits take no part in needs_bias(): set after */
	plain = mask & wide & ~(h->phys_cyc | h->phys_ins | h->phys_bias63 | h->phys_bias62);
	/* a pointer-wide index: no extension per counter */
	for (unsigned long k = plain ? lowest_bit(plain) : 0, p = plain >> k; p; p >>= 1, k++) {
		if (!(p & 1))
			continue;
		w[k] = values[k * stride];
		if (!(w[k] >> 63))
			low |= 1U << k;
		if (phys_far_from_top(w[k]))
			far |= 1U << k;
	}
	alone = plain & ~far & h->phys_far;
	h->phys_far |= far;
	m &= ~plain;
	while (m) {
		uint32_t bit;
		uint64_t bias = 0;

		i = lowest_bit(m) % VPMU_MAX_HW;
		bit = 1U << i;
		m &= m - 1;
		if (!((values[i * stride] >> 63) && !(ever_biased & bit))) {
			if (needs_bias(h, i, values[i * stride]))
				bias = phys_upper_half_bias(values[i * stride]);
			note_start(h, i, values[i * stride], bias);
		}
		w[i] = values[i * stride] + bias;
		if (i < PHYS_FIRST_PROG)
			continue;
		if (phys_far_from_top(w[i]))
			h->phys_far |= bit;
		else if (h->phys_far & bit)
			alone |= bit;
	}
	h->phys_low = (h->phys_low & ~plain) | low;
	if (mask & ~alone)
		ops->start_values(mask & ~alone, w);
	h->phys_far &= ~alone; /* what stale_deadline does for each of them */
	while (alone) {
		i = lowest_bit(alone);
		alone &= alone - 1;
		ops->start(i, w[i], true); /* consumes the stale deadline */
	}
	return mask;
}

/* ------------------------------------------------ shared by both backends */

#define RD(n, csr)                                                                                 \
	case n:                                                                                    \
		return csr_read(csr)

/* Inline in vpmu_phys_read: a vCPU switch reads every counter it puts */
static inline __attribute__((always_inline)) uint64_t read_csr_of(unsigned int idx)
{
	switch (idx) {
		RD(0, 0xc00);
		RD(2, 0xc02);
		RD(3, 0xc03);
		RD(4, 0xc04);
		RD(5, 0xc05);
		RD(6, 0xc06);
		RD(7, 0xc07);
		RD(8, 0xc08);
		RD(9, 0xc09);
		RD(10, 0xc0a);
		RD(11, 0xc0b);
		RD(12, 0xc0c);
		RD(13, 0xc0d);
		RD(14, 0xc0e);
		RD(15, 0xc0f);
		RD(16, 0xc10);
		RD(17, 0xc11);
		RD(18, 0xc12);
		RD(19, 0xc13);
		RD(20, 0xc14);
		RD(21, 0xc15);
		RD(22, 0xc16);
		RD(23, 0xc17);
		RD(24, 0xc18);
		RD(25, 0xc19);
		RD(26, 0xc1a);
		RD(27, 0xc1b);
		RD(28, 0xc1c);
		RD(29, 0xc1d);
		RD(30, 0xc1e);
		RD(31, 0xc1f);
	default:
		return 0;
	}
}

uint64_t phys_read_raw(unsigned int idx)
{
	return read_csr_of(idx);
}

/*
 * The guest's value: what the CSR holds, less the bias of quirk 5. A hart
 * biases only its own counters and sees its own writes of ever_biased, so
 * plain loads do.
 */
static __attribute__((noinline)) uint64_t read_biased(unsigned int idx)
{
	return read_csr_of(idx) - bias_of(vpmu_host_hart(), idx);
}

/* One bias test, then the CSR switch inline: the common read builds no stack frame */
uint64_t vpmu_phys_read(unsigned int idx)
{
	if (idx < 32 && ((ever_biased >> idx) & 1))
		return read_biased(idx);
	return read_csr_of(idx);
}

static __attribute__((noinline)) uint64_t stop_read_biased(unsigned int idx)
{
	return ops->stop_read_one(idx) - bias_of(vpmu_host_hart(), idx);
}

/*
 * Biased ones are rare: one test of the whole mask first, then the
 * backend's own, a tail call. The backends take idx as checked here.
 */
uint64_t vpmu_phys_stop_read_one(unsigned int idx)
{
	if (idx >= 32 || idx == 1) /* no counter, or the time CSR */
		return 0;
	if (__builtin_expect(ever_biased != 0, 0) && ((ever_biased >> idx) & 1))
		return stop_read_biased(idx);
	return ops->stop_read_one(idx);
}

/* The backend reads the stopped counters in a row; the biased ones, if any, lose their bias after */
void vpmu_phys_stop_read(uint32_t mask, uint64_t values[32])
{
	uint32_t biased = mask & ever_biased;
	const struct vpmu_hart *h;
	unsigned int i;

	if (ops->stop_read) {
		ops->stop_read(mask, values);
	} else {
		ops->stop_mask(mask);
		for_each_bit_dense (i, mask)
			values[i] = read_csr_of(i);
	}
	if (!biased)
		return;
	h = vpmu_host_hart();
	for_each_bit_dense (i, biased)
		values[i] -= bias_of(h, i);
}

static __attribute__((noinline)) unsigned long unbiased(unsigned long bits)
{
	const struct vpmu_hart *h = vpmu_host_hart();

	return bits & ~(unsigned long)(h->phys_bias63 | h->phys_bias62);
}

/* A direct guest read of a biased counter would see the bias: those trap */
void vpmu_phys_write_counteren(struct vpmu_hart *h, unsigned long bits)
{
	unsigned long en;

	h->phys_counteren = bits;
	if (bits & ever_biased)
		bits = unbiased(bits);
	en = csr_read(CSR_HCOUNTEREN);
	csr_write(CSR_HCOUNTEREN, (en & HCOUNTEREN_TM) | (bits & 0xffffffffUL & ~HCOUNTEREN_TM));
}

void vpmu_phys_set_counteren(unsigned long bits)
{
	vpmu_phys_set_counteren_on(vpmu_host_hart(), bits);
}

uint32_t vpmu_phys_overflowed(void)
{
	return (uint32_t)csr_read(CSR_SCOUNTOVF);
}

#define SIP_LCOFIP (1UL << IRQ_PMU_OVF)

bool vpmu_phys_irq_pending(void)
{
	return (csr_read(CSR_SIP) & SIP_LCOFIP) != 0;
}

void vpmu_phys_irq_clear(void)
{
	csr_clear(CSR_SIP, SIP_LCOFIP);
}

bool vpmu_phys_start_keeps_of(void)
{
	return ops->start_keeps_of;
}

void vpmu_phys_spin(unsigned long iters)
{
	cpu_spin(iters);
}

/* ------------------------------------------- boot probes, through the backend */

/* Configure ev on idx exactly (release what the host chose instead): 0, or -1 */
static int probe_config(unsigned int idx, unsigned long flags, unsigned long ev)
{
	struct sbi_ret r = vpmu_phys_config(idx, flags, ev, 0);

	if (r.error)
		return -1;
	if (r.value != idx) {
		if (r.value > 2)
			vpmu_phys_stop((unsigned int)r.value, 1);
		return -1;
	}
	return 0;
}

int vpmu_phys_event_shared(unsigned int a, unsigned int b, unsigned long event_idx)
{
	bool ca = !probe_config(a, PROBE_FLAGS, event_idx);
	bool cb = !probe_config(b, PROBE_FLAGS, event_idx);
	int res = -1;

	if (ca && cb && !vpmu_phys_start(a, 0) && !vpmu_phys_start(b, 0)) {
		cpu_spin(1000);
		res = vpmu_phys_read(a) != 0 && vpmu_phys_read(b) != 0;
	}
	if (ca)
		vpmu_phys_stop(a, 1);
	if (cb)
		vpmu_phys_stop(b, 1);
	return res;
}

/* One event counted in HS-mode on counter idx over ~200 timer ticks: counts per tick */
static unsigned long rate_of(unsigned int idx, unsigned long event_idx)
{
	unsigned long t0, t1, rate = 0;
	uint64_t c0, c1;

	if (probe_config(idx, PROBE_FLAGS, event_idx))
		return 0;
	if (!vpmu_phys_start(idx, 0)) {
		t0 = csr_read(CSR_TIME);
		c0 = vpmu_phys_read(idx);
		do
			t1 = csr_read(CSR_TIME);
		while (t1 - t0 < 200);
		c1 = vpmu_phys_read(idx);
		rate = (unsigned long)((c1 - c0 + (t1 - t0) / 2) / (t1 - t0));
	}
	vpmu_phys_stop(idx, 1);
	return rate;
}

unsigned long vpmu_phys_counts_per_tick(void)
{
	unsigned long cyc = rate_of(3, 1), ins = rate_of(3, 2);

	return cyc > ins ? cyc : ins;
}

int vpmu_phys_event_filtered(unsigned int idx, unsigned long event_idx)
{
	uint64_t val = 0;

	if (probe_config(idx, PROBE_FLAGS | SBI_PMU_CFG_FLAG_SET_SINH, event_idx))
		return -1;
	if (!vpmu_phys_start(idx, 0)) {
		cpu_spin(1000);
		val = vpmu_phys_read(idx);
	}
	vpmu_phys_stop(idx, 1);
	return val == 0;
}

int vpmu_phys_event_counts(unsigned int idx, unsigned long event_idx)
{
	uint64_t val;

	if (probe_config(idx, PROBE_FLAGS, event_idx))
		return -1;
	if (vpmu_phys_start(idx, 0)) {
		vpmu_phys_stop(idx, 1);
		return -1;
	}
	cpu_spin(1000);
	val = vpmu_phys_read(idx);
	vpmu_phys_stop(idx, 1);
	return val != 0;
}
