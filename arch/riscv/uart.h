/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef ARCH_UART_H
#define ARCH_UART_H

#include <stdint.h>

void uart_init(uintptr_t base, unsigned int reg_shift);
void uart_putc(char c);
int uart_getc(void);

#endif
