/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef ARCH_UART_H
#define ARCH_UART_H

#include <stdbool.h>
#include <stdint.h>

void uart_init(uintptr_t base, unsigned int reg_shift);
/* Whether the transmitter takes a byte now (also with no UART: output dropped) */
bool uart_tx_ready(void);
/* Give it one: only after uart_tx_ready() said yes */
void uart_tx(char c);
int uart_getc(void);

#endif
