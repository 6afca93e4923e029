/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the virtual PMU: every SBI PMU function, flag and error
 * code, the counter state machine, load/put and hcounteren, against the
 * fake OpenSBI-on-QEMU backend and fake guest RAM of fake_host.c.
 */
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

/* The invariants of vpmu_types.h hold after every call (vpmu_check) */
static void check(struct vpmu *x)
{
	const char *why = vpmu_check(x);

	if (why)
		fail_msg("vpmu_check: %s", why);
}

static struct sbi_ret call(unsigned long fid, unsigned long a0, unsigned long a1, unsigned long a2,
			   unsigned long a3, unsigned long a4)
{
	unsigned long args[6] = {a0, a1, a2, a3, a4, 0};
	struct sbi_ret r = vpmu_sbi_call(v, fid, args);

	check(v);
	return r;
}

/* The lifecycle calls the tests make, each followed by the same check */
#define CHECKED(fn)                                                                                \
	static void checked_##fn(struct vpmu *x)                                                   \
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

static void *ram(uint64_t gpa)
{
	return fake_ram + (gpa - FAKE_RAM_BASE);
}

static uint64_t ram64(uint64_t gpa)
{
	uint64_t x;
	memcpy(&x, ram(gpa), 8);
	return x;
}

static void set_ram64(uint64_t gpa, uint64_t x)
{
	memcpy(ram(gpa), &x, 8);
}

static int setup(void **state)
{
	(void)state;
	fake_reset();
	vpmu_global_init();
	vpmu_vcpu_init(v);
	vpmu_vcpu_load(v);
	fake.n_config = fake.n_start = fake.n_stop = 0;
	return 0;
}

/* After a test changed the fake host: boot the vPMU on it again, v loaded */
static void reboot_host(void)
{
	vpmu_global_init();
	vpmu_vcpu_init(v);
	vpmu_vcpu_load(v);
}

/* Configure + start; returns the counter */
static unsigned long cfg_start(unsigned long base, unsigned long mask, unsigned long ev,
			       uint64_t ival)
{
	struct sbi_ret r = CFG(base, mask, 0, ev, 0);

	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(START(r.value, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, ival).error,
			 SBI_SUCCESS);
	return r.value;
}

/* ------------------------------------------------------------- helpers */

/* lowest_bit (de Bruijn) agrees with the compiler's count of trailing zeros */
static void test_lowest_bit(void **state)
{
	unsigned long x = 0x9e3779b97f4a7c15UL;

	(void)state;
	for (unsigned int k = 0; k < 64; k++) {
		assert_int_equal(lowest_bit(1UL << k), k);
		assert_int_equal(lowest_bit(~0UL << k), k);
	}
	for (unsigned int n = 0; n < 100000; n++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		assert_int_equal(lowest_bit(x), (unsigned int)__builtin_ctzl(x));
	}
}

/* ------------------------------------------------------ layout and info */

static void test_layout_probe(void **state)
{
	(void)state;
	assert_true(vpmu_available());
	assert_int_equal(vpmu_num_hw(), NHW);
	assert_int_equal(vpmu_num_total(), NTOT);
	assert_int_equal(vpmu_hw_valid_mask(), HWMASK);
	assert_true(vpmu_prog_counts(0)); /* QEMU 10: the first cycles counter of a hart counts */
	assert_true(vpmu_prog_counts(1));
}

static void test_layout_prog_cycles_probe(void **state)
{
	(void)state;
	fake_reset();
	fake.prog_cycles_count = false;
	vpmu_global_init();
	assert_false(vpmu_prog_counts(0));
}

static void test_no_host_pmu(void **state)
{
	(void)state;
	fake_reset();
	fake.available = 0;
	vpmu_global_init();
	vpmu_vcpu_init(v);
	assert_false(vpmu_available());
	assert_false(vpmu_available());
	assert_int_equal(NUM().error, SBI_ERR_NOT_SUPPORTED);
}

static void test_num_counters(void **state)
{
	struct sbi_ret r = NUM();

	(void)state;
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(r.value, NTOT);
	assert_true(r.value < 64);
}

static void test_get_info_hw(void **state)
{
	struct sbi_ret r;
	unsigned long i;

	(void)state;
	r = INFO(0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(SBI_PMU_CTR_INFO_CSR(r.value), 0xc00);
	assert_int_equal(SBI_PMU_CTR_INFO_WIDTH(r.value), 63);
	assert_int_equal(r.value >> 63, 0);
	r = INFO(2);
	assert_int_equal(SBI_PMU_CTR_INFO_CSR(r.value), 0xc02);
	for (i = 3; i < NHW; i++) {
		r = INFO(i);
		assert_int_equal(r.error, SBI_SUCCESS);
		assert_int_equal(SBI_PMU_CTR_INFO_CSR(r.value), 0xc00 + i);
	}
}

static void test_get_info_time_invalid(void **state)
{
	(void)state;
	assert_int_equal(INFO(1).error, SBI_ERR_INVALID_PARAM);
}

static void test_get_info_fw(void **state)
{
	unsigned long i;

	(void)state;
	for (i = FW0; i < NTOT; i++) {
		struct sbi_ret r = INFO(i);

		assert_int_equal(r.error, SBI_SUCCESS);
		assert_true(r.value & SBI_PMU_CTR_INFO_FW);
		assert_int_equal(SBI_PMU_CTR_INFO_CSR(r.value), 0);
		assert_int_equal(SBI_PMU_CTR_INFO_WIDTH(r.value), 63);
	}
}

static void test_get_info_out_of_range(void **state)
{
	(void)state;
	assert_int_equal(INFO(NTOT).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(INFO(63).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(INFO(~0UL).error, SBI_ERR_INVALID_PARAM);
}

static void test_get_info_true_width(void **state)
{
	(void)state;
	fake_reset();
	fake.prog_width = 48;
	vpmu_global_init();
	assert_int_equal(SBI_PMU_CTR_INFO_WIDTH(INFO(3).value), 47);
	assert_int_equal(SBI_PMU_CTR_INFO_WIDTH(INFO(0).value), 63);
	/* no programmable counter is 64 bits wide: none is biased (QEMU quirk 5) */
	assert_int_equal(fake.wide, 0);
}

/* Programmable counters 64 bits wide are the ones kept in the upper half */
static void test_wide_counters_told(void **state)
{
	(void)state;
	fake_reset();
	vpmu_global_init();
	assert_int_equal(fake.wide, HWMASK & ~7U);
}

static void test_layout_holes(void **state)
{
	(void)state;
	fake_reset();
	fake.hw_mask = 0x5 | (1U << 4) | (1U << 6); /* 0, 2, 4, 6 */
	fake.num_hw = 7;
	reboot_host();
	assert_int_equal(NUM().value, 7 + 22);
	assert_int_equal(INFO(3).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(INFO(5).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(INFO(4).error, SBI_SUCCESS);
	assert_true(INFO(7).value & SBI_PMU_CTR_INFO_FW);
	/* a hole in the set is an invalid counter */
	assert_int_equal(CFG(3, 1, 0, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(4, 1, 0, EV_INSTR, 0).value, 4);
}

/* --------------------------------------------------------- config_matching */

static void test_cfg_reserved_flags(void **state)
{
	(void)state;
	assert_int_equal(CFG(0, ALLMASK, 1UL << 8, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(0, ALLMASK, 1UL << 63, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(fake.n_config, 0);
}

static void test_cfg_invalid_sets(void **state)
{
	(void)state;
	assert_int_equal(CFG(0, 0, 0, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(NTOT, 1, 0, EV_FW(5), 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(NTOT - 1, 3, 0, EV_FW(5), 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(~0UL, 1, 0, EV_FW(5), 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(2, 1UL << 63, 0, EV_FW(5), 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(1, 1, 0, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM);    /* time */
	assert_int_equal(CFG(0, ~0UL, 0, EV_INSTR, 0).error, SBI_ERR_INVALID_PARAM); /* has 1 */
}

static void test_cfg_event_0x1234_not_supported(void **state)
{
	(void)state;
	/* OpenSBI says INVALID_PARAM here; the spec says NOT_SUPPORTED */
	assert_int_equal(CFG(0, ALLMASK, 0, 0x1234, 0).error, SBI_ERR_NOT_SUPPORTED);
}

static void test_cfg_unsupported_events(void **state)
{
	static const struct {
		unsigned long ev;
		uint64_t data;
	} bad[] = {
		{0x0, 0},			 /* NO_EVENT */
		{0xb, 0},			 /* general code 11 */
		{EV_INSTR, 1},			 /* reserved event_data */
		{0x10000 | (7 << 3), 0},	 /* cache id 7 */
		{0x10000 | (3 << 1), 0},	 /* cache op 3 */
		{0x10000, 5},			 /* cache, reserved data */
		{EV_RAW | 1, FAKE_RAW_OK},	 /* raw with code */
		{EV_RAW, 1ULL << 48},		 /* raw: beyond 48 bits */
		{EV_RAW2, 1ULL << 58},		 /* raw v2: beyond 58 bits */
		{EV_RAW, 0x777},		 /* raw the host does not know */
		{0x40000, 0},			 /* type 4 */
		{EV_FW(22), 0},			 /* reserved fw */
		{EV_FW(256), 0},		 /* implementation fw */
		{EV_FW(SBI_PMU_FW_PLATFORM), 7}, /* platform fw */
		{EV_FW(5), 1},			 /* fw reserved data */
		{0x100002, 0},			 /* beyond 20 bits */
		{EV_DTLB_RD | 0x300000, 0},
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(CFG(0, ALLMASK, 0, bad[i].ev, bad[i].data).error,
				 SBI_ERR_NOT_SUPPORTED);
}

/*
 * Cycles go to a programmable counter first (it has an overflow interrupt:
 * cycles can be sampled), like OpenSBI natively. A second cycles counter
 * would read 0 there on QEMU (one counter per event per hart): it gets
 * counter 0 instead, which counts as well.
 */
static void test_cfg_cycles_programmable_first(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = CFG(0, ALLMASK, 0, EV_CYCLES, 0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(r.value, 3);
	assert_int_equal(fake.c[3].event_idx, EV_CYCLES);
	assert_false(fake.c[3].running);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_CYCLES, 0).value, 0);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_CYCLES, 0).value, 4);
	assert_int_equal(START(0, 0x19, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0).error, SBI_SUCCESS);
	fake_advance(100);
	assert_int_equal(vpmu_ctr_value(v, 3), 100);
	assert_int_equal(vpmu_ctr_value(v, 0), 100);
	assert_int_equal(vpmu_ctr_value(v, 4), 0); /* as natively on QEMU */
}

/* A host whose programmable counters do not count cycles: counter 0 only */
static void test_cfg_cycles_fixed_only(void **state)
{
	(void)state;
	fake_reset();
	fake.prog_cycles_count = false;
	reboot_host();
	assert_int_equal(CFG(0, ALLMASK, SBI_PMU_CFG_FLAG_AUTO_START, EV_CYCLES, 0).value, 0);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_CYCLES, 0).error, SBI_ERR_NOT_SUPPORTED);
}

/* A host that maps cycles to counter 0 only refuses it elsewhere, also with SKIP_MATCH */
static void test_cfg_cycles_programmable_refused(void **state)
{
	(void)state;
	fake_reset();
	fake.cycles_map = 0;
	reboot_host();
	assert_int_equal(CFG(0, HWMASK & ~1UL, 0, EV_CYCLES, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(5, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_CYCLES, 0).error,
			 SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_CYCLES, 0).value, 0);
}

/* instret: programmable first; a second one on counter 2, which counts on QEMU */
static void test_cfg_instret_prefers_programmable(void **state)
{
	(void)state;
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 2);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 4);
}

/* Where every event counts on as many counters as asked, fixed counters stay last */
static void test_cfg_instret_shared_host(void **state)
{
	(void)state;
	fake_reset();
	fake.event_exclusive = false;
	reboot_host();
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 4);
}

static void test_cfg_instret_fixed(void **state)
{
	(void)state;
	assert_int_equal(CFG(2, 1, 0, EV_INSTR, 0).value, 2);
	assert_int_equal(fake.c[2].event_idx, EV_INSTR);
}

static void test_cfg_no_other_event_on_fixed(void **state)
{
	(void)state;
	assert_int_equal(CFG(0, 5, 0, EV_DTLB_RD, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(2, 1, 0, EV_CYCLES, 0).error, SBI_ERR_NOT_SUPPORTED);
}

static void test_cfg_hw_events_mirror_host(void **state)
{
	(void)state;
	assert_int_equal(CFG(0, ALLMASK, 0, EV_DTLB_RD, 0).value, 3);
	assert_int_equal(CFG(0, ALLMASK, 0, 0x1001b, 0).value, 4);
	assert_int_equal(CFG(0, ALLMASK, 0, 0x10021, 0).value, 5);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW, FAKE_RAW_OK).value, 6);
	assert_int_equal(fake.c[6].event_data, FAKE_RAW_OK);
	/* raw v2: all 56 data bits reach the host untouched; bits 56.. are reserved */
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW2, 1UL << 56).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW2, FAKE_RAW2_OK).value, 7);
	assert_int_equal(fake.c[7].event_data, FAKE_RAW2_OK);
	assert_int_equal(fake.c[7].event_idx, EV_RAW2);
	/* cache events the host does not count */
	assert_int_equal(CFG(0, ALLMASK, 0, 0x10000, 0).error, SBI_ERR_NOT_SUPPORTED);
}

static void test_cfg_filter_translation(void **state)
{
	(void)state;
	assert_int_equal(CFG(3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(fake.c[3].flags, BASE_INH);
	assert_int_equal(CFG(4, 1, SBI_PMU_CFG_FLAG_SET_SINH, EV_INSTR, 0).value, 4);
	assert_int_equal(fake.c[4].flags, BASE_INH | SBI_PMU_CFG_FLAG_SET_VSINH);
	assert_int_equal(CFG(5, 1, SBI_PMU_CFG_FLAG_SET_UINH, EV_INSTR, 0).value, 5);
	assert_int_equal(fake.c[5].flags, BASE_INH | SBI_PMU_CFG_FLAG_SET_VUINH);
	assert_int_equal(
		CFG(0, 1, SBI_PMU_CFG_FLAG_SET_SINH | SBI_PMU_CFG_FLAG_SET_UINH, EV_CYCLES, 0)
			.value,
		0);
	assert_int_equal(fake.c[0].flags,
			 BASE_INH | SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_VUINH);
}

static void test_cfg_guest_vsinh_vuinh_minh_ignored(void **state)
{
	(void)state;
	assert_int_equal(CFG(3, 1,
			     SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_VUINH |
				     SBI_PMU_CFG_FLAG_SET_MINH,
			     EV_INSTR, 0)
				 .error,
			 SBI_SUCCESS);
	assert_int_equal(fake.c[3].flags, BASE_INH);
}

static void test_cfg_skip_match(void **state)
{
	(void)state;
	/* Linux legacy mode: instructions on counter 2, cycles on 0 */
	assert_int_equal(CFG(2, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).value, 2);
	assert_int_equal(CFG(0, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_CYCLES, 0).value, 0);
	/* the first counter of the set, whatever follows */
	assert_int_equal(CFG(8, 0xf0, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).value, 12);
	/* SKIP_MATCH reconfigures a stopped counter */
	assert_int_equal(CFG(12, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_DTLB_RD, 0).value, 12);
	assert_int_equal(fake.c[12].event_idx, EV_DTLB_RD);
	/* but not a started one */
	assert_int_equal(START(12, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(CFG(12, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).error,
			 SBI_ERR_NOT_SUPPORTED);
	assert_true(fake.c[12].running);
	/* wrong kind of counter */
	assert_int_equal(CFG(3, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_FW(5), 0).error,
			 SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(FW0, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).error,
			 SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(FW0, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_FW(5), 0).value, FW0);
}

static void test_cfg_skip_match_refused_keeps_old(void **state)
{
	(void)state;
	assert_int_equal(CFG(3, 1, 0, EV_DTLB_RD, 0).value, 3);
	assert_int_equal(CFG(3, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_RAW, 0x999).error,
			 SBI_ERR_NOT_SUPPORTED);
	assert_true(fake.c[3].configured);
	assert_int_equal(fake.c[3].event_idx, EV_DTLB_RD);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_SUCCESS);
}

static void test_cfg_busy_counters_skipped(void **state)
{
	unsigned int i;

	(void)state;
	/* started counters are busy; configured but stopped ones would be reused */
	assert_int_equal(CFG(0, ALLMASK, AUTO, EV_INSTR, 0).value, 3);
	assert_int_equal(CFG(0, ALLMASK, AUTO, EV_INSTR, 0).value, 2);
	for (i = 4; i < NHW; i++)
		assert_int_equal(CFG(0, ALLMASK, AUTO, EV_INSTR, 0).value, i);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_DTLB_RD, 0).error, SBI_ERR_NOT_SUPPORTED);
	/* a stopped one is taken again, reconfigured */
	assert_int_equal(STOP(7, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_DTLB_RD, 0).value, 7);
	assert_int_equal(fake.c[7].event_idx, EV_DTLB_RD);
}

static void test_cfg_clear_value(void **state)
{
	unsigned long i;

	(void)state;
	i = cfg_start(0, ALLMASK, EV_INSTR, 100);
	fake_advance(50);
	assert_int_equal(STOP(i, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(vpmu_ctr_value(v, i), 150);
	/* reconfigure without CLEAR_VALUE keeps the value, with it zeroes */
	assert_int_equal(CFG(i, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).value, i);
	assert_int_equal(vpmu_ctr_value(v, i), 150);
	assert_int_equal(
		CFG(i, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH | SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTR, 0)
			.value,
		i);
	assert_int_equal(vpmu_ctr_value(v, i), 0);
}

/*
 * CLEAR_VALUE on a firmware counter at index 32 or more (35 here: FW0 +
 * 16) touches that counter alone: it once cleared the synced bit of
 * hardware counter idx - 32, so counter 3's stop skipped its physical stop
 * and lost the counts since its start.
 */
static void test_cfg_clear_value_fw_above_31(void **state)
{
	const unsigned long fw = 35;

	(void)state;
	assert_int_equal(CFG(3, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).value, 3);
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 100).error, SBI_SUCCESS);
	assert_int_equal(
		CFG(fw, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH | SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_FW(5), 0)
			.value,
		fw);
	assert_int_equal(vpmu_hcounteren(v) & (1UL << 3), 1UL << 3); /* still read directly */
	fake_advance(50);
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(vpmu_ctr_value(v, 3), 150);
	assert_false(fake.c[3].running);
}

static void test_cfg_auto_start(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = CFG(0, ALLMASK, SBI_PMU_CFG_FLAG_AUTO_START | SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTR,
		0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_true(fake.c[r.value].running);
	fake_advance(7);
	assert_int_equal(vpmu_ctr_value(v, r.value), 7);
	assert_int_equal(START(r.value, 1, 0, 0).error, SBI_ERR_ALREADY_STARTED);
	/* fw counter auto start */
	r = CFG(0, ALLMASK, SBI_PMU_CFG_FLAG_AUTO_START, EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	assert_int_equal(r.value, FW0);
	vpmu_fw_event(v, SBI_PMU_FW_SET_TIMER);
	assert_int_equal(FWREAD(FW0).value, 1);
}

static void test_cfg_host_fallback_undone(void **state)
{
	unsigned long i;

	(void)state;
	/* cycles counting on programmable 3..10 only; the host falls back to 0 elsewhere */
	fake_reset();
	fake.prog_cycles_count = true;
	fake.cycles_map = 0x7f8;
	reboot_host();
	i = CFG(0, 1, SBI_PMU_CFG_FLAG_SET_SINH, EV_CYCLES, 0).value;
	assert_int_equal(i, 0);
	assert_int_equal(START(0, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 1000).error, SBI_SUCCESS);
	fake_advance(10);
	assert_int_equal(CFG(11, 1, 0, EV_CYCLES, 0).error, SBI_ERR_NOT_SUPPORTED);
	/* counter 0 kept its filters, value and run state */
	assert_int_equal(fake.c[0].flags, BASE_INH | SBI_PMU_CFG_FLAG_SET_VSINH);
	assert_true(fake.c[0].running);
	fake_advance(5);
	assert_int_equal(vpmu_ctr_value(v, 0), 1015);
	assert_int_equal(vpmu_hcounteren(v) & 1, 1);
}

/* What the host can count where is known from the boot probe: no host call for a refusal */
static void test_cfg_capabilities_from_boot(void **state)
{
	unsigned int n = fake.n_config;

	(void)state;
	assert_int_equal(CFG(0, ALLMASK, 0, 0x10000, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, 0x10000, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, 0x5, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(fake.n_config, n);
	/* the probe released every programmable counter */
	for (unsigned int p = 3; p < NHW; p++)
		assert_false(fake_busy(p));
}

/* ----------------------------------------------------------- start / stop */

static void test_start_stop_counts(void **state)
{
	unsigned long i;
	unsigned long val;

	(void)state;
	i = cfg_start(0, ALLMASK, EV_INSTR, 1000);
	fake_advance(234);
	assert_int_equal(vpmu_csr_read(v, 0xc00 + i, &val), 0);
	assert_int_equal(val, 1234);
	assert_int_equal(STOP(i, 1, 0).error, SBI_SUCCESS);
	fake_advance(1000);
	assert_int_equal(vpmu_csr_read(v, 0xc00 + i, &val), 0);
	assert_int_equal(val, 1234);
	/* restart without SET_INIT_VALUE continues from the current value */
	assert_int_equal(START(i, 1, 0, 5).error, SBI_SUCCESS);
	fake_advance(6);
	assert_int_equal(vpmu_ctr_value(v, i), 1240);
}

static void test_start_already_started(void **state)
{
	unsigned long a, b;

	(void)state;
	a = cfg_start(0, ALLMASK, EV_INSTR, 0);
	b = CFG(0, ALLMASK, 0, EV_DTLB_RD, 0).value;
	/* both in the set: b starts, the error still says ALREADY_STARTED */
	assert_int_equal(START(a, (1UL << (b - a)) | 1, 0, 0).error, SBI_ERR_ALREADY_STARTED);
	assert_true(fake.c[b].running);
}

static void test_start_unconfigured_invalid(void **state)
{
	unsigned long a;

	(void)state;
	assert_int_equal(START(5, 1, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(FW0, 1, 0, 0).error, SBI_ERR_INVALID_PARAM);
	a = CFG(3, 1, 0, EV_INSTR, 0).value;
	/* atomic: nothing starts when one counter of the set is unconfigured */
	assert_int_equal(START(a, 3, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_false(fake.c[a].running);
}

static void test_start_flags(void **state)
{
	(void)state;
	CFG(3, 1, 0, EV_INSTR, 0);
	assert_int_equal(START(3, 1, 1UL << 2, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(
		START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE | SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0)
			.error,
		SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0).error, SBI_ERR_NO_SHMEM);
	assert_false(fake.c[3].running);
}

static void test_start_invalid_sets(void **state)
{
	(void)state;
	assert_int_equal(START(0, 0, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(NTOT, 1, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(~0UL, 2, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(0, 2, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(START(1UL << 63, 1UL << 63, 0, 0).error, SBI_ERR_INVALID_PARAM);
}

static void test_start_init_value_width(void **state)
{
	(void)state;
	fake_reset();
	fake.prog_width = 48;
	reboot_host();
	cfg_start(3, 1, EV_INSTR, (1ULL << 48) + 5);
	assert_int_equal(vpmu_ctr_value(v, 3), 5);
	assert_int_equal(fake.c[3].value, 5);
}

static void test_stop_already_stopped(void **state)
{
	unsigned long i;

	(void)state;
	i = cfg_start(0, ALLMASK, EV_INSTR, 0);
	assert_int_equal(STOP(i, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(STOP(i, 1, 0).error, SBI_ERR_ALREADY_STOPPED);
	/* configured, never started */
	assert_int_equal(STOP(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 1, 0).error,
			 SBI_ERR_ALREADY_STOPPED);
	/* unconfigured counters are not running either */
	assert_int_equal(STOP(10, 1, 0).error, SBI_ERR_ALREADY_STOPPED);
}

static void test_stop_fw_already_stopped(void **state)
{
	struct sbi_ret r;

	(void)state;
	/* OpenSBI returns success here; the spec says ALREADY_STOPPED */
	r = CFG(0, ALLMASK, 0, EV_FW(SBI_PMU_FW_IPI_SENT), 0);
	assert_int_equal(START(r.value, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(STOP(r.value, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(STOP(r.value, 1, 0).error, SBI_ERR_ALREADY_STOPPED);
}

static void test_stop_flags_and_sets(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	assert_int_equal(STOP(3, 1, 1UL << 2).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_ERR_NO_SHMEM);
	assert_int_equal(STOP(3, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(STOP(NTOT, 1, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(STOP(0, 2, 0).error, SBI_ERR_INVALID_PARAM);
	assert_true(fake.c[3].running);
}

/*
 * RESET: the counter leaves the guest, and its physical counter stops with
 * its configuration kept (as a put leaves it): the same event configured
 * there again is taken over without the host, another evicts it.
 */
static void test_stop_reset_keeps_config_stopped(void **state)
{
	unsigned long i, val;
	unsigned int n;

	(void)state;
	i = cfg_start(0, ALLMASK, EV_INSTR, 0);
	fake_advance(7);
	assert_int_equal(STOP(i, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_false(fake.c[i].running);
	assert_true(fake_busy(i));
	assert_int_equal(fake.c[i].event_idx, EV_INSTR);
	assert_int_equal(v->ctr[i].state, VPMU_CTR_UNCONFIGURED);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(vpmu_csr_read(v, 0xc00 + i, &val), -1);
	assert_int_equal(START(i, 1, 0, 0).error, SBI_ERR_INVALID_PARAM);
	fake_advance(5); /* stopped: counts nothing */
	assert_int_equal(fake.c[i].value, 7);
	/* the same event again: taken over, no host configuration */
	n = fake.n_config;
	assert_int_equal(CFG(0, ALLMASK, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTR, 0).value, i);
	assert_int_equal(fake.n_config, n);
	assert_int_equal(START(i, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(fake.c[i].value, 0);
	fake_advance(3);
	assert_int_equal(vpmu_ctr_value(v, i), 3);
	assert_int_equal(STOP(i, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	/* another event: the host configures the counter anew */
	assert_int_equal(CFG(0, ALLMASK, 0, EV_DTLB_RD, 0).value, i);
	assert_int_equal(fake.n_config, n + 1);
	assert_int_equal(fake.c[i].event_idx, EV_DTLB_RD);
	/* RESET of a stopped counter reports ALREADY_STOPPED; it stays stopped */
	assert_int_equal(STOP(i, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_ERR_ALREADY_STOPPED);
	assert_false(fake.c[i].running);
	assert_int_equal(v->ctr[i].state, VPMU_CTR_UNCONFIGURED);
}

/* A RESET counter whose OF bit is set is released: no stale flag in scountovf */
static void test_stop_reset_releases_overflowed(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, -2UL);
	fake_advance(5);
	assert_true(fake.c[3].of);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_false(fake_busy(3));
	assert_false(fake.c[3].of);
}

/* ------------------------------------------------------- firmware counters */

static void test_fw_counts_only_started(void **state)
{
	unsigned long i;

	(void)state;
	i = CFG(0, ALLMASK, 0, EV_FW(SBI_PMU_FW_SET_TIMER), 0).value;
	assert_int_equal(i, FW0);
	vpmu_fw_event(v, SBI_PMU_FW_SET_TIMER);
	assert_int_equal(FWREAD(i).value, 0);
	assert_int_equal(START(i, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 10).error, SBI_SUCCESS);
	vpmu_fw_event(v, SBI_PMU_FW_SET_TIMER);
	vpmu_fw_event(v, SBI_PMU_FW_SET_TIMER);
	vpmu_fw_event(v, SBI_PMU_FW_IPI_SENT);
	vpmu_fw_event(v, 99);
	assert_int_equal(FWREAD(i).error, SBI_SUCCESS);
	assert_int_equal(FWREAD(i).value, 12);
	assert_int_equal(STOP(i, 1, 0).error, SBI_SUCCESS);
	vpmu_fw_event(v, SBI_PMU_FW_SET_TIMER);
	assert_int_equal(FWREAD(i).value, 12);
}

/*
 * The firmware events pmuvisor counts (illegal instructions it injects,
 * SET_TIMER, IPIs, remote fences: events 4..13) can all be counted at once;
 * the others (misaligned and access faults go to the guest directly, a
 * guest has no HFENCE) are NOT_SUPPORTED, in config and EVENT_GET_INFO alike.
 */
static void test_fw_counted_events(void **state)
{
	unsigned int e, n = 0;

	(void)state;
	for (e = 0; e < SBI_PMU_FW_MAX; e++) {
		struct sbi_ret r = CFG(0, ALLMASK, SBI_PMU_CFG_FLAG_AUTO_START, EV_FW(e), 0);

		if (e < 4 || e > 13) {
			assert_int_equal(r.error, SBI_ERR_NOT_SUPPORTED);
			continue;
		}
		assert_int_equal(r.error, SBI_SUCCESS);
		assert_int_equal(r.value, FW0 + n++);
	}
	for (e = 0; e < SBI_PMU_FW_MAX; e++) {
		unsigned int k;

		for (k = 0; k <= e; k++)
			vpmu_fw_event(v, e);
	}
	for (e = 4, n = 0; e <= 13; e++, n++)
		assert_int_equal(FWREAD(FW0 + n).value, e + 1);
}

static void test_fw_two_counters_same_event(void **state)
{
	(void)state;
	cfg_start(0, ALLMASK, EV_FW(SBI_PMU_FW_ILLEGAL_INSN), 0);
	cfg_start(0, ALLMASK, EV_FW(SBI_PMU_FW_ILLEGAL_INSN), 100);
	vpmu_fw_event(v, SBI_PMU_FW_ILLEGAL_INSN);
	assert_int_equal(FWREAD(FW0).value, 1);
	assert_int_equal(FWREAD(FW0 + 1).value, 101);
}

static void test_fw_read_errors(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	assert_int_equal(FWREAD(3).error, SBI_ERR_INVALID_PARAM);   /* hardware */
	assert_int_equal(FWREAD(FW0).error, SBI_ERR_INVALID_PARAM); /* unconfigured */
	assert_int_equal(FWREAD(NTOT).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(FWREAD(1).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(FWREAD(~0UL).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(FWREADHI(3).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(FWREADHI(FW0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(FWREADHI(NTOT).error, SBI_ERR_INVALID_PARAM);
}

static void test_fw_read_hi_zero(void **state)
{
	(void)state;
	cfg_start(0, ALLMASK, EV_FW(8), 0xffffffffffULL);
	assert_int_equal(FWREAD(FW0).value, 0xffffffffffULL);
	assert_int_equal(FWREADHI(FW0).error, SBI_SUCCESS);
	assert_int_equal(FWREADHI(FW0).value, 0);
}

static void test_fw_reset_releases(void **state)
{
	(void)state;
	cfg_start(0, ALLMASK, EV_FW(8), 0);
	assert_int_equal(STOP(FW0, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_int_equal(FWREAD(FW0).error, SBI_ERR_INVALID_PARAM);
	vpmu_fw_event(v, 8);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_FW(9), 0).value, FW0);
}

/* ------------------------------------------------ CSR reads and hcounteren */

static void test_csr_read_rules(void **state)
{
	unsigned long val = 0;

	(void)state;
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), -1); /* unconfigured */
	assert_int_equal(vpmu_csr_read(v, 0xc00, &val), -1);
	assert_int_equal(vpmu_csr_read(v, 0xc01, &val), -1);	   /* time: the core's */
	assert_int_equal(vpmu_csr_read(v, 0xc00 + NHW, &val), -1); /* no such counter */
	assert_int_equal(vpmu_csr_read(v, 0xc1f, &val), -1);
	assert_int_equal(vpmu_csr_read(v, 0xc20, &val), -1);
	assert_int_equal(vpmu_csr_read(v, 0xb03, &val), -1);
	CFG(3, 1, 0, EV_INSTR, 0);
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), 0); /* configured, stopped: value */
	assert_int_equal(val, 0);
	cfg_start(0, 1, EV_CYCLES, 77);
	fake_advance(3);
	assert_int_equal(vpmu_csr_read(v, 0xc00, &val), 0);
	assert_int_equal(val, 80);
}

static void test_hcounteren_rules(void **state)
{
	(void)state;
	assert_int_equal(vpmu_hcounteren(v), 0);
	CFG(3, 1, 0, EV_INSTR, 0);
	/* configured only: the physical value is stale, reads must trap */
	assert_int_equal(vpmu_hcounteren(v), 0);
	START(3, 1, 0, 0);
	assert_int_equal(vpmu_hcounteren(v), 1UL << 3);
	assert_int_equal(fake.counteren, 1UL << 3);
	fake_advance(10);
	STOP(3, 1, 0);
	/* stopped after counting: the physical counter holds the value */
	assert_int_equal(vpmu_hcounteren(v), 1UL << 3);
	assert_int_equal(fake.c[3].value, vpmu_ctr_value(v, 3));
	/* CLEAR_VALUE makes them differ again */
	CFG(3, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH | SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTR, 0);
	assert_int_equal(vpmu_hcounteren(v), 0);
	START(3, 1, 0, 0);
	cfg_start(0, ALLMASK, EV_FW(10), 0);
	assert_int_equal(vpmu_hcounteren(v), 1UL << 3); /* fw counters: no bits */
	STOP(3, 1, SBI_PMU_STOP_FLAG_RESET);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(fake.counteren, 0);
}

static void test_hcounteren_keeps_tm(void **state)
{
	(void)state;
	fake.counteren = 2;
	cfg_start(3, 1, EV_INSTR, 0);
	assert_int_equal(fake.counteren, 2 | (1UL << 3));
	vpmu_vcpu_put(v);
	assert_int_equal(fake.counteren, 2);
	assert_int_equal(vpmu_hcounteren(v) & 2, 0);
}

static void test_hcounteren_start_failure(void **state)
{
	(void)state;
	CFG(3, 1, 0, EV_INSTR, 0);
	fake.fail_start = 1;
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 9).error, SBI_SUCCESS);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(vpmu_ctr_value(v, 3), 9);
}

/* ---------------------------------------------------------- load / put */

static void test_put_stops_keeps_resident(void **state)
{
	unsigned long val;

	(void)state;
	cfg_start(3, 1, EV_INSTR, 100);
	cfg_start(0, 1, EV_CYCLES, 5);
	CFG(4, 1, 0, EV_DTLB_RD, 0);
	fake_advance(20);
	vpmu_vcpu_put(v);
	assert_false(v->loaded);
	/* lazy: stopped in one call, still configured on this hart */
	assert_true(fake_busy(3));
	assert_true(fake_busy(4));
	assert_false(fake.c[3].running);
	assert_false(fake.c[0].running);
	assert_int_equal(vpmu_hcounteren(v), 0);
	fake_advance(1000); /* someone else runs */
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), 0);
	assert_int_equal(val, 120);
	assert_int_equal(vpmu_ctr_value(v, 0), 25);
	fake.n_config = fake.n_start = 0;
	vpmu_vcpu_load(v);
	/* nobody used the hart's counters: one start, no configuration */
	assert_int_equal(fake.n_config, 0);
	assert_int_equal(fake.n_start, 1);
	assert_true(fake.c[3].running);
	assert_int_equal(fake.c[3].value, 120);
	assert_true(fake_busy(4));
	assert_false(fake.c[4].running);
	assert_int_equal(vpmu_hcounteren(v), (1UL << 3) | 1);
	fake_advance(1);
	assert_int_equal(vpmu_ctr_value(v, 3), 121);
	assert_int_equal(vpmu_ctr_value(v, 0), 26);
}

static struct vcpu other_vc;

/* v is put and a second vCPU on its hart loaded: returns its vPMU, freshly initialised */
static struct vpmu *switch_to_other(void)
{
	struct vpmu *w = &other_vc.vpmu;

	vpmu_vcpu_put(v);
	vpmu_vcpu_init(w);
	vpmu_vcpu_load(w);
	return w;
}

/* v counts instret on 3 from ival for ticks, then the other vCPU configures DTLB reads there */
static struct vpmu *other_takes_counter_3(uint64_t ival, unsigned long ticks)
{
	struct vpmu *w;

	cfg_start(3, 1, EV_INSTR, ival);
	fake_advance(ticks);
	w = switch_to_other();
	assert_int_equal(vpmu_counter_config_matching(w, 3, 1, 0, EV_DTLB_RD, 0).value, 3);
	return w;
}

/* Counter 3 counted instructions from 100 to 105 and stopped, in place */
static void counted_105_stopped(void)
{
	cfg_start(3, 1, EV_INSTR, 100);
	fake_advance(5);
	STOP(3, 1, 0);
}

/*
 * A stop leaves a counter whose physical value is not its own unsynced:
 * direct reads would see that value. Two ways to get one: a start the host
 * refused, and a start with a new value while the vCPU was put.
 */
static void test_stop_keeps_counter_unsynced(void **state)
{
	unsigned long val;

	(void)state;
	counted_105_stopped();
	assert_int_equal(fake.counteren, 1UL << 3); /* stopped in place: 105 */
	fake.fail_start = 1;
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 500).error, SBI_SUCCESS);
	fake.fail_start = 0;
	assert_int_equal(fake.counteren, 0);
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(fake.c[3].value, 105);
	assert_int_equal(fake.counteren, 0);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), 0);
	assert_int_equal(val, 500);

	vpmu_vcpu_put(v);
	START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 1000);
	STOP(3, 1, 0);
	vpmu_vcpu_load(v);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(fake.counteren, 0);
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), 0);
	assert_int_equal(val, 1000);
	START(3, 1, 0, 0); /* from its value: in place again */
	assert_int_equal(fake.c[3].value, 1000);
	assert_int_equal(fake.counteren, 1UL << 3);
}

static void test_put_load_stopped_counter(void **state)
{
	unsigned long val;

	(void)state;
	counted_105_stopped();
	vpmu_vcpu_put(v);
	/* another vCPU configures the same physical counter: v's is evicted */
	vpmu_vcpu_init(&other_vc.vpmu);
	vpmu_vcpu_load(&other_vc.vpmu);
	assert_int_equal(vpmu_counter_config_matching(&other_vc.vpmu, 3, 1, 0, EV_INSTR, 0).value,
			 3);
	assert_int_equal(
		vpmu_counter_start(&other_vc.vpmu, 3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 999),
		SBI_SUCCESS);
	vpmu_vcpu_put(&other_vc.vpmu);
	vpmu_vcpu_load(v);
	/* stopped, and the physical value is not ours: reads trap and emulate */
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(vpmu_csr_read(v, 0xc03, &val), 0);
	assert_int_equal(val, 105);
	START(3, 1, 0, 0);
	assert_int_equal(fake.c[3].value, 105);
	assert_int_equal(vpmu_hcounteren(v), 1UL << 3);
}

/* A counter v left configured at RESET never counts for another vCPU's event */
static void test_stop_reset_config_evicted(void **state)
{
	struct vpmu *w = &other_vc.vpmu;

	(void)state;
	fake.event_exclusive = true;
	cfg_start(5, 1, EV_INSTR, 0);
	assert_int_equal(STOP(5, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_true(fake_busy(5));
	vpmu_vcpu_put(v);
	vpmu_vcpu_init(w);
	vpmu_vcpu_load(w);
	/* the same event on another counter: QEMU would count it on one only */
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_INSTR, 0).value, 4);
	assert_false(fake_busy(5));
	assert_int_equal(vpmu_counter_start(w, 4, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 10),
			 SBI_SUCCESS);
	fake_advance(6);
	assert_int_equal(vpmu_ctr_value(w, 4), 16);
}

static void test_stop_all_linux_style(void **state)
{
	unsigned int i;

	(void)state;
	cfg_start(0, 1, EV_CYCLES, 0);
	cfg_start(0, ALLMASK, EV_INSTR, 0);
	CFG(0, ALLMASK, 0, EV_DTLB_RD, 0);
	cfg_start(0, ALLMASK, EV_FW(11), 0);
	/* pmu_sbi_stop_all: every counter, RESET, errors ignored */
	STOP(0, ALLMASK, SBI_PMU_STOP_FLAG_RESET);
	for (i = 0; i < NTOT; i++)
		assert_int_equal(v->ctr[i].state, VPMU_CTR_UNCONFIGURED);
	for (i = 0; i < NHW; i++)
		assert_false(fake.c[i].running);
	assert_int_equal(vpmu_hcounteren(v), 0);
}

static void test_two_vcpus_share_hart(void **state)
{
	struct vpmu *w;

	(void)state;
	w = other_takes_counter_3(0, 10);
	assert_int_equal(vpmu_counter_start(w, 3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 500),
			 SBI_SUCCESS);
	fake_advance(1);
	vpmu_vcpu_put(w);
	assert_int_equal(vpmu_ctr_value(w, 3), 501);
	vpmu_vcpu_load(v);
	assert_int_equal(fake.c[3].event_idx, EV_INSTR);
	fake_advance(2);
	assert_int_equal(vpmu_ctr_value(v, 3), 12);
}

/*
 * An overflow still pending in HS when the vCPU is switched out is recorded
 * for it, and does not leave the next vCPU's counter disarmed (OpenSBI only
 * clears mhpmevent.OF on start while no LCOFI is pending).
 */
static void test_pending_lcofi_across_switch(void **state)
{
	struct vpmu *w = &other_vc.vpmu;

	(void)state;
	cfg_start(3, 1, EV_INSTR, -5UL);
	fake_advance(10);
	assert_true(fake.lcofip);
	fake.nr_lcofi = 0;
	vpmu_vcpu_put(v);
	assert_int_equal(fake.nr_lcofi, 1);
	assert_int_equal(v->overflow, 1UL << 3);
	vpmu_vcpu_init(w);
	vpmu_vcpu_load(w);
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_INSTR, 0).value, 4);
	assert_int_equal(vpmu_counter_start(w, 4, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -3UL),
			 SBI_SUCCESS);
	assert_false(fake.c[4].of);
	fake_advance(5);
	assert_true(fake.c[4].of); /* it overflowed, so it will interrupt */
	vpmu_overflow_irq(w);
	assert_int_equal(fake.nr_lcofi, 2);
	assert_int_equal(w->overflow, 1UL << 4);
	assert_int_equal(v->overflow, 1UL << 3);
}

/*
 * The delegation backend's start clears OF itself (start_keeps_of false):
 * vpmu starts the counter at once and leaves a pending LCOFI to the hart,
 * and it asks the core about exclusive counting only while that is on
 */
static void test_start_direct(void **state)
{
	(void)state;
	fake.start_keeps_of = false;
	vpmu_set_exclusive(false);
	reboot_host();
	assert_int_equal(vpmu_counter_config_matching(v, 4, 1, 0, EV_INSTR, 0).value, 4);
	fake.lcofip = true; /* another counter's overflow, not taken yet */
	fake.c[4].of = true;
	fake.n_counting_starts = 0;
	assert_int_equal(vpmu_counter_start(v, 4, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 100),
			 SBI_SUCCESS);
	assert_true(fake.c[4].running);
	assert_int_equal(fake.c[4].value, 100);
	assert_false(fake.c[4].of);
	assert_true(fake.lcofip); /* the hart takes it when it next can */
	assert_int_equal(fake.n_counting_starts, 0);
	assert_int_equal(vpmu_counter_stop(v, 4, 1, 0), SBI_SUCCESS);
	vpmu_set_exclusive(true); /* the start that waits for the token: the same LCOFI rule */
	assert_int_equal(vpmu_counter_start(v, 4, 1, 0, 0), SBI_SUCCESS);
	assert_int_equal(fake.n_counting_starts, 1);
	assert_true(fake.lcofip);
	assert_int_equal(vpmu_ctr_value(v, 4), 100);
}

/* Hosts that count an event on one counter only: another vCPU's stopped copy is evicted */
static void test_exclusive_event_evicts_other(void **state)
{
	struct vpmu *w;

	(void)state;
	fake.event_exclusive = true;
	vpmu_global_init();
	cfg_start(3, 1, EV_INSTR, 0);
	w = switch_to_other();
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_INSTR, 0).value, 4);
	assert_false(fake_busy(3)); /* v's stopped instret is gone from the hart */
	vpmu_vcpu_put(w);
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 1); /* reconfigured from its saved value */
}

/*
 * A counter configured as needed is taken over only where the platform
 * counts its event: v asked for instructions twice, so the map (first come)
 * gives them to counter 5, and w's counter 3 taken over as it was would
 * stand still (the fuzz victim's instret did, 1 run in 3).
 */
static void test_takeover_needs_the_event_map(void **state)
{
	struct vpmu *w;

	(void)state;
	assert_int_equal(vpmu_counter_config_matching(v, 5, 1, 0, EV_INSTR, 0).value, 5);
	assert_int_equal(vpmu_counter_config_matching(v, 3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(fake.map[EV_INSTR], 5);
	w = switch_to_other();
	assert_int_equal(vpmu_counter_config_matching(w, 3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(vpmu_counter_start(w, 3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0),
			 SBI_SUCCESS);
	fake_advance(10);
	assert_int_equal(vpmu_ctr_value(w, 3), 10);
	assert_int_equal(fake.map[EV_INSTR], 3);
}

/*
 * A load starts the counters it takes over after it has configured the
 * others (load_counters). When one of those configurations lands on a
 * counter taken over but not started yet (the host's fixed-counter
 * fallback: phys_undo), the hardware still holds the other vCPU's value:
 * it is not v's to save, and v counts on from its own.
 */
static void test_undo_leaves_counter_taken_over(void **state)
{
	struct vpmu *w;

	(void)state;
	assert_int_equal(cfg_start(0, 1, EV_CYCLES, 1000), 0);
	assert_int_equal(vpmu_counter_config_matching(v, 5, 1, 0, EV_CYCLES, 0).value, 5);
	w = switch_to_other();
	assert_int_equal(vpmu_counter_config_matching(w, 0, 1, 0, EV_CYCLES, 0).value, 0);
	assert_int_equal(vpmu_counter_start(w, 0, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 50),
			 SBI_SUCCESS);
	/* counter 5 with other filters: v's must be configured again, not taken over */
	assert_int_equal(
		vpmu_counter_config_matching(w, 5, 1, SBI_PMU_CFG_FLAG_SET_UINH, EV_CYCLES, 0)
			.value,
		5);
	fake_advance(7);
	vpmu_vcpu_put(w);
	assert_int_equal(fake.c[0].value, 57);
	fake.cycles_map &= ~(1U << 5); /* now the host puts cycles asked on 5 on counter 0 */
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 2); /* 5, falling back to 0, and 0 again (phys_undo) */
	fake_advance(3);
	assert_int_equal(vpmu_ctr_value(v, 0), 1003);
	assert_int_equal(v->overflow, 0);
}

/*
 * Two vCPUs counting the same events on the same counters: the other one
 * takes v's counters over without configuring anything, so v's load takes
 * them back without a test or a host call (take_back), each started from
 * its own value; a counter the other one configured differently is not
 * taken back but configured again.
 */
static void test_take_back_after_takeover(void **state)
{
	struct vpmu *w;

	(void)state;
	cfg_start(3, 1, EV_INSTR, 100);
	cfg_start(4, 1, EV_DTLB_RD, 200);
	fake_advance(1);
	w = switch_to_other();
	fake.n_config = 0;
	assert_int_equal(vpmu_counter_config_matching(w, 3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_DTLB_RD, 0).value, 4);
	assert_int_equal(fake.n_config, 0); /* both taken over as they were */
	assert_int_equal(vpmu_counter_start(w, 3, 3, SBI_PMU_START_FLAG_SET_INIT_VALUE, 500),
			 SBI_SUCCESS);
	fake_advance(5);
	vpmu_vcpu_put(w);
	assert_int_equal(fake.c[3].value, 505);
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 0);
	fake_advance(2);
	assert_int_equal(vpmu_ctr_value(v, 3), 103);
	assert_int_equal(vpmu_ctr_value(v, 4), 203);
	vpmu_vcpu_put(v);
	vpmu_vcpu_load(w);
	assert_int_equal(vpmu_ctr_value(w, 3), 505);
	/* w gives counter 4 other filters: configured, so v's load must configure it again */
	assert_int_equal(vpmu_counter_stop(w, 4, 1, 0), SBI_SUCCESS);
	assert_int_equal(
		vpmu_counter_config_matching(w, 4, 1, SBI_PMU_CFG_FLAG_SET_UINH, EV_DTLB_RD, 0)
			.value,
		4);
	vpmu_vcpu_put(w);
	vpmu_vcpu_load(v);
	assert_int_equal(fake.c[4].flags, fake.c[3].flags); /* v's filters again, as on 3 */
	fake_advance(4);
	assert_int_equal(vpmu_ctr_value(v, 3), 107);
	assert_int_equal(vpmu_ctr_value(v, 4), 207);
}

/*
 * A release is a change of configuration too: the other vCPU's load
 * releases v's overflowed counter (its OF bit must not show), so v's load
 * configures it again instead of taking it back.
 */
static void test_no_take_back_after_release(void **state)
{
	struct vpmu *w;

	(void)state;
	cfg_start(3, 1, EV_INSTR, -5UL);
	fake_advance(10);
	assert_true(fake.c[3].of);
	w = switch_to_other();
	assert_false(fake_busy(3)); /* released by w's load */
	vpmu_vcpu_put(w);
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 1);
	assert_int_equal(fake.c[3].event_idx, EV_INSTR);
	fake_advance(2);
	assert_int_equal(vpmu_ctr_value(v, 3), 7);
}

/* A wrap the host did not flag (QEMU without icount) is still an overflow */
static void test_unflagged_wrap_recorded_at_put(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, -10UL);
	fake.c[3].value = 7; /* wrapped, but no OF and no LCOFI */
	fake.nr_lcofi = 0;
	vpmu_vcpu_put(v);
	assert_int_equal(v->overflow, 1UL << 3);
	assert_int_equal(fake.nr_lcofi, 1);
	vpmu_vcpu_load(v);
	assert_int_equal(vpmu_ctr_value(v, 3), 7);
}

/* Disjoint counters: switching back and forth never reconfigures */
static void test_disjoint_counters_no_reprogramming(void **state)
{
	struct vpmu *w;

	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	w = switch_to_other();
	/* another event: on QEMU the same event on another counter evicts (above) */
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_DTLB_RD, 0).value, 4);
	assert_int_equal(vpmu_counter_start(w, 4, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0),
			 SBI_SUCCESS);
	for (int round = 0; round < 3; round++) {
		fake_advance(10);
		vpmu_vcpu_put(w);
		fake.n_config = 0;
		vpmu_vcpu_load(v);
		fake_advance(7);
		vpmu_vcpu_put(v);
		vpmu_vcpu_load(w);
		assert_int_equal(fake.n_config, 0);
	}
	fake_advance(1);
	assert_int_equal(vpmu_ctr_value(w, 4), 31);
	vpmu_vcpu_put(w);
	vpmu_vcpu_load(v);
	assert_int_equal(vpmu_ctr_value(v, 3), 21);
}

/*
 * A load skips the owner walk only when nobody changed an owner on the hart
 * since the put (owners_changed): here another vCPU releases counter 3 in
 * between, and the load must configure it again (one host configuration)
 * and start it from its saved value.
 */
static void test_load_sees_owner_change(void **state)
{
	struct vpmu *w;

	(void)state;
	w = other_takes_counter_3(100, 5);
	assert_int_equal(vpmu_counter_stop(w, 3, 1, SBI_PMU_STOP_FLAG_RESET),
			 SBI_ERR_ALREADY_STOPPED);
	vpmu_vcpu_put(w);
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 1);
	assert_true(fake.c[3].running);
	fake_advance(7);
	assert_int_equal(vpmu_ctr_value(v, 3), 112);
	/* and with no owner changed since, the next switch configures nothing */
	vpmu_vcpu_put(v);
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 0);
	fake_advance(1);
	assert_int_equal(vpmu_ctr_value(v, 3), 113);
}

/*
 * The deadline after a load: only a counter near its top needs one, as put
 * found it (a counter that continues), or by its saved value (one
 * configured again because another vCPU took its physical counter).
 */
static void test_deadline_after_load(void **state)
{
	struct vpmu *w;

	(void)state;
	cfg_start(3, 1, EV_INSTR, 0x8000000000000001UL);
	vpmu_vcpu_put(v);
	vpmu_vcpu_load(v);
	assert_int_equal(v->deadline, UINT64_MAX);
	cfg_start(4, 1, EV_DTLB_RD, -5000UL);
	fake_advance(1000);
	vpmu_vcpu_put(v);
	assert_int_equal(v->deadline, UINT64_MAX);
	fake.now += 3;
	vpmu_vcpu_load(v);
	assert_int_equal(v->deadline, fake.now + 3999 / 100 + 1);
	/* counter 4 taken by another vCPU meanwhile: configured again, still near */
	w = switch_to_other();
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_INSTR, 0).value, 4);
	vpmu_vcpu_put(w);
	vpmu_vcpu_load(v);
	assert_int_equal(v->deadline, fake.now + 3999 / 100 + 1);
	assert_int_equal(vpmu_ctr_value(v, 4), -4000UL);
}

/* A vCPU that moves to another hart is configured there from its saved value */
static void test_move_to_other_hart(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 40);
	fake_advance(2);
	vpmu_vcpu_put(v);
	fake_set_hart(1); /* the fake's counters stand for the new hart's now */
	fake.c[3].configured = false;
	fake.c[3].value = 0;
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 1);
	assert_true(fake.c[3].running);
	assert_int_equal(vpmu_ctr_value(v, 3), 42);
	assert_int_equal(fake_hart->owner[3], v);
	vpmu_vcpu_put(v); /* loaded means on fake_hart (on_this_hart relies on it) */
	fake_set_hart(0);
}

/*
 * Two physical harts for the fake: each keeps its own counters (and QEMU's
 * event map); fake.c is the one of the hart we run on.
 */
static struct {
	struct fake_pctr c[FAKE_NCTR];
	unsigned int map[3];
	unsigned long counteren;
} hart_regs[2];
static unsigned int cur_hart;

static void run_on_hart(unsigned int n)
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
static void two_harts(void)
{
	memset(hart_regs, 0, sizeof(hart_regs));
	cur_hart = 0;
}

/*
 * Migration A -> B -> A: the counter the vCPU left configured on A is its
 * own stale entry there; coming back must reuse it, not find it busy (the
 * refusal used to be cached for every guest until power-off).
 */
static void test_migrate_back_and_forth(void **state)
{
	(void)state;
	two_harts();
	cfg_start(3, 1, EV_INSTR, 100);
	fake_advance(10);
	for (int round = 0; round < 3; round++) {
		vpmu_vcpu_put(v);
		run_on_hart(1);
		vpmu_vcpu_load(v);
		assert_true(fake.c[3].running);
		fake_advance(10);
		vpmu_vcpu_put(v);
		run_on_hart(0);
		vpmu_vcpu_load(v);
		assert_true(fake.c[3].running);
		assert_int_equal(fake.map[2], 3); /* QEMU counts instret there */
		fake_advance(10);
	}
	assert_int_equal(vpmu_ctr_value(v, 3), 170);
	assert_int_equal(fake_hart->owner[3], v); /* hart 0's, where it runs again */
	/* the same event on the same counter, for another vCPU, still works */
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	vpmu_vcpu_put(v);
	vpmu_vcpu_init(&other_vc.vpmu);
	vpmu_vcpu_load(&other_vc.vpmu);
	assert_int_equal(vpmu_counter_config_matching(&other_vc.vpmu, 3, 1, 0, EV_INSTR, 0).value,
			 3);
	vpmu_vcpu_put(&other_vc.vpmu);
	run_on_hart(0);
}

/*
 * A vCPU reset on a hart other than the one its counters are configured
 * on (a guest reboot or HSM stop handled there): nothing stays refused.
 */
static void test_reset_on_other_hart(void **state)
{
	(void)state;
	two_harts();
	cfg_start(3, 1, EV_INSTR, 0);
	cfg_start(4, 1, EV_DTLB_RD, 0);
	vpmu_vcpu_put(v);
	run_on_hart(1);
	vpmu_vcpu_reset(v); /* not loaded, resident on hart 0 */
	run_on_hart(0);
	vpmu_vcpu_load(v);
	assert_int_equal(CFG(3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(CFG(4, 1, 0, EV_DTLB_RD, 0).value, 4);
	assert_int_equal(START(3, 3, SBI_PMU_START_FLAG_SET_INIT_VALUE, 5).error, SBI_SUCCESS);
	fake_advance(2);
	assert_int_equal(vpmu_ctr_value(v, 3), 7);
	assert_int_equal(vpmu_ctr_value(v, 4), 7);
}

/*
 * The platform loses an overflow (QEMU: its timer fires while the counter
 * is stopped, or a stale irq_overflow_left re-arms it a second later): the
 * deadline the hypervisor arms still finds the wrap, once.
 */
static void test_lost_overflow_found_at_deadline(void **state)
{
	(void)state;
	fake.lose_of = true;
	fake.nr_lcofi = 0;
	fake.now = 1000;
	cfg_start(3, 1, EV_INSTR, -10000UL);
	assert_int_equal(v->deadline, 1000 + 9999 / 100 + 1);
	fake_advance(9999);
	vpmu_timer(v); /* too early: nothing */
	assert_int_equal(fake.nr_lcofi, 0);
	fake_advance(50);
	assert_false(fake.c[3].of);
	vpmu_timer(v);
	assert_int_equal(fake.nr_lcofi, 1);
	assert_int_equal(v->overflow, 1UL << 3);
	assert_int_equal(v->deadline, UINT64_MAX); /* nothing left to watch */
	vpmu_timer(v);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_lcofi, 1); /* once per wrap */
	/* the guest restarts it: watched again */
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -200UL).error,
			 SBI_ERR_ALREADY_STARTED);
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -200UL).error, SBI_SUCCESS);
	assert_int_equal(v->overflow, 0);
	assert_int_equal(v->deadline, fake.now + 32); /* never sooner than 32 ticks */
	fake_advance(300);
	vpmu_overflow_irq(v); /* any trap looks too */
	assert_int_equal(fake.nr_lcofi, 2);
}

/*
 * An LCOFI whose cause the guest cleared before taking it (it restarted or
 * reset the counter with interrupts off, as Linux does around a context
 * switch) is withdrawn: delivered, Linux finds no overflow bit and leaves
 * its counters stopped. Only when no overflow of the vCPU is left.
 */
static void test_lcofi_cancelled_when_cause_cleared(void **state)
{
	(void)state;
	fake.nr_lcofi = 0;
	fake.nr_lcofi_cancel = 0;
	cfg_start(3, 1, EV_INSTR, -100UL);
	cfg_start(4, 1, EV_CYCLES, -100UL);
	fake_advance(150);
	vpmu_overflow_irq(v);
	assert_int_equal(fake.nr_lcofi, 2);
	assert_int_equal(v->overflow, (1UL << 3) | (1UL << 4));
	/* one of two restarted: the other overflow still wants the interrupt */
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -1000UL).error,
			 SBI_SUCCESS);
	assert_int_equal(fake.nr_lcofi_cancel, 0);
	/* the last one reset: nothing left, withdrawn once */
	assert_int_equal(STOP(4, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_int_equal(v->overflow, 0);
	assert_int_equal(fake.nr_lcofi_cancel, 1);
	/* clearing what is already clear withdraws nothing */
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(fake.nr_lcofi_cancel, 1);
}

/*
 * A counter close to its wrap that does not advance (the guest stays in a
 * filtered mode; QEMU's second counter of one event) costs ever fewer
 * traps: the deadline backs off, and comes back when the guest restarts it.
 */
static void test_deadline_backs_off(void **state)
{
	uint64_t gap = 32;

	(void)state;
	fake.now = 5000;
	cfg_start(3, 1, EV_INSTR, -50UL);
	assert_int_equal(v->deadline, 5000 + 32);
	fake.c[3].running = false; /* stands still: as if filtered */
	for (int i = 0; i < 20; i++) {
		fake.now = v->deadline;
		vpmu_timer(v);
		gap = gap < (1UL << 17) ? 2 * gap : gap;
		assert_int_equal(v->deadline, fake.now + gap);
	}
	fake.c[3].running = true;
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -5000UL).error,
			 SBI_SUCCESS);
	assert_int_equal(v->deadline, fake.now + 50);
}

/* A physical LCOFI for a counter that has not wrapped is not passed on */
static void test_spurious_lcofi_ignored(void **state)
{
	(void)state;
	fake.nr_lcofi = 0;
	cfg_start(3, 1, EV_INSTR, -1000UL);
	fake_advance(10);
	fake.c[3].of = true; /* the platform says so, the value does not */
	fake.lcofip = true;
	vpmu_overflow_irq(v);
	assert_false(fake.lcofip);
	assert_int_equal(fake.nr_lcofi, 0);
	assert_int_equal(v->overflow, 0);
}

/* Counters far from wrapping need no deadline; stopped ones neither */
static void test_deadline_only_near_wraps(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0x8000000000000001UL); /* Linux's counting start */
	assert_int_equal(v->deadline, UINT64_MAX);
	cfg_start(4, 1, EV_DTLB_RD, -5000UL);
	assert_int_equal(v->deadline, fake.now + 4999 / 100 + 1);
	assert_int_equal(STOP(4, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(v->deadline, UINT64_MAX);
	vpmu_vcpu_put(v);
	assert_int_equal(v->deadline, UINT64_MAX);
}

/*
 * Starts and stops far from the top leave the deadline alone (it still
 * bounds the wraps of the others), but a stop that leaves nothing started
 * clears it: here the near counter wrapped, so it stops far from its top,
 * and a deadline left in the past would fire the hart's timer forever
 * (vpmu_timer looks only while a counter is started).
 */
static void test_deadline_kept_by_far_changes(void **state)
{
	uint64_t d;

	(void)state;
	cfg_start(4, 1, EV_DTLB_RD, -5000UL);
	d = v->deadline;
	assert_int_equal(d, fake.now + 4999 / 100 + 1);
	cfg_start(3, 1, EV_INSTR, 0x8000000000000001UL);
	assert_int_equal(v->deadline, d);
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(v->deadline, d);
	fake_advance(6000); /* counter 4 wraps: 1000 */
	assert_int_equal(STOP(4, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(v->ctr[4].value, 1000);
	assert_int_equal(v->deadline, UINT64_MAX);
}

/*
 * scountovf: a guest reads its own overflow bits (trapped read), and the
 * OF bits other vCPUs' stopped counters carry are gone from the hart when
 * it runs (an untrapped read sees the hart's register).
 */
static void test_scountovf_own_bits_only(void **state)
{
	struct vpmu *w;
	unsigned long val = 0;

	(void)state;
	cfg_start(4, 1, EV_INSTR, -5UL);
	fake_advance(10);
	assert_true(fake.c[4].of);
	assert_int_equal(vpmu_csr_read(v, VPMU_CSR_SCOUNTOVF, &val), 0);
	assert_int_equal(val, 1UL << 4);
	w = switch_to_other();
	assert_int_equal(vpmu_phys_overflowed() & (1U << 4), 0);
	assert_int_equal(vpmu_csr_read(w, VPMU_CSR_SCOUNTOVF, &val), 0);
	assert_int_equal(val, 0);
	vpmu_vcpu_put(w);
	vpmu_vcpu_load(v);
	assert_int_equal(vpmu_csr_read(v, VPMU_CSR_SCOUNTOVF, &val), 0);
	assert_int_equal(val, 1UL << 4); /* still its own, until it restarts the counter */
	assert_int_equal(vpmu_ctr_value(v, 4), 5);
}

/* Without Sscofpmf on the host: no scountovf, no overflow bits, no LCOFI */
static void test_no_sscofpmf(void **state)
{
	unsigned long val;

	(void)state;
	fake_reset();
	fake.sscofpmf = false;
	reboot_host();
	assert_false(vpmu_overflow_available());
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	cfg_start(3, 1, EV_INSTR, -5UL);
	fake_advance(10);
	vpmu_overflow_irq(v);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_SUCCESS);
	assert_int_equal(ram64(SHMEM), 0);
	assert_int_equal(fake.nr_lcofi, 0);
	assert_int_equal(vpmu_csr_read(v, VPMU_CSR_SCOUNTOVF, &val), -1);
}

/* The cross-hart probe: only instruction-exact counters charged by a sleeping hart */
/*
 * Counters the host cannot filter by mode (no Sscofpmf: OpenSBI sets no
 * inhibit bits on programmable counters; no Smcntrpmf: none on 0 and 2)
 * would count the hypervisor: they are not offered. NUM_COUNTERS shrinks
 * with them; the firmware counters follow the last hardware one.
 */
static void test_unfiltered_counters_hidden(void **state)
{
	(void)state;
	fake_reset();
	fake.sscofpmf = false;
	fake.unfiltered = 0x7fff8; /* the programmable ones */
	reboot_host();
	assert_int_equal(vpmu_hw_valid_mask(), 0x5);
	assert_int_equal(vpmu_num_hw(), 3);
	assert_int_equal(NUM().value, 3 + 22);
	assert_int_equal(INFO(3).value, FW_INFO);
	assert_int_equal(CFG(0, 0x5, 0, EV_INSTR, 0).value, 2);
	assert_int_equal(CFG(0, 0x5, 0, EV_DTLB_RD, 0).error, SBI_ERR_NOT_SUPPORTED);
	/* no hardware counter the host can filter: only firmware counters */
	fake_reset();
	fake.unfiltered = 0x7fffd;
	reboot_host();
	assert_int_equal(vpmu_hw_valid_mask(), 0);
	assert_int_equal(NUM().value, 3 + 22);
	assert_int_equal(INFO(0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(0, 0x7, 0, EV_CYCLES, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(3, 1, 0, EV_FW(5), 0).value, 3);
}

static void test_probe_other_harts(void **state)
{
	(void)state;
	vpmu_probe_other_harts();
	assert_false(vpmu_counts_other_harts());
	fake.charged = true;
	vpmu_probe_other_harts();
	assert_true(vpmu_counts_other_harts());
	for (unsigned int p = 3; p < NHW; p++)
		assert_false(fake_busy(p));
}

static void test_put_twice_harmless(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	vpmu_vcpu_put(v);
	vpmu_vcpu_put(v);
	vpmu_vcpu_load(v);
	assert_true(fake.c[3].running);
}

static void test_fw_counts_while_put(void **state)
{
	(void)state;
	cfg_start(0, ALLMASK, EV_FW(SBI_PMU_FW_IPI_RCVD), 0);
	vpmu_vcpu_put(v);
	vpmu_fw_event(v, SBI_PMU_FW_IPI_RCVD);
	vpmu_vcpu_load(v);
	assert_int_equal(FWREAD(FW0).value, 1);
}

/* A wrap the reset's own stop finds is counted like any other: one LCOFI, one overflow */
static void test_vcpu_reset_counts_its_overflow(void **state)
{
	(void)state;
	fake.lose_of = true; /* nothing flags the wrap: the reset's save finds it */
	cfg_start(3, 1, EV_INSTR, -2UL);
	fake_advance(5);
	assert_int_equal(v->nr_overflows, 0);
	vpmu_vcpu_reset(v);
	assert_int_equal(fake.nr_lcofi, 1);
	assert_int_equal(v->nr_overflows, 1);
}

static void test_vcpu_reset(void **state)
{
	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	cfg_start(0, ALLMASK, EV_FW(8), 0);
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	vpmu_vcpu_reset(v);
	assert_true(v->loaded);
	assert_false(fake_busy(3));
	assert_int_equal(FWREAD(FW0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_ERR_NO_SHMEM);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(fake.counteren, 0);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 3);
}

/* A reset (HSM stop, reboot) keeps the guest's policy, and what it hides stays hidden */
static void test_reset_keeps_policy(void **state)
{
	static const struct vpmu_policy pol = {.counters_mask = 0x18, .no_firmware = true};

	(void)state;
	vpmu_vcpu_set_policy(v, &pol);
	assert_int_equal(NUM().value, NHW);
	assert_int_equal(INFO(5).error, SBI_ERR_INVALID_PARAM);
	vpmu_vcpu_reset(v);
	assert_int_equal(NUM().value, NHW);
	assert_int_equal(INFO(3).error, SBI_SUCCESS);
	assert_int_equal(INFO(5).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(CFG(0, 0x18, 0, EV_DTLB_RD, 0).value, 3);
	vpmu_vcpu_set_policy(v, NULL);
}

/*
 * CONFIG_MATCHING remembers the last event it accepted: the same event with
 * other data is classified again, and a new policy forgets what it accepted
 */
static void test_cfg_remembers_only_what_holds(void **state)
{
	static const struct vpmu_policy deny = {.nr_deny = 1, .deny = {{EV_INSTR, EV_INSTR, 0}}};
	static const struct vpmu_policy on4 = {.nr_allow = 1,
					       .allow = {{EV_INSTR, EV_INSTR, 1U << 4}}};

	(void)state;
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW, FAKE_RAW_OK).value, 3);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW, 1ULL << 48).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW, FAKE_RAW_OK).value, 4);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 5);
	/* event_data must be 0 for hardware events: the host is not asked */
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 1).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(STOP(5, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_ERR_ALREADY_STOPPED);
	vpmu_vcpu_set_policy(v, &deny);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).error, SBI_ERR_NOT_SUPPORTED);
	vpmu_vcpu_set_policy(v, &on4); /* counter 4 only, stopped: configured again */
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 4);
	assert_int_equal(v->ctr[4].event_idx, EV_INSTR);
	vpmu_vcpu_set_policy(v, NULL); /* every counter again: instret's own, as 4 has it */
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 2);
}

static void test_state_machine(void **state)
{
	(void)state;
	assert_int_equal(v->ctr[3].state, VPMU_CTR_UNCONFIGURED);
	assert_int_equal(STOP(3, 1, 0).error, SBI_ERR_ALREADY_STOPPED);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_ERR_INVALID_PARAM);
	CFG(3, 1, 0, EV_INSTR, 0);
	assert_int_equal(v->ctr[3].state, VPMU_CTR_CONFIGURED);
	assert_int_equal((v->placed >> 3) & 1, 1);
	assert_int_equal(STOP(3, 1, 0).error, SBI_ERR_ALREADY_STOPPED);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(v->ctr[3].state, VPMU_CTR_STARTED);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_ERR_ALREADY_STARTED);
	assert_int_equal(STOP(3, 1, 0).error, SBI_SUCCESS);
	assert_int_equal(v->ctr[3].state, VPMU_CTR_CONFIGURED);
	assert_int_equal(START(3, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_int_equal(v->ctr[3].state, VPMU_CTR_UNCONFIGURED);
	assert_int_equal((v->placed >> 3) & 1, 0);
}

/* --------------------------------------------------------------- snapshot */

static void test_shmem_errors(void **state)
{
	(void)state;
	assert_int_equal(SHMEM_SET(SHMEM, 0, 1).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(SHMEM_SET(~0UL, ~0UL, 1).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(SHMEM_SET(SHMEM + 8, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(SHMEM_SET(SHMEM + 0x800, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(SHMEM_SET(~0UL, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(SHMEM_SET(0x1000, 0, 0).error, SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(SHMEM_SET(FAKE_RAM_BASE + FAKE_RAM_SIZE, 0, 0).error,
			 SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(SHMEM_SET(SHMEM, 1, 0).error, SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(SHMEM_SET(~0UL & ~0xfffUL, 0, 0).error, SBI_ERR_INVALID_ADDRESS);
	assert_false(v->shmem_set);
}

static void test_shmem_set_zeroes_and_disable(void **state)
{
	unsigned int i;

	(void)state;
	memset(ram(SHMEM - 16), 0xaa, 4096 + 32);
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	for (i = 0; i < 4096; i++)
		assert_int_equal(((uint8_t *)ram(SHMEM))[i], 0);
	assert_int_equal(((uint8_t *)ram(SHMEM))[-1], 0xaa);
	assert_int_equal(((uint8_t *)ram(SHMEM))[4096], 0xaa);
	/* the last page of RAM is fine too */
	assert_int_equal(SHMEM_SET(FAKE_RAM_BASE + FAKE_RAM_SIZE - 4096, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(SHMEM_SET(~0UL, ~0UL, 0).error, SBI_SUCCESS);
	assert_false(v->shmem_set);
	cfg_start(3, 1, EV_INSTR, 0);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_ERR_NO_SHMEM);
	assert_true(fake.c[3].running);
	/* disabling twice is fine */
	assert_int_equal(SHMEM_SET(~0UL, ~0UL, 0).error, SBI_SUCCESS);
}

static void test_snapshot_take_relative_to_base(void **state)
{
	unsigned int i;

	(void)state;
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	for (i = 0; i < 64; i++)
		set_ram64(SHMEM + 8 + 8 * i, 0xdeadULL);
	cfg_start(3, 1, EV_INSTR, 10);
	cfg_start(5, 1, EV_DTLB_RD, 20);
	fake_advance(1);
	assert_int_equal(STOP(3, 5, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_SUCCESS);
	assert_int_equal(ram64(SHMEM + 8 + 0), 11);
	assert_int_equal(ram64(SHMEM + 8 + 8), 0xdead); /* not in the set */
	assert_int_equal(ram64(SHMEM + 8 + 16), 21);
	assert_int_equal(ram64(SHMEM + 8 + 24), 0xdead);
	assert_int_equal(ram64(SHMEM), 0); /* no overflow */
}

static void test_snapshot_linux_single_counter(void **state)
{
	(void)state;
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	cfg_start(7, 1, EV_INSTR, 1000);
	fake_advance(5);
	/* pmu_sbi_ctr_stop: base = idx, mask = 1 -> value in slot 0 */
	assert_int_equal(STOP(7, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_SUCCESS);
	assert_int_equal(ram64(SHMEM + 8), 1005);
	/* already stopped: the snapshot still carries its value */
	set_ram64(SHMEM + 8, 0);
	assert_int_equal(STOP(7, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error,
			 SBI_ERR_ALREADY_STOPPED);
	assert_int_equal(ram64(SHMEM + 8), 1005);
}

static void test_snapshot_reset_and_take(void **state)
{
	(void)state;
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	cfg_start(0, ALLMASK, EV_FW(4), 40);
	vpmu_fw_event(v, 4);
	cfg_start(9, 1, EV_INSTR, 90);
	fake_advance(9);
	assert_int_equal(
		STOP(9, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT | SBI_PMU_STOP_FLAG_RESET).error,
		SBI_SUCCESS);
	assert_int_equal(ram64(SHMEM + 8), 99);
	assert_false(fake.c[9].running);
	assert_int_equal(v->ctr[9].state, VPMU_CTR_UNCONFIGURED);
	assert_int_equal(STOP(FW0, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_SUCCESS);
	assert_int_equal(ram64(SHMEM + 8), 41);
}

static void test_snapshot_overflow_bitmap(void **state)
{
	(void)state;
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	cfg_start(3, 1, EV_INSTR, 0);
	cfg_start(4, 1, EV_INSTR, 0);
	v->overflow |= 1ULL << 4; /* as the overflow handler (later issue) will */
	assert_int_equal(STOP(3, 3, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_SUCCESS);
	assert_int_equal(ram64(SHMEM), 2);
	/* start clears the counter's overflow */
	START(4, 1, 0, 0);
	assert_int_equal(v->overflow, 0);
}

/* D7: the bitmap holds overflown counters; a released, reconfigured one has not */
static void test_reset_forgets_overflow(void **state)
{
	unsigned long c;

	(void)state;
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	c = cfg_start(3, 1, EV_INSTR, 0);
	v->overflow |= 1ULL << c;
	assert_int_equal(STOP(c, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_SUCCESS);
	assert_int_equal(ram64(SHMEM), 1);
	assert_int_equal(STOP(c, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_ERR_ALREADY_STOPPED);
	assert_int_equal(CFG(c, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).value, c);
	set_ram64(SHMEM, ~0ULL);
	assert_int_equal(STOP(c, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error,
			 SBI_ERR_ALREADY_STOPPED);
	assert_int_equal(ram64(SHMEM), 0);
	assert_int_equal(v->overflow, 0);
}

static void test_snapshot_init(void **state)
{
	(void)state;
	assert_int_equal(SHMEM_SET(SHMEM, 0, 0).error, SBI_SUCCESS);
	CFG(3, 1, 0, EV_INSTR, 0);
	CFG(5, 1, 0, EV_INSTR, 0);
	CFG(0, ALLMASK, 0, EV_FW(9), 0);
	set_ram64(SHMEM + 8 + 0, 300);
	set_ram64(SHMEM + 8 + 16, 500);
	assert_int_equal(START(3, 5, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 7).error, SBI_SUCCESS);
	assert_int_equal(fake.c[3].value, 300);
	assert_int_equal(fake.c[5].value, 500);
	assert_int_equal(vpmu_hcounteren(v), (1UL << 3) | (1UL << 5));
	set_ram64(SHMEM + 8, 1900);
	assert_int_equal(START(FW0, 1, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0).error, SBI_SUCCESS);
	assert_int_equal(FWREAD(FW0).value, 1900);
	/* a started counter is not re-initialised */
	set_ram64(SHMEM + 8, 1);
	assert_int_equal(START(3, 1, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0).error,
			 SBI_ERR_ALREADY_STARTED);
	assert_int_equal(fake.c[3].value, 300);
}

/* ---------------------------------------------------------- event_get_info */

struct einfo {
	uint32_t event_idx;
	uint32_t output;
	uint64_t event_data;
};

#define EI (FAKE_RAM_BASE + 0x4000)

static void put_entries(const struct einfo *e, unsigned int n)
{
	memcpy(ram(EI), e, n * sizeof(*e));
}

static uint32_t output_of(unsigned int i)
{
	struct einfo e;
	memcpy(&e, ram(EI + i * sizeof(e)), sizeof(e));
	return e.output;
}

static void test_event_info_outputs(void **state)
{
	static const struct einfo e[] = {
		{EV_CYCLES, 7, 0},
		{EV_INSTR, 7, 0},
		{EV_DTLB_RD, 7, 0},
		{0x1234, 7, 0},
		{0x10000, 7, 0},
		{EV_FW(SBI_PMU_FW_SET_TIMER), 7, 0},
		{EV_FW(SBI_PMU_FW_PLATFORM), 7, 0},
		{EV_FW(30), 7, 0},
		{EV_RAW, 7, FAKE_RAW_OK},
		{EV_RAW, 7, 0x777},
		{EV_RAW2, 7, FAKE_RAW2_OK},
		{EV_INSTR, 7, 1},  /* event_data is meaningless for types 0/1: ignored */
		{0x40000, 7, 0},   /* type 4: reserved, nothing counts it */
		{EV_FW(0), 7, 0},  /* misaligned loads never reach the hypervisor */
		{EV_FW(14), 7, 0}, /* HFENCE: a guest has none */
	};
	static const uint32_t want[] = {1, 1, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0};
	unsigned int i, n = sizeof(e) / sizeof(e[0]);

	(void)state;
	put_entries(e, n);
	assert_int_equal(EVINFO(EI, 0, n, 0).error, SBI_SUCCESS);
	for (i = 0; i < n; i++)
		assert_int_equal(output_of(i), want[i]);
	/* probing left no physical counter behind */
	for (i = 3; i < NHW; i++)
		assert_false(fake_busy(i));
	/* the entries' other words are untouched */
	assert_int_equal(((struct einfo *)ram(EI))[8].event_data, FAKE_RAW_OK);
}

static void test_event_info_busy_counters(void **state)
{
	static const struct einfo e[] = {{EV_CYCLES, 0, 0}, {EV_DTLB_RD, 0, 0}};
	unsigned int i;

	(void)state;
	cfg_start(0, 1, EV_CYCLES, 0);
	for (i = 3; i < NHW; i++)
		CFG(i, 1, 0, EV_DTLB_RD, 0);
	put_entries(e, 2);
	assert_int_equal(EVINFO(EI, 0, 2, 0).error, SBI_SUCCESS);
	assert_int_equal(output_of(0), 1);
	assert_int_equal(output_of(1), 1);
}

static void test_event_info_errors(void **state)
{
	struct einfo e[2] = {{EV_INSTR, 0, 0}, {EV_INSTR, 0, 0}};

	(void)state;
	put_entries(e, 2);
	assert_int_equal(EVINFO(EI, 0, 2, 1).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(EVINFO(EI + 8, 0, 2, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(EVINFO(EI, 0, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(EVINFO(EI, 1, 2, 0).error, SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(EVINFO(0x1000, 0, 2, 0).error, SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(EVINFO(FAKE_RAM_BASE + FAKE_RAM_SIZE - 16, 0, 2, 0).error,
			 SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(EVINFO(EI, 0, ~0UL / 8, 0).error, SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(EVINFO(~0xfUL, 0, 1, 0).error, SBI_ERR_INVALID_ADDRESS);
	/* malformed event_idx: nothing written */
	e[0].output = 5;
	e[1].event_idx = 1u << 20;
	put_entries(e, 2);
	assert_int_equal(EVINFO(EI, 0, 2, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(output_of(0), 5);
	e[1].event_idx = 0x50000; /* type 5: a reserved value, not a reserved bit: output 0 */
	put_entries(e, 2);
	assert_int_equal(EVINFO(EI, 0, 2, 0).error, SBI_SUCCESS);
	assert_int_equal(output_of(1), 0);
	e[1].event_idx = EV_RAW | 3; /* raw with a code */
	put_entries(e, 2);
	assert_int_equal(EVINFO(EI, 0, 2, 0).error, SBI_ERR_INVALID_PARAM);
}

/* ------------------------------------------------------------- dispatcher */

/*
 * A long EVENT_GET_INFO is answered in slices of 2048 work units: the guest
 * sees VPMU_RET_RESTART (its ecall is re-executed) until it is done. 4000
 * entries (all of the fake's 64 KiB of RAM): check 0..2047 | check the
 * rest, answer 96 | answer 2048 | done.
 */
static void test_event_info_in_slices(void **state)
{
	struct einfo *e = ram(FAKE_RAM_BASE);
	unsigned int i, restarts = 0;
	struct sbi_ret r;

	(void)state;
	for (i = 0; i < 4000; i++)
		e[i] = (struct einfo){EV_INSTR, 7, 0};
	while ((r = EVINFO(FAKE_RAM_BASE, 0, 4000, 0)).error == VPMU_RET_RESTART)
		restarts++;
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(restarts, 3);
	for (i = 0; i < 4000; i++)
		assert_int_equal(e[i].output, 1);
	/* another call in between starts over; the interrupted one then too */
	for (i = 0; i < 4000; i++)
		e[i].output = 7;
	assert_int_equal(EVINFO(FAKE_RAM_BASE, 0, 4000, 0).error, VPMU_RET_RESTART);
	assert_int_equal(EVINFO(FAKE_RAM_BASE, 0, 2, 0).error, SBI_SUCCESS);
	for (restarts = 0; (r = EVINFO(FAKE_RAM_BASE, 0, 4000, 0)).error == VPMU_RET_RESTART;)
		restarts++;
	assert_int_equal(restarts, 3);
	assert_int_equal(e[3999].output, 1);
	/* a malformed entry found in a later slice: INVALID_PARAM, nothing written */
	for (i = 0; i < 4000; i++)
		e[i].output = 7;
	e[3000].event_idx = 1u << 20;
	while ((r = EVINFO(FAKE_RAM_BASE, 0, 4000, 0)).error == VPMU_RET_RESTART)
		;
	assert_int_equal(r.error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(e[0].output, 7);
}

/* Configured but stopped firmware counters are matched again (D6) */
static void test_cfg_reuses_stopped_counters(void **state)
{
	unsigned int e, n = 0;

	(void)state;
	for (e = 4; e <= 13; e++)
		assert_int_equal(CFG(FW0, FWMASK >> FW0, 0, EV_FW(e), 0).value, FW0 + n++);
	for (; n < 22; n++)
		assert_int_equal(CFG(FW0, FWMASK >> FW0, 0, EV_FW(5), 0).value, FW0 + n);
	/* every firmware counter configured, none started: one is reconfigured */
	assert_int_equal(CFG(FW0, FWMASK >> FW0, 0, EV_FW(6), 0).value, FW0);
	assert_int_equal(START(FW0, FWMASK >> FW0, 0, 0).error, SBI_SUCCESS);
	/* all started: nothing left */
	assert_int_equal(CFG(FW0, FWMASK >> FW0, 0, EV_FW(6), 0).error, SBI_ERR_NOT_SUPPORTED);
}

static void test_unknown_fid(void **state)
{
	(void)state;
	assert_int_equal(call(9, 0, 0, 0, 0, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(call(~0UL, 0, 0, 0, 0, 0).error, SBI_ERR_NOT_SUPPORTED);
}

static void test_cfg_event_data_from_a4(void **state)
{
	unsigned long args[6] = {0, ALLMASK, 0, EV_RAW, FAKE_RAW_OK, 0xffffffff};

	(void)state;
	assert_int_equal(vpmu_sbi_call(v, SBI_EXT_PMU_COUNTER_CFG_MATCH, args).value, 3);
	assert_int_equal(fake.c[3].event_data, FAKE_RAW_OK);
}

#define T(f) cmocka_unit_test_setup(f, setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_layout_probe),
		T(test_layout_prog_cycles_probe),
		T(test_no_host_pmu),
		T(test_num_counters),
		T(test_get_info_hw),
		T(test_get_info_time_invalid),
		T(test_get_info_fw),
		T(test_get_info_out_of_range),
		T(test_get_info_true_width),
		T(test_layout_holes),
		T(test_cfg_reserved_flags),
		T(test_cfg_invalid_sets),
		T(test_cfg_event_0x1234_not_supported),
		T(test_cfg_unsupported_events),
		T(test_cfg_cycles_programmable_first),
		T(test_cfg_cycles_fixed_only),
		T(test_cfg_cycles_programmable_refused),
		T(test_cfg_instret_prefers_programmable),
		T(test_cfg_instret_shared_host),
		T(test_cfg_instret_fixed),
		T(test_cfg_no_other_event_on_fixed),
		T(test_cfg_hw_events_mirror_host),
		T(test_cfg_filter_translation),
		T(test_cfg_guest_vsinh_vuinh_minh_ignored),
		T(test_cfg_skip_match),
		T(test_cfg_skip_match_refused_keeps_old),
		T(test_cfg_busy_counters_skipped),
		T(test_cfg_clear_value),
		T(test_cfg_clear_value_fw_above_31),
		T(test_cfg_auto_start),
		T(test_cfg_host_fallback_undone),
		T(test_cfg_capabilities_from_boot),
		T(test_start_stop_counts),
		T(test_start_already_started),
		T(test_start_unconfigured_invalid),
		T(test_start_flags),
		T(test_start_invalid_sets),
		T(test_start_init_value_width),
		T(test_stop_already_stopped),
		T(test_stop_fw_already_stopped),
		T(test_stop_flags_and_sets),
		T(test_stop_reset_keeps_config_stopped),
		T(test_stop_reset_releases_overflowed),
		T(test_stop_all_linux_style),
		T(test_fw_counts_only_started),
		T(test_fw_counted_events),
		T(test_fw_two_counters_same_event),
		T(test_fw_read_errors),
		T(test_fw_read_hi_zero),
		T(test_fw_reset_releases),
		T(test_csr_read_rules),
		T(test_hcounteren_rules),
		T(test_hcounteren_keeps_tm),
		T(test_hcounteren_start_failure),
		T(test_put_stops_keeps_resident),
		T(test_stop_keeps_counter_unsynced),
		T(test_put_load_stopped_counter),
		T(test_stop_reset_config_evicted),
		T(test_two_vcpus_share_hart),
		T(test_migrate_back_and_forth),
		T(test_reset_on_other_hart),
		T(test_lost_overflow_found_at_deadline),
		T(test_lcofi_cancelled_when_cause_cleared),
		T(test_spurious_lcofi_ignored),
		T(test_deadline_backs_off),
		T(test_deadline_only_near_wraps),
		T(test_deadline_kept_by_far_changes),
		T(test_scountovf_own_bits_only),
		T(test_reset_forgets_overflow),
		T(test_lowest_bit),
		T(test_wide_counters_told),
		T(test_no_sscofpmf),
		T(test_unfiltered_counters_hidden),
		T(test_probe_other_harts),
		T(test_put_twice_harmless),
		T(test_disjoint_counters_no_reprogramming),
		T(test_pending_lcofi_across_switch),
		T(test_start_direct),
		T(test_unflagged_wrap_recorded_at_put),
		T(test_exclusive_event_evicts_other),
		T(test_takeover_needs_the_event_map),
		T(test_undo_leaves_counter_taken_over),
		T(test_take_back_after_takeover),
		T(test_no_take_back_after_release),
		T(test_load_sees_owner_change),
		T(test_deadline_after_load),
		T(test_move_to_other_hart),
		T(test_fw_counts_while_put),
		T(test_vcpu_reset),
		T(test_vcpu_reset_counts_its_overflow),
		T(test_reset_keeps_policy),
		T(test_cfg_remembers_only_what_holds),
		T(test_state_machine),
		T(test_shmem_errors),
		T(test_shmem_set_zeroes_and_disable),
		T(test_snapshot_take_relative_to_base),
		T(test_snapshot_linux_single_counter),
		T(test_snapshot_reset_and_take),
		T(test_snapshot_overflow_bitmap),
		T(test_snapshot_init),
		T(test_event_info_outputs),
		T(test_event_info_busy_counters),
		T(test_event_info_errors),
		T(test_event_info_in_slices),
		T(test_cfg_reuses_stopped_counters),
		T(test_unknown_fid),
		T(test_cfg_event_data_from_a4),
	};

	return cmocka_run_group_tests_name("vpmu", tests, NULL, NULL);
}
