// SPDX-License-Identifier: BSD-2-Clause
/* Host physical memory ranges (core/mm.c) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/mm.h"

struct mm host_mm; /* declared extern by mm.h */

#define MiB  (1ULL << 20)
#define BASE 0x80000000ULL

struct rng {
	uint64_t base, end;
};

static int cmp_rng(const void *a, const void *b)
{
	const struct rng *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base;
}

/* The free ranges must be exactly `want` (any order in the table) */
static void expect_ranges(const struct mm *mm, const struct rng *want, unsigned int n)
{
	struct rng got[MM_RANGES_MAX] = {0};

	assert_int_equal(mm->nr, n);
	for (unsigned int i = 0; i < n; i++) {
		got[i].base = mm->free[i].base;
		got[i].end = mm->free[i].end;
	}
	qsort(got, n, sizeof(got[0]), cmp_rng);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(got[i].base, want[i].base);
		assert_int_equal(got[i].end, want[i].end);
	}
}

static void test_init(void **state)
{
	struct mm mm;

	(void)state;
	memset(&mm, 0xa5, sizeof(mm));
	mm_init(&mm, BASE, 128 * MiB);
	expect_ranges(&mm, (struct rng[]){{BASE, BASE + 128 * MiB}}, 1);
	assert_int_equal(mm_free_bytes(&mm), 128 * MiB);
}

static void test_reserve_split(void **state)
{
	struct mm mm;

	(void)state;
	mm_init(&mm, BASE, 16 * MiB);
	assert_int_equal(mm_reserve(&mm, BASE + 4 * MiB, 2 * MiB), 0);
	expect_ranges(&mm,
		      (struct rng[]){{BASE, BASE + 4 * MiB}, {BASE + 6 * MiB, BASE + 16 * MiB}}, 2);
	assert_int_equal(mm_free_bytes(&mm), 14 * MiB);
}

static void test_reserve_trim_head_and_tail(void **state)
{
	struct mm mm;

	(void)state;
	mm_init(&mm, BASE, 16 * MiB);
	/* overlapping the start, from below it */
	assert_int_equal(mm_reserve(&mm, BASE - MiB, 3 * MiB), 0);
	expect_ranges(&mm, (struct rng[]){{BASE + 2 * MiB, BASE + 16 * MiB}}, 1);
	/* exactly at the start */
	assert_int_equal(mm_reserve(&mm, BASE + 2 * MiB, 0x1000), 0);
	expect_ranges(&mm, (struct rng[]){{BASE + 2 * MiB + 0x1000, BASE + 16 * MiB}}, 1);
	/* overlapping the end, past it */
	assert_int_equal(mm_reserve(&mm, BASE + 15 * MiB, 4 * MiB), 0);
	expect_ranges(&mm, (struct rng[]){{BASE + 2 * MiB + 0x1000, BASE + 15 * MiB}}, 1);
	/* exactly at the end */
	assert_int_equal(mm_reserve(&mm, BASE + 15 * MiB - 0x1000, 0x1000), 0);
	expect_ranges(&mm, (struct rng[]){{BASE + 2 * MiB + 0x1000, BASE + 15 * MiB - 0x1000}}, 1);
	assert_int_equal(mm_free_bytes(&mm), 13 * MiB - 0x2000);
}

static void test_reserve_outside_is_noop(void **state)
{
	struct mm mm;

	(void)state;
	mm_init(&mm, BASE, 16 * MiB);
	assert_int_equal(mm_reserve(&mm, 0, BASE), 0);		    /* ends exactly at base */
	assert_int_equal(mm_reserve(&mm, BASE + 16 * MiB, MiB), 0); /* starts at end */
	assert_int_equal(mm_reserve(&mm, 0x1000000000ULL, MiB), 0);
	expect_ranges(&mm, (struct rng[]){{BASE, BASE + 16 * MiB}}, 1);
	/* zero-sized reservations remove nothing */
	assert_int_equal(mm_reserve(&mm, BASE, 0), 0);
	assert_int_equal(mm_reserve(&mm, BASE + 16 * MiB, 0), 0);
	assert_int_equal(mm_free_bytes(&mm), 16 * MiB);
	assert_int_equal(mm.nr, 1);
}

static void test_reserve_swallow(void **state)
{
	struct mm mm;

	(void)state;
	mm_init(&mm, BASE, 16 * MiB);
	assert_int_equal(mm_reserve(&mm, BASE, 16 * MiB), 0);
	assert_int_equal(mm.nr, 0);
	assert_int_equal(mm_free_bytes(&mm), 0);
	assert_int_equal(mm_alloc(&mm, 0x1000, 0x1000), 0);
}

static void test_reserve_across_ranges(void **state)
{
	struct mm mm;

	(void)state;
	/* five ranges of 1 MiB with 1 MiB holes: [0,1) [2,3) [4,5) [6,7) [8,9) MiB */
	mm_init(&mm, BASE, 9 * MiB);
	for (int h = 1; h <= 7; h += 2)
		assert_int_equal(mm_reserve(&mm, BASE + h * MiB, MiB), 0);
	assert_int_equal(mm.nr, 5);
	assert_int_equal(mm_free_bytes(&mm), 5 * MiB);

	/* trims [0,1), swallows [2,3) [4,5) [6,7), trims [8,9) */
	assert_int_equal(mm_reserve(&mm, BASE + MiB / 2, 8 * MiB), 0);
	expect_ranges(
		&mm,
		(struct rng[]){{BASE, BASE + MiB / 2}, {BASE + 8 * MiB + MiB / 2, BASE + 9 * MiB}},
		2);
	assert_int_equal(mm_free_bytes(&mm), MiB);
}

static void test_reserve_swallow_all_many(void **state)
{
	struct mm mm;

	(void)state;
	/* the swallow path moves the last slot into the hole: must recheck it */
	mm_init(&mm, BASE, 16 * MiB);
	for (int h = 1; h < 16; h += 2)
		assert_int_equal(mm_reserve(&mm, BASE + h * MiB, MiB / 2), 0);
	assert_int_equal(mm.nr, 9);
	assert_int_equal(mm_reserve(&mm, 0, UINT64_MAX), 0);
	assert_int_equal(mm.nr, 0);
	assert_int_equal(mm_free_bytes(&mm), 0);
}

static void test_reserve_overflowing_size(void **state)
{
	struct mm mm;

	(void)state;
	mm_init(&mm, BASE, 16 * MiB);
	/* base + size wraps: treated as reaching the top of the address space */
	assert_int_equal(mm_reserve(&mm, BASE + 8 * MiB, UINT64_MAX), 0);
	expect_ranges(&mm, (struct rng[]){{BASE, BASE + 8 * MiB}}, 1);
}

static void test_reserve_slot_exhaustion(void **state)
{
	struct mm mm;
	uint64_t before;

	(void)state;
	mm_init(&mm, BASE, 64 * MiB);
	/* each hole in the middle of the last range adds a slot: 15 splits */
	for (int i = 0; i < MM_RANGES_MAX - 1; i++)
		assert_int_equal(mm_reserve(&mm, BASE + (2 * i + 1) * MiB, MiB), 0);
	assert_int_equal(mm.nr, MM_RANGES_MAX);
	before = mm_free_bytes(&mm);
	assert_int_equal(before, 64 * MiB - 15 * MiB);

	/* one more split has no slot: -1, nothing changed */
	assert_int_equal(mm_reserve(&mm, BASE + 40 * MiB, MiB), -1);
	assert_int_equal(mm.nr, MM_RANGES_MAX);
	assert_int_equal(mm_free_bytes(&mm), before);

	/* trimming and swallowing need no slot and still work */
	assert_int_equal(mm_reserve(&mm, BASE, MiB / 2), 0);
	assert_int_equal(mm_free_bytes(&mm), before - MiB / 2);
	assert_int_equal(mm_reserve(&mm, BASE + 2 * MiB, MiB), 0); /* swallows [2,3) MiB */
	assert_int_equal(mm.nr, MM_RANGES_MAX - 1);
	/* now a split fits again */
	assert_int_equal(mm_reserve(&mm, BASE + 40 * MiB, MiB), 0);
	assert_int_equal(mm.nr, MM_RANGES_MAX);
	assert_int_equal(mm_free_bytes(&mm), before - MiB / 2 - 2 * MiB);
}

static void test_alloc_top_down(void **state)
{
	struct mm mm;
	uint64_t top = BASE + 16 * MiB;

	(void)state;
	mm_init(&mm, BASE, 16 * MiB);
	assert_int_equal(mm_alloc(&mm, 0x1000, 0x1000), top - 0x1000);
	assert_int_equal(mm_alloc(&mm, 0x1000, 0x1000), top - 0x2000);
	assert_int_equal(mm_alloc(&mm, 0x3000, 0x1000), top - 0x5000);
	expect_ranges(&mm, (struct rng[]){{BASE, top - 0x5000}}, 1);
	assert_int_equal(mm_free_bytes(&mm), 16 * MiB - 0x5000);
}

static void test_alloc_alignment(void **state)
{
	struct mm mm;
	uint64_t top = BASE + 16 * MiB, a;

	(void)state;
	mm_init(&mm, BASE, 16 * MiB);
	assert_int_equal(mm_alloc(&mm, 0x1000, 0x1000), top - 0x1000);
	/* 2 MiB aligned: the highest 2 MiB boundary that leaves room below top-4K */
	a = mm_alloc(&mm, 2 * MiB, 2 * MiB);
	assert_int_equal(a, BASE + 12 * MiB);
	expect_ranges(&mm, (struct rng[]){{BASE, BASE + 12 * MiB}, {BASE + 14 * MiB, top - 0x1000}},
		      2);
	/* a small allocation goes to the highest place: the tail above */
	assert_int_equal(mm_alloc(&mm, 0x1000, 0x4000), top - 0x4000);
	/* 16 KiB alignment for a G-stage root */
	a = mm_alloc(&mm, 0x4000, 0x4000);
	assert_int_equal(a, top - 0x8000);
	assert_true((a & 0x3fff) == 0);
	/* huge alignment: 8 MiB boundary */
	a = mm_alloc(&mm, MiB, 8 * MiB);
	assert_int_equal(a, BASE + 8 * MiB);
	assert_int_equal(mm_free_bytes(&mm), 16 * MiB - 0x1000 - 2 * MiB - 0x1000 - 0x4000 - MiB);
}

static void test_alloc_prefers_highest_range(void **state)
{
	struct mm mm;

	(void)state;
	mm_init(&mm, BASE, 64 * MiB);
	assert_int_equal(mm_reserve(&mm, BASE + 4 * MiB, 56 * MiB), 0);
	/* [0,4) MiB and [60,64) MiB free: the upper one is used first */
	assert_int_equal(mm_alloc(&mm, 2 * MiB, 2 * MiB), BASE + 62 * MiB);
	assert_int_equal(mm_alloc(&mm, 2 * MiB, 2 * MiB), BASE + 60 * MiB);
	/* upper range gone: the lower one */
	assert_int_equal(mm_alloc(&mm, 2 * MiB, 2 * MiB), BASE + 2 * MiB);
	/* a range too small for the request is skipped even if higher */
	mm_init(&mm, BASE, 64 * MiB);
	assert_int_equal(mm_reserve(&mm, BASE + 4 * MiB, 59 * MiB), 0); /* [63,64) left on top */
	assert_int_equal(mm_alloc(&mm, 2 * MiB, 0x1000), BASE + 2 * MiB);
}

static void test_alloc_exhaustion(void **state)
{
	struct mm mm;

	(void)state;
	mm_init(&mm, BASE, 4 * MiB);
	assert_int_equal(mm_alloc(&mm, 4 * MiB + 0x1000, 0x1000), 0);
	assert_int_equal(mm_free_bytes(&mm), 4 * MiB);
	assert_int_equal(mm_alloc(&mm, 4 * MiB, 0x1000), BASE);
	assert_int_equal(mm_free_bytes(&mm), 0);
	assert_int_equal(mm_alloc(&mm, 0x1000, 0x1000), 0);
	assert_int_equal(mm_alloc(&mm, 1, 1), 0);
}

static void test_alloc_alignment_does_not_fit(void **state)
{
	struct mm mm;

	(void)state;
	/* 8 KiB free at [BASE+4K, BASE+12K): no 16 KiB aligned 4 KiB block inside */
	mm_init(&mm, BASE + 0x1000, 0x2000);
	assert_int_equal(mm_alloc(&mm, 0x1000, 0x4000), 0);
	assert_int_equal(mm_free_bytes(&mm), 0x2000);
	/* 8 KiB aligned fits: BASE+8K */
	assert_int_equal(mm_alloc(&mm, 0x1000, 0x2000), BASE + 0x2000);
	expect_ranges(&mm, (struct rng[]){{BASE + 0x1000, BASE + 0x2000}}, 1);
}

static void test_alloc_bad_arguments(void **state)
{
	struct mm mm;

	(void)state;
	mm_init(&mm, BASE, 16 * MiB);
	assert_int_equal(mm_alloc(&mm, 0x1000, 0), 0);
	assert_int_equal(mm_alloc(&mm, 0x1000, 3), 0);
	assert_int_equal(mm_alloc(&mm, 0x1000, 0x1800), 0);
	assert_int_equal(mm_alloc(&mm, 0x1000, UINT64_MAX), 0);
	assert_int_equal(mm_alloc(&mm, 0, 0x1000), 0);
	assert_int_equal(mm_alloc(&mm, UINT64_MAX, 0x1000), 0);
	assert_int_equal(mm.nr, 1);
	assert_int_equal(mm_free_bytes(&mm), 16 * MiB);
	/* align 1 is a power of two: any address */
	assert_int_equal(mm_alloc(&mm, 10, 1), BASE + 16 * MiB - 10);
}

static void test_alloc_many_no_overlap(void **state)
{
	struct mm mm;
	uint64_t got[64];
	unsigned int n = 0;

	(void)state;
	mm_init(&mm, BASE, 8 * MiB);
	/* mixed sizes and alignments until exhaustion; no two blocks may overlap */
	for (;;) {
		uint64_t size = (n % 3 + 1) * 0x1000, align = 0x1000ULL << (n % 4), a;

		a = mm_alloc(&mm, size, align);
		if (!a)
			break;
		assert_true(n < 64 * 2);
		assert_true(a % align == 0);
		assert_true(a >= BASE && a + size <= BASE + 8 * MiB);
		if (n < 64)
			got[n] = a | (size >> 12); /* low bits hold the size in pages */
		for (unsigned int j = 0; j < n && j < 64; j++) {
			uint64_t b = got[j] & ~0xfffULL, bs = (got[j] & 0xfff) << 12;

			assert_true(a + size <= b || b + bs <= a);
		}
		n++;
		if (n == 40)
			break;
	}
	assert_int_equal(n, 40);
}

/*
 * BUG (core/mm.c mm_alloc): the result of mm_reserve() is ignored. When the
 * aligned block sits inside a range so that reserving it needs a split and
 * all MM_RANGES_MAX slots are in use, mm_reserve fails, yet mm_alloc still
 * returns the address: the block stays free and is handed out again.
 * Expected: 0 (or a block that is really reserved).
 */
static void test_alloc_when_reserve_has_no_slot(void **state)
{
	struct mm mm;
	uint64_t before, a, b;

	(void)state;
	mm_init(&mm, BASE, 16 * MiB);
	/* 16 ranges [k MiB, k MiB + 32 KiB) */
	assert_int_equal(mm_reserve(&mm, BASE + 0x8000, 16 * MiB - 0x8000), 0);
	for (int k = 1; k < 16; k++) {
		mm.free[mm.nr].base = BASE + k * MiB;
		mm.free[mm.nr].end = BASE + k * MiB + 0x8000;
		mm.nr++;
	}
	assert_int_equal(mm.nr, MM_RANGES_MAX);
	before = mm_free_bytes(&mm);

	/* top range [15M, 15M+32K): 16 KiB aligned 4 KiB block at 15M+16K splits it */
	a = mm_alloc(&mm, 0x1000, 0x4000);
	if (a) {
		assert_int_equal(mm_free_bytes(&mm), before - 0x1000);
		b = mm_alloc(&mm, 0x1000, 0x4000);
		assert_int_not_equal(a, b);
	}
}

/*
 * BUG (core/mm.c mm_reserve): a zero-sized reservation strictly inside a
 * range takes the "splits it" path and cuts the range in two empty-gap
 * halves: it uses a slot and a later allocation of the whole range fails.
 */
static void test_zero_size_reserve_splits_range(void **state)
{
	struct mm mm;

	(void)state;
	mm_init(&mm, BASE, 16 * MiB);
	assert_int_equal(mm_reserve(&mm, BASE + 8 * MiB, 0), 0);
	assert_int_equal(mm_free_bytes(&mm), 16 * MiB);
	assert_int_equal(mm.nr, 1);
	assert_int_equal(mm_alloc(&mm, 16 * MiB, 0x1000), BASE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_reserve_split),
		cmocka_unit_test(test_reserve_trim_head_and_tail),
		cmocka_unit_test(test_reserve_outside_is_noop),
		cmocka_unit_test(test_reserve_swallow),
		cmocka_unit_test(test_reserve_across_ranges),
		cmocka_unit_test(test_reserve_swallow_all_many),
		cmocka_unit_test(test_reserve_overflowing_size),
		cmocka_unit_test(test_reserve_slot_exhaustion),
		cmocka_unit_test(test_alloc_top_down),
		cmocka_unit_test(test_alloc_alignment),
		cmocka_unit_test(test_alloc_prefers_highest_range),
		cmocka_unit_test(test_alloc_exhaustion),
		cmocka_unit_test(test_alloc_alignment_does_not_fit),
		cmocka_unit_test(test_alloc_bad_arguments),
		cmocka_unit_test(test_alloc_many_no_overlap),
		cmocka_unit_test(test_alloc_when_reserve_has_no_slot),
		cmocka_unit_test(test_zero_size_reserve_splits_range),
	};

	return cmocka_run_group_tests_name("core/mm", tests, NULL, NULL);
}
