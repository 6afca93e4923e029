/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host replacement for the generated vpmu/host_offsets.h: the fake hart's
 * per-hart area holds the two tables the core's struct hart embeds.
 */
#ifndef VPMU_HOST_OFFSETS_H
#define VPMU_HOST_OFFSETS_H

#include <stddef.h>
#include "vpmu/phys/types.h"
#include "vpmu/vpmu.h"

struct fake_percpu {
	struct vpmu_hart pmu;
	struct phys_hart phys;
};

#define VPMU_HOST_HART_OFFSET offsetof(struct fake_percpu, pmu)
#define VPMU_HOST_PHYS_OFFSET offsetof(struct fake_percpu, phys)

#endif
