// SPDX-License-Identifier: BSD-2-Clause
#include <stddef.h>
#include "arch/riscv/gstage.h"

static unsigned int vpn(uint64_t gpa, int level)
{
	/* level 2 takes 11 bits (the x4 widening), levels 1 and 0 take 9 */
	uint64_t mask = level == 2 ? 0x7ff : 0x1ff;

	return (unsigned int)((gpa >> (12 + 9 * level)) & mask);
}

static uint64_t *next_table(uint64_t *pte, gstage_alloc_fn alloc)
{
	if (!(*pte & PTE_V)) {
		uint64_t *t = alloc ? alloc(SZ_4K, SZ_4K) : NULL;

		if (!t)
			return NULL;
		*pte = (((uint64_t)(uintptr_t)t >> 12) << 10) | PTE_V;
	} else if (*pte & PTE_RWX) {
		return NULL; /* already a leaf */
	}
	return (uint64_t *)(uintptr_t)((*pte >> 10) << 12);
}

static int map_one(uint64_t *root, uint64_t gpa, uint64_t hpa, int leaf_level, uint64_t prot,
		   gstage_alloc_fn alloc)
{
	uint64_t *table = root;

	for (int level = 2; level > leaf_level; level--) {
		table = next_table(&table[vpn(gpa, level)], alloc);
		if (!table)
			return -1;
	}
	table[vpn(gpa, leaf_level)] = ((hpa >> 12) << 10) | prot | PTE_U | PTE_A | PTE_D | PTE_V;
	return 0;
}

uint64_t gstage_leaf_size(uint64_t gpa, uint64_t hpa, uint64_t size)
{
	uint64_t leaf = SZ_1G;

	while (leaf > SZ_4K && (((gpa | hpa) & (leaf - 1)) || size < leaf))
		leaf >>= 9;
	return leaf;
}

int gstage_map(uint64_t *root, uint64_t gpa, uint64_t hpa, uint64_t size, uint64_t prot,
	       gstage_alloc_fn alloc)
{
	/* W without R is reserved; host addresses must fit the 44-bit PPN */
	if (!root || ((gpa | hpa | size) & (SZ_4K - 1)) || !(prot & PTE_RWX) || (prot & ~PTE_RWX) ||
	    ((prot & PTE_W) && !(prot & PTE_R)) || gpa + size < gpa ||
	    gpa + size > (1ULL << GSTAGE_GPA_BITS) || hpa + size < hpa || hpa + size > (1ULL << 56))
		return -1;
	while (size) {
		uint64_t step = gstage_leaf_size(gpa, hpa, size);
		int level = step == SZ_1G ? 2 : step == SZ_2M ? 1 : 0;

		if (map_one(root, gpa, hpa, level, prot, alloc))
			return -1;
		gpa += step;
		hpa += step;
		size -= step;
	}
	return 0;
}

uint64_t gstage_translate(const uint64_t *root, uint64_t gpa)
{
	const uint64_t *table = root;

	if (gpa >> GSTAGE_GPA_BITS)
		return UINT64_MAX;
	for (int level = 2; level >= 0; level--) {
		uint64_t pte = table[vpn(gpa, level)];

		if (!(pte & PTE_V))
			return UINT64_MAX;
		if (pte & PTE_RWX) {
			uint64_t page = 1ULL << (12 + 9 * level);

			return ((pte >> 10) << 12) + (gpa & (page - 1));
		}
		table = (const uint64_t *)(uintptr_t)((pte >> 10) << 12);
	}
	return UINT64_MAX;
}
