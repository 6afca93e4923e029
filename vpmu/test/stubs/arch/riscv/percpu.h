/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host replacement for arch/riscv/percpu.h (found first through
 * -I vpmu/test/stubs): "this hart" is the fake per-hart area fake_percpu
 * points at (vpmu/test/fake_host.c; a test may switch between two).
 */
#ifndef ARCH_RISCV_PERCPU_H
#define ARCH_RISCV_PERCPU_H

extern char *fake_percpu;

static inline char *percpu_base(void)
{
	return fake_percpu;
}

#endif
