/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host replacement for arch/riscv/timer.h (found first through
 * -I core/test/stubs, as arch/riscv/timer.h): the test sets the time.
 */
#ifndef ARCH_TIMER_H
#define ARCH_TIMER_H

#include <stdbool.h>
#include <stdint.h>

extern uint64_t stub_time;

static inline uint64_t timer_now(void)
{
	return stub_time;
}
/*
 * Declared only: the code under test that arms a timer or naps (core/hart.h)
 * is not called on the host
 */
void timer_arm(uint64_t when);
bool timer_nap(uint64_t until);
void timer_halt(uint64_t until);
void timer_repost_ipi(void);
bool timer_wait_ipi(bool timer, volatile unsigned long *signal, unsigned long val);

#endif
