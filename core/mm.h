/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host physical memory: a list of free ranges (RAM minus what firmware,
 * the hypervisor, the host DT and the bundle occupy). Allocations are
 * carved from the top and never freed: guests live as long as the machine.
 */
#ifndef CORE_MM_H
#define CORE_MM_H

#include <stdint.h>

#define MM_RANGES_MAX 16

struct mm {
	unsigned int nr;
	struct {
		uint64_t base, end;
	} free[MM_RANGES_MAX];
};

void mm_init(struct mm *mm, uint64_t base, uint64_t size);
/* Remove [base, base+size) from the free ranges; -1 when out of slots */
int mm_reserve(struct mm *mm, uint64_t base, uint64_t size);
/* Aligned allocation; 0 when nothing fits */
uint64_t mm_alloc(struct mm *mm, uint64_t size, uint64_t align);
uint64_t mm_free_bytes(const struct mm *mm);

extern struct mm host_mm;
/* Zeroed pages for the hypervisor's own use; panics when memory runs out */
void *mm_zalloc_pages(uint64_t size, uint64_t align);

#endif
