/* SPDX-License-Identifier: BSD-2-Clause */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_host.h"
#include "arch/riscv/sbi_spec.h"
#include "vpmu/vpmu_host.h"
#include "vpmu/phys.h"

struct fake_host fake;
uint8_t fake_ram[FAKE_RAM_SIZE];

static struct fake_percpu fake_harts[2];
char *fake_percpu = (char *)&fake_harts[0];
static long fake_start(unsigned int idx, uint64_t value);
long (*vpmu_phys_start_op)(unsigned int idx, uint64_t value) = fake_start;

void fake_set_hart(unsigned int n)
{
	fake_percpu = (char *)&fake_harts[n % 2];
}

void fake_reset(void)
{
	memset(&fake, 0, sizeof(fake));
	memset(fake_harts, 0, sizeof(fake_harts));
	fake_set_hart(0);
	fake.available = 1;
	fake.start_keeps_of = true;
	vpmu_set_exclusive(true);
	fake.num_hw = 19;
	fake.hw_mask = 0x7fffd; /* 0, 2, 3..18 */
	fake.prog_width = 64;
	fake.num_host_fw = 16;
	fake.prog_cycles_count = true;
	fake.event_exclusive = true;
	fake.sscofpmf = true;
	fake.cycles_map = 0x7fff8;
	/* OpenSBI leaves mcycle and minstret running from boot */
	fake.c[0].configured = fake.c[2].configured = true;
	fake.c[0].running = fake.c[2].running = true;
	fake.c[0].event_idx = 0x1;
	fake.c[2].event_idx = 0x2;
	memset(fake_ram, 0, sizeof(fake_ram));
}

static uint64_t pmask(unsigned int p)
{
	unsigned int w = p < 3 ? 64 : fake.prog_width;
	return w >= 64 ? ~0ULL : (1ULL << w) - 1;
}

static bool counts(unsigned int p)
{
	const struct fake_pctr *c = &fake.c[p];

	if (!c->configured || !c->running)
		return false;
	if (c->event_idx == 0x1 && p >= 3 && !fake.prog_cycles_count)
		return false;
	if ((c->event_idx == 0x1 || c->event_idx == 0x2) && p >= 3 && fake.event_exclusive)
		return fake.map[c->event_idx] == p;
	return true;
}

void fake_advance(uint64_t n)
{
	unsigned int p;

	for (p = 0; p < FAKE_NCTR; p++)
		if (counts(p)) {
			uint64_t v = (fake.c[p].value + n) & pmask(p);

			if ((v < fake.c[p].value || n > pmask(p)) && !fake.c[p].of &&
			    !fake.lose_of) {
				fake.c[p].of = true;
				fake.lcofip = true;
			}
			fake.c[p].value = v;
		}
	fake.now_frac += n;
	fake.now += fake.now_frac / 100;
	fake.now_frac %= 100;
}

bool fake_busy(unsigned int p)
{
	return p >= 3 && p < FAKE_NCTR && fake.c[p].configured;
}

static bool exists(unsigned int p)
{
	return p < fake.num_hw && ((fake.hw_mask >> p) & 1);
}

/* ---- vpmu_phys.h ---- */

const char *vpmu_phys_init(void)
{
	return "fake host";
}

int vpmu_phys_available(void)
{
	return fake.available;
}

unsigned long vpmu_phys_num_counters(void)
{
	return fake.num_hw + fake.num_host_fw;
}

struct sbi_ret vpmu_phys_counter_info(unsigned long idx)
{
	struct sbi_ret r = {SBI_SUCCESS, 0};

	if (idx >= fake.num_hw + fake.num_host_fw) {
		r.error = SBI_ERR_INVALID_PARAM;
	} else if (idx >= fake.num_hw) {
		r.value = SBI_PMU_CTR_INFO_FW | (63UL << 12);
	} else if (!exists((unsigned int)idx)) {
		r.error = SBI_ERR_INVALID_PARAM;
	} else {
		unsigned long w = idx < 3 ? 63 : fake.prog_width - 1;
		r.value = (0xc00 + idx) | (w << 12);
	}
	return r;
}

static bool host_knows(unsigned int p, unsigned long ev, uint64_t data)
{
	switch (ev) {
	case 0x1:
		return p == 0 || ((fake.cycles_map >> p) & 1);
	case 0x2:
		return p == 2 || p >= 3;
	case 0x10019:
	case 0x1001b:
	case 0x10021:
		return p >= 3;
	case 0x20000:
		return p >= 3 && data == FAKE_RAW_OK;
	case 0x30000:
		return p >= 3 && data == FAKE_RAW2_OK;
	default:
		return false;
	}
}

struct sbi_ret vpmu_phys_config(unsigned int idx, unsigned long host_flags, unsigned long event_idx,
				uint64_t event_data)
{
	struct sbi_ret r = {SBI_SUCCESS, idx};

	fake.n_config++;
	if (!exists(idx)) {
		r.error = SBI_ERR_INVALID_PARAM;
		return r;
	}
	if (idx >= 3 && idx < FAKE_NCTR && fake.c[idx].configured) {
		r.error = SBI_ERR_NOT_SUPPORTED;
		return r;
	}
	if (!host_knows(idx, event_idx, event_data)) {
		/* OpenSBI: cycles/instret fall back to their fixed counter */
		if (event_idx == 0x1 || event_idx == 0x2)
			r.value = event_idx == 0x1 ? 0 : 2;
		else {
			r.error = SBI_ERR_INVALID_PARAM; /* OpenSBI's answer to unknown events */
			return r;
		}
	}
	if ((event_idx == 0x1 || event_idx == 0x2) && r.value >= 3 && !fake.map[event_idx]) {
		fake.map[event_idx] = (unsigned int)r.value;
		/* as the physical layer keeps it: vpmu_phys_event_counter's inline answer */
		phys_this_hart()->qemu.ev[r.value] = (uint32_t)event_idx;
	}
	fake.c[r.value].configured = true;
	fake.c[r.value].running = false;
	fake.c[r.value].event_idx = event_idx;
	fake.c[r.value].event_data = event_data;
	fake.c[r.value].flags = host_flags;
	return r;
}

static long fake_start(unsigned int idx, uint64_t value)
{
	fake.n_start++;
	if (fake.fail_start)
		return SBI_ERR_FAILED;
	if (idx >= FAKE_NCTR || !fake.c[idx].configured)
		return SBI_ERR_INVALID_PARAM;
	if (fake.c[idx].running)
		return SBI_ERR_ALREADY_STARTED;
	fake.c[idx].value = value & pmask(idx);
	fake.c[idx].running = true;
	if (!fake.lcofip || !fake.start_keeps_of)
		fake.c[idx].of = false;
	return SBI_SUCCESS;
}

/* One by one, as the SBI backend has no batch: the same starts, each counted */
uint32_t vpmu_phys_start_values(uint32_t mask, const uint64_t *values, size_t stride)
{
	uint32_t started = 0;

	for (unsigned int p = 0; p < 32; p++)
		if (((mask >> p) & 1) && vpmu_phys_start(p, values[p * stride]) == SBI_SUCCESS)
			started |= 1U << p;
	return started;
}

static long stop(unsigned int idx, bool reset)
{
	long err = SBI_SUCCESS;

	fake.n_stop++;
	if (idx >= FAKE_NCTR || !fake.c[idx].configured)
		return SBI_ERR_INVALID_PARAM;
	if (fake.c[idx].running)
		fake.c[idx].running = false;
	else
		err = SBI_ERR_ALREADY_STOPPED;
	if (reset && idx >= 3) {
		/* mhpmevent = 0: QEMU drops the event's counter mapping, OF is cleared */
		for (unsigned int e = 1; e <= 2; e++)
			if (fake.map[e] == idx) {
				fake.map[e] = 0;
				phys_this_hart()->qemu.ev[idx] = 0;
			}
		fake.c[idx].configured = false;
		fake.c[idx].of = false;
	}
	return err;
}

long vpmu_phys_stop(unsigned int idx)
{
	return stop(idx, false);
}

long vpmu_phys_release(unsigned int idx)
{
	return stop(idx, true);
}

uint64_t vpmu_phys_stop_read_one(unsigned int idx)
{
	vpmu_phys_stop(idx);
	return vpmu_phys_read(idx);
}

/* vpmu_phys_stop_read's stop: one, as the backends make it */
static void stop_mask(uint32_t mask)
{
	fake.n_stop++;
	for (unsigned int p = 0; p < 32 && p < FAKE_NCTR; p++) {
		if (!((mask >> p) & 1))
			continue;
		if (!fake.c[p].configured)
			return; /* as a host refuses the mask: the rest keep running */
		fake.c[p].running = false;
	}
}

long vpmu_phys_start_mask(uint32_t mask)
{
	long err = SBI_SUCCESS;

	fake.n_start++;
	for (unsigned int p = 0; p < 32 && p < FAKE_NCTR; p++) {
		if (!((mask >> p) & 1))
			continue;
		if (!fake.c[p].configured)
			return SBI_ERR_INVALID_PARAM;
		if (fake.c[p].running)
			err = SBI_ERR_ALREADY_STARTED;
		fake.c[p].running = true;
		if (!fake.lcofip)
			fake.c[p].of = false;
	}
	return err;
}

bool vpmu_phys_irq_pending(void)
{
	return fake.lcofip;
}

void vpmu_phys_irq_clear(void)
{
	fake.lcofip = false;
}

bool vpmu_phys_start_keeps_of(void)
{
	return fake.start_keeps_of;
}

uint32_t vpmu_phys_overflowed(void)
{
	uint32_t m = 0;

	for (unsigned int p = 0; p < FAKE_NCTR && p < 32; p++)
		if (fake.c[p].of)
			m |= 1U << p;
	return m;
}

uint64_t vpmu_phys_read(unsigned int idx)
{
	return idx < FAKE_NCTR ? fake.c[idx].value : 0;
}

void vpmu_phys_stop_read(uint32_t mask, uint64_t values[32])
{
	stop_mask(mask);
	for (unsigned int p = 0; p < 32; p++)
		if ((mask >> p) & 1)
			values[p] = vpmu_phys_read(p);
}

void vpmu_phys_set_wide(uint32_t mask)
{
	fake.wide = mask;
}

void vpmu_phys_write_counteren(unsigned long bits)
{
	phys_this_hart()->counteren = bits;
	bits &= ~(unsigned long)phys_this_hart()->hidden;
	fake.counteren = (fake.counteren & 2) | (bits & 0xffffffffUL & ~2UL);
}

void vpmu_phys_hide(uint32_t mask)
{
	phys_this_hart()->hidden = mask;
	vpmu_phys_write_counteren(phys_this_hart()->counteren);
}

int vpmu_phys_event_filtered(unsigned int idx, unsigned long event_idx)
{
	if (!host_knows(idx, event_idx, 0))
		return -1;
	return !((fake.unfiltered >> idx) & 1);
}

unsigned long vpmu_phys_counts_per_tick(void)
{
	return 100;
}

bool vpmu_phys_event_exclusive(unsigned int a, unsigned int b, unsigned long event_idx)
{
	(void)a;
	(void)b;
	(void)event_idx;
	return fake.event_exclusive;
}

/* No hart starves here (the near-top quirk is the core's business) */
bool vpmu_phys_harts_may_starve(void)
{
	return false;
}

/* A host where a sleeping hart counts what another runs (QEMU -icount): vpmu_host_busy_other_hart */
bool vpmu_phys_other_harts_charged(unsigned int p)
{
	(void)p;
	return fake.charged && vpmu_host_busy_other_hart(1000);
}

int vpmu_phys_event_holder(unsigned int idx, unsigned long event_idx)
{
	if (idx < 3 || !(event_idx == 0x1 || event_idx == 0x2) || !fake.event_exclusive ||
	    fake.map[event_idx] == idx)
		return (int)idx;
	return fake.map[event_idx] ? (int)fake.map[event_idx] : -1;
}

int vpmu_phys_event_counts(unsigned int idx, unsigned long event_idx)
{
	struct sbi_ret r = vpmu_phys_config(idx, 0, event_idx, 0);
	uint64_t before;
	bool ok;

	if (r.error)
		return -1;
	if (r.value != idx) {
		if (r.value >= 3)
			vpmu_phys_release((unsigned int)r.value);
		return -1;
	}
	vpmu_phys_start(idx, 0);
	before = fake.c[idx].value;
	fake_advance(100);
	ok = fake.c[idx].value != before;
	vpmu_phys_release(idx);
	fake.c[idx].value = 0;
	return ok;
}

/* ---- vpmu_host.h ---- */

static bool in_ram(uint64_t gpa, size_t len)
{
	return gpa >= FAKE_RAM_BASE && len <= FAKE_RAM_SIZE &&
	       gpa - FAKE_RAM_BASE <= FAKE_RAM_SIZE - len;
}

int vpmu_host_read_guest(struct vpmu *v, uint64_t gpa, void *dst, size_t len)
{
	(void)v;
	if (!in_ram(gpa, len))
		return -1;
	memcpy(dst, fake_ram + (gpa - FAKE_RAM_BASE), len);
	return 0;
}

int vpmu_host_write_guest(struct vpmu *v, uint64_t gpa, const void *src, size_t len)
{
	(void)v;
	if (!in_ram(gpa, len))
		return -1;
	memcpy(fake_ram + (gpa - FAKE_RAM_BASE), src, len);
	return 0;
}

void *vpmu_host_guest_ram(struct vpmu *v, uint64_t gpa, size_t len)
{
	(void)v;
	return in_ram(gpa, len) ? fake_ram + (gpa - FAKE_RAM_BASE) : NULL;
}

unsigned long vpmu_host_ecall_pc(struct vpmu *v)
{
	(void)v;
	return fake.ecall_pc;
}

uint64_t vpmu_host_now(void)
{
	return fake.now;
}

void vpmu_host_raise_lcofi(struct vpmu *v)
{
	(void)v;
	fake.nr_lcofi++;
}

void vpmu_host_cancel_lcofi(struct vpmu *v)
{
	(void)v;
	fake.nr_lcofi_cancel++;
}

void vpmu_host_sample(struct vpmu *v)
{
	(void)v;
	fake.nr_samples++;
}

bool vpmu_host_option(const char *word)
{
	(void)word;
	return false;
}

const char *vpmu_host_option_value(const char *key)
{
	(void)key;
	return NULL;
}

bool vpmu_host_is_qemu(void)
{
	return true;
}

bool vpmu_host_has_sscofpmf(void)
{
	return fake.sscofpmf;
}

void vpmu_host_counting_starts(struct vpmu *v)
{
	(void)v;
	fake.n_counting_starts++;
}

bool vpmu_host_busy_other_hart(unsigned long iters)
{
	if (fake.charged)
		fake_advance(2 * iters);
	return true;
}

void hv_printf(const char *fmt, ...)
{
	(void)fmt;
}

void hv_panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	abort();
}
