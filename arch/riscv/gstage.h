/* SPDX-License-Identifier: BSD-2-Clause */
/* G-stage (guest-physical -> host-physical) page tables, Sv39x4. */
#ifndef ARCH_GSTAGE_H
#define ARCH_GSTAGE_H

#include <stdint.h>

#define PTE_V	(1UL << 0)
#define PTE_R	(1UL << 1)
#define PTE_W	(1UL << 2)
#define PTE_X	(1UL << 3)
#define PTE_U	(1UL << 4)
#define PTE_A	(1UL << 6)
#define PTE_D	(1UL << 7)
#define PTE_RWX (PTE_R | PTE_W | PTE_X)

#define SZ_4K 0x1000ULL	    /* base page */
#define SZ_2M 0x200000ULL   /* megapage: leaf at level 1; guest RAM is aligned to it */
#define SZ_1G 0x40000000ULL /* gigapage: leaf at level 2 */

#define GSTAGE_ROOT_SIZE 16384 /* Sv39x4 root: 2048 entries, 16 KiB aligned */
#define GSTAGE_GPA_BITS	 41

/*
 * Returns size zeroed bytes aligned to align, whose address is their
 * physical address (the hypervisor's memory allocator: mm_zalloc_pages)
 */
typedef void *(*gstage_alloc_fn)(uint64_t size, uint64_t align);

/*
 * Map [gpa, gpa+size) to [hpa, ...) with prot (PTE_R/W/X). 1 GiB and 2 MiB
 * leaves are used where both addresses and the remaining size allow. Returns 0, or -1
 * for misaligned or out-of-range arguments or when alloc fails.
 */
int gstage_map(uint64_t *root, uint64_t gpa, uint64_t hpa, uint64_t size, uint64_t prot,
	       gstage_alloc_fn alloc);
/* The leaf gstage_map writes first at gpa -> hpa: the largest both addresses and size allow */
uint64_t gstage_leaf_size(uint64_t gpa, uint64_t hpa, uint64_t size);
/* Host-physical address for gpa, or UINT64_MAX when unmapped */
uint64_t gstage_translate(const uint64_t *root, uint64_t gpa);

#endif
