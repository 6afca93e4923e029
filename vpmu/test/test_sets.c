/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of vpmu/sets.c: START and STOP of several counters at once,
 * SNAPSHOT_SET_SHMEM and the snapshot area (INIT_SNAPSHOT, TAKE_SNAPSHOT,
 * the overflow bitmap); and of lowest_bit (vpmu/bits.h), which walks the sets.
 */

#include "helpers.h"

/* ------------------------------------------------------------ set walks */

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

/* ----------------------------------- START and STOP of several counters */

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

/* --------------------------------------------------- SNAPSHOT_SET_SHMEM */

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
	assert_null(v->shmem);
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
	assert_null(v->shmem);
	cfg_start(3, 1, EV_INSTR, 0);
	assert_int_equal(STOP(3, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_ERR_NO_SHMEM);
	assert_true(fake.c[3].running);
	/* disabling twice is fine */
	assert_int_equal(SHMEM_SET(~0UL, ~0UL, 0).error, SBI_SUCCESS);
}

/* -------------------------------------------------------- snapshot area */

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
	vpmu_fw_event(v, 4, 1);
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
	cfg_start(3, 1, EV_DTLB_RD, 0);
	cfg_start(4, 1, EV_INSTR, -5UL); /* wraps within the next 10 instructions */
	fake_advance(10);
	vpmu_overflow_irq(v);
	assert_int_equal(STOP(3, 3, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error, SBI_SUCCESS);
	assert_int_equal(ram64(SHMEM), 2);	/* counter 4 (bit 1 from base 3) only */
	assert_int_equal(ram64(SHMEM + 16), 5); /* its value: wrapped, 5 past the top */
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
	c = cfg_start(3, 1, EV_INSTR, -5UL);
	fake_advance(10);
	vpmu_overflow_irq(v);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_lowest_bit),
		T(test_start_already_started),
		T(test_start_unconfigured_invalid),
		T(test_stop_all_linux_style),
		T(test_shmem_errors),
		T(test_shmem_set_zeroes_and_disable),
		T(test_snapshot_take_relative_to_base),
		T(test_snapshot_linux_single_counter),
		T(test_snapshot_reset_and_take),
		T(test_snapshot_overflow_bitmap),
		T(test_reset_forgets_overflow),
		T(test_snapshot_init),
	};

	return cmocka_run_group_tests_name("vpmu_sets", tests, NULL, NULL);
}
