/* SPDX-License-Identifier: BSD-2-Clause */
/* Small freestanding helpers used across the hypervisor. */
#ifndef CORE_LIB_H
#define CORE_LIB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* picolibc's tinystdio: snprintf, vsnprintf (no errno, no TLS) */

#define ARRAY_SIZE(a)	      (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a)	      (((x) + (a)-1) & ~((uint64_t)(a)-1))
#define IS_ALIGNED(x, a)      (((x) & ((uint64_t)(a)-1)) == 0)
#define container_of(p, t, m) ((t *)((char *)(p)-offsetof(t, m)))
#define BIT(n)		      (1UL << (n))
/* Branch hints for the paths make bench measures: the unlikely side is laid out out of line */
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Hypervisor log line to the console, serialised with guest output */
void hv_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__attribute__((noreturn)) void hv_panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Power the machine off through the host SBI; failure selects the reason */
__attribute__((noreturn)) void hv_poweroff(bool failure);

typedef struct {
	volatile int locked;
} spinlock_t;

/* Take l, which another hart holds (core/spinlock.c) */
__attribute__((cold)) void spin_lock_contended(spinlock_t *l);

static inline void spin_lock(spinlock_t *l)
{
	if (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		spin_lock_contended(l);
}

/* Take it if it is free: whether it was */
static inline bool spin_trylock(spinlock_t *l)
{
	return !__atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void spin_unlock(spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
