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
 * guest is idle (owner_idle: a prompt waiting for input), or the line has
 * been open for CONSOLE_LINE_MAX_MS (a byte now and then, a progress bar
 * of bare CRs), or until its buffer fills: then it starts on a new line.
 * Hypervisor messages always start on a new line, and wait the same way
 * (they would split a guest's line that test runners parse);
 * console_flush_all() writes everything out.
 *
 * Nothing waits for the UART with the lock held on a guest's behalf: what
 * is written goes into a transmit ring (tx), and each console operation
 * moves at most TX_DRAIN_MAX bytes of it to the UART, as long as the UART
 * takes them without waiting. A UART that does not (QEMU's, while whoever
 * reads its output is slow; a real one at its baud rate) would make one
 * guest's write hold the lock, with interrupts off, until it did, longer
 * than a neighbour's 250 ms watchdog on the same hart allows. A
 * guest's bytes are taken only while its buffer has room (console_guest_write
 * says how many), and leave the buffer only while the ring keeps
 * TX_HV_RESERVE free for the hypervisor's own messages, which alone may wait
 * for room (trusted, short; and at power-off, console_flush_all). A data
 * line (the profile's) that found no room in the ring is owed it: until it
 * goes, or for CONSOLE_LINE_MAX_MS without another try, guests' bytes leave
 * that room free as well (data_owed), so that guests writing on and on
 * behind a slow UART cannot keep it out.
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
#define CONSOLE_LINE_MAX_MS 1000 /* the longest one line holds back what waits */

#define TX_SIZE	      8192 /* formatted output on its way to the UART */
#define TX_HV_RESERVE 2048 /* ... of which guests' output leaves this much free */
#define TX_DRAIN_MAX  512  /* the most one console operation gives the UART */
/* The most one guest byte becomes: end of another's line, CR held back, prefix, itself */
#define EXPAND_MAX (1 + 1 + (1 + VM_NAME_MAX + 2) + 1)

/* Guards the UART, the ring, every guest's buffer and the state below */
static spinlock_t console_lock;
static struct vm *line_owner; /* guest whose line is open on the UART, NULL: at a line start */
static bool reprefix;	      /* line_owner wrote a bare CR: prefix again before more text */
static uint64_t owner_last;   /* time of line_owner's last output */
static uint64_t line_opened;  /* time line_owner's line began */
static char hv_held[1024];    /* hypervisor messages waiting for an open line to end */
static size_t hv_held_len;
static char tx[TX_SIZE];
static size_t tx_head, tx_tail; /* free running: tx_head - tx_tail bytes wait */
static volatile bool waiting;	/* something waits in the ring or a buffer (console_poll) */
static size_t drain_left;	/* what this operation may still give the UART */
static size_t data_owed;	/* room a data line waits for: guests leave it free too */
static uint64_t data_owed_at;	/* ... since its last try */

void console_init(uintptr_t uart_base, unsigned int reg_shift)
{
	uart_init(uart_base, reg_shift);
}

/* The ring to the UART, while it takes bytes at once and the operation's budget lasts */
static void tx_drain_locked(void)
{
	while (tx_head != tx_tail && drain_left && uart_tx_ready()) {
		uart_tx(tx[tx_tail++ % TX_SIZE]);
		drain_left--;
	}
}

/* One byte into the ring; a full ring waits for the UART (hypervisor output only) */
static void out_locked(char c)
{
	while (tx_head - tx_tail == TX_SIZE) {
		drain_left = TX_SIZE;
		tx_drain_locked();
	}
	tx[tx_head++ % TX_SIZE] = c;
}

/* Whether a guest's next byte, however it expands, fits beside the hypervisor's reserve */
static bool guest_room(void)
{
	return TX_SIZE - (tx_head - tx_tail) >= TX_HV_RESERVE + data_owed + EXPAND_MAX;
}

static void puts_locked(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		out_locked(s[i]);
}

/* End a guest's open line: what comes next starts a line of its own */
static void end_line_locked(void)
{
	if (line_owner) {
		out_locked('\n');
		line_owner = NULL;
		reprefix = false; /* a CR held back before the newline: dropped */
	}
}

static bool owner_idle(void);
static void console_lock_pump(void);
static void console_unlock(void);

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
	console_lock_pump();
	if (line_owner && !owner_idle() && hv_held_len + n <= sizeof(hv_held)) {
		memcpy(hv_held + hv_held_len, buf, n);
		hv_held_len += n;
	} else {
		put_hv_held_locked();
		end_line_locked();
		puts_locked(buf, n);
	}
	console_unlock();
}

static void put_prefix(const struct vm *vm)
{
	out_locked('[');
	puts_locked(vm->name, strnlen(vm->name, sizeof(vm->name)));
	puts_locked("] ", 2);
}

/*
 * A guest's buffered output into the ring, "[name] " at its line starts: all
 * of it (force), or as much as fits beside the reserve. Whether it all went.
 */
static bool emit_locked(struct vm *vm, bool force)
{
	size_t i;

	if (!force && !guest_room())
		return false;
	if (line_owner != vm)
		end_line_locked();
	for (i = 0; i < vm->con_len && (force || guest_room()); i++) {
		char c = vm->con_buf[i];

		if (reprefix) { /* the CR held back: written with what follows it */
			if (c == '\r')
				continue; /* CR CR LF (a tty's ONLCR after a CR) */
			out_locked('\r');
			reprefix = false;
			if (c != '\n')
				put_prefix(vm);
		}
		if (!line_owner) {
			put_prefix(vm);
			line_owner = vm;
			line_opened = timer_now();
		}
		if (c == '\r')
			reprefix = true;
		else
			out_locked(c);
		if (c == '\n')
			line_owner = NULL;
	}
	memmove(vm->con_buf, vm->con_buf + i, vm->con_len - i);
	vm->con_len -= i;
	owner_last = timer_now();
	return vm->con_len == 0;
}

/*
 * The open line's guest is done with it for now (waits for input, say) when
 * it has printed nothing for CONSOLE_HOLD_MS and none of its vCPUs is ready
 * to run. A ready vCPU may be in the middle of the line, only not running:
 * parked while another hart's vCPU counts, or waiting for its turn. Its
 * line is still cut CONSOLE_LINE_MAX_MS after it began, so a guest that
 * spins, or adds a byte now and then, cannot hold the others' output back
 * for long.
 */
static bool owner_idle(void)
{
	uint64_t now = timer_now(), idle = now - owner_last, ms = host.timebase / 1000;

	if (now - line_opened > ms * CONSOLE_LINE_MAX_MS)
		return true;
	if (line_owner->con_len) /* output of its own waits for room in the ring */
		return false;
	if (idle <= ms * CONSOLE_HOLD_MS)
		return false;
	for (unsigned int i = 0; i < line_owner->nr_vcpus; i++)
		if (__atomic_load_n(&line_owner->vcpus[i]->state, __ATOMIC_ACQUIRE) ==
		    VCPU_RUNNABLE)
			return false;
	return true;
}

/* Output held back while a guest's line was open, or for room in the ring */
static void release_held_locked(bool force)
{
	if (!line_owner || force || owner_idle())
		put_hv_held_locked();
	/* the open line's own output first: it may have waited for room */
	if (line_owner && line_owner->con_len && !emit_locked(line_owner, force))
		return;
	for (unsigned int i = 0; i < nr_vms; i++) {
		struct vm *vm = vms[i];

		if (vm && vm->con_len &&
		    (!line_owner || line_owner == vm || force || owner_idle()) &&
		    !emit_locked(vm, force))
			return; /* the ring is full: the rest waits, no line is split */
	}
}

/* The end of every console operation: some of the ring out, and whether anything still waits */
static void console_unlock(void)
{
	bool any = hv_held_len != 0;

	tx_drain_locked();
	for (unsigned int i = 0; i < nr_vms && !any; i++)
		any = vms[i] && vms[i]->con_len;
	waiting = any || tx_head != tx_tail;
	spin_unlock(&console_lock);
}

/* The start of one: what waited for room or for an idle line moves on */
static void console_lock_pump(void)
{
	spin_lock(&console_lock);
	drain_left = TX_DRAIN_MAX;
	tx_drain_locked();
	/* a data line that does not try again is owed nothing */
	if (data_owed &&
	    timer_now() - data_owed_at > (uint64_t)host.timebase / 1000 * CONSOLE_LINE_MAX_MS)
		data_owed = 0;
	if (!line_owner || owner_idle())
		release_held_locked(false);
	else if (line_owner->con_len)
		emit_locked(line_owner, false);
}

size_t console_guest_write(struct vm *vm, const char *s, size_t len)
{
	size_t taken = 0;

	console_lock_pump();
	while (taken < len) {
		size_t n = sizeof(vm->con_buf) - vm->con_len;

		/* full: out it goes, on a line of its own if need be, as far as the ring has room */
		if (!n && (emit_locked(vm, false), !(n = sizeof(vm->con_buf) - vm->con_len)))
			break;
		if (n > len - taken)
			n = len - taken;
		memcpy(vm->con_buf + vm->con_len, s + taken, n);
		vm->con_len += n;
		taken += n;
	}
	if (!line_owner || line_owner == vm || owner_idle())
		emit_locked(vm, false);
	if (!line_owner)
		release_held_locked(false);
	console_unlock();
	return taken;
}

bool console_guest_putc(struct vm *vm, char c)
{
	return console_guest_write(vm, &c, 1) == 1;
}

/*
 * Only what fits beside the reserve, as for a running guest: a buffer of
 * bare CRs, each written again with its prefix, grows some 17-fold on its
 * way to the ring, and a stop must not wait for the UART with the lock held.
 * The rest is dropped, and said so, rather than kept: nothing of the guest
 * may come after its stop line, or run into what it prints after a reboot.
 */
void console_guest_flush(struct vm *vm)
{
	size_t dropped;

	console_lock_pump();
	if (vm->con_len)
		emit_locked(vm, false);
	dropped = vm->con_len;
	vm->con_len = 0;
	if (line_owner == vm)
		end_line_locked();
	if (dropped) {
		char msg[128];
		int n = snprintf(msg, sizeof(msg),
				 "pmuvisor: guest %s: %zu bytes of its output dropped (the UART "
				 "lags)\n",
				 vm->name, dropped);

		put_hv_held_locked();
		end_line_locked();
		puts_locked(msg, n < 0 ? 0 : (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	}
	release_held_locked(false);
	console_unlock();
}

bool console_data_line(const char *s, size_t len, bool force)
{
	size_t used;

	console_lock_pump();
	used = tx_head - tx_tail;
	/* the held messages, a line end, the line and its newline, and still the reserve */
	if (!force && line_owner && !owner_idle()) {
		if (data_owed) /* it tries again: still owed */
			data_owed_at = timer_now();
		console_unlock();
		return false;
	}
	if (!force && TX_SIZE - used < hv_held_len + len + 2 + TX_HV_RESERVE) {
		/* owed only while an empty ring still takes a guest's byte beside it */
		if (hv_held_len + len + 2 + TX_HV_RESERVE + EXPAND_MAX <= TX_SIZE) {
			data_owed = hv_held_len + len + 2;
			data_owed_at = timer_now();
		}
		console_unlock();
		return false;
	}
	data_owed = 0;
	put_hv_held_locked();
	end_line_locked();
	/* straight to the UART while nothing waits before it: a profile is long, the ring short */
	while (len && tx_head == tx_tail && uart_tx_ready()) {
		uart_tx(*s++);
		len--;
	}
	puts_locked(s, len);
	out_locked('\n');
	console_unlock();
	return true;
}

void console_flush_all(void)
{
	console_lock_pump();
	release_held_locked(true);
	end_line_locked();
	while (tx_head != tx_tail) {
		drain_left = TX_SIZE;
		tx_drain_locked();
	}
	console_unlock();
}

void console_poll(void)
{
	if (!waiting)
		return;
	console_lock_pump();
	console_unlock();
}

/*
 * Console input goes to one guest at a time, the first one at boot.
 * Ctrl-] followed by a digit n gives it to guest n (1 = first in the
 * configuration). Not Ctrl-A: QEMU -nographic keeps that one for itself.
 */
#define ESCAPE 0x1d /* Ctrl-] */
static unsigned int input_vm;
static bool escape;

/* Say where console input goes now, on a line of its own */
static void input_moved_locked(void)
{
	static const char msg[] = "pmuvisor: console input -> guest ";

	end_line_locked(); /* a guest's open line ends first: no blank line before */
	puts_locked(msg, sizeof(msg) - 1);
	puts_locked(vms[input_vm]->name, strlen(vms[input_vm]->name));
	puts_locked("\r\n", 2);
}

int console_getc(struct vm *vm)
{
	int c = -1;

	console_lock_pump();
	if (vm->id != input_vm) {
		/* a reboot passes through VM_STOPPING: the focus stays for the new boot */
		if (vms[input_vm]->state != VM_STOPPED) {
			console_unlock();
			return -1;
		}
		/* the focused guest stopped for good: a running reader takes over, and says so */
		input_vm = vm->id;
		input_moved_locked();
	}
	/* (a reader polls: console_lock_pump let out output held behind an idle open line) */
	while ((c = uart_getc()) >= 0) {
		if (!escape && c == ESCAPE) {
			escape = true;
			continue;
		}
		if (escape && c >= '1' && c < '1' + (int)nr_vms) {
			escape = false;
			input_vm = (unsigned int)(c - '1');
			input_moved_locked();
			if (input_vm != vm->id) {
				c = -1;
				break;
			}
			continue;
		}
		escape = false;
		break;
	}
	console_unlock();
	return c;
}
