/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading a loaded guest's memory by its virtual addresses, as its own
 * VS- or VU-mode loads would see it, where any fault (unmapped, no
 * permission, outside its RAM, misaligned) is an answer, not a trap: for
 * walking what a guest's registers point to (frame pointers, task data).
 */
#ifndef ARCH_GUEST_VA_H
#define ARCH_GUEST_VA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The loaded vCPU's len bytes at va, as VS-mode (vs) or VU-mode loads of
 * the aligned doublewords holding them would read them: 0, or -1 if one of
 * those loads would fault (dst is then partly written)
 */
int guest_va_read(unsigned long va, bool vs, void *dst, size_t len);

/* trap.c: a trap at the load instruction resumes at the fault label */
bool guest_va_fixup(unsigned long scause, unsigned long sepc);

#endif
