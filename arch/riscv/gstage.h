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

/* hgatp: the G-stage's mode, VMID (up to 14 bits on RV64) and root */
#define HGATP_MODE_SV39X4 (8ULL << 60)
#define HGATP_VMID_SHIFT  44
#define HGATP_VMID_MASK	  (0x3fffULL << HGATP_VMID_SHIFT)

/* hgatp for a G-stage table at root under vmid */
static inline uint64_t gstage_hgatp(uint64_t root, unsigned int vmid)
{
	return HGATP_MODE_SV39X4 | ((uint64_t)vmid << HGATP_VMID_SHIFT) | (root >> 12);
}

/*
 * The lowest Sv39x4 hgatp whose VMID a hart does not keep: kept is what it
 * read back of ones written to every VMID bit (VMIDLEN bits, the low ones),
 * of which at most bits_max count (a test's limit). An hgatp from there up
 * names a VMID the hart would cut short.
 */
static inline uint64_t gstage_vmid_limit(uint64_t kept, unsigned int bits_max)
{
	kept &= HGATP_VMID_MASK >> HGATP_VMID_SHIFT;
	if (bits_max < 14)
		kept &= (1ULL << bits_max) - 1;
	return HGATP_MODE_SV39X4 | ((kept + 1) << HGATP_VMID_SHIFT);
}

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
