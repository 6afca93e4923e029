/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * QEMU 10's PMU quirks (qemu.c describes each): inside the physical layer
 * only. qemu_quirks_init() decides at boot which are on and wraps the
 * backend's operations in their workarounds; with none on, the backend runs
 * unwrapped and the hooks below cost one test of a word that is 0.
 */
#ifndef VPMU_PHYS_QEMU_H
#define VPMU_PHYS_QEMU_H

#include <stdbool.h>
#include <stdint.h>
#include "vpmu/phys/backend.h"

enum qemu_quirk {
	QEMU_STALE_DEADLINE = 1U << 0, /* a far start's overflow deadline outlives a near start */
	QEMU_EVENT_MAP = 1U << 1,      /* one counter per event and hart counts it */
	QEMU_BIAS = 1U << 2,	       /* cycles, instret counters below 2^63 livelock QEMU */
	QEMU_OTHER_HARTS = 1U << 3,    /* -icount charges other harts' instructions */
	QEMU_TLB_OVERFLOW = 1U << 4,   /* a TLB-event overflow under -icount aborts QEMU */
	QEMU_NEAR_TOP = 1U << 5,       /* a counter one below its top starves the other harts */
	QEMU_QUIRKS_ALL = (1U << 6) - 1,
};

/* The quirks on (boot hart, qemu_quirks_init; constant afterwards) */
extern unsigned int qemu_quirks;

/*
 * Boot hart, once the backend is chosen: which quirks apply (on for QEMU's
 * virt machine, by its host DT, unless the hypervisor's bootargs say
 * pmu-quirks=none or list the ones to keep), and their workarounds wrapped
 * around *ops. Says which on the boot console.
 */
void qemu_quirks_init(struct phys_ops *ops);

/* bias: counters that ever ran biased on some hart (reads of the others skip the lookup) */
extern uint32_t qemu_ever_biased;
/* The bias counter idx (< 32) runs with on this hart */
uint64_t qemu_bias_of(unsigned int idx);
/* hcounteren bits with this hart's biased counters taken out (a direct read would see the bias) */
unsigned long qemu_hide_biased(unsigned long bits);
/* The 64-bit programmable counters (the only ones QEMU's livelock concerns) */
void qemu_set_wide(uint32_t mask);

/*
 * Configure ev on idx (vpmu_phys_config while event-map, bias or tlb-overflow is
 * on): the backend's direct configuration where it leaves QEMU's event map
 * as it is, else the host's, the map kept.
 */
struct sbi_ret qemu_config(unsigned int idx, unsigned long flags, unsigned long ev, uint64_t data);

/*
 * Boot hart, from the probes: counters count instructions exactly (QEMU
 * -icount), where a TLB-event overflow would abort QEMU (tlb-overflow)
 */
void qemu_note_icount(bool exact);

/* event-map: the counter QEMU's map gives ev to on this hart, or -1 */
int qemu_holder_of(const struct qemu_hart *q, unsigned long ev);

#endif
