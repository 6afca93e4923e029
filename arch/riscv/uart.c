// SPDX-License-Identifier: BSD-2-Clause
/* ns16550a UART, the console QEMU virt offers; polled, no interrupts, never waited for. */
#include <stdbool.h>
#include <stdint.h>
#include "arch/riscv/uart.h"

#define UART_RBR 0
#define UART_THR 0
#define UART_LSR 5
#define LSR_DR	 0x01
#define LSR_THRE 0x20

static volatile uint8_t *uart;
static unsigned int shift;

void uart_init(uintptr_t base, unsigned int reg_shift)
{
	uart = (volatile uint8_t *)base;
	shift = reg_shift;
}

bool uart_tx_ready(void)
{
	return !uart || (uart[UART_LSR << shift] & LSR_THRE);
}

void uart_tx(char c)
{
	if (uart)
		uart[UART_THR << shift] = (uint8_t)c;
}

int uart_getc(void)
{
	if (!uart || !(uart[UART_LSR << shift] & LSR_DR))
		return -1;
	return uart[UART_RBR << shift];
}
