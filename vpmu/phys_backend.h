/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Between the physical PMU backends (vpmu/phys_*.c) only: vpmu_phys.h is
 * implemented by phys_common.c, which chooses at boot between the SBI
 * backend (phys_sbi.c: OpenSBI configures, starts and stops) and the
 * counter-delegation backend (phys_cdeleg.c: HS-mode does it through
 * Smcdeleg/Ssccfg CSRs), and forwards the calls that differ.
 */
#ifndef VPMU_PHYS_BACKEND_H
#define VPMU_PHYS_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/riscv/sbi_spec.h"

#define PHYS_FIRST_PROG	  3
#define PHYS_HOST_FILTERS 0xf8UL /* config flags SET_VUINH..SET_MINH */

/* A host SBI PMU call */
struct sbi_ret phys_sbi_call(unsigned long fid, unsigned long a0, unsigned long a1,
			     unsigned long a2, unsigned long a3, unsigned long a4);

/* What differs between the backends (vpmu_phys.h has their meaning) */
struct phys_ops {
	struct sbi_ret (*config)(unsigned int idx, unsigned long host_flags,
				 unsigned long event_idx, uint64_t event_data);
	/*
	 * consume: QEMU quirk 1 needs it run near its top first (phys_common.c
	 * decides); idx below 32 and not 1 (phys_common.c checks)
	 */
	long (*start)(unsigned int idx, uint64_t value, bool consume);
	long (*stop)(unsigned int idx, int reset);
	/* stop a started counter and read its CSR as it is, bias included (idx checked) */
	uint64_t (*stop_read_one)(unsigned int idx);
	long (*stop_mask)(uint32_t mask);
	long (*start_mask)(uint32_t mask);
	/* optional: write values[i] into each counter of mask, then start them all */
	void (*start_values)(uint32_t mask, const uint64_t *values);
	/* optional: stop every counter of mask, then read each into values[i] as it is */
	void (*stop_read)(uint32_t mask, uint64_t *values);
	bool start_keeps_of; /* vpmu_phys_start_keeps_of */
};
extern const struct phys_ops phys_sbi_ops, phys_cdeleg_ops;

/* The counter-delegation backend's boot probe: can it be used on this host? */
bool phys_cdeleg_usable(void);

/*
 * QEMU's stale overflow deadline (phys_common.c, where every QEMU quirk is
 * described): true if counter idx, stopped and about to start from value,
 * must first run near its top for a moment (the backend does that with its
 * own start and stop, then starts it from value). phys_common.c decides
 * it for every start it makes (vpmu_phys_start, vpmu_phys_start_values)
 * and passes it as the start op's consume; the SBI backend's masked start
 * asks here itself.
 */
bool phys_quirk_stale_deadline(unsigned int idx, uint64_t value);
/* Counters of mask run from far below their top: what the quirk does for those, at once */
void phys_note_far(uint32_t mask);
/* The counters last started (or written) far from their top on this hart */
uint32_t phys_far_mask(void);

/* Far from the top: QEMU arms its overflow timer beyond INT64_MAX ns (2^63 + 1 included) */
static inline bool phys_far_from_top(uint64_t v)
{
	return v == 0 || -v > (1ULL << 62);
}
#define PHYS_CONSUME_COUNTS 256

/*
 * QEMU quirk 5 (phys_common.c): what a start adds to a value below 2^63 so
 * that the host counter runs in [2^63, 2^63 + 2^62), at least 2^62 counts
 * from its own wrap; values from 2^63 on run as they are.
 */
static inline uint64_t phys_upper_half_bias(uint64_t value)
{
	if (value >> 63)
		return 0;
	return value >> 62 ? 1ULL << 62 : 1ULL << 63;
}

/*
 * Must counter idx, about to run from value, be biased? cyc and ins: the
 * 64-bit counters that may count cycles / instret (raw events: both); low:
 * those running below 2^63 unbiased. Only if value is below 2^63, idx may
 * count a timed event, and a counter that may count the other one already
 * runs low: QEMU needs one of each to loop. So a guest that counts one
 * event from 0 keeps its direct reads.
 */
static inline bool phys_needs_bias(uint32_t cyc, uint32_t ins, uint32_t low, unsigned int idx,
				   uint64_t value)
{
	uint32_t other = 0;

	if (value >> 63)
		return false;
	if ((cyc >> idx) & 1)
		other |= ins;
	if ((ins >> idx) & 1)
		other |= cyc;
	return (low & other & ~(1U << idx)) != 0;
}

struct vpmu_hart;
/* The counter QEMU maps ev to on hart h (quirk 2, phys_common.c), or -1 */
int phys_holder_of(const struct vpmu_hart *h, unsigned long ev);

/* The counter's CSR as it is, bias included (vpmu_phys_read subtracts it) */
uint64_t phys_read_raw(unsigned int idx);

#endif
