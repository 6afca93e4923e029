// SPDX-License-Identifier: BSD-2-Clause
/* core/console.c: guest output forwarding, prefixes, open lines of two guests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

static char out[8192];
static size_t out_len;
static const char *input;

void uart_init(uintptr_t base, unsigned int reg_shift)
{
	(void)base;
	(void)reg_shift;
}

void uart_putc(char c)
{
	assert_true(out_len < sizeof(out) - 1);
	out[out_len++] = c;
	out[out_len] = '\0';
}

int uart_getc(void)
{
	return input && *input ? (unsigned char)*input++ : -1;
}

static void put(struct vm *vm, const char *s)
{
	console_guest_write(vm, s, strlen(s));
}

static int setup(void **state)
{
	(void)state;
	console_guest_flush(&alpha);
	console_guest_flush(&beta);
	out_len = 0;
	out[0] = '\0';
	stub_time += 1000000000;
	return 0;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_partial_line_at_once, setup),
		cmocka_unit_test_setup(test_long_line, setup),
		cmocka_unit_test_setup(test_carriage_return, setup),
		cmocka_unit_test_setup(test_open_line_holds_other_guest, setup),
		cmocka_unit_test_setup(test_idle_open_line, setup),
		cmocka_unit_test_setup(test_busy_open_line_holds, setup),
		cmocka_unit_test_setup(test_hv_message_waits, setup),
		cmocka_unit_test_setup(test_hv_message_idle_line, setup),
		cmocka_unit_test_setup(test_flush_all, setup),
		cmocka_unit_test_setup(test_full_buffer, setup),
		cmocka_unit_test_setup(test_input_focus, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
