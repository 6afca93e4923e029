/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The real physical PMU backend: the host SBI PMU (OpenSBI) for
 * configuration, start and stop, and the counter CSRs for reads.
 *
 * QEMU 10 quirk absorbed here (target/riscv/pmu.c): riscv_pmu_setup_timer
 * keeps a per-counter irq_overflow_left whenever a counter is written (or
 * started) so far from its top that the deadline passes INT64_MAX ns, as
 * for every counter Linux starts for counting (2^63 + 1), and never clears
 * it when the counter is written again: the next timer expiry for that
 * counter, its first overflow as a sampler, is swallowed and re-armed
 * about a second of virtual time later. pmu_timer_trigger_irq consumes the
 * stale value at any expiry while the counter is enabled, counting or not.
 * So before a counter that was started far from its top starts near it,
 * the backend starts it 256 counts below the top and spins 1024 HS-mode
 * instructions (where it counts nothing: the timer expires within the spin,
 * consumes the stale value, and re-arms itself every 256 ns until the
 * stop), then starts it properly. Not closer to the top: a timer re-armed
 * every nanosecond gives each hart's round-robin slice under -icount
 * 1/2 instruction, rounded down to 0 for the second hart, which would
 * never run again (seen: the hart that had to stop the counter hung).
 * vpmu_hart.phys_far remembers the far starts per hart.
 * (vpmu's deadline would still deliver that overflow, up to a timer tick
 * late: the last sample of a loop would be lost.)
 *
 * OpenSBI 1.5 quirks absorbed here:
 * - the fixed counters 0 and 2 run from boot, so after config_matching they
 *   are "already started": config stops them, start retries after a stop;
 * - config_matching is never given AUTO_START, CLEAR_VALUE or SKIP_MATCH:
 *   start always sets the initial value, and SKIP_MATCH would skip the
 *   fixed counters' filter programming (mcyclecfg/minstretcfg).
 */
#include "sbi_call.h"
#include "cpu.h"
#include "csr.h"
#include "vpmu.h"
#include "vpmu_host.h"
#include "vpmu_phys.h"

#define FIRST_PROG_CTR 3

#define HOST_CFG_FILTERS 0xf8UL /* VUINH..MINH */
#define HCOUNTEREN_TM	 (1UL << 1)
/* Boot probe: count only HS-mode, so that mode filtering is exercised */
#define PROBE_FLAGS                                                                                \
	(SBI_PMU_CFG_FLAG_SET_UINH | SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_VUINH |     \
	 SBI_PMU_CFG_FLAG_SET_MINH)

static struct sbi_ret pmu_call(unsigned long fid, unsigned long a0, unsigned long a1,
			       unsigned long a2, unsigned long a3, unsigned long a4)
{
	return sbi_ecall(SBI_EXT_PMU, fid, a0, a1, a2, a3, a4, 0);
}

int vpmu_phys_available(void)
{
	struct sbi_ret r =
		sbi_ecall(SBI_EXT_BASE, SBI_EXT_BASE_PROBE_EXT, SBI_EXT_PMU, 0, 0, 0, 0, 0);

	return r.error == SBI_SUCCESS && r.value != 0;
}

unsigned long vpmu_phys_num_counters(void)
{
	struct sbi_ret r = pmu_call(SBI_EXT_PMU_NUM_COUNTERS, 0, 0, 0, 0, 0);

	return r.error ? 0 : r.value;
}

struct sbi_ret vpmu_phys_counter_info(unsigned long idx)
{
	return pmu_call(SBI_EXT_PMU_COUNTER_GET_INFO, idx, 0, 0, 0, 0);
}

struct sbi_ret vpmu_phys_config(unsigned int idx, unsigned long host_flags, unsigned long event_idx,
				uint64_t event_data)
{
	struct sbi_ret r = pmu_call(SBI_EXT_PMU_COUNTER_CFG_MATCH, idx, 1,
				    host_flags & HOST_CFG_FILTERS, event_idx, event_data);

	/* A fixed counter keeps running after config_matching: stop it */
	if (r.error == SBI_SUCCESS && r.value <= 2)
		pmu_call(SBI_EXT_PMU_COUNTER_STOP, r.value, 1, 0, 0, 0);
	return r;
}

/* Far from the top: QEMU arms its overflow timer beyond INT64_MAX ns (2^63 + 1 included) */
#define FAR_FROM_TOP(v) ((v) == 0 || -(v) > (1ULL << 62))

static struct vpmu_hart *far_table(void)
{
	struct vpmu_hart *h = vpmu_host_hart();

	if (!h->phys_init) { /* the firmware and the boot probes started every counter far */
		h->phys_far = ~0U;
		h->phys_init = true;
	}
	return h;
}

/* Counter idx is stopped and about to start near its top: consume a stale irq_overflow_left */
#define CONSUME_COUNTS 256
static void consume_stale_deadline(unsigned int idx)
{
	pmu_call(SBI_EXT_PMU_COUNTER_START, idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE,
		 -(uint64_t)CONSUME_COUNTS, 0);
	cpu_spin(2UL * CONSUME_COUNTS); /* 4 x its distance to the top, in instructions */
	pmu_call(SBI_EXT_PMU_COUNTER_STOP, idx, 1, 0, 0, 0);
}

static void note_start(unsigned int idx, uint64_t value)
{
	struct vpmu_hart *h = far_table();

	if (idx < FIRST_PROG_CTR || idx >= 32)
		return;
	if (FAR_FROM_TOP(value)) {
		h->phys_far |= 1U << idx;
	} else if ((h->phys_far >> idx) & 1) {
		consume_stale_deadline(idx);
		h->phys_far &= ~(1U << idx);
	}
}

long vpmu_phys_start(unsigned int idx, uint64_t value)
{
	struct sbi_ret r;

	note_start(idx, value);
	r = pmu_call(SBI_EXT_PMU_COUNTER_START, idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, value,
		     0);

	if (r.error == SBI_ERR_ALREADY_STARTED) {
		pmu_call(SBI_EXT_PMU_COUNTER_STOP, idx, 1, 0, 0, 0);
		r = pmu_call(SBI_EXT_PMU_COUNTER_START, idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE,
			     value, 0);
	}
	return r.error;
}

long vpmu_phys_stop(unsigned int idx, int reset)
{
	return pmu_call(SBI_EXT_PMU_COUNTER_STOP, idx, 1, reset ? SBI_PMU_STOP_FLAG_RESET : 0, 0, 0)
		.error;
}

long vpmu_phys_stop_mask(uint32_t mask)
{
	return pmu_call(SBI_EXT_PMU_COUNTER_STOP, 0, mask, 0, 0, 0).error;
}

long vpmu_phys_start_mask(uint32_t mask)
{
	for (unsigned int i = FIRST_PROG_CTR; i < 32; i++)
		if ((mask >> i) & 1)
			note_start(i, vpmu_phys_read(i)); /* they continue from their values */
	return pmu_call(SBI_EXT_PMU_COUNTER_START, 0, mask, 0, 0, 0).error;
}

#define RD(n, csr)                                                                                 \
	case n:                                                                                    \
		return csr_read(csr)

uint64_t vpmu_phys_read(unsigned int idx)
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

void vpmu_phys_set_counteren(unsigned long bits)
{
	unsigned long h = csr_read(CSR_HCOUNTEREN);

	csr_write(CSR_HCOUNTEREN, (h & HCOUNTEREN_TM) | (bits & 0xffffffffUL & ~HCOUNTEREN_TM));
}

uint32_t vpmu_phys_overflowed(void)
{
	return (uint32_t)csr_read(CSR_SCOUNTOVF);
}

int vpmu_phys_event_shared(unsigned int a, unsigned int b, unsigned long event_idx)
{
	struct sbi_ret ra =
		pmu_call(SBI_EXT_PMU_COUNTER_CFG_MATCH, a, 1, PROBE_FLAGS, event_idx, 0);
	struct sbi_ret rb =
		pmu_call(SBI_EXT_PMU_COUNTER_CFG_MATCH, b, 1, PROBE_FLAGS, event_idx, 0);
	volatile unsigned int spin;
	int res = -1;

	if (!ra.error && ra.value == a && !rb.error && rb.value == b && !vpmu_phys_start(a, 0) &&
	    !vpmu_phys_start(b, 0)) {
		for (spin = 0; spin < 1000; spin++)
			;
		res = vpmu_phys_read(a) != 0 && vpmu_phys_read(b) != 0;
	}
	if (!ra.error && ra.value > 2)
		vpmu_phys_stop((unsigned int)ra.value, 1);
	if (!rb.error && rb.value > 2)
		vpmu_phys_stop((unsigned int)rb.value, 1);
	return res;
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

/* One event counted in HS-mode on counter idx over ~200 timer ticks: counts per tick */
static unsigned long rate_of(unsigned int idx, unsigned long event_idx)
{
	struct sbi_ret r =
		pmu_call(SBI_EXT_PMU_COUNTER_CFG_MATCH, idx, 1, PROBE_FLAGS, event_idx, 0);
	unsigned long t0, t1, rate = 0;
	uint64_t c0, c1;

	if (r.error)
		return 0;
	if (r.value == idx && !vpmu_phys_start(idx, 0)) {
		t0 = csr_read(CSR_TIME);
		c0 = vpmu_phys_read(idx);
		do
			t1 = csr_read(CSR_TIME);
		while (t1 - t0 < 200);
		c1 = vpmu_phys_read(idx);
		rate = (unsigned long)((c1 - c0 + (t1 - t0) / 2) / (t1 - t0));
	}
	if (r.value > 2)
		vpmu_phys_stop((unsigned int)r.value, 1);
	return rate;
}

unsigned long vpmu_phys_counts_per_tick(void)
{
	unsigned long cyc = rate_of(3, 1), ins = rate_of(3, 2);

	return cyc > ins ? cyc : ins;
}

void vpmu_phys_spin(unsigned long iters)
{
	cpu_spin(iters);
}

int vpmu_phys_event_filtered(unsigned int idx, unsigned long event_idx)
{
	struct sbi_ret r = pmu_call(SBI_EXT_PMU_COUNTER_CFG_MATCH, idx, 1,
				    PROBE_FLAGS | SBI_PMU_CFG_FLAG_SET_SINH, event_idx, 0);
	uint64_t val = 0;

	if (r.error)
		return -1;
	if (r.value != idx) {
		if (r.value > 2)
			vpmu_phys_stop((unsigned int)r.value, 1);
		return -1;
	}
	if (!vpmu_phys_start(idx, 0)) {
		cpu_spin(1000);
		val = vpmu_phys_read(idx);
	}
	vpmu_phys_stop(idx, 1);
	return val == 0;
}

int vpmu_phys_event_counts(unsigned int idx, unsigned long event_idx)
{
	struct sbi_ret r =
		pmu_call(SBI_EXT_PMU_COUNTER_CFG_MATCH, idx, 1, PROBE_FLAGS, event_idx, 0);
	uint64_t val;
	volatile unsigned int spin;

	if (r.error)
		return -1;
	if (r.value != idx) {
		if (r.value > 2)
			pmu_call(SBI_EXT_PMU_COUNTER_STOP, r.value, 1, SBI_PMU_STOP_FLAG_RESET, 0,
				 0);
		return -1;
	}
	if (vpmu_phys_start(idx, 0)) {
		vpmu_phys_stop(idx, 1);
		return -1;
	}
	for (spin = 0; spin < 1000; spin++)
		;
	val = vpmu_phys_read(idx);
	vpmu_phys_stop(idx, 1);
	return val != 0;
}
