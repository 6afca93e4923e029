// SPDX-License-Identifier: BSD-2-Clause
/*
 * arch/riscv/guest_va.c on the host: which doublewords guest_va_read loads
 * for a range, which bytes it copies out of them, and that a guest-chosen
 * address near the top of the address space costs one load, not a walk
 * from address 0 through whatever the guest maps there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "arch/riscv/csr.h"
#include "arch/riscv/guest_va.h"

unsigned long stub_csr[4096];
char guest_va_fault[1];

/* The guest's memory: byte a holds a * 7 + 3; mapped where the test says */
static unsigned long map_lo[2], map_hi[2]; /* two mapped ranges, [lo, hi] inclusive */
static unsigned long loads, load_at[16];
static bool saw_spvp;

static bool mapped(unsigned long a)
{
	for (int r = 0; r < 2; r++)
		if (map_hi[r] && a >= map_lo[r] && a <= map_hi[r])
			return true;
	return false;
}

static uint8_t byte_at(unsigned long a)
{
	return (uint8_t)(a * 7 + 3);
}

/* HLV.D: faults (returns -1) where nothing is mapped; a trap rewrites sstatus */
long guest_va_load(unsigned long va, uint64_t *out)
{
	uint64_t x = 0;

	assert_int_equal(va & 7, 0);
	if (loads < 16)
		load_at[loads] = va;
	loads++;
	saw_spvp = (stub_csr[CSR_HSTATUS] & HSTATUS_SPVP) != 0;
	if (!mapped(va)) {
		stub_csr[CSR_SSTATUS] = 0xdead;
		return -1;
	}
	for (int b = 0; b < 8; b++)
		x |= (uint64_t)byte_at(va + b) << (8 * b);
	*out = x;
	return 0;
}

static int setup(void **state)
{
	(void)state;
	memset(map_lo, 0, sizeof(map_lo));
	memset(map_hi, 0, sizeof(map_hi));
	loads = 0;
	stub_csr[CSR_HSTATUS] = 0x200000000UL; /* VSXL, say */
	stub_csr[CSR_SSTATUS] = 0x100;
	return 0;
}

static void check_bytes(const uint8_t *got, unsigned long va, size_t len)
{
	for (size_t i = 0; i < len; i++)
		assert_int_equal(got[i], byte_at(va + i));
}

/* the last doubleword of the address space, with pages mapped at 0 too: one load */
static void test_top_of_space_one_load(void **state)
{
	uint8_t got[4];

	(void)state;
	map_lo[0] = 0xfffffffffffff000UL, map_hi[0] = ~0UL;
	map_lo[1] = 0, map_hi[1] = 0x3fffffffUL; /* 1 GiB at 0: the old loop walked it */
	assert_int_equal(guest_va_read(0xfffffffffffffffaUL, true, got, sizeof(got)), 0);
	assert_int_equal(loads, 1);
	assert_int_equal(load_at[0], 0xfffffffffffffff8UL);
	check_bytes(got, 0xfffffffffffffffaUL, sizeof(got));
}

/* ... its very last byte included */
static void test_last_bytes_of_space(void **state)
{
	uint8_t got[8];

	(void)state;
	map_lo[0] = 0xfffffffffffff000UL, map_hi[0] = ~0UL;
	assert_int_equal(guest_va_read(0xfffffffffffffff8UL, false, got, sizeof(got)), 0);
	assert_int_equal(loads, 1);
	check_bytes(got, 0xfffffffffffffff8UL, sizeof(got));
}

/* a range that would run past the top: refused, nothing loaded */
static void test_range_past_top_refused(void **state)
{
	uint8_t got[8];

	(void)state;
	map_lo[0] = 0xfffffffffffff000UL, map_hi[0] = ~0UL;
	map_lo[1] = 0, map_hi[1] = 0xfff;
	assert_int_equal(guest_va_read(0xfffffffffffffffcUL, true, got, sizeof(got)), -1);
	assert_int_equal(loads, 0);
}

/* an unaligned range: the three doublewords holding it, its bytes only */
static void test_unaligned_range(void **state)
{
	uint8_t got[18];

	(void)state;
	map_lo[0] = 0x1000, map_hi[0] = 0x1fff;
	memset(got, 0xee, sizeof(got));
	assert_int_equal(guest_va_read(0x1003, true, got + 1, 16), 0);
	assert_int_equal(loads, 3);
	assert_int_equal(load_at[0], 0x1000);
	assert_int_equal(load_at[1], 0x1008);
	assert_int_equal(load_at[2], 0x1010);
	check_bytes(got + 1, 0x1003, 16);
	assert_int_equal(got[0], 0xee);	 /* nothing before dst ... */
	assert_int_equal(got[17], 0xee); /* ... nor after it */
}

/* a fault ends the read with -1; the mode's bit and sstatus are put back */
static void test_fault_ends_read_csrs_restored(void **state)
{
	uint8_t got[16];

	(void)state;
	map_lo[0] = 0x1000, map_hi[0] = 0x1007;
	assert_int_equal(guest_va_read(0x1000, true, got, sizeof(got)), -1);
	assert_int_equal(loads, 2);
	assert_true(saw_spvp); /* VS-mode's loads */
	assert_int_equal(stub_csr[CSR_SSTATUS], 0x100);
	assert_int_equal(stub_csr[CSR_HSTATUS], 0x200000000UL);
	assert_int_equal(guest_va_read(0x1000, false, got, 8), 0);
	assert_false(saw_spvp); /* VU-mode's */
}

/* nothing to read: nothing loaded */
static void test_empty_read(void **state)
{
	(void)state;
	assert_int_equal(guest_va_read(0x1003, true, NULL, 0), 0);
	assert_int_equal(loads, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_top_of_space_one_load, setup),
		cmocka_unit_test_setup(test_last_bytes_of_space, setup),
		cmocka_unit_test_setup(test_range_past_top_refused, setup),
		cmocka_unit_test_setup(test_unaligned_range, setup),
		cmocka_unit_test_setup(test_fault_ends_read_csrs_restored, setup),
		cmocka_unit_test_setup(test_empty_read, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
