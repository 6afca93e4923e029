// SPDX-License-Identifier: BSD-2-Clause
/*
 * Where struct hart keeps the vPMU's per-hart tables, for its inline
 * per-hart accessors (vpmu_host_hart, phys_this_hart: tp plus a constant).
 * Never linked: the Makefile compiles it to assembly and turns each
 * *_offset constant into a #define of $(BUILD)/gen/vpmu/host_offsets.h, as
 * Linux's asm-offsets and Bao's asm_defs.c do.
 */
#include <stddef.h>
#include "core/hart.h"

const unsigned long vpmu_host_hart_offset = offsetof(struct hart, pmu);
const unsigned long vpmu_host_phys_offset = offsetof(struct hart, phys);
