/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Boot: what the host offers guests (the layout: hardware counters, their
 * widths, what can count where, whether overflow exists), found once on the
 * boot hart and never changed afterwards; each hart's own start.
 */
#include "vpmu/internal.h"

struct vpmu_layout layout;
/* Guests are offered the extension: the host has an SBI PMU (vpmu_global_init) */
bool vpmu_offered;
bool vpmu_exclusive;

void vpmu_set_exclusive(bool on)
{
	vpmu_exclusive = on;
	layout.start_prep = on || layout.start_keeps_of;
}

/*
 * Ask the host, counter by counter, where it can count each general and
 * cache event. Every programmable counter ends up released (mhpmevent 0,
 * so no stale overflow flag either), whatever the firmware left there.
 */
static void probe_capabilities(void)
{
	for (unsigned int key = 0; key < EV_KEYS; key++) {
		unsigned long ev = ev_of_key(key);

		for (unsigned int p = 0; ev && p < layout.num_hw; p++) {
			struct sbi_ret r;

			if (!is_hw(p))
				continue;
			r = vpmu_phys_config(p, host_flags(0), ev, 0);
			if (r.error)
				continue;
			if (r.value == p)
				layout.can[key] |= 1U << p;
			vpmu_phys_release((unsigned int)r.value);
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
			vpmu_phys_release(p);
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
	layout.start_prep = vpmu_exclusive || layout.start_keeps_of;
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
			layout.event_exclusive = vpmu_phys_event_exclusive(p, p + 1, EV_INSTRET);
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

void vpmu_probe_other_harts(void)
{
	unsigned int p = first_prog_for(SBI_PMU_HW_INSTRUCTIONS);

	if (!vpmu_offered || !p || !layout.prog_counts[1])
		return;
	layout.other_harts = vpmu_phys_other_harts_charged(p);
}

bool vpmu_counts_other_harts(void)
{
	return layout.other_harts;
}

bool vpmu_harts_may_starve(void)
{
	return vpmu_offered && vpmu_phys_harts_may_starve();
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

bool vpmu_overflow_available(void)
{
	return vpmu_offered && layout.sscofpmf && layout.num_hw > FIRST_PROG;
}
