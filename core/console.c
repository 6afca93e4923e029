// SPDX-License-Identifier: BSD-2-Clause
/*
 * One physical UART shared by the hypervisor log and every guest. Guest
 * output is collected per guest and printed a whole line at a time with
 * "[name] " in front, so streams from guests on different harts never mix
 * within a line.
 */
#include <string.h>
#include "console.h"
#include "lib.h"
#include "uart.h"
#include "vm.h"

static spinlock_t console_lock;

void console_init(uintptr_t uart_base, unsigned int reg_shift)
{
	uart_init(uart_base, reg_shift);
}

static void puts_locked(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		uart_putc(s[i]);
}

void console_write_line(const char *prefix, const char *text, size_t len)
{
	spin_lock(&console_lock);
	puts_locked(prefix, strlen(prefix));
	puts_locked(text, len);
	uart_putc('\n');
	spin_unlock(&console_lock);
}

void hv_printf(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = hv_vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	spin_lock(&console_lock);
	puts_locked(buf, (size_t)n);
	spin_unlock(&console_lock);
}

static void flush_locked(struct vm *vm)
{
	char prefix[VM_NAME_MAX + 4];

	hv_snprintf(prefix, sizeof(prefix), "[%s] ", vm->name);
	console_write_line(prefix, vm->con_line, vm->con_len);
	vm->con_len = 0;
}

void console_guest_putc(struct vm *vm, char c)
{
	spin_lock(&vm->con_lock);
	if (c == '\n' || vm->con_len == sizeof(vm->con_line)) {
		flush_locked(vm);
		if (c == '\n') {
			spin_unlock(&vm->con_lock);
			return;
		}
	}
	if (c != '\r')
		vm->con_line[vm->con_len++] = c;
	spin_unlock(&vm->con_lock);
}

void console_guest_flush(struct vm *vm)
{
	spin_lock(&vm->con_lock);
	if (vm->con_len)
		flush_locked(vm);
	spin_unlock(&vm->con_lock);
}

int console_getc(void)
{
	int c;

	spin_lock(&console_lock);
	c = uart_getc();
	spin_unlock(&console_lock);
	return c;
}
