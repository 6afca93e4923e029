/* SPDX-License-Identifier: BSD-2-Clause */
/* A physical hart and its queue of vCPUs. */
#ifndef CORE_HART_H
#define CORE_HART_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/riscv/cpu.h"
#include "core/excl.h"
#include "core/lib.h"
#include "arch/riscv/timer.h"
#include "vpmu/phys/types.h"
#include "arch/riscv/vcpu_arch.h"
#include "vpmu/vpmu.h"

#define HART_MAX 8

struct vcpu;
struct hart_status;

/*
 * What the scheduler armed the hart's timer and chose the vCPU from: filled
 * by sched_see, compared by sched_fast_return (core/sched_internal.h)
 */
struct sched_seen {
	uint64_t timer, pmu_deadline;
	bool recheck, counting;
};

struct hart {
	struct arch_hart arch; /* first: tp points at both; stack_top, the loaded vCPU */
	unsigned int index;
	unsigned long hartid;
	spinlock_t lock;    /* the queue: other harts may steal from it */
	struct vcpu *queue; /* round-robin list */
	struct vcpu *cur;   /* the vCPU being run (its state live in the CSRs: hart_loaded) */
	unsigned long slice_end;
	unsigned long idle_wakes; /* idle sleeps in a row after which it found nothing to run */
	uint64_t timer_armed;	  /* what the hart's timer holds, to skip rewrites */
	uint64_t timer_rest;	  /* ... what sched_arm_timer found but the vPMU's deadline */
	bool resched;
	bool excl_on; /* excl_enabled (core/excl.h), at hand: the PMU lane tests both at once */
	bool exit_handled;	    /* the trap vector's short way answered the vCPU's exit */
	struct sched_seen seen;	    /* ... and what it compares with after every SBI call */
	struct hart_status *status; /* &hart_status[index] */
	bool settled;		    /* reached its first idle or guest entry (boot barrier) */
	struct excl_hart excl;	    /* exclusive counting: its turn, its park (core/excl.c) */
	struct vpmu_hart pmu;	    /* whose configuration each physical counter holds */
	struct phys_hart phys;	    /* the vPMU's physical layer: its own per-hart state */
	uint64_t look_at; /* its next look for a starved hart (core/unstarve.c), or UINT64_MAX */
};

/*
 * What each hart is doing, in a fixed layout of 64 bytes per hart, for a
 * debugger or the test runner: tools/qemu.py reads hart_status through
 * QEMU's monitor when a run hangs and prints it with the harts' pcs.
 */
enum hart_doing {
	HART_IDLE = 0,	     /* nothing to run, waiting for an interrupt */
	HART_GUEST = 1,	     /* running `guest`'s vCPU `vcpu` */
	HART_HYPERVISOR = 2, /* handling that vCPU's exit */
	HART_PARKED = 3,     /* halted while another hart's vCPU counts */
};
struct hart_status {
	char guest[16];	     /* the vCPU's guest name (truncated), "" before the first */
	uint64_t vcpu;	     /* its id */
	uint64_t doing;	     /* enum hart_doing */
	uint64_t entries;    /* guest entries so far, but for the PMU lane's (core/sched.c) */
	uint64_t last_cause; /* scause of its last exit to the hypervisor, but for the lane's */
	uint64_t last_pc;    /* sepc of that exit (an SBI call's: past the ecall, entry.S) */
	uint64_t since;	     /* timer ticks when it last went idle or parked */
};
extern struct hart_status hart_status[HART_MAX];

extern struct hart harts[HART_MAX];
extern unsigned int nr_harts;

static inline struct hart *this_hart(void)
{
	return cpu_get_tp();
}

/* Program hart h's timer (this hart's) for t, UINT64_MAX: off; no write if it holds t already */
static inline void hart_arm_timer(struct hart *h, uint64_t t)
{
	if (t != h->timer_armed) {
		h->timer_armed = t;
		timer_arm(t);
	}
}

/*
 * Halt for `ticks` or until an IPI (made pending again), instead of spinning
 * while another hart must move on: under QEMU -icount one thread runs the
 * harts in turn, and a spinning hart runs through its whole budget before
 * the one it waits for runs again. h's timer is armed again as it was.
 * Returns whether an IPI came.
 */
static inline bool hart_nap(struct hart *h, uint64_t ticks)
{
	bool ipi = timer_nap(timer_now() + ticks);

	if (ipi)
		timer_repost_ipi();
	if (h->timer_armed != UINT64_MAX)
		timer_arm(h->timer_armed);
	return ipi;
}

/* ... for `ticks` only: an IPI stays pending for later (timer_halt) */
static inline void hart_halt(struct hart *h, uint64_t ticks)
{
	timer_halt(timer_now() + ticks);
	if (h->timer_armed != UINT64_MAX)
		timer_arm(h->timer_armed);
}

/* What hart h does from now on, for the hang report */
static inline void hart_set_doing(struct hart *h, enum hart_doing d)
{
	h->status->doing = d;
	h->status->since = timer_now();
}

#endif
