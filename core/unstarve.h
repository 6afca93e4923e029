/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Harts that look out for each other where the platform's scheduler of
 * harts can leave one no time at all (QEMU -icount, docs/quirks.md
 * near-top). core/unstarve.c says how.
 */
#ifndef CORE_UNSTARVE_H
#define CORE_UNSTARVE_H

#include <stdbool.h>
#include <stdint.h>
#include "vpmu/vpmu.h"

struct hart;

/* Set once at boot (unstarve_init): the harts look out for each other */
extern bool unstarve_on;

/* Boot hart, after the vPMU's probes: whether a hart may get no time at all */
void unstarve_init(bool may_starve);
/*
 * A hart about to idle or park with v loaded: whether to put it first. Its
 * sampling counter would stay enabled, and one count below its top it
 * starves the harts that run until this one wakes: a put stops it.
 */
static inline bool unstarve_put_idle(const struct vpmu *v)
{
	return unstarve_on && vpmu_sampled(v);
}
/* h woke from idle: its next look a look from now, not at once */
void unstarve_awake(struct hart *h);
/*
 * At h's timer interrupt: halt a moment if another hart made no progress for
 * long; the next look in h->look_at, which bounds h's timer while it runs a
 * guest (sched_arm_timer)
 */
void unstarve_tick(struct hart *h, uint64_t now);

#endif
