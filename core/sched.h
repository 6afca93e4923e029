/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The scheduler: every hart runs the vCPUs of its queue round robin
 * (core/sched.c), answers a guest's SBI call on the trap vector's short way
 * (core/lane.c), and at boot settles before any guest counts
 * (core/boot_sync.c). Exclusive counting has its own header (core/excl.h).
 */
#ifndef CORE_SCHED_H
#define CORE_SCHED_H

#include <stdbool.h>

struct hart;
struct vcpu;
struct vcpu_ctx;

/* Queue v on hart h (boot, and a steal) */
void sched_add(struct hart *h, struct vcpu *v);
/* Every hart's loop, from boot on */
__attribute__((noreturn)) void sched_run(struct hart *h);
/* Called from the timer interrupt path */
void sched_timer_tick(struct hart *h);

/* The trap vector's short way for a guest's SBI call (arch/riscv/entry.S) */
struct vcpu_ctx *sched_guest_ecall(struct vcpu_ctx *c);
/* ... and for the local counter overflow interrupt (LCOFI) */
struct vcpu_ctx *sched_guest_lcofi(struct vcpu_ctx *c);

/*
 * Boot hart: wait until the other harts have settled, so their start-up
 * instructions are done before any guest counts its own
 */
void sched_wait_settled(unsigned int others);
void sched_kick_and_settle(void);
/* Boot probe for vpmu: another (idle, settled) hart spins while this one sleeps */
bool sched_busy_other_hart(unsigned long iters);

/*
 * The running vCPU waits (Zawrs wrs.nto) for a store another vCPU must make:
 * let that one run
 */
void sched_yield_spin(struct hart *h);

/* Exclusive counting's release (core/excl.c): a vCPU with running counters leaves the hart */
void sched_put_counting(struct hart *h);

#endif
