/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * This hart's per-hart area. tp holds the address of the hart's table (the
 * core's struct hart) from boot on, and a module finds its own per-hart
 * state there at a build-time offset (the core generates them:
 * core/offsets.c), so reaching it is one addi from tp.
 */
#ifndef ARCH_RISCV_PERCPU_H
#define ARCH_RISCV_PERCPU_H

#ifdef __CPPCHECK__
/* cppcheck misreads every later asm output after a global register variable */
char *percpu_base(void);
#else
/* A global register variable: tp is never allocated by the compiler (the psABI's thread pointer) */
register char *percpu_tp __asm__("tp");

static inline char *percpu_base(void)
{
	return percpu_tp;
}
#endif

#endif
