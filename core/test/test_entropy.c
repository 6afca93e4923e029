// SPDX-License-Identifier: BSD-2-Clause
/* Host tests of core/entropy.c: the SipHash reference vector, and guest seeds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/entropy.h"

/* SipHash paper (Aumasson, Bernstein 2012), appendix A: key 00..0f, message 00..0e */
static void test_siphash_reference(void **state)
{
	uint8_t key[16], msg[15];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	assert_int_equal(siphash24(key, msg, sizeof(msg)), 0xa129ca6149be45e5ULL);
	/* the empty message, first row of the reference implementation's vectors.h */
	assert_int_equal(siphash24(key, msg, 0), 0x726fdb47dd0e0e31ULL);
}

static void test_seeds_differ_per_guest_and_boot(void **state)
{
	uint8_t host[32], a[32], b[32], c[32], a2[32];

	(void)state;
	for (int i = 0; i < 32; i++)
		host[i] = (uint8_t)(0x5a ^ (i * 7));
	assert_true(entropy_guest_seed(host, sizeof(host), 0, 0, a, sizeof(a)));
	assert_true(entropy_guest_seed(host, sizeof(host), 1, 0, b, sizeof(b)));
	assert_true(entropy_guest_seed(host, sizeof(host), 0, 1, c, sizeof(c)));
	assert_true(entropy_guest_seed(host, sizeof(host), 0, 0, a2, sizeof(a2)));
	assert_memory_not_equal(a, b, sizeof(a));
	assert_memory_not_equal(a, c, sizeof(a));
	assert_memory_equal(a, a2, sizeof(a)); /* a function of its inputs only */
	/* no half of the output repeats the other, and none is the host's seed */
	assert_memory_not_equal(a, a + 16, 16);
	assert_memory_not_equal(a, host, sizeof(a));
	/* another host seed, other guest seeds */
	host[31] ^= 1;
	assert_true(entropy_guest_seed(host, sizeof(host), 0, 0, a2, sizeof(a2)));
	assert_memory_not_equal(a, a2, sizeof(a));
}

static void test_no_host_seed_no_guest_seed(void **state)
{
	uint8_t host[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[32];

	(void)state;
	memset(out, 0xee, sizeof(out));
	assert_false(entropy_guest_seed(host, 0, 0, 0, out, sizeof(out)));
	assert_false(entropy_guest_seed(host, sizeof(host), 0, 0, out, sizeof(out)));
	for (size_t i = 0; i < sizeof(out); i++)
		assert_int_equal(out[i], 0xee); /* untouched */
	/* an odd length is filled exactly */
	uint8_t h[16] = {9}, o[13];

	memset(o, 0, sizeof(o));
	assert_true(entropy_guest_seed(h, sizeof(h), 3, 4, o, sizeof(o)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_reference),
		cmocka_unit_test(test_seeds_differ_per_guest_and_boot),
		cmocka_unit_test(test_no_host_seed_no_guest_seed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
