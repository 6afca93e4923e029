/* SPDX-License-Identifier: BSD-2-Clause */
/* The hypervisor's own timer: Sstc stimecmp when present, else SBI TIME. */
#ifndef ARCH_TIMER_H
#define ARCH_TIMER_H

#include <stdbool.h>
#include <stdint.h>

void timer_init(bool sstc);
static inline uint64_t timer_now(void)
{
	uint64_t t;

	asm volatile("rdtime %0" : "=r"(t));
	return t;
}
/* Interrupt this hart at 'when' (UINT64_MAX: never) */
void timer_arm(uint64_t when);
/* Take the pending HS timer interrupt: disarm it */
void timer_ack(void);
/* Take a pending IPI, if any (every wait below takes IPIs this way); whether there was one */
bool timer_take_ipi(void);
/* Wait with interrupts masked until something is pending; returns sip */
unsigned long timer_idle(void);
/*
 * Wait for an IPI only (and this hart's timer if `timer`): other pending
 * interrupts (the loaded vCPU's, a counter overflow) do not end the wait
 * and stay pending. Takes the IPI; returns at once if one is pending already. Else,
 * if signal is not NULL, `val` is stored to *signal by the instruction right
 * before wfi: whoever sees it knows this hart executes nothing more until
 * an IPI wakes it; awake, it stores ~0 there first. Returns whether it took
 * an IPI.
 */
bool timer_wait_ipi(bool timer, volatile unsigned long *signal, unsigned long val);
/*
 * Halt until `until` or an IPI, whichever comes first; other interrupts do not
 * end it. The timer is left disarmed. Returns whether an IPI came (taken: give
 * it back with timer_repost_ipi once the wait is over).
 */
bool timer_nap(uint64_t until);
/* Halt until `until`; an IPI does not end it and stays pending. The timer is left disarmed. */
void timer_halt(uint64_t until);
/* Make this hart's IPI pending again (one that timer_nap took) */
void timer_repost_ipi(void);

#endif
