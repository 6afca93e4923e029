// SPDX-License-Identifier: BSD-2-Clause
#include <string.h>
#include "core/mm.h"

void mm_init(struct mm *mm, uint64_t base, uint64_t size)
{
	mm->nr = 1;
	mm->free[0].base = base;
	mm->free[0].end = base + size;
}

int mm_reserve(struct mm *mm, uint64_t base, uint64_t size)
{
	uint64_t end = base + size;

	if (!size)
		return 0;
	if (end < base)
		end = UINT64_MAX;
	for (unsigned int i = 0; i < mm->nr; i++) {
		uint64_t fb = mm->free[i].base, fe = mm->free[i].end;

		if (end <= fb || base >= fe)
			continue;
		if (base <= fb && end >= fe) { /* swallows the range */
			mm->free[i] = mm->free[--mm->nr];
			i--;
		} else if (base <= fb) {
			mm->free[i].base = end;
		} else if (end >= fe) {
			mm->free[i].end = base;
		} else { /* splits it */
			if (mm->nr == MM_RANGES_MAX)
				return -1;
			mm->free[i].end = base;
			mm->free[mm->nr].base = end;
			mm->free[mm->nr].end = fe;
			mm->nr++;
		}
	}
	return 0;
}

uint64_t mm_alloc(struct mm *mm, uint64_t size, uint64_t align)
{
	int best = -1;
	uint64_t best_addr = 0;

	if (!size || !align || (align & (align - 1)))
		return 0;
	for (unsigned int i = 0; i < mm->nr; i++) {
		uint64_t fb = mm->free[i].base, fe = mm->free[i].end, a;

		if (fe - fb < size)
			continue;
		a = (fe - size) & ~(align - 1);
		if (a < fb)
			continue;
		if (best < 0 || a > best_addr) {
			best = (int)i;
			best_addr = a;
		}
	}
	if (best < 0 || mm_reserve(mm, best_addr, size))
		return 0;
	return best_addr;
}

uint64_t mm_free_bytes(const struct mm *mm)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < mm->nr; i++)
		n += mm->free[i].end - mm->free[i].base;
	return n;
}
