// SPDX-License-Identifier: BSD-2-Clause
/*
 * One physical UART shared by the hypervisor log and every guest.
 *
 * Guest output is forwarded as it comes (a prompt appears before the guest
 * waits for input), with "[name] " at the start of each of the guest's lines;
 * carriage returns pass through, and the prefix is written again after a bare
 * one, so a guest's column 0 stays just after its prefix. The UART line a
 * guest left open (no newline yet) is its own: another guest's output waits
 * in that guest's buffer until the line ends, so that lines of guests
 * printing at the same time do not mix. It waits until the open line's
 * guest is idle (owner_idle: a prompt waiting for input), or until its
 * buffer fills: then it starts on a new line. Hypervisor messages always
 * start on a new line, and wait the same way (they would split a guest's
 * line that test runners parse); console_flush_all() writes everything out.
 */
#include <string.h>
#include "arch/riscv/timer.h"
#include "arch/riscv/uart.h"
#include "core/console.h"
#include "core/hostdt.h"
#include "core/lib.h"
#include "core/vcpu.h"
#include "core/vm.h"

#define CONSOLE_HOLD_MS	    250
#define CONSOLE_HOLD_MAX_MS 1000

/* Guards the UART, every guest's buffer and the state below */
static spinlock_t console_lock;
static struct vm *line_owner; /* guest whose line is open on the UART, NULL: at a line start */
static bool reprefix;	      /* line_owner wrote a bare CR: prefix again before more text */
static uint64_t owner_last;   /* time of line_owner's last output */
static char hv_held[1024];    /* hypervisor messages waiting for an open line to end */
static size_t hv_held_len;

void console_init(uintptr_t uart_base, unsigned int reg_shift)
{
	uart_init(uart_base, reg_shift);
}

static void puts_locked(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		uart_putc(s[i]);
}

/* End a guest's open line: what comes next starts a line of its own */
static void end_line_locked(void)
{
	if (line_owner) {
		uart_putc('\n');
		line_owner = NULL;
		reprefix = false; /* a CR held back before the newline: dropped */
	}
}

static bool owner_idle(void);

/* Held hypervisor messages, on a line of their own */
static void put_hv_held_locked(void)
{
	if (hv_held_len) {
		end_line_locked();
		puts_locked(hv_held, hv_held_len);
		hv_held_len = 0;
	}
}

void hv_printf(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	size_t n;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	n = len < 0 ? 0 : len > (int)sizeof(buf) - 1 ? sizeof(buf) - 1 : (size_t)len;
	spin_lock(&console_lock);
	if (line_owner && !owner_idle() && hv_held_len + n <= sizeof(hv_held)) {
		memcpy(hv_held + hv_held_len, buf, n);
		hv_held_len += n;
	} else {
		put_hv_held_locked();
		end_line_locked();
		puts_locked(buf, n);
	}
	spin_unlock(&console_lock);
}

static void put_prefix(const struct vm *vm)
{
	uart_putc('[');
	puts_locked(vm->name, strnlen(vm->name, sizeof(vm->name)));
	puts_locked("] ", 2);
}

/* Write a guest's buffered output, "[name] " at its line starts */
static void emit_locked(struct vm *vm)
{
	if (line_owner != vm)
		end_line_locked();
	for (size_t i = 0; i < vm->con_len; i++) {
		char c = vm->con_buf[i];

		if (reprefix) { /* the CR held back: written with what follows it */
			if (c == '\r')
				continue; /* CR CR LF (a tty's ONLCR after a CR) */
			uart_putc('\r');
			reprefix = false;
			if (c != '\n')
				put_prefix(vm);
		}
		if (!line_owner) {
			put_prefix(vm);
			line_owner = vm;
		}
		if (c == '\r')
			reprefix = true;
		else
			uart_putc(c);
		if (c == '\n')
			line_owner = NULL;
	}
	vm->con_len = 0;
	owner_last = timer_now();
}

/*
 * The open line's guest is done with it for now (waits for input, say) when
 * it has printed nothing for CONSOLE_HOLD_MS and none of its vCPUs is ready
 * to run. A ready vCPU may be in the middle of the line, only not running:
 * parked while another hart's vCPU counts, or waiting for its turn. Its
 * line is still cut after CONSOLE_HOLD_MAX_MS, so a guest that spins with a
 * line open cannot hold the others' output back for long.
 */
static bool owner_idle(void)
{
	uint64_t idle = timer_now() - owner_last, ms = host.timebase / 1000;

	if (idle <= ms * CONSOLE_HOLD_MS)
		return false;
	if (idle > ms * CONSOLE_HOLD_MAX_MS)
		return true;
	for (unsigned int i = 0; i < line_owner->nr_vcpus; i++)
		if (__atomic_load_n(&line_owner->vcpus[i]->state, __ATOMIC_ACQUIRE) ==
		    VCPU_RUNNABLE)
			return false;
	return true;
}

/* Output held back while a guest's line was open */
static void release_held_locked(bool force)
{
	if (!line_owner || force || owner_idle())
		put_hv_held_locked();
	for (unsigned int i = 0; i < nr_vms; i++) {
		struct vm *vm = vms[i];

		if (vm && vm->con_len && (!line_owner || line_owner == vm || force || owner_idle()))
			emit_locked(vm);
	}
}

void console_guest_write(struct vm *vm, const char *s, size_t len)
{
	spin_lock(&console_lock);
	while (len) {
		size_t n = sizeof(vm->con_buf) - vm->con_len;

		if (!n) { /* full: out it goes, on a line of its own if need be */
			emit_locked(vm);
			continue;
		}
		if (n > len)
			n = len;
		memcpy(vm->con_buf + vm->con_len, s, n);
		vm->con_len += n;
		s += n;
		len -= n;
	}
	if (!line_owner || line_owner == vm || owner_idle())
		emit_locked(vm);
	if (!line_owner)
		release_held_locked(false);
	spin_unlock(&console_lock);
}

void console_guest_putc(struct vm *vm, char c)
{
	console_guest_write(vm, &c, 1);
}

void console_guest_flush(struct vm *vm)
{
	spin_lock(&console_lock);
	if (vm->con_len)
		emit_locked(vm);
	if (line_owner == vm)
		end_line_locked();
	release_held_locked(false);
	spin_unlock(&console_lock);
}

bool console_data_line(const char *s, size_t len, bool force)
{
	spin_lock(&console_lock);
	if (line_owner && !force && !owner_idle()) {
		spin_unlock(&console_lock);
		return false;
	}
	put_hv_held_locked();
	end_line_locked();
	puts_locked(s, len);
	uart_putc('\n');
	spin_unlock(&console_lock);
	return true;
}

void console_flush_all(void)
{
	spin_lock(&console_lock);
	release_held_locked(true);
	end_line_locked();
	spin_unlock(&console_lock);
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
	/* a reader polls: the time to let out output held behind an idle open line */
	if (line_owner && owner_idle())
		release_held_locked(true);
	while ((c = uart_getc()) >= 0) {
		if (!escape && c == ESCAPE) {
			escape = true;
			continue;
		}
		if (escape && c >= '1' && c < '1' + (int)nr_vms) {
			escape = false;
			input_vm = (unsigned int)(c - '1');
			static const char msg[] = "\r\npmuvisor: console input -> guest ";

			end_line_locked();
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
