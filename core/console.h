/* SPDX-License-Identifier: BSD-2-Clause */
/* The physical console, shared by the hypervisor log and guests' streams. */
#ifndef CORE_CONSOLE_H
#define CORE_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vm;

void console_init(uintptr_t uart_base, unsigned int reg_shift);
/*
 * Guest output, forwarded at once unless another guest's line is open
 * (console.c): how many bytes were taken, as many as its buffer has room
 * for (0 while the UART drains it); never waits for the UART
 */
size_t console_guest_write(struct vm *vm, const char *s, size_t len);
/* One byte: false if it was not taken (its buffer is full) */
bool console_guest_putc(struct vm *vm, char c);
/* Move waiting output on, if there is any (a hart's timer tick) */
void console_poll(void);
/*
 * The guest stops: what it has buffered goes out as far as the ring has room
 * beside the reserve (the rest is dropped, with a line saying how much), and
 * its open line ends; never waits for the UART
 */
void console_guest_flush(struct vm *vm);
/*
 * A line of the hypervisor's own data (a profile chunk), newline added:
 * written now unless a guest's line is open and the guest not idle, or the
 * ring has no room for it beside the reserve (false: try again later), so
 * that no guest line is ever split and nothing waits for the UART; force
 * (power-off) ends the line and waits.
 */
bool console_data_line(const char *s, size_t len, bool force);
/* Write every held message and buffered output, end the open line (at power-off) */
void console_flush_all(void);
/* The next input character for this guest, -1 if none (or it has no focus) */
int console_getc(struct vm *vm);

#endif
