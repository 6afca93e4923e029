/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Profiling guests from the hypervisor (docs/profiling.md): the vPMU's
 * sampling counter wraps (vpmu_host_sample), the core records where the
 * guest is (core/profile_format.h) in the hart's buffer and drains it to
 * the console as "!P " lines that tools/profile.py reads back.
 */
#ifndef CORE_PROFILE_H
#define CORE_PROFILE_H

#include <stdbool.h>

struct vcpu;

/* Boot hart, after the guests are created: the stream's header and the profiled guests */
void profile_start(void);
/* A sample of v, the vCPU loaded on this hart (its trap state holds the guest's pc) */
void profile_sample(struct vcpu *v);
/* Every hart's buffer out (power-off: no vCPU runs any more) */
void profile_flush_all(void);

#endif
