/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every vpmu unit test file shares: the fake host's layout, the SBI
 * call and lifecycle wrappers that run vpmu_check() after each call, guest
 * RAM access, the per-test setup and the helpers for a second vCPU and a
 * second hart. Each test_<file>.c (the tests of vpmu/<file>.c) includes
 * this header once and is its own cmocka binary, build/unit/vpmu_<file>_test,
 * against the fake OpenSBI-on-QEMU backend and fake guest RAM of
 * fake_host.c. Everything here is static (inline): a file uses what it needs.
 */
#ifndef VPMU_TEST_HELPERS_H
#define VPMU_TEST_HELPERS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_host.h"
#include "arch/riscv/sbi_spec.h"
#include "vpmu/bits.h"
#include "vpmu/vpmu_host.h"
#include "vpmu/vpmu.h"
#include "vpmu/phys.h"
#include "vpmu/vpmu_sbi.h"

#define NHW	19 /* QEMU virt: 0, (1), 2, 3..18 */
#define FW0	NHW
#define NTOT	(NHW + 22)
#define HWMASK	0x7fffdUL
#define FWMASK	(((1UL << 22) - 1) << FW0)
#define ALLMASK (HWMASK | FWMASK) /* what Linux passes: counters get_info accepts */

#define EV_CYCLES  0x1UL
#define EV_INSTR   0x2UL
#define EV_DTLB_RD 0x10019UL
#define EV_RAW	   0x20000UL
#define EV_RAW2	   0x30000UL
#define EV_FW(c)   (0xf0000UL | (c))
#define AUTO	   SBI_PMU_CFG_FLAG_AUTO_START
#define FW_INFO	   (SBI_PMU_CTR_INFO_FW | (63UL << 12))

#define BASE_INH (SBI_PMU_CFG_FLAG_SET_SINH | SBI_PMU_CFG_FLAG_SET_UINH | SBI_PMU_CFG_FLAG_SET_MINH)
#define SHMEM	 (FAKE_RAM_BASE + 0x1000)

static struct vcpu vc;
static struct vpmu *v = &vc.vpmu;
/* A second vCPU, for the tests of two vCPUs on one hart */
static struct vcpu other_vc __attribute__((unused));

/* The invariants of vpmu_types.h hold after every call (vpmu_check) */
static inline void check(struct vpmu *x)
{
	const char *why = vpmu_check(x);

	if (why)
		fail_msg("vpmu_check: %s", why);
}

static inline struct sbi_ret call(unsigned long fid, unsigned long a0, unsigned long a1,
				  unsigned long a2, unsigned long a3, unsigned long a4)
{
	unsigned long args[6] = {a0, a1, a2, a3, a4, 0};
	struct sbi_ret r = vpmu_sbi_call(v, fid, args);

	check(v);
	return r;
}

/* The lifecycle calls the tests make, each followed by the same check */
#define CHECKED(fn)                                                                                \
	static inline void checked_##fn(struct vpmu *x)                                            \
	{                                                                                          \
		fn(x);                                                                             \
		if (x)                                                                             \
			check(x);                                                                  \
	}
CHECKED(vpmu_vcpu_load)
CHECKED(vpmu_vcpu_put)
CHECKED(vpmu_vcpu_reset)
CHECKED(vpmu_timer)
CHECKED(vpmu_overflow_irq)

#define vpmu_vcpu_load	  checked_vpmu_vcpu_load
#define vpmu_vcpu_put	  checked_vpmu_vcpu_put
#define vpmu_vcpu_reset	  checked_vpmu_vcpu_reset
#define vpmu_timer	  checked_vpmu_timer
#define vpmu_overflow_irq checked_vpmu_overflow_irq

#define NUM()		     call(SBI_EXT_PMU_NUM_COUNTERS, 0, 0, 0, 0, 0)
#define INFO(i)		     call(SBI_EXT_PMU_COUNTER_GET_INFO, i, 0, 0, 0, 0)
#define CFG(b, m, f, e, d)   call(SBI_EXT_PMU_COUNTER_CFG_MATCH, b, m, f, e, d)
#define START(b, m, f, iv)   call(SBI_EXT_PMU_COUNTER_START, b, m, f, iv, 0)
#define STOP(b, m, f)	     call(SBI_EXT_PMU_COUNTER_STOP, b, m, f, 0, 0)
#define FWREAD(i)	     call(SBI_EXT_PMU_COUNTER_FW_READ, i, 0, 0, 0, 0)
#define FWREADHI(i)	     call(SBI_EXT_PMU_COUNTER_FW_READ_HI, i, 0, 0, 0, 0)
#define SHMEM_SET(lo, hi, f) call(SBI_EXT_PMU_SNAPSHOT_SET_SHMEM, lo, hi, f, 0, 0)
#define EVINFO(lo, hi, n, f) call(SBI_EXT_PMU_EVENT_GET_INFO, lo, hi, n, f, 0)

static inline void *ram(uint64_t gpa)
{
	return fake_ram + (gpa - FAKE_RAM_BASE);
}

static inline uint64_t ram64(uint64_t gpa)
{
	uint64_t x;
	memcpy(&x, ram(gpa), 8);
	return x;
}

static inline void set_ram64(uint64_t gpa, uint64_t x)
{
	memcpy(ram(gpa), &x, 8);
}

/* Every test's setup: the default fake host, the vPMU booted on it, v loaded */
static inline int setup(void **state)
{
	(void)state;
	fake_reset();
	vpmu_global_init();
	vpmu_vcpu_init(v);
	vpmu_vcpu_load(v);
	fake.n_config = fake.n_start = fake.n_stop = 0;
	return 0;
}

#define T(f) cmocka_unit_test_setup(f, setup)

/* After a test changed the fake host: boot the vPMU on it again, v loaded */
static inline void reboot_host(void)
{
	vpmu_global_init();
	vpmu_vcpu_init(v);
	vpmu_vcpu_load(v);
}

/* Configure + start; returns the counter */
static inline unsigned long cfg_start(unsigned long base, unsigned long mask, unsigned long ev,
				      uint64_t ival)
{
	struct sbi_ret r = CFG(base, mask, 0, ev, 0);

	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(START(r.value, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, ival).error,
			 SBI_SUCCESS);
	return r.value;
}

/* v is put and a second vCPU on its hart loaded: returns its vPMU, freshly initialised */
static inline struct vpmu *switch_to_other(void)
{
	struct vpmu *w = &other_vc.vpmu;

	vpmu_vcpu_put(v);
	vpmu_vcpu_init(w);
	vpmu_vcpu_load(w);
	return w;
}

/* v counts instret on 3 from ival for ticks, then the other vCPU configures DTLB reads there */
static inline struct vpmu *other_takes_counter_3(uint64_t ival, unsigned long ticks)
{
	struct vpmu *w;

	cfg_start(3, 1, EV_INSTR, ival);
	fake_advance(ticks);
	w = switch_to_other();
	assert_int_equal(vpmu_counter_config_matching(w, 3, 1, 0, EV_DTLB_RD, 0).value, 3);
	return w;
}

/*
 * Two physical harts for the fake: each keeps its own counters (and QEMU's
 * event map); fake.c is the one of the hart we run on.
 */
static struct {
	struct fake_pctr c[FAKE_NCTR];
	unsigned int map[3];
	unsigned long counteren;
} hart_regs[2] __attribute__((unused));
static unsigned int cur_hart __attribute__((unused));

static inline void run_on_hart(unsigned int n)
{
	memcpy(hart_regs[cur_hart].c, fake.c, sizeof(fake.c));
	memcpy(hart_regs[cur_hart].map, fake.map, sizeof(fake.map));
	hart_regs[cur_hart].counteren = fake.counteren;
	fake.counteren = hart_regs[n].counteren;
	if (n != cur_hart && !hart_regs[n].c[0].configured) {
		/* first visit: OpenSBI's boot state, nothing configured */
		memset(fake.c, 0, sizeof(fake.c));
		memset(fake.map, 0, sizeof(fake.map));
		fake.c[0].configured = fake.c[2].configured = true;
		fake.c[0].running = fake.c[2].running = true;
		fake.c[0].event_idx = 0x1;
		fake.c[2].event_idx = 0x2;
	} else {
		memcpy(fake.c, hart_regs[n].c, sizeof(fake.c));
		memcpy(fake.map, hart_regs[n].map, sizeof(fake.map));
	}
	cur_hart = n;
	fake_set_hart(n);
}

/* Start a two-hart test on hart 0 (a) */
static inline void two_harts(void)
{
	memset(hart_regs, 0, sizeof(hart_regs));
	cur_hart = 0;
}

#endif
