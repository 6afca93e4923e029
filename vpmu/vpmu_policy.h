/* SPDX-License-Identifier: BSD-2-Clause */
/* A guest's PMU policy, as the core's configuration parser fills it (docs/configuration.md). */
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
struct vpmu_policy {
	uint32_t counters_mask; /* 0: every hardware counter of the host */
	bool no_firmware;
	unsigned int nr_allow; /* 0: every event; else only these */
	struct vpmu_event_rule allow[VPMU_POLICY_RULES];
	unsigned int nr_deny;
	struct vpmu_event_rule deny[VPMU_POLICY_RULES];
};

#endif
