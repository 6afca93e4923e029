/* SPDX-License-Identifier: BSD-2-Clause */
/* A physical hart and its queue of vCPUs. */
#ifndef CORE_HART_H
#define CORE_HART_H

#include <stdbool.h>
#include <stdint.h>
#include "lib.h"
#include "vpmu.h"

#define HART_MAX 8

struct vcpu;

struct hart {
	unsigned long stack_top; /* first: read by _secondary_start */
	unsigned int index;
	unsigned long hartid;
	spinlock_t lock;     /* the queue: other harts may steal from it */
	struct vcpu *queue;  /* round-robin list */
	struct vcpu *cur;    /* the vCPU being run */
	struct vcpu *loaded; /* the vCPU whose state is live in the CSRs */
	unsigned long slice_end;
	uint64_t timer_armed; /* what the hart's timer holds, to skip rewrites */
	bool resched;
	bool settled;			 /* reached its first idle or guest entry (boot barrier) */
	uint64_t excl_turn_end;		 /* exclusive counting: when its turn with the token ends */
	uint64_t excl_rest_until;	 /* ... and until when it leaves the others alone */
	volatile unsigned long park_gen; /* the last token release it has seen while parked */
	struct vpmu_hart pmu;		 /* whose configuration each physical counter holds */
};

extern struct hart harts[HART_MAX];
extern unsigned int nr_harts;

static inline struct hart *this_hart(void)
{
	struct hart *h;

	asm volatile("mv %0, tp" : "=r"(h));
	return h;
}

void sched_add(struct hart *h, struct vcpu *v);
/* Boot hart: wait until the other harts have settled, so their start-up
 * instructions are done before any guest counts its own */
void sched_wait_settled(unsigned int others);
void sched_kick_and_settle(void);
/* After the vPMU's boot probes: whether vCPUs with running counters run alone */
void sched_excl_init(void);
/* Whether waking hart h for new work needs an IPI now */
bool sched_needs_ipi(const struct hart *h);
__attribute__((noreturn)) void sched_run(struct hart *h);
void sched_yield(void);
/* Boot probe for vpmu: another (idle, settled) hart spins while this one sleeps */
bool sched_busy_other_hart(unsigned long iters);
/* Called from the timer interrupt path */
void sched_timer_tick(struct hart *h);

#endif
