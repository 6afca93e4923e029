/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Exclusive counting (core/excl.c): where the platform charges a hart's
 * mode-filtered counters with the instructions of every hart (QEMU -icount,
 * found by the vPMU's boot probe), a vCPU with running hardware counters runs
 * only while every other hart is halted. The scheduler asks before every
 * guest entry; when it is off (excl_enabled false: silicon, one hart, no
 * -icount), the turns and the token are never used; the idle sleep
 * (excl_sleep, excl_sleeping, excl_wake_sleepers), excl_defer_kick and
 * excl_fence_now serve every hart all the same.
 */
#ifndef CORE_EXCL_H
#define CORE_EXCL_H

#include <stdbool.h>
#include <stdint.h>

struct hart;
struct vcpu;

/* A hart's part, in struct hart (core/hart.h) */
struct excl_hart {
	uint64_t turn_end;	    /* when its turn ends, while it holds the token */
	const struct vcpu *counter; /* ... the vCPU that counted with it */
	uint64_t pause_end;	    /* ... which, having stopped, keeps it until then (0: counts) */
	volatile unsigned long park_gen; /* the last token release it has seen while parked */
	volatile unsigned long ipi_gen; /* mark of the last acquisition's IPI to it, stored after */
	volatile unsigned long ipi_seen; /* ... as it read it before its acknowledgement */
	volatile uint64_t wake_at;	 /* halted until then: see excl_sleep() */
	bool fence_pending;		 /* a guest remote fence waits for it to leave its park */
};

/* Exclusive counting is on; written once, by excl_init */
extern bool excl_enabled;

/* Boot hart, after the vPMU's probes: whether the platform charges a hart with others' work */
void excl_init(bool counts_other_harts);

/* ---- the scheduler's side (core/sched.c), only while excl_enabled ---- */
/*
 * Before entering v: may it run now? False: we waited, or v left the hart
 * (its hart's turn is over): look at the queue again
 */
bool excl_enter(struct hart *h, struct vcpu *v, unsigned long now);
/* Take the token, all other harts parked; false: it was taken, we parked until its release */
bool excl_acquire(struct hart *h);
/* Give the token back if h holds it (a counting vCPU leaves the hart first) */
void excl_release(struct hart *h);
/* h has nothing to run: the token back, and its turn is over */
void excl_idle(struct hart *h);
/* h's vCPU spins on another: a hart that waits for a turn gets it now (false: none waits) */
bool excl_yield(struct hart *h);
/* ... none waits: h halts for a nap, so that the hart the vCPU waits for runs */
void excl_spin_nap(struct hart *h);
/* Whether h holds the token */
bool excl_mine(const struct hart *h);
/* Whether another hart holds it: h must park */
bool excl_blocked(const struct hart *h);
/* Whether any hart holds it */
bool excl_taken(void);
/* Whether no hart holds it nor waits for it or for a turn, but maybe h */
bool excl_quiet(const struct hart *h);
/* Halt, waiting for IPIs only, as long as another hart holds the token */
void excl_park(struct hart *h);
/* Wake the harts sleeping until a time already past (see excl_sleep) */
void excl_wake_sleepers(const struct hart *h, uint64_t now);
/*
 * Arm h's timer (it runs a vCPU) for next, or earlier if exclusive counting
 * must look again sooner: its turn or pause with the token ends, or another
 * hart sleeps until then (sched_arm_timer's last step)
 */
void excl_arm_timer(struct hart *h, uint64_t next);
/*
 * After a PMU call on the lane: whether v still counts and holds its turn,
 * or still does not count (was_counting: what the scheduler saw at entry)
 */
bool excl_unchanged(struct hart *h, struct vcpu *v, bool was_counting);
/*
 * ... and when not: whether excl_enter would let v go on now without a look
 * at the others, and that done (a stop starts its pause with the token, a
 * start within its turn ends it). The caller re-arms the timer
 * (excl_arm_timer).
 */
bool excl_lane(struct hart *h, struct vcpu *v);

/*
 * Halt until an interrupt (rest: until an IPI or this hart's timer), the
 * timer armed for `until` (UINT64_MAX: not). Any hart's idle sleep, not only
 * while excl_enabled: timed sleeps are told to the running harts then.
 */
unsigned long excl_sleep(struct hart *h, uint64_t until, bool rest);
/* Whether the hart of that index halts in excl_sleep now (a racy hint) */
bool excl_sleeping(unsigned int index);

/* ---- for the rest of the core, any time ---- */
/* A vCPU's hardware counters are about to start on this hart (vpmu_host.h) */
void excl_counting_starts(struct vcpu *v);
/* Of the harts in hmask (hartid bits), those a remote fence must reach now (core/excl_defer.c) */
unsigned long excl_fence_now(unsigned long hmask);
/* A kick to hart h: true if it waits for the token's release (no IPI now) */
bool excl_defer_kick(struct hart *h);

#endif
