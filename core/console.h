/* SPDX-License-Identifier: BSD-2-Clause */
/* The physical console, shared by the hypervisor log and guests' streams. */
#ifndef CORE_CONSOLE_H
#define CORE_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

struct vm;

void console_init(uintptr_t uart_base, unsigned int reg_shift);
/* Write a whole line atomically with respect to other writers */
void console_write_line(const char *prefix, const char *text, size_t len);
/* Append guest output; complete lines are printed with "[name] " */
void console_guest_putc(struct vm *vm, char c);
void console_guest_flush(struct vm *vm);
/* The next input character for this guest, -1 if none (or it has no focus) */
int console_getc(struct vm *vm);

#endif
