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

/*
 * Console input goes to one guest at a time, the first one at boot.
 * Ctrl-] followed by a digit n gives it to guest n (1 = first in the
 * configuration). Not Ctrl-A: QEMU -nographic keeps that one for itself.
 */
#define ESCAPE 0x1d /* Ctrl-] */
static unsigned int input_vm;
static bool escape;

int console_getc(struct vm *vm)
{
	int c = -1;

	spin_lock(&console_lock);
	if (vm->id != input_vm && vms[input_vm]->state == VM_RUNNING) {
		spin_unlock(&console_lock);
		return -1;
	}
	input_vm = vm->id; /* the focused guest stopped: a running reader takes over */
	while ((c = uart_getc()) >= 0) {
		if (!escape && c == ESCAPE) {
			escape = true;
			continue;
		}
		if (escape && c >= '1' && c < '1' + (int)nr_vms) {
			escape = false;
			input_vm = (unsigned int)(c - '1');
			static const char msg[] = "\r\npmuvisor: console input -> guest ";

			puts_locked(msg, sizeof(msg) - 1);
			puts_locked(vms[input_vm]->name, strlen(vms[input_vm]->name));
			puts_locked("\r\n", 2);
			if (input_vm != vm->id) {
				c = -1;
				break;
			}
			continue;
		}
		escape = false;
		break;
	}
	spin_unlock(&console_lock);
	return c;
}
