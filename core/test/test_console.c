// SPDX-License-Identifier: BSD-2-Clause
/* core/console.c: guest output forwarding, prefixes, open lines of two guests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "arch/riscv/uart.h"
#include "core/console.h"
#include "core/hostdt.h"
#include "core/vcpu.h"
#include "core/vm.h"

uint64_t stub_time;
struct host_info host = {.timebase = 10000000};
static struct vm alpha = {.name = "alpha", .id = 0, .state = VM_RUNNING};
static struct vm beta = {.name = "beta", .id = 1, .state = VM_RUNNING};
struct vm *vms[VM_MAX] = {&alpha, &beta};
unsigned int nr_vms = 2;

static char out[32768];
static size_t out_len;
static const char *input;

/* one thread: the console's lock is never held when taken */
void spin_lock_contended(spinlock_t *l)
{
	(void)l;
	fail_msg("the console lock was held when taken");
}

void uart_init(uintptr_t base, unsigned int reg_shift)
{
	(void)base;
	(void)reg_shift;
}

/* A UART that takes bytes only while ready; how often it was asked */
static bool uart_busy;
static unsigned long uart_polls, uart_sent;
static long uart_budget = -1; /* >= 0: it takes that many more bytes, then is busy */

bool uart_tx_ready(void)
{
	uart_polls++;
	/* waiting for a UART that takes nothing would never end: fail instead */
	if (uart_busy && uart_polls > 1000000)
		fail_msg("waited for a busy UART");
	if (!uart_busy && uart_budget == 0)
		uart_busy = true;
	return !uart_busy;
}

void uart_tx(char c)
{
	assert_false(uart_busy);
	if (uart_budget > 0)
		uart_budget--;
	assert_true(out_len < sizeof(out) - 1);
	uart_sent++;
	out[out_len++] = c;
	out[out_len] = '\0';
}

int uart_getc(void)
{
	return input && *input ? (unsigned char)*input++ : -1;
}

/* Everything that waits and can go, out (a timer tick does it on the hypervisor) */
static void settle(void)
{
	for (int i = 0; i < 1000; i++)
		console_poll();
}

/* A guest writes s the way DBCN does, its calls repeated until all is taken */
static void put(struct vm *vm, const char *s)
{
	size_t len = strlen(s), done = 0;

	for (int calls = 0; done < len && calls < 1000; calls++)
		done += console_guest_write(vm, s + done, len - done);
	assert_int_equal(done, len);
	settle();
}

static int setup(void **state)
{
	(void)state;
	uart_busy = false;
	uart_budget = -1;
	console_guest_flush(&alpha);
	console_guest_flush(&beta);
	settle();
	out_len = 0;
	out[0] = '\0';
	stub_time += 1000000000;
	return 0;
}

/* While the UART takes nothing, a guest writes s until its calls take no more: how much went */
static size_t write_while_busy(struct vm *vm, const char *s, size_t len)
{
	size_t taken = 0, n;

	uart_busy = true;
	uart_polls = uart_sent = 0;
	do {
		n = console_guest_write(vm, s + taken, len - taken);
		taken += n;
	} while (n && taken < len);
	return taken;
}

/* a partial line (a prompt) is written at once, the rest of the line joins it */
static void test_partial_line_at_once(void **state)
{
	(void)state;
	put(&alpha, "# ");
	assert_string_equal(out, "[alpha] # ");
	put(&alpha, "ls\r\nbin");
	put(&alpha, "  dev\r\n");
	assert_string_equal(out, "[alpha] # ls\r\n[alpha] bin  dev\r\n");
}

/* no split of long lines */
static void test_long_line(void **state)
{
	char line[3000];

	(void)state;
	memset(line, 'x', sizeof(line) - 2);
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = '\0';
	put(&alpha, line);
	assert_int_equal(out_len, strlen("[alpha] ") + sizeof(line) - 1);
	assert_memory_equal(out, "[alpha] xxx", 11);
	assert_int_equal(out[out_len - 1], '\n');
}

/* a bare CR returns to the guest's column 0: just after its prefix */
static void test_carriage_return(void **state)
{
	(void)state;
	put(&alpha, "10%\r");
	put(&alpha, "99%\r");
	put(&alpha, "done\n\n");
	put(&alpha, "wrap\r\r\nped\n");
	assert_string_equal(out, "[alpha] 10%\r[alpha] 99%\r[alpha] done\n[alpha] \n"
				 "[alpha] wrap\r\n[alpha] ped\n");
}

/* another guest's lines wait for the open line to end */
static void test_open_line_holds_other_guest(void **state)
{
	(void)state;
	put(&alpha, "3000004,,");
	put(&beta, "beta line\n");
	assert_string_equal(out, "[alpha] 3000004,,");
	put(&alpha, "instructions:u\n");
	assert_string_equal(out, "[alpha] 3000004,,instructions:u\n[beta] beta line\n");
}

/* ... but not after the open line has been idle for a while (a prompt) */
static void test_idle_open_line(void **state)
{
	(void)state;
	put(&alpha, "# ");
	put(&beta, "one\n");
	assert_string_equal(out, "[alpha] # ");
	stub_time += host.timebase; /* 1 s later: a poll for input lets it out */
	assert_int_equal(console_getc(&alpha), -1);
	assert_string_equal(out, "[alpha] # \n[beta] one\n");
	put(&alpha, "ls\n");
	assert_string_equal(out, "[alpha] # \n[beta] one\n[alpha] ls\n");
}

/* a line whose guest is still ready to run is mid-line, not a prompt: it keeps holding */
static void test_busy_open_line_holds(void **state)
{
	struct vcpu v = {.state = VCPU_RUNNABLE};

	(void)state;
	alpha.vcpus[0] = &v;
	alpha.nr_vcpus = 1;
	put(&alpha, "3000004,,");
	put(&beta, "one\n");
	stub_time += host.timebase / 2; /* 500 ms quiet, its vCPU ready: parked, say */
	assert_int_equal(console_getc(&alpha), -1);
	assert_string_equal(out, "[alpha] 3000004,,");
	v.state = VCPU_WFI; /* now it waits: the line is let go */
	assert_int_equal(console_getc(&alpha), -1);
	assert_string_equal(out, "[alpha] 3000004,,\n[beta] one\n");
	alpha.nr_vcpus = 0;
}

/* a hypervisor message waits for a busy open line, then starts a line of its own */
static void test_hv_message_waits(void **state)
{
	(void)state;
	put(&beta, "partial");
	hv_printf("pmuvisor: guest %s shutdown\n", "alpha");
	put(&beta, " more");
	assert_string_equal(out, "[beta] partial more");
	console_guest_flush(&beta);
	settle();
	assert_string_equal(out, "[beta] partial more\npmuvisor: guest alpha shutdown\n");
}

/* ... but not for an idle one (a prompt) */
static void test_hv_message_idle_line(void **state)
{
	(void)state;
	put(&beta, "# ");
	stub_time += host.timebase;
	hv_printf("pmuvisor: %s\n", "hello");
	put(&beta, "ls\n");
	settle();
	assert_string_equal(out, "[beta] # \npmuvisor: hello\n[beta] ls\n");
}

/* at power-off everything held comes out */
static void test_flush_all(void **state)
{
	(void)state;
	put(&alpha, "open");
	put(&beta, "held\n");
	hv_printf("pmuvisor: %s\n", "bye");
	console_flush_all();
	assert_string_equal(out, "[alpha] open\npmuvisor: bye\n[beta] held\n");
}

/* a guest buffer fills while another's line is open: it is written anyway */
static void test_full_buffer(void **state)
{
	char big[sizeof(beta.con_buf) + 10];

	(void)state;
	put(&alpha, "open");
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put(&beta, big);
	assert_memory_equal(out, "[alpha] open\n[beta] bbb", 23);
	assert_int_equal(beta.con_len, 0);
}

/*
 * A UART that takes nothing (QEMU's while whoever reads its output is slow):
 * no call waits for it, each asks it at most twice, a guest's writes are taken
 * until its buffer and its share of the ring are full, then 0 (issue 28,
 * item 2). When it drains, every byte taken comes out, in order; each
 * operation gives it at most 512 bytes.
 */
static void test_busy_uart_never_waited_for(void **state)
{
	static char big[16384], want[16384 + 512];
	size_t taken = 0, n, w = 0;
	unsigned long calls = 0, before, most = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
	uart_busy = true;
	uart_polls = uart_sent = 0;
	do {
		before = uart_polls;
		n = console_guest_write(&alpha, big + taken,
					256 < sizeof(big) - taken ? 256 : sizeof(big) - taken);
		taken += n;
		calls++;
		assert_true(uart_polls - before <= 2);
	} while (n && taken < sizeof(big));
	assert_int_equal(n, 0);
	assert_int_equal(uart_sent, 0);
	/* the ring's share of guests plus the guest's own buffer, lines prefixed */
	assert_in_range(taken, 5000, 8192 - 2048 + sizeof(alpha.con_buf));
	/* a hypervisor message still goes in (the reserve) */
	hv_printf("pmuvisor: %s\n", "busy");
	uart_busy = false;
	for (int i = 0; i < 100; i++) {
		before = uart_sent;
		console_poll();
		if (uart_sent - before > most)
			most = uart_sent - before;
	}
	assert_int_equal(most, 512);
	stub_time += host.timebase; /* alpha's open line idle: the message goes after it */
	settle();
	/* the bytes taken, prefixed, then the message on a line of its own */
	for (size_t i = 0; i < taken; i++) {
		if (i % 64 == 0)
			w += (size_t)sprintf(want + w, "[alpha] ");
		want[w++] = big[i];
	}
	if (taken % 64)
		want[w++] = '\n';
	w += (size_t)sprintf(want + w, "pmuvisor: busy\n");
	assert_int_equal(out_len, w);
	assert_memory_equal(out, want, w);
	(void)calls;
}

/*
 * A guest fills its buffer with bare CRs, each a prefix again on the UART,
 * and stops while the UART takes nothing: the stop waits for nothing (issue
 * 28's rule for writes, at a stop too). What fits beside the reserve goes
 * out, each CR with its prefix again, the rest is dropped and said so, its
 * line ends, and its stop line comes last.
 */
static void test_stop_never_waits_for_uart(void **state)
{
	static char crs[4096], want[65536];
	size_t taken, w = 0, dropped, kept;
	unsigned long before;
	const char *note;
	bool cr = false;

	(void)state;
	for (size_t i = 0; i < sizeof(crs); i++)
		crs[i] = i % 2 ? 'x' : '\r';
	taken = write_while_busy(&alpha, crs, sizeof(crs));
	assert_int_equal(alpha.con_len, sizeof(alpha.con_buf)); /* its buffer full too */
	before = uart_polls;
	console_guest_flush(&alpha);
	hv_printf("pmuvisor: guest %s stopped\n", "alpha");
	assert_true(uart_polls - before <= 4);
	assert_int_equal(uart_sent, 0);
	assert_int_equal(alpha.con_len, 0);
	uart_busy = false;
	settle();
	note = strstr(out, "\npmuvisor: guest alpha: ");
	assert_non_null(note);
	dropped = strtoul(note + strlen("\npmuvisor: guest alpha: "), NULL, 10);
	assert_true(dropped > 0 && dropped <= sizeof(alpha.con_buf));
	kept = taken - dropped;
	w += (size_t)sprintf(want + w, "[alpha] ");
	for (size_t i = 0; i < kept; i++) {
		if (crs[i] == '\r') {
			cr = true;
			continue;
		}
		if (cr)
			w += (size_t)sprintf(want + w, "\r[alpha] ");
		cr = false;
		want[w++] = crs[i];
	}
	w += (size_t)sprintf(want + w,
			     "\npmuvisor: guest alpha: %zu bytes of its output dropped (the UART "
			     "lags)\npmuvisor: guest alpha stopped\n",
			     dropped);
	assert_int_equal(out_len, w);
	assert_memory_equal(out, want, w);
}

/* a stop ends the guest's open line before its stop line; what it prints after a reboot starts anew */
static void test_stop_ends_line(void **state)
{
	(void)state;
	put(&alpha, "last words");
	console_guest_flush(&alpha);
	hv_printf("pmuvisor: guest %s reboot\n", "alpha");
	put(&alpha, "Booting\n");
	assert_string_equal(out,
			    "[alpha] last words\npmuvisor: guest alpha reboot\n[alpha] Booting\n");
}

/*
 * A profile line (console_data_line) while guests' complete lines fill the
 * ring and the UART takes nothing: refused at once, as long as it would eat
 * into the reserve (each call looks at the UART at most twice); taken once
 * the UART drains, after the guests' lines.
 */
static void test_data_line_never_waits_for_uart(void **state)
{
	static char lines[80 * 64], data[1027], want[80 * 72 + sizeof(data) + 1];
	size_t taken, w = 0;
	unsigned long before;
	int accepted = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(lines); i++)
		lines[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
	memset(data, 'p', sizeof(data));
	taken = write_while_busy(&alpha, lines, sizeof(lines));
	assert_int_equal(taken, sizeof(lines));
	assert_int_equal(alpha.con_len, 0); /* all in the ring, its line ended */
	before = uart_polls;
	for (int i = 0; i < 10; i++)
		accepted += console_data_line(data, sizeof(data), false);
	assert_int_equal(accepted, 0);
	assert_true(uart_polls - before <= 20);
	assert_int_equal(uart_sent, 0);
	uart_busy = false;
	settle();
	assert_true(console_data_line(data, sizeof(data), false));
	settle();
	for (size_t i = 0; i < sizeof(lines); i++) {
		if (i % 64 == 0)
			w += (size_t)sprintf(want + w, "[alpha] ");
		want[w++] = lines[i];
	}
	memcpy(want + w, data, sizeof(data));
	w += sizeof(data);
	want[w++] = '\n';
	assert_int_equal(out_len, w);
	assert_memory_equal(out, want, w);
}

/*
 * A line held open a byte at a time, its vCPU always ready, holds back
 * other output for CONSOLE_LINE_MAX_MS (1 s) after it began, not for good
 */
static void test_slow_line_cut(void **state)
{
	struct vcpu v = {.state = VCPU_RUNNABLE};
	static const char data[] = "pppp";

	(void)state;
	alpha.vcpus[0] = &v;
	alpha.nr_vcpus = 1;
	put(&alpha, "0");
	put(&beta, "one\n");
	for (int i = 1; i <= 4; i++) { /* 800 ms in 200 ms steps: it holds */
		stub_time += host.timebase / 5;
		put(&alpha, ".");
	}
	assert_false(console_data_line(data, 4, false));
	assert_string_equal(out, "[alpha] 0....");
	stub_time += 2 * host.timebase / 5; /* 1.2 s after it began: cut for what waits */
	assert_true(console_data_line(data, 4, false));
	put(&alpha, "!\n");
	assert_string_equal(out, "[alpha] 0....\n[beta] one\npppp\n[alpha] !\n");
	alpha.nr_vcpus = 0;
	console_guest_flush(&alpha);
}

/*
 * Behind a slow UART, a guest that writes on and on takes every byte the
 * ring frees unless a data line that found no room is owed it: then the
 * guest leaves it that room, and the line goes at its next try
 */
static void test_data_line_owed_room(void **state)
{
	static char lines[80 * 64], more[64 * 32], data[1027];
	size_t taken;

	(void)state;
	for (size_t i = 0; i < sizeof(lines); i++)
		lines[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
	memcpy(more, lines, sizeof(more));
	memset(data, 'p', sizeof(data));
	taken = write_while_busy(&alpha, lines, sizeof(lines));
	assert_int_equal(taken, sizeof(lines));
	assert_false(console_data_line(data, sizeof(data), false));
	/* the UART takes 1,500 bytes, then lags again; the guest writes on meanwhile */
	uart_busy = false;
	uart_budget = 1500;
	taken = 0;
	for (int calls = 0; calls < 100; calls++)
		taken += console_guest_write(&alpha, more + taken % sizeof(more),
					     sizeof(more) - taken % sizeof(more));
	assert_int_equal(uart_sent, 1500);
	assert_true(taken > sizeof(alpha.con_buf)); /* its buffer, and what the ring spares */
	stub_time += 3 * host.timebase / 5; /* its open line, 0.6 s old, holds the data line */
	assert_false(console_data_line(data, sizeof(data), false));
	stub_time += 3 * host.timebase / 5; /* at 1.2 s it is cut */
	assert_true(console_data_line(data, sizeof(data), false));
	uart_busy = false;
	uart_budget = -1;
	console_flush_all();
	/* the line whole, on a line of its own, among the guest's lines */
	{
		const char *at = strstr(out, "pppppppppppppppp"); /* guests' lines have no "pp" */

		assert_non_null(at);
		assert_true(at > out && at[-1] == '\n');
		assert_memory_equal(at, data, sizeof(data));
		assert_int_equal(at[sizeof(data)], '\n');
	}
}

/* A data line that stops trying is owed nothing after CONSOLE_LINE_MAX_MS */
static void test_data_owed_lapses(void **state)
{
	static char lines[128 * 64], data[1027];
	size_t owed, lapsed;

	(void)state;
	for (size_t i = 0; i < sizeof(lines); i++)
		lines[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
	memset(data, 'p', sizeof(data));
	assert_int_equal(write_while_busy(&alpha, lines, 80 * 64), 80 * 64);
	assert_false(console_data_line(data, sizeof(data), false));
	uart_busy = false;
	settle(); /* all out; the line is still owed its room */
	owed = write_while_busy(&beta, lines, sizeof(lines));
	uart_busy = false;
	settle();
	stub_time += 6 * host.timebase / 5; /* 1.2 s without another try */
	lapsed = write_while_busy(&beta, lines, sizeof(lines));
	/* the room of the line and its newline, less the prefixes of its lines */
	assert_in_range(lapsed - owed, sizeof(data) + 2 - 20 * 8, sizeof(data) + 2);
	uart_busy = false;
	settle();
}

/* input goes to the guest with focus; Ctrl-] 2 moves it */
static void test_input_focus(void **state)
{
	(void)state;
	input = "a\x1d"
		"2b";
	assert_int_equal(console_getc(&alpha), 'a');
	assert_int_equal(console_getc(&alpha), -1);
	assert_int_equal(console_getc(&beta), 'b');
	assert_non_null(strstr(out, "console input -> guest beta"));
	input = "\x1d"
		"1";
	assert_int_equal(console_getc(&beta), -1);
	input = NULL;
}

/*
 * The focused guest rebooting (VM_STOPPING on its way) keeps the focus: a
 * polling guest gets none of its input. Stopped for good, a reader takes
 * over, and the console says so.
 */
static void test_input_focus_through_reboot(void **state)
{
	(void)state;
	alpha.state = VM_STOPPING;
	input = "x";
	assert_int_equal(console_getc(&beta), -1);
	alpha.state = VM_RUNNING; /* the new boot */
	assert_int_equal(console_getc(&alpha), 'x');
	assert_null(strstr(out, "console input ->"));
	alpha.state = VM_STOPPED;
	input = "y";
	assert_int_equal(console_getc(&beta), 'y');
	assert_non_null(strstr(out, "pmuvisor: console input -> guest beta\r\n"));
	assert_int_equal(strncmp(out, "pmuvisor:", 9), 0); /* no blank line before it */
	alpha.state = VM_RUNNING;
	input = "\x1d"
		"1"; /* the focus back to alpha, for the tests after this one */
	assert_int_equal(console_getc(&beta), -1);
	input = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_partial_line_at_once, setup),
		cmocka_unit_test_setup(test_slow_line_cut, setup),
		cmocka_unit_test_setup(test_data_line_owed_room, setup),
		cmocka_unit_test_setup(test_data_owed_lapses, setup),
		cmocka_unit_test_setup(test_input_focus_through_reboot, setup),
		cmocka_unit_test_setup(test_long_line, setup),
		cmocka_unit_test_setup(test_carriage_return, setup),
		cmocka_unit_test_setup(test_open_line_holds_other_guest, setup),
		cmocka_unit_test_setup(test_idle_open_line, setup),
		cmocka_unit_test_setup(test_busy_open_line_holds, setup),
		cmocka_unit_test_setup(test_hv_message_waits, setup),
		cmocka_unit_test_setup(test_hv_message_idle_line, setup),
		cmocka_unit_test_setup(test_flush_all, setup),
		cmocka_unit_test_setup(test_full_buffer, setup),
		cmocka_unit_test_setup(test_busy_uart_never_waited_for, setup),
		cmocka_unit_test_setup(test_stop_never_waits_for_uart, setup),
		cmocka_unit_test_setup(test_stop_ends_line, setup),
		cmocka_unit_test_setup(test_data_line_never_waits_for_uart, setup),
		cmocka_unit_test_setup(test_input_focus, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
