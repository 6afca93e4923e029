/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the QEMU quirks' workarounds share between their files (qemu.c, the
 * wrapped operations; qemu_tlb.c, tlb-overflow's held starts): private to
 * them.
 */
#ifndef VPMU_PHYS_QEMU_INTERNAL_H
#define VPMU_PHYS_QEMU_INTERNAL_H

#include "vpmu/phys.h"
#include "vpmu/phys/qemu.h"

/* The backend's own operations, which the workarounds call (qemu_quirks_init) */
extern struct phys_ops qemu_raw;

static inline struct qemu_hart *qemu_this_hart(void)
{
	return &phys_this_hart()->qemu;
}

/* The wrapped release: event-map's and bias's marks, then the backend's */
long qemu_release(unsigned int idx);

/*
 * tlb-overflow: start counter idx, configured for a TLB event (qemu_hart.tlb),
 * near its top from value with its OF bit held set
 */
long qemu_start_tlb(struct qemu_hart *q, unsigned int idx, uint64_t value);

#endif
