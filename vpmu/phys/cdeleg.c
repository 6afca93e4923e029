/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The counter-delegation backend (Smcdeleg/Ssccfg, riscv-isa-manual
 * src/smcdeleg.adoc): HS-mode starts and stops counters through
 * scountinhibit, writes their values through sireg and their event
 * selectors and mode filters through sireg2 (siselect = 0x40 + counter;
 * cyclecfg / instretcfg for counters 0 / 2), without a call into M-mode.
 * The host SBI is used only where it must be:
 * - MINH (M-mode inhibit) is read-only 0 through sireg2 (Smcdeleg), and
 *   writes keep the bit that is there. The first configuration of a
 *   counter on a hart goes through config_matching, which always sets it;
 *   later ones are direct (phys_hart.minh: per hart, the counters that have
 *   it). A counter the host configured for us is left configured in
 *   OpenSBI's books: before it is asked again, it is released there (stop
 *   with RESET) first.
 * - What the host accepts where, and the selector value it writes for an
 *   event, are learned from those host configurations (ok[], sel[]): a
 *   direct configuration is only ever one the host itself made before on
 *   that counter. Raw events, whose selector depends on event_data, always
 *   go through the host.
 * A start clears the counter's overflow flag first (Sscofpmf: a set OF bit
 * keeps its interrupt from being raised again).
 */
#include "arch/riscv/csr.h"
#include "arch/riscv/pmu_csr.h"
#include "vpmu/bits.h"
#include "vpmu/phys.h"
#include "vpmu/phys/backend.h"
#include "vpmu/vpmu_host.h"

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
static bool cdeleg_usable(void)
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
	ok_rw = phys_read_csr(p) == 0x1234 && cdeleg_ctr_read() == 0x1234 &&
		(scountinhibit_set(0) >> p) & 1;
	cdeleg_ctr_write(before);
	if (!((inh >> p) & 1))
		scountinhibit_clear(1UL << p);
	return ok_rw;
}

/* Host SBI stop with RESET: OpenSBI writes mhpmevent = 0, MINH goes with it */
static long cdeleg_release_host(unsigned int idx)
{
	long err = phys_sbi_call(SBI_EXT_PMU_COUNTER_STOP, idx, 1, SBI_PMU_STOP_FLAG_RESET, 0, 0)
			   .error;

	phys_this_hart()->minh &= ~(1U << idx);
	return err;
}

/*
 * Through the host: release what OpenSBI still holds on idx (its books say
 * configured until it resets it), then configure and learn.
 */
static struct sbi_ret cdeleg_config_host(unsigned int idx, unsigned long flags, unsigned long ev,
					 uint64_t data)
{
	struct phys_hart *ph = phys_this_hart();
	int key = key_of(ev, data);
	struct sbi_ret r;

	if (idx < PHYS_MAX_HW)
		scountinhibit_set(1UL << idx);
	if (idx >= PHYS_FIRST_PROG && idx < PHYS_MAX_HW)
		cdeleg_release_host(idx);
	r = phys_sbi_call(SBI_EXT_PMU_COUNTER_CFG_MATCH, idx, 1, flags & PHYS_HOST_FILTERS, ev,
			  data);
	if (r.error || r.value >= PHYS_MAX_HW)
		return r;
	/* stopped, like every counter configured here (fixed ones run after config) */
	scountinhibit_set(1UL << r.value);
	if (flags & SBI_PMU_CFG_FLAG_SET_MINH)
		ph->minh |= 1U << r.value;
	if (r.value >= PHYS_FIRST_PROG) {
		unsigned long e;

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

/* Directly, where the host has configured the event on idx before and MINH is in place */
static bool cdeleg_config_direct(unsigned int idx, unsigned long host_flags, unsigned long ev,
				 uint64_t data)
{
	int key = key_of(ev, data);

	if (idx >= PHYS_MAX_HW || key < 0 || !((ok[key] >> idx) & 1) ||
	    !(host_flags & SBI_PMU_CFG_FLAG_SET_MINH) || !((phys_this_hart()->minh >> idx) & 1))
		return false;
	scountinhibit_set(1UL << idx);
	cdeleg_select(idx);
	if (idx < PHYS_FIRST_PROG)
		cdeleg_cfg_write(inh_bits(host_flags)); /* cyclecfg / instretcfg */
	else
		cdeleg_cfg_write(sel[key] | inh_bits(host_flags));
	return true;
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

static long cdeleg_start(unsigned int idx, uint64_t value)
{
	cdeleg_select(idx);
	start_selected(idx, value);
	return SBI_SUCCESS;
}

/* With OF set first: the platform raises no interrupt for it */
static long cdeleg_start_held(unsigned int idx, uint64_t value)
{
	cdeleg_select(idx);
	if (idx >= PHYS_FIRST_PROG)
		cdeleg_cfg_write(cdeleg_cfg_read() | MHPMEVENT_OF);
	cdeleg_ctr_write(value);
	scountinhibit_clear(1UL << idx);
	return SBI_SUCCESS;
}

/* What a stop answers, given scountinhibit before it */
static long stop_result(unsigned int idx, unsigned long was)
{
	return (was >> idx) & 1 ? SBI_ERR_ALREADY_STOPPED : SBI_SUCCESS;
}

static long cdeleg_stop(unsigned int idx)
{
	return stop_result(idx, scountinhibit_set(1UL << idx));
}

/* OF and the filters go (MINH stays); M-mode's mhpmevent keeps what the host wrote */
static long cdeleg_release(unsigned int idx)
{
	unsigned long was = scountinhibit_set(1UL << idx);

	if (idx >= PHYS_FIRST_PROG) {
		cdeleg_select(idx);
		cdeleg_cfg_write(0);
	}
	return stop_result(idx, was);
}

/* A select and a read through sireg: no CSR switch */
static uint64_t cdeleg_stop_read_one(unsigned int idx)
{
	scountinhibit_set(1UL << idx);
	cdeleg_select(idx);
	return cdeleg_ctr_read();
}

static long cdeleg_stop_mask(uint32_t mask)
{
	scountinhibit_set(mask & ~2U);
	return SBI_SUCCESS;
}

/* The OF bits of the counters of mask that scountovf flags */
static void clear_of(uint32_t of)
{
	unsigned int i;

	while (of) {
		i = lowest_bit(of);
		of &= of - 1;
		cdeleg_select(i);
		cdeleg_cfg_write(cdeleg_cfg_read() & ~MHPMEVENT_OF);
	}
}

/* They continue from their values; only the counters scountovf flags need their OF bits cleared */
static long cdeleg_start_mask(uint32_t mask)
{
	clear_of(mask & ~7U & (uint32_t)csr_read(CSR_SCOUNTOVF));
	scountinhibit_clear(mask & ~2U);
	return SBI_SUCCESS;
}

/* The loop walks selector and value together */
static void cdeleg_start_values(uint32_t mask, const uint64_t *values, size_t stride)
{
	uint32_t of = mask & (uint32_t)csr_read(CSR_SCOUNTOVF);
	unsigned long first = lowest_bit(mask), sel_i = SISELECT_COUNTER(first);
	const uint64_t *val = values + first * stride;

	for (unsigned long m = mask >> first; m; m >>= 1, sel_i++, val += stride) {
		if (m & 1) {
			csr_write(CSR_SISELECT, sel_i);
			cdeleg_ctr_write(*val);
		}
	}
	clear_of(of);
	scountinhibit_clear(mask);
}

/* Through sireg: a select and a read each, no CSR switch; the loop walks selector and slot together */
static void cdeleg_stop_read(uint32_t mask, uint64_t *values)
{
	unsigned long first = lowest_bit(mask), sel_i = SISELECT_COUNTER(first);

	scountinhibit_set(mask & ~2U);
	values += first;
	for (unsigned long m = mask >> first; m; m >>= 1, sel_i++, values++) {
		if (m & 1) {
			csr_write(CSR_SISELECT, sel_i);
			*values = cdeleg_ctr_read();
		}
	}
}

const struct phys_ops phys_cdeleg_ops = {
	.name = "counter delegation (Smcdeleg/Ssccfg CSRs in HS-mode)",
	.usable = cdeleg_usable,
	.config_direct = cdeleg_config_direct,
	.config_host = cdeleg_config_host,
	.start = cdeleg_start,
	.start_held = cdeleg_start_held,
	.stop = cdeleg_stop,
	.release = cdeleg_release,
	.release_host = cdeleg_release_host,
	.stop_read_one = cdeleg_stop_read_one,
	.stop_mask = cdeleg_stop_mask,
	.start_mask = cdeleg_start_mask,
	.start_values = cdeleg_start_values,
	.stop_read = cdeleg_stop_read,
};
