/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A guest's PMU policy and the hypervisor's profiling of it, as the core's
 * configuration parser fills them (docs/configuration.md, docs/profiling.md).
 */
#ifndef VPMU_VPMU_POLICY_H
#define VPMU_VPMU_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A guest's PMU policy (configuration DT, docs/configuration.md): which
 * hardware counters it may use, which events, and whether it gets the
 * firmware counters. Rules are event_idx ranges [first, last].
 */
#define VPMU_POLICY_RULES 16
struct vpmu_event_rule {
	uint32_t first, last;
	uint32_t counters; /* allow rules: hardware counters the events may use */
};
/*
 * Profiling the guest from the hypervisor (docs/profiling.md): an SBI PMU
 * event counted for the guest's VS and VU modes on a hardware counter the
 * guest is not offered, a sample (vpmu_host_sample) every period events.
 * period 0: not profiled.
 */
struct vpmu_profile {
	uint32_t event_idx;  /* SBI event_idx: 0x1 cycles, 0x2 instructions, ... */
	uint64_t event_data; /* raw events' data */
	uint64_t period;
};

struct vpmu_policy {
	uint32_t counters_mask; /* 0: every hardware counter of the host */
	bool no_firmware;
	unsigned int nr_allow; /* 0: every event; else only these */
	struct vpmu_event_rule allow[VPMU_POLICY_RULES];
	unsigned int nr_deny;
	struct vpmu_event_rule deny[VPMU_POLICY_RULES];
	struct vpmu_profile profile;
};

#endif
