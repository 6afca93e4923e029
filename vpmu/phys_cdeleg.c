/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The counter-delegation physical backend (Smcdeleg/Ssccfg): HS-mode
 * starts and stops counters through scountinhibit, writes their values
 * through sireg and their event selectors and mode filters through sireg2
 * (siselect = 0x40 + counter; cyclecfg / instretcfg for counters 0 / 2),
 * without a call into M-mode. The host SBI is used only where it must be:
 * - MINH (M-mode inhibit) cannot be written through sireg2, but writes keep
 *   the bit that is there. The first configuration of a counter on a hart
 *   goes through config_matching, which always sets it; later ones are
 *   direct (phys_minh: per hart, the counters that have it). A counter the
 *   host configured for us is left configured in OpenSBI's books: before it
 *   is asked again, it is released there (stop with RESET) first.
 * - What the host accepts where, and the selector value it writes for an
 *   event, are learned from those host configurations (ok[], sel[]): a
 *   direct configuration is only ever one the host itself made before on
 *   that counter. Raw events, whose selector depends on event_data, always
 *   go through the host.
 * - QEMU changes what a programmable counter counts only when M-mode writes
 *   mhpmevent (quirk 2, phys_common.c): a release (stop with RESET) only
 *   inhibits and clears sireg2 and leaves the mapping (phys_ev, phys_released);
 *   a configuration that needs another mapping goes through the host, which
 *   first releases, in its books and QEMU's, what holds the counter and the
 *   event. Reconfiguring a counter with the event it had, the common case
 *   (perf, vCPU switches), stays direct.
 * QEMU's quirks (both backends): phys_common.c.
 */
#include "arch/riscv/cpu.h"
#include "arch/riscv/csr.h"
#include "arch/riscv/pmu_csr.h"
#include "vpmu/bits.h"
#include "vpmu/phys_backend.h"
#include "vpmu/vpmu.h"
#include "vpmu/vpmu_host.h"
#include "vpmu/vpmu_phys.h"

#define EV_CYCLES  0x1UL
#define EV_INSTRET 0x2UL

/* General events 1..15 -> key 1..15, cache events (type 1, code < 64) -> 16 + code */
#define NKEYS 80
static uint64_t sel[NKEYS]; /* the selector the host wrote for the event */
static uint32_t ok[NKEYS];  /* counters the host configured the event on */

static int key_of(unsigned long ev, uint64_t data)
{
	unsigned long type = ev >> 16, code = ev & 0xffff;

	if (data || ev >> 20)
		return -1;
	if (type == 0 && code < 16)
		return (int)code;
	if (type == 1 && code < 64)
		return 16 + (int)code;
	return -1;
}

/* Mode filter bits of mhpmevent (cyclecfg, instretcfg) for host config flags; never MINH */
static unsigned long inh_bits(unsigned long f)
{
	unsigned long b = 0;

	if (f & SBI_PMU_CFG_FLAG_SET_SINH)
		b |= MHPMEVENT_SINH;
	if (f & SBI_PMU_CFG_FLAG_SET_UINH)
		b |= MHPMEVENT_UINH;
	if (f & SBI_PMU_CFG_FLAG_SET_VSINH)
		b |= MHPMEVENT_VSINH;
	if (f & SBI_PMU_CFG_FLAG_SET_VUINH)
		b |= MHPMEVENT_VUINH;
	return b;
}

/*
 * Boot hart: the CSRs can be accessed without a trap, a counter written
 * through sireg reads back through its own CSR, scountinhibit stops it, and
 * the host has Sscofpmf (OpenSBI sets MINH only then).
 */
bool phys_cdeleg_usable(void)
{
	const unsigned int p = PHYS_FIRST_PROG;
	unsigned long inh;
	uint64_t before;
	bool ok_rw;

	if (!vpmu_host_has_sscofpmf() || cdeleg_probe_access())
		return false;
	inh = scountinhibit_set(1UL << p);
	cdeleg_select(p);
	before = cdeleg_ctr_read();
	cdeleg_ctr_write(0x1234);
	ok_rw = phys_read_raw(p) == 0x1234 && cdeleg_ctr_read() == 0x1234 &&
		(scountinhibit_set(0) >> p) & 1;
	cdeleg_ctr_write(before);
	if (!((inh >> p) & 1))
		scountinhibit_clear(1UL << p);
	return ok_rw;
}

/* Host SBI stop with RESET: OpenSBI writes mhpmevent = 0, QEMU drops the counter's mapping */
static void host_release(struct vpmu_hart *h, unsigned int q)
{
	phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, q, 1, SBI_PMU_STOP_FLAG_RESET, 0, 0);
	h->phys_ev[q] = 0;
	h->phys_minh &= ~(1U << q); /* mhpmevent = 0: MINH is gone until the host sets it */
}

/*
 * Through the host: release what OpenSBI still holds on idx (its books say
 * configured until it resets it), and the counter that keeps the event in
 * QEMU's map if vpmu has released it, then configure and learn.
 */
/* Out of line: the direct configuration, the common one, keeps a small frame */
static __attribute__((noinline)) struct sbi_ret
config_by_host(unsigned int idx, unsigned long flags, unsigned long ev, uint64_t data)
{
	struct vpmu_hart *h = vpmu_host_hart();
	int key = key_of(ev, data), q;
	struct sbi_ret r;

	scountinhibit_set(1UL << idx);
	if (idx >= PHYS_FIRST_PROG) {
		host_release(h, idx);
		q = phys_holder_of(h, ev);
		if (q >= 0 && ((h->phys_released >> q) & 1))
			host_release(h, (unsigned int)q);
	}
	r = phys_sbi_call(SBI_EXT_PMU_COUNTER_CFG_MATCH, idx, 1, flags & PHYS_HOST_FILTERS, ev,
			  data);
	if (r.error || r.value >= VPMU_MAX_HW)
		return r;
	/* stopped, like every counter configured here (fixed ones run after config) */
	scountinhibit_set(1UL << r.value);
	h->phys_released &= ~(1U << r.value);
	if (flags & SBI_PMU_CFG_FLAG_SET_MINH)
		h->phys_minh |= 1U << r.value;
	if (r.value >= PHYS_FIRST_PROG) {
		unsigned long e;

		/* QEMU maps ev here unless another counter (live) keeps it */
		h->phys_ev[r.value] = phys_holder_of(h, ev) < 0 ? (uint32_t)ev : 0;
		cdeleg_select((unsigned int)r.value);
		e = cdeleg_cfg_read();
		if (key >= 0) {
			sel[key] = e & MHPMEVENT_SEL_MASK;
			ok[key] |= 1U << r.value;
		}
		/* OpenSBI leaves OF set until its start: ours clears it there, do it now */
		if (e & MHPMEVENT_OF)
			cdeleg_cfg_write(e & ~MHPMEVENT_OF);
	} else if (key >= 0 && ev == (r.value ? EV_INSTRET : EV_CYCLES)) {
		ok[key] |= 1U << r.value;
	}
	return r;
}

/*
 * Directly when QEMU's map stays as the host would leave it: ev is already
 * mapped to idx, or idx has no mapping and another live counter keeps ev
 * (the host's configuration would not map it either: idx counts nothing,
 * as the second counter of an event does on this platform).
 */
static bool direct_ok(const struct vpmu_hart *h, unsigned int idx, unsigned long ev)
{
	int q;

	if (h->phys_ev[idx] == ev)
		return true;
	if (h->phys_ev[idx])
		return false;
	q = phys_holder_of(h, ev);
	return q >= 0 && !((h->phys_released >> q) & 1);
}

static struct sbi_ret phys_cdeleg_config(unsigned int idx, unsigned long host_flags,
					 unsigned long event_idx, uint64_t event_data)
{
	struct vpmu_hart *h = vpmu_host_hart();
	struct sbi_ret r = {SBI_SUCCESS, idx};
	int key = key_of(event_idx, event_data);

	if (idx >= VPMU_MAX_HW || key < 0 || !((ok[key] >> idx) & 1) ||
	    !(host_flags & SBI_PMU_CFG_FLAG_SET_MINH) || !((h->phys_minh >> idx) & 1) ||
	    (idx >= PHYS_FIRST_PROG && !direct_ok(h, idx, event_idx)))
		return config_by_host(idx, host_flags, event_idx, event_data);
	scountinhibit_set(1UL << idx);
	h->phys_released &= ~(1U << idx);
	cdeleg_select(idx);
	if (idx < PHYS_FIRST_PROG)
		cdeleg_cfg_write(inh_bits(host_flags)); /* cyclecfg / instretcfg */
	else
		cdeleg_cfg_write(sel[key] | inh_bits(host_flags));
	return r;
}

/* Counter idx (selected) starts counting from value; its OF bit is cleared first */
static void start_selected(unsigned int idx, uint64_t value)
{
	if (idx >= PHYS_FIRST_PROG) {
		unsigned long e = cdeleg_cfg_read();

		if (e & MHPMEVENT_OF)
			cdeleg_cfg_write(e & ~MHPMEVENT_OF);
	}
	cdeleg_ctr_write(value);
	scountinhibit_clear(1UL << idx);
}

/* QEMU quirk 1 (phys_common.c): run idx near its top for a moment, stopped again after */
static void consume_stale_deadline(unsigned int idx)
{
	cdeleg_select(idx);
	start_selected(idx, -(uint64_t)PHYS_CONSUME_COUNTS);
	cpu_spin(2UL * PHYS_CONSUME_COUNTS);
	scountinhibit_set(1UL << idx);
}

/* idx: a counter below 32 but the time CSR (phys_common.c checks it) */
static long phys_cdeleg_start(unsigned int idx, uint64_t value, bool consume)
{
	if (consume)
		consume_stale_deadline(idx);
	cdeleg_select(idx);
	start_selected(idx, value);
	return SBI_SUCCESS;
}

/* What a stop answers, given scountinhibit before it */
static long stop_result(unsigned int idx, unsigned long was)
{
	return (was >> idx) & 1 ? SBI_ERR_ALREADY_STOPPED : SBI_SUCCESS;
}

/* OF and the filters go (MINH stays); QEMU keeps its mapping (quirk 2) */
static __attribute__((noinline)) long cdeleg_release(unsigned int idx, unsigned long was)
{
	cdeleg_select(idx);
	cdeleg_cfg_write(0);
	vpmu_host_hart()->phys_released |= 1U << idx;
	return stop_result(idx, was);
}

/* The release out of line: a guest's stop builds no frame */
static long phys_cdeleg_stop(unsigned int idx, int reset)
{
	unsigned long was;

	if (idx >= 32 || idx == 1)
		return SBI_ERR_INVALID_PARAM;
	was = scountinhibit_set(1UL << idx);
	if (reset && idx >= PHYS_FIRST_PROG)
		return cdeleg_release(idx, was);
	return stop_result(idx, was);
}

/* A select and a read through sireg: no CSR switch. idx: checked (phys_common.c) */
static uint64_t phys_cdeleg_stop_read_one(unsigned int idx)
{
	scountinhibit_set(1UL << idx);
	cdeleg_select(idx);
	return cdeleg_ctr_read();
}

static long phys_cdeleg_stop_mask(uint32_t mask)
{
	scountinhibit_set(mask & ~2U);
	return SBI_SUCCESS;
}

/*
 * They continue from their values. Only the counters scountovf flags need
 * their OF bits cleared. Quirk 1: a counter marked far (last started far
 * from its top) is far still, since one started more than 2^62 below its
 * top needs 2^62 counts to come within 2^62 of it (146 years at 1 GHz), so
 * it needs no read (a vCPU switch's common case) and no consuming start. Of
 * the others, only one that wrapped to far since needs marking far; one
 * near its top continues as it is, as nothing stale was left for it.
 */
static long phys_cdeleg_start_mask(uint32_t mask)
{
	uint32_t of = mask & ~7U & (uint32_t)csr_read(CSR_SCOUNTOVF);
	uint32_t m = mask & ~7U & ~phys_far_mask(), far = 0;
	unsigned int i;

	for_each_bit_dense (i, m) {
		uint64_t v;

		cdeleg_select(i);
		v = cdeleg_ctr_read();
		if (phys_far_from_top(v))
			far |= 1U << i;
	}
	if (far)
		phys_note_far(far);
	while (of) {
		i = lowest_bit(of);
		of &= of - 1;
		cdeleg_select(i);
		cdeleg_cfg_write(cdeleg_cfg_read() & ~MHPMEVENT_OF);
	}
	scountinhibit_clear(mask & ~2U);
	return SBI_SUCCESS;
}

/* Only the counters scountovf flags need their OF bits cleared */
static void phys_cdeleg_start_values(uint32_t mask, const uint64_t *values)
{
	uint32_t of = mask & (uint32_t)csr_read(CSR_SCOUNTOVF);
	unsigned long first = lowest_bit(mask), sel = SISELECT_COUNTER(first);
	const uint64_t *val = values + first;
	unsigned int i;

	for (unsigned long m = mask >> first; m; m >>= 1, sel++, val++) {
		if (m & 1) {
			csr_write(CSR_SISELECT, sel);
			cdeleg_ctr_write(*val);
		}
	}
	while (of) {
		i = lowest_bit(of);
		of &= of - 1;
		cdeleg_select(i);
		cdeleg_cfg_write(cdeleg_cfg_read() & ~MHPMEVENT_OF);
	}
	scountinhibit_clear(mask);
}

/* Through sireg: a select and a read each, no CSR switch; the loop walks selector and slot together */
static void phys_cdeleg_stop_read(uint32_t mask, uint64_t *values)
{
	unsigned long first = lowest_bit(mask), sel = SISELECT_COUNTER(first);

	scountinhibit_set(mask & ~2U);
	values += first;
	for (unsigned long m = mask >> first; m; m >>= 1, sel++, values++) {
		if (m & 1) {
			csr_write(CSR_SISELECT, sel);
			*values = cdeleg_ctr_read();
		}
	}
}

const struct phys_ops phys_cdeleg_ops = {
	.config = phys_cdeleg_config,
	.start = phys_cdeleg_start,
	.stop = phys_cdeleg_stop,
	.stop_read_one = phys_cdeleg_stop_read_one,
	.stop_mask = phys_cdeleg_stop_mask,
	.start_mask = phys_cdeleg_start_mask,
	.start_values = phys_cdeleg_start_values,
	.stop_read = phys_cdeleg_stop_read,
};
