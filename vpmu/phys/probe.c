/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Boot probes of the physical layer: what the platform counts where, and
 * how, measured through the backend the layer runs on (boot hart, before
 * any guest counts).
 */
#include "arch/riscv/cpu.h"
#include "arch/riscv/csr.h"
#include "vpmu/phys.h"
#include "vpmu/phys/backend.h"
#include "vpmu/phys/qemu.h"
#include "vpmu/vpmu_host.h"

/* Count only HS-mode, so that mode filtering is exercised */
#define PROBE_FLAGS                                                                                \
	(SBI_PMU_CFG_FLAG_SET_UINH | SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_VUINH |     \
	 SBI_PMU_CFG_FLAG_SET_MINH)

/* Configure ev on idx exactly (release what the host chose instead): 0, or -1 */
static int probe_config(unsigned int idx, unsigned long flags, unsigned long ev)
{
	struct sbi_ret r = vpmu_phys_config(idx, flags, ev, 0);

	if (r.error)
		return -1;
	if (r.value != idx) {
		if (r.value > 2)
			vpmu_phys_release((unsigned int)r.value);
		return -1;
	}
	return 0;
}

static int event_shared(unsigned int a, unsigned int b, unsigned long event_idx)
{
	bool ca = !probe_config(a, PROBE_FLAGS, event_idx);
	bool cb = !probe_config(b, PROBE_FLAGS, event_idx);
	int res = -1;

	if (ca && cb && !vpmu_phys_start(a, 0) && !vpmu_phys_start(b, 0)) {
		cpu_spin(1000);
		res = vpmu_phys_read(a) != 0 && vpmu_phys_read(b) != 0;
	}
	if (ca)
		vpmu_phys_release(a);
	if (cb)
		vpmu_phys_release(b);
	return res;
}

bool vpmu_phys_event_exclusive(unsigned int a, unsigned int b, unsigned long event_idx)
{
	return (qemu_quirks & QEMU_EVENT_MAP) && event_shared(a, b, event_idx) == 0;
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
	vpmu_phys_release(idx);
	return rate;
}

unsigned long vpmu_phys_counts_per_tick(void)
{
	unsigned long cyc = rate_of(3, SBI_PMU_HW_CPU_CYCLES),
		      ins = rate_of(3, SBI_PMU_HW_INSTRUCTIONS);

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
	vpmu_phys_release(idx);
	return val == 0;
}

int vpmu_phys_event_counts(unsigned int idx, unsigned long event_idx)
{
	uint64_t val;

	if (probe_config(idx, PROBE_FLAGS, event_idx))
		return -1;
	if (vpmu_phys_start(idx, 0)) {
		vpmu_phys_release(idx);
		return -1;
	}
	cpu_spin(1000);
	val = vpmu_phys_read(idx);
	vpmu_phys_release(idx);
	return val != 0;
}

/*
 * Count, on this hart, instructions of a spin loop of iters iterations (2
 * instructions each), or what another hart executes while this one sleeps
 * (other): with HS-mode-only filters, so nothing but this hart's own HS
 * work should count.
 */
#define PROBE_ITERS 50000
static uint64_t probe_count(unsigned int p, unsigned long iters, bool other, bool *ok)
{
	struct sbi_ret r = vpmu_phys_config(p, PROBE_FLAGS, SBI_PMU_HW_INSTRUCTIONS, 0);
	uint64_t before, after;

	*ok = false;
	if (r.error || r.value != p) {
		if (!r.error)
			vpmu_phys_release((unsigned int)r.value);
		return 0;
	}
	if (vpmu_phys_start(p, 0) == SBI_SUCCESS) {
		before = vpmu_phys_read(p);
		if (other) {
			*ok = vpmu_host_busy_other_hart(iters);
		} else {
			cpu_spin(iters);
			*ok = true;
		}
		after = vpmu_phys_read(p);
	} else {
		before = after = 0;
	}
	vpmu_phys_release(p);
	return after - before;
}

bool vpmu_phys_other_harts_charged(unsigned int p)
{
	uint64_t one, two, other;
	bool ok1, ok2, ok3, charged;

	/* Does this hart count instructions exactly (QEMU -icount), not time? */
	one = probe_count(p, PROBE_ITERS, false, &ok1);
	two = probe_count(p, 2UL * PROBE_ITERS, false, &ok2);
	/* And does it count what another hart runs while it sleeps? */
	other = probe_count(p, PROBE_ITERS, true, &ok3);
	charged = ok1 && ok2 && ok3 && two - one >= 2UL * PROBE_ITERS - 16 &&
		  two - one <= 2UL * PROBE_ITERS + 16 && other >= PROBE_ITERS;
	qemu_note_icount(ok1 && ok2 && two - one == 2UL * PROBE_ITERS);
	hv_printf("vpmu: counters count %s; a sleeping hart counted %lu of another hart's "
		  "%lu instructions%s\n",
		  ok1 && ok2 && two - one == 2UL * PROBE_ITERS ? "instructions exactly" : "time",
		  (unsigned long)other, 2UL * PROBE_ITERS,
		  !charged			   ? ""
		  : qemu_quirks & QEMU_OTHER_HARTS ? ": vCPUs with running counters run alone"
						   : " (workaround off: pmu-quirks)");
	return charged && (qemu_quirks & QEMU_OTHER_HARTS);
}
