// SPDX-License-Identifier: BSD-2-Clause
/* hv_snprintf / hv_vsnprintf (core/printf.c) */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "lib.h"

/* Format into a 128-byte buffer, check the text and the returned length */
#define CHECK(expect, ...)                                                                         \
	do {                                                                                       \
		char b_[128];                                                                      \
		memset(b_, 0x5a, sizeof(b_));                                                      \
		int n_ = hv_snprintf(b_, sizeof(b_), __VA_ARGS__);                                 \
		assert_string_equal(b_, (expect));                                                 \
		assert_int_equal(n_, (int)strlen(expect));                                         \
	} while (0)

/* hv_vsnprintf has no format attribute: for formats gcc would reject */
static int vwrap(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = hv_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

#define VCHECK(expect, ...)                                                                        \
	do {                                                                                       \
		char b_[128];                                                                      \
		int n_ = vwrap(b_, sizeof(b_), __VA_ARGS__);                                       \
		assert_string_equal(b_, (expect));                                                 \
		assert_int_equal(n_, (int)strlen(expect));                                         \
	} while (0)

static void test_plain_text(void **state)
{
	(void)state;
	CHECK("", "%s", "");
	CHECK("hello, world", "hello, world");
	CHECK("100%", "100%%");
	CHECK("%%", "%%%%");
}

static void test_signed(void **state)
{
	(void)state;
	CHECK("0", "%d", 0);
	CHECK("42", "%d", 42);
	CHECK("-42", "%d", -42);
	CHECK("-7", "%i", -7);
	CHECK("2147483647", "%d", INT_MAX);
	CHECK("-2147483648", "%d", INT_MIN);
	CHECK("9223372036854775807", "%ld", LONG_MAX);
	CHECK("-9223372036854775808", "%ld", LONG_MIN);
	CHECK("-9223372036854775808", "%lld", LLONG_MIN);
	CHECK("-1", "%ld", -1L);
	CHECK("a-1b", "a%db", -1);
}

static void test_unsigned(void **state)
{
	(void)state;
	CHECK("0", "%u", 0u);
	CHECK("4294967295", "%u", UINT_MAX);
	CHECK("4294967295", "%u", -1); /* int -1 read as unsigned int */
	CHECK("18446744073709551615", "%lu", ULONG_MAX);
	CHECK("18446744073709551615", "%llu", ULLONG_MAX);
	CHECK("12345", "%zu", (size_t)12345);
}

static void test_hex(void **state)
{
	(void)state;
	CHECK("0", "%x", 0u);
	CHECK("beef", "%x", 0xbeefu);
	CHECK("BEEF", "%X", 0xbeefu);
	CHECK("ffffffff", "%x", 0xffffffffu);
	CHECK("ffffffffffffffff", "%lx", ULONG_MAX);
	CHECK("80000000deadbeef", "%lx", 0x80000000deadbeefUL);
	CHECK("DEADBEEF", "%lX", 0xdeadbeefUL);
	/* a 32-bit %x must not pick up the upper half of a 64-bit slot */
	CHECK("1 2", "%x %x", 1u, 2u);
}

static void test_width_and_padding(void **state)
{
	(void)state;
	CHECK("   42", "%5d", 42);
	CHECK("00042", "%05d", 42);
	CHECK("  -42", "%5d", -42);
	CHECK("42", "%1d", 42); /* width smaller than the number: no truncation */
	CHECK("12345678", "%3u", 12345678u);
	CHECK("    beef", "%8x", 0xbeefu);
	CHECK("0000beef", "%08x", 0xbeefu);
	CHECK("00000000000000ff", "%016lx", 0xffUL);
	CHECK("0000000000", "%010u", 0u);
	CHECK("[     7]", "[%6u]", 7u);
	CHECK("000000000000000000001", "%021lu", 1UL);
}

/*
 * BUG (core/printf.c put_num): with zero padding, the sign is emitted
 * after the pad characters, "%05d" of -42 gives "00-42" instead of "-0042".
 */
static void test_zero_pad_negative(void **state)
{
	(void)state;
	CHECK("-0042", "%05d", -42);
	CHECK("-000000001", "%010ld", -1L);
}

static void test_string_and_char(void **state)
{
	(void)state;
	CHECK("abc", "%s", "abc");
	VCHECK("(null)", "%s", (const char *)NULL);
	CHECK("x=abc;y=def", "x=%s;y=%s", "abc", "def");
	CHECK("A", "%c", 'A');
	CHECK("<a><z>", "<%c><%c>", 'a', 'z');
	CHECK("guest alpha: vcpus = 9, must be 1..8", "guest %s: vcpus = %u, must be 1..%d",
	      "alpha", 9u, 8);
}

static void test_pointer(void **state)
{
	(void)state;
	CHECK("0x1000", "%p", (void *)0x1000);
	CHECK("0xffffffffffffffff", "%p", (void *)UINTPTR_MAX);
	CHECK("0x0", "%p", (void *)NULL);
	VCHECK("0x00001000", "%08p", (void *)0x1000); /* width applies to the digits */
}

static void test_unknown_and_trailing_percent(void **state)
{
	(void)state;
	VCHECK("%q", "%q");
	VCHECK("abc", "abc%");
	CHECK("1%y2", "%d%%y%d", 1, 2);
}

static void test_truncation(void **state)
{
	char b[8];
	int n;

	(void)state;
	memset(b, 0x5a, sizeof(b));
	n = hv_snprintf(b, 5, "hello world");
	assert_int_equal(n, 11);
	assert_string_equal(b, "hell");
	assert_int_equal((unsigned char)b[5], 0x5a); /* nothing written past size */

	memset(b, 0x5a, sizeof(b));
	n = hv_snprintf(b, 1, "%d", 12345);
	assert_int_equal(n, 5);
	assert_int_equal(b[0], '\0');
	assert_int_equal((unsigned char)b[1], 0x5a);

	memset(b, 0x5a, sizeof(b));
	n = hv_snprintf(b, sizeof(b), "%ld", LONG_MIN);
	assert_int_equal(n, 20);
	assert_string_equal(b, "-922337");

	/* exact fit: 7 characters + NUL */
	n = hv_snprintf(b, sizeof(b), "%s", "1234567");
	assert_int_equal(n, 7);
	assert_string_equal(b, "1234567");
	n = hv_snprintf(b, sizeof(b), "%s", "12345678");
	assert_int_equal(n, 8);
	assert_string_equal(b, "1234567");

	/* size 0: nothing written at all, length still computed */
	n = hv_snprintf(NULL, 0, "%s=%d", "abc", 42);
	assert_int_equal(n, 6);
	b[0] = 'Q';
	n = hv_snprintf(b, 0, "xyz");
	assert_int_equal(n, 3);
	assert_int_equal(b[0], 'Q');
}

static void test_vsnprintf_many_args(void **state)
{
	char b[128];
	int n;

	(void)state;
	/* more than the 6 register arguments: exercise the stack part of va_list */
	n = vwrap(b, sizeof(b), "%d %u %x %lx %s %c %ld %lu %d %s", -1, 2u, 0x3u, 0x4UL, "five",
		  '6', -7L, 8UL, 9, "ten");
	assert_string_equal(b, "-1 2 3 4 five 6 -7 8 9 ten");
	assert_int_equal(n, (int)strlen("-1 2 3 4 five 6 -7 8 9 ten"));
}

/* Cross-check with the C library for the conversions both implement alike */
static void test_matches_libc(void **state)
{
	static const long vals[] = {0,
				    1,
				    -1,
				    9,
				    10,
				    -10,
				    255,
				    4096,
				    -65536,
				    2147483647L,
				    -2147483648L,
				    LONG_MAX,
				    LONG_MIN,
				    0x123456789abcdefL};
	char a[160], b[160];

	(void)state;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		long v = vals[i];

		snprintf(a, sizeof(a), "%ld|%lu|%lx|%lX|%20ld|%18lx|%018lx", v, (unsigned long)v,
			 (unsigned long)v, (unsigned long)v, v, (unsigned long)v, (unsigned long)v);
		hv_snprintf(b, sizeof(b), "%ld|%lu|%lx|%lX|%20ld|%18lx|%018lx", v, (unsigned long)v,
			    (unsigned long)v, (unsigned long)v, v, (unsigned long)v,
			    (unsigned long)v);
		assert_string_equal(b, a);
		snprintf(a, sizeof(a), "%d|%u|%x|%08x|%7u", (int)v, (unsigned int)v,
			 (unsigned int)v, (unsigned int)v, (unsigned int)v);
		hv_snprintf(b, sizeof(b), "%d|%u|%x|%08x|%7u", (int)v, (unsigned int)v,
			    (unsigned int)v, (unsigned int)v, (unsigned int)v);
		assert_string_equal(b, a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text),
		cmocka_unit_test(test_signed),
		cmocka_unit_test(test_unsigned),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_width_and_padding),
		cmocka_unit_test(test_zero_pad_negative),
		cmocka_unit_test(test_string_and_char),
		cmocka_unit_test(test_pointer),
		cmocka_unit_test(test_unknown_and_trailing_percent),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_vsnprintf_many_args),
		cmocka_unit_test(test_matches_libc),
	};

	return cmocka_run_group_tests_name("core/printf", tests, NULL, NULL);
}
