// SPDX-License-Identifier: BSD-2-Clause
/*
 * G-stage page tables (arch/riscv/gstage.c). Tables come from aligned_alloc:
 * on the host a pointer is its own "physical address", so the code walks
 * them directly. Mapped host-physical addresses are never dereferenced.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "arch/riscv/gstage.h"

#define SZ_1G	  0x40000000ULL
#define LEAF_BITS (PTE_U | PTE_A | PTE_D | PTE_V)

static void *pages[4096];
static unsigned int nr_pages;
static int budget = -1; /* pages the allocator may still hand out; -1: unlimited */

static void *alloc_page(uint64_t size, uint64_t align)
{
	void *p;

	/* gstage_map asks for table pages only */
	assert_int_equal(size, 4096);
	assert_int_equal(align, 4096);
	if (budget == 0)
		return NULL;
	if (budget > 0)
		budget--;
	assert_true(nr_pages < sizeof(pages) / sizeof(pages[0]));
	p = aligned_alloc(4096, 4096);
	assert_non_null(p);
	memset(p, 0, 4096);
	pages[nr_pages++] = p;
	return p;
}

static uint64_t *root;

static int setup(void **state)
{
	(void)state;
	root = aligned_alloc(GSTAGE_ROOT_SIZE, GSTAGE_ROOT_SIZE);
	memset(root, 0, GSTAGE_ROOT_SIZE);
	nr_pages = 0;
	budget = -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < nr_pages; i++)
		free(pages[i]);
	free(root);
	return 0;
}

static unsigned int vpn(uint64_t gpa, int level)
{
	return (gpa >> (12 + 9 * level)) & (level == 2 ? 0x7ff : 0x1ff);
}

static uint64_t *pte_table(uint64_t pte)
{
	return (uint64_t *)(uintptr_t)((pte >> 10) << 12);
}

/* The PTE for gpa at `level` (2: root), asserting the upper levels are pointers */
static uint64_t pte_at(uint64_t gpa, int level)
{
	uint64_t *t = root;

	for (int l = 2; l > level; l--) {
		uint64_t pte = t[vpn(gpa, l)];

		assert_true(pte & PTE_V);
		assert_int_equal(pte & (PTE_RWX | PTE_U | PTE_A | PTE_D), 0); /* non-leaf */
		t = pte_table(pte);
	}
	return t[vpn(gpa, level)];
}

static uint64_t leaf(uint64_t hpa, uint64_t prot)
{
	return ((hpa >> 12) << 10) | prot | LEAF_BITS;
}

static void test_2m_leaves_when_aligned(void **state)
{
	const uint64_t gpa = 0x80200000, hpa = 0x123400000; /* both 2 MiB aligned */

	(void)state;
	assert_int_equal(gstage_map(root, gpa, hpa, 4 * SZ_2M, PTE_RWX, alloc_page), 0);
	assert_int_equal(nr_pages, 1); /* one level-1 table, no level-0 tables */
	for (int i = 0; i < 4; i++)
		assert_int_equal(pte_at(gpa + i * SZ_2M, 1), leaf(hpa + i * SZ_2M, PTE_RWX));
	/* neighbours untouched */
	assert_int_equal(pte_at(gpa - SZ_2M, 1), 0);
	assert_int_equal(pte_at(gpa + 4 * SZ_2M, 1), 0);
	/* the root entry is a pointer: V only */
	assert_int_equal(root[vpn(gpa, 2)] & 0x3ff, PTE_V);
}

static void test_1g_leaves_when_aligned(void **state)
{
	/* both 1 GiB aligned: 2 GiB in root leaves, then a 2 MiB and a 4 KiB tail */
	const uint64_t gpa = 0x80000000, hpa = 0x140000000, size = 2 * SZ_1G + SZ_2M + SZ_4K;

	(void)state;
	assert_int_equal(gstage_map(root, gpa, hpa, size, PTE_RWX, alloc_page), 0);
	assert_int_equal(pte_at(gpa, 2), leaf(hpa, PTE_RWX));
	assert_int_equal(pte_at(gpa + SZ_1G, 2), leaf(hpa + SZ_1G, PTE_RWX));
	assert_int_equal(pte_at(gpa + 2 * SZ_1G, 1), leaf(hpa + 2 * SZ_1G, PTE_RWX));
	assert_int_equal(pte_at(gpa + 2 * SZ_1G + SZ_2M, 0),
			 leaf(hpa + 2 * SZ_1G + SZ_2M, PTE_RWX));
	assert_int_equal(nr_pages, 2); /* the tail's level-1 and level-0 tables only */
	assert_int_equal(root[vpn(gpa, 2) - 1], 0);
	assert_int_equal(gstage_translate(root, gpa + SZ_1G + 0x12345678),
			 hpa + SZ_1G + 0x12345678);
	assert_int_equal(gstage_translate(root, gpa + size), UINT64_MAX);
}

static void test_2m_leaves_when_hpa_not_1g_aligned(void **state)
{
	/* a whole aligned GiB of guest space on host memory aligned to 2 MiB only */
	const uint64_t gpa = 0x80000000, hpa = 0x140200000;

	(void)state;
	assert_int_equal(gstage_map(root, gpa, hpa, SZ_1G, PTE_RWX, alloc_page), 0);
	assert_int_equal(nr_pages, 1);
	assert_int_equal(root[vpn(gpa, 2)] & 0x3ff, PTE_V);
	for (uint64_t off = 0; off < SZ_1G; off += SZ_2M)
		assert_int_equal(pte_at(gpa + off, 1), leaf(hpa + off, PTE_RWX));
}

static void test_4k_leaves_when_unaligned(void **state)
{
	const uint64_t gpa = 0x80001000, hpa = 0x90003000;

	(void)state;
	assert_int_equal(gstage_map(root, gpa, hpa, 3 * SZ_4K, PTE_R | PTE_W, alloc_page), 0);
	assert_int_equal(nr_pages, 2); /* level 1 + level 0 */
	for (int i = 0; i < 3; i++)
		assert_int_equal(pte_at(gpa + i * SZ_4K, 0), leaf(hpa + i * SZ_4K, PTE_R | PTE_W));
	assert_int_equal(pte_at(gpa - SZ_4K, 0), 0);
	assert_int_equal(pte_at(gpa + 3 * SZ_4K, 0), 0);
	/* level-1 entry is a pointer to the level-0 table */
	assert_int_equal(pte_at(gpa, 1) & 0x3ff, PTE_V);
}

static void test_4k_leaves_when_hpa_unaligned(void **state)
{
	/* gpa 2 MiB aligned but hpa only 4 KiB aligned: no 2 MiB leaf possible */
	const uint64_t gpa = 0x80000000, hpa = 0x90001000;

	(void)state;
	assert_int_equal(gstage_map(root, gpa, hpa, SZ_2M, PTE_RWX, alloc_page), 0);
	assert_int_equal(nr_pages, 2);
	for (uint64_t off = 0; off < SZ_2M; off += SZ_4K)
		assert_int_equal(pte_at(gpa + off, 0), leaf(hpa + off, PTE_RWX));
}

static void test_4k_leaves_when_size_small(void **state)
{
	const uint64_t gpa = 0x80000000, hpa = 0x90000000;

	(void)state;
	assert_int_equal(gstage_map(root, gpa, hpa, SZ_2M - SZ_4K, PTE_R, alloc_page), 0);
	assert_int_equal(nr_pages, 2);
	assert_int_equal(pte_at(gpa, 0), leaf(hpa, PTE_R));
	assert_int_equal(pte_at(gpa + SZ_2M - 2 * SZ_4K, 0), leaf(hpa + SZ_2M - 2 * SZ_4K, PTE_R));
	assert_int_equal(pte_at(gpa + SZ_2M - SZ_4K, 0), 0);
}

static void test_mixed_head_huge_tail(void **state)
{
	/* starts 4 KiB below a 2 MiB boundary: 1 small page, 2 huge, 1 small */
	const uint64_t gpa = 0x801ff000, hpa = 0xa01ff000, size = SZ_4K + 2 * SZ_2M + SZ_4K;

	(void)state;
	assert_int_equal(gstage_map(root, gpa, hpa, size, PTE_RWX, alloc_page), 0);
	assert_int_equal(pte_at(gpa, 0), leaf(hpa, PTE_RWX));
	assert_int_equal(pte_at(0x80200000, 1), leaf(0xa0200000, PTE_RWX));
	assert_int_equal(pte_at(0x80400000, 1), leaf(0xa0400000, PTE_RWX));
	assert_int_equal(pte_at(0x80600000, 0), leaf(0xa0600000, PTE_RWX));
	assert_int_equal(pte_at(0x80601000, 0), 0);
	/* one level-1 table, two level-0 tables (head and tail) */
	assert_int_equal(nr_pages, 3);
	for (uint64_t off = 0; off < size; off += 0x777)
		assert_int_equal(gstage_translate(root, gpa + off), hpa + off);
}

static void test_root_uses_x4_index(void **state)
{
	/* Sv39x4: the root has 2048 entries, indexed by gpa[40:30] */
	const uint64_t gpa = (1ULL << 40) + 3 * SZ_1G, hpa = 0x80000000;

	(void)state;
	assert_int_equal(gstage_map(root, gpa, hpa, SZ_2M, PTE_RWX, alloc_page), 0);
	assert_int_equal(vpn(gpa, 2), 1027);
	assert_true(root[1027] & PTE_V);
	assert_int_equal(root[3], 0); /* not aliased into the low 512 entries */
	assert_int_equal(gstage_translate(root, gpa + 0x1234), hpa + 0x1234);
	assert_int_equal(gstage_translate(root, 3 * SZ_1G + 0x1234), UINT64_MAX);
}

static void test_translate_round_trip(void **state)
{
	/* several regions; random probes inside must land at the right hpa */
	static const struct {
		uint64_t gpa, hpa, size;
	} r[] = {
		{0x80000000, 0x100000000, 64 * SZ_2M},
		{0x10000000, 0x200003000, 37 * SZ_4K},
		{0x1ffffe00000, 0x300000000, SZ_2M}, /* last 2 MiB below 2^41 */
		{0x40000000, 0x7fe00000, SZ_2M + 5 * SZ_4K},
	};
	unsigned int seed = 12345;

	(void)state;
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		assert_int_equal(
			gstage_map(root, r[i].gpa, r[i].hpa, r[i].size, PTE_RWX, alloc_page), 0);
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		assert_int_equal(gstage_translate(root, r[i].gpa), r[i].hpa);
		assert_int_equal(gstage_translate(root, r[i].gpa + r[i].size - 1),
				 r[i].hpa + r[i].size - 1);
		for (int k = 0; k < 2000; k++) {
			uint64_t off;

			seed = seed * 1103515245 + 12345;
			off = (((uint64_t)seed << 20) ^ (seed >> 3)) % r[i].size;
			assert_int_equal(gstage_translate(root, r[i].gpa + off), r[i].hpa + off);
		}
		/* just outside */
		if (r[i].gpa)
			assert_int_equal(gstage_translate(root, r[i].gpa - 1), UINT64_MAX);
		if (r[i].gpa + r[i].size < (1ULL << 41))
			assert_int_equal(gstage_translate(root, r[i].gpa + r[i].size), UINT64_MAX);
	}
}

static void test_translate_unmapped(void **state)
{
	(void)state;
	assert_int_equal(gstage_translate(root, 0), UINT64_MAX);
	assert_int_equal(gstage_translate(root, 0x80000000), UINT64_MAX);
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, PTE_RWX, alloc_page), 0);
	assert_int_equal(gstage_translate(root, 0x80000000), 0x80000000);
	assert_int_equal(gstage_translate(root, 0x80000fff), 0x80000fff);
	assert_int_equal(gstage_translate(root, 0x80001000), UINT64_MAX); /* same L0 table */
	assert_int_equal(gstage_translate(root, 0x80200000), UINT64_MAX); /* same L1 table */
	assert_int_equal(gstage_translate(root, 0xc0000000), UINT64_MAX); /* other root slot */
	/* beyond the 41-bit guest-physical space: never translated, even if it aliases */
	assert_int_equal(gstage_translate(root, 0x80000000 + (1ULL << 41)), UINT64_MAX);
	assert_int_equal(gstage_translate(root, 1ULL << 41), UINT64_MAX);
	assert_int_equal(gstage_translate(root, UINT64_MAX), UINT64_MAX);
}

static void test_translate_gigapage(void **state)
{
	/* a 1 GiB leaf in the root, as gstage_map writes for aligned gigabytes */
	(void)state;
	root[5] = leaf(0x240000000, PTE_RWX);
	assert_int_equal(gstage_translate(root, 5 * SZ_1G), 0x240000000);
	assert_int_equal(gstage_translate(root, 5 * SZ_1G + 0x3fffffff), 0x27fffffff);
	assert_int_equal(gstage_translate(root, 6 * SZ_1G), UINT64_MAX);
}

static void test_prot_bits(void **state)
{
	(void)state;
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, PTE_R, alloc_page), 0);
	assert_int_equal(gstage_map(root, 0x80001000, 0x80001000, SZ_4K, PTE_R | PTE_X, alloc_page),
			 0);
	assert_int_equal(gstage_map(root, 0x80200000, 0x80200000, SZ_2M, PTE_R | PTE_W, alloc_page),
			 0);
	assert_int_equal(pte_at(0x80000000, 0), leaf(0x80000000, PTE_R));
	assert_int_equal(pte_at(0x80001000, 0), leaf(0x80001000, PTE_R | PTE_X));
	assert_int_equal(pte_at(0x80200000, 1), leaf(0x80200000, PTE_R | PTE_W));
	/* U, A, D and V set on every leaf: guest accesses are U-mode for G-stage */
	assert_int_equal(pte_at(0x80200000, 1) & LEAF_BITS, LEAF_BITS);
}

static void test_bad_arguments(void **state)
{
	const uint64_t lim = 1ULL << 41;

	(void)state;
	/* misaligned gpa, hpa, size */
	assert_int_equal(gstage_map(root, 0x80000800, 0x80000000, SZ_4K, PTE_RWX, alloc_page), -1);
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000001, SZ_4K, PTE_RWX, alloc_page), -1);
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, 0x800, PTE_RWX, alloc_page), -1);
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K + 1, PTE_RWX, alloc_page),
			 -1);
	/* prot: none, or bits outside R/W/X */
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, 0, alloc_page), -1);
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, PTE_R | PTE_V, alloc_page),
			 -1);
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, PTE_R | PTE_U, alloc_page),
			 -1);
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, 1UL << 63, alloc_page),
			 -1);
	/* beyond the 2^41 guest-physical space */
	assert_int_equal(gstage_map(root, lim, 0x80000000, SZ_4K, PTE_RWX, alloc_page), -1);
	assert_int_equal(gstage_map(root, lim - SZ_4K, 0x80000000, 2 * SZ_4K, PTE_RWX, alloc_page),
			 -1);
	assert_int_equal(gstage_map(root, lim - SZ_2M, 0x80000000, 2 * SZ_2M, PTE_RWX, alloc_page),
			 -1);
	/* gpa + size wraps around */
	assert_int_equal(
		gstage_map(root, 0xfffffffffffff000ULL, 0x80000000, 2 * SZ_4K, PTE_RWX, alloc_page),
		-1);
	assert_int_equal(
		gstage_map(root, SZ_4K, 0x80000000, 0xfffffffffffff000ULL, PTE_RWX, alloc_page),
		-1);
	/* no root */
	assert_int_equal(gstage_map(NULL, 0x80000000, 0x80000000, SZ_4K, PTE_RWX, alloc_page), -1);
	/* none of this touched the tables */
	assert_int_equal(nr_pages, 0);
	for (int i = 0; i < 2048; i++)
		assert_int_equal(root[i], 0);
	/* right at the limit is fine */
	assert_int_equal(gstage_map(root, lim - SZ_4K, 0x80000000, SZ_4K, PTE_RWX, alloc_page), 0);
	assert_int_equal(gstage_translate(root, lim - 1), 0x80000fff);
}

static void test_alloc_failure(void **state)
{
	(void)state;
	/* no allocator at all */
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, PTE_RWX, NULL), -1);
	/* allocator that fails at once */
	budget = 0;
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, PTE_RWX, alloc_page), -1);
	assert_int_equal(nr_pages, 0);
	/* a 4 KiB page needs two tables: the second allocation fails */
	budget = 1;
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, PTE_RWX, alloc_page), -1);
	assert_int_equal(nr_pages, 1);
	assert_int_equal(gstage_translate(root, 0x80000000), UINT64_MAX);
	/* with the level-1 table in place, a 2 MiB leaf needs nothing more */
	budget = 0;
	assert_int_equal(gstage_map(root, 0x80200000, 0x90200000, SZ_2M, PTE_RWX, alloc_page), 0);
	assert_int_equal(gstage_translate(root, 0x80200000), 0x90200000);
	/* existing tables are reused without allocating */
	budget = -1;
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, PTE_RWX, alloc_page), 0);
	assert_int_equal(nr_pages, 2);
	budget = 0;
	assert_int_equal(gstage_map(root, 0x80001000, 0x80001000, 8 * SZ_4K, PTE_RWX, alloc_page),
			 0);
	assert_int_equal(nr_pages, 2);
	assert_int_equal(gstage_translate(root, 0x80008000), 0x80008000);
	/* and with NULL alloc when no table is needed */
	assert_int_equal(gstage_map(root, 0x80400000, 0x90400000, SZ_2M, PTE_RWX, NULL), 0);
	assert_int_equal(gstage_translate(root, 0x80400010), 0x90400010);
}

static void test_small_page_inside_huge_leaf_fails(void **state)
{
	(void)state;
	assert_int_equal(gstage_map(root, 0x80000000, 0x90000000, SZ_2M, PTE_RWX, alloc_page), 0);
	/* a 4 KiB mapping would need a level-0 table where a 2 MiB leaf is */
	assert_int_equal(gstage_map(root, 0x80001000, 0xa0001000, SZ_4K, PTE_RWX, alloc_page), -1);
	/* the huge leaf is intact */
	assert_int_equal(pte_at(0x80000000, 1), leaf(0x90000000, PTE_RWX));
	assert_int_equal(gstage_translate(root, 0x80001000), 0x90001000);
}

/*
 * BUG (arch/riscv/gstage.c gstage_map): hpa is not range-checked; hpa + size
 * wrapping past 2^64 is accepted (the tail is mapped at hpa 0). Expected -1.
 */
static void test_hpa_wrap_accepted(void **state)
{
	(void)state;
	assert_int_equal(
		gstage_map(root, 0x80000000, 0xfffffffffffff000ULL, 2 * SZ_4K, PTE_RWX, alloc_page),
		-1);
}

/*
 * BUG (arch/riscv/gstage.c gstage_map): an hpa of 2^56 or more does not fit
 * the 44-bit PPN: ((hpa >> 12) << 10) spills into the reserved/PBMT/N bits
 * 54..63 of the PTE. Expected -1.
 */
static void test_hpa_beyond_56_bits_accepted(void **state)
{
	(void)state;
	assert_int_equal(gstage_map(root, 0x80200000, 1ULL << 56, SZ_4K, PTE_RWX, alloc_page), -1);
}

/*
 * BUG (arch/riscv/gstage.c gstage_map): prot W without R (PTE_W, PTE_W|PTE_X)
 * is accepted, but R=0,W=1 is a reserved PTE encoding in the privileged spec
 * (the guest would take a G-stage page fault on any access). Expected -1.
 */
static void test_write_without_read_accepted(void **state)
{
	(void)state;
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, PTE_W, alloc_page), -1);
	assert_int_equal(gstage_map(root, 0x80000000, 0x80000000, SZ_4K, PTE_W | PTE_X, alloc_page),
			 -1);
}

/* hgatp: Sv39x4 mode, the VMID in bits 44-57, the root's page number below */
static void test_hgatp_fields(void **state)
{
	(void)state;
	assert_int_equal(gstage_hgatp(0x80a00000, 3), 0x8000300000080a00ULL);
	/* a 56-bit physical root: its 44-bit page number fills the field below the VMID */
	assert_int_equal(gstage_hgatp(0xfffffffffff000ULL, 0x3fff), 0x83ffffffffffffffULL);
}

/*
 * Which VMs share VMID 0: those whose hgatp is at or above the limit. The
 * root's bits never decide it, only how many VMID bits the hart keeps and
 * how many a test allows.
 */
static void test_vmid_limit(void **state)
{
	const uint64_t top_root = 0xfffffffffff000ULL; /* every PPN bit set */
	uint64_t l;

	(void)state;
	l = gstage_vmid_limit(0x3fff, 14); /* 14 bits, as QEMU keeps: none shares */
	assert_true(gstage_hgatp(top_root, 1) < l);
	assert_true(gstage_hgatp(top_root, 8) < l);
	assert_true(gstage_hgatp(top_root, 0x3fff) < l);
	l = gstage_vmid_limit(0, 14); /* VMIDLEN 0: every VMID but 0 shares */
	assert_true(gstage_hgatp(top_root, 0) < l);
	assert_true(gstage_hgatp(0, 1) >= l);
	l = gstage_vmid_limit(0x7, 14); /* 3 bits */
	assert_true(gstage_hgatp(top_root, 7) < l);
	assert_true(gstage_hgatp(0, 8) >= l);
	l = gstage_vmid_limit(0x3fff, 1); /* vmid-bits=1 */
	assert_true(gstage_hgatp(top_root, 1) < l);
	assert_true(gstage_hgatp(0, 2) >= l);
	assert_true(gstage_hgatp(0, 3) >= l);
	l = gstage_vmid_limit(0x3fff, 0); /* vmid-bits=0 */
	assert_true(gstage_hgatp(0, 1) >= l);
	/* bits read back above the VMID field are not VMID bits */
	assert_int_equal(gstage_vmid_limit(0xffff, 14), gstage_vmid_limit(0x3fff, 14));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_2m_leaves_when_aligned),
		T(test_1g_leaves_when_aligned),
		T(test_2m_leaves_when_hpa_not_1g_aligned),
		T(test_4k_leaves_when_unaligned),
		T(test_4k_leaves_when_hpa_unaligned),
		T(test_4k_leaves_when_size_small),
		T(test_mixed_head_huge_tail),
		T(test_root_uses_x4_index),
		T(test_translate_round_trip),
		T(test_translate_unmapped),
		T(test_translate_gigapage),
		T(test_prot_bits),
		T(test_bad_arguments),
		T(test_alloc_failure),
		T(test_small_page_inside_huge_leaf_fails),
		T(test_hpa_wrap_accepted),
		T(test_hpa_beyond_56_bits_accepted),
		T(test_write_without_read_accepted),
		T(test_hgatp_fields),
		T(test_vmid_limit),
	};

	return cmocka_run_group_tests_name("arch/riscv/gstage", tests, NULL, NULL);
}
