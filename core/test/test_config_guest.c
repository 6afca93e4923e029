// SPDX-License-Identifier: BSD-2-Clause
/*
 * Configuration parsing (core/config.c), a guest's properties: vCPUs,
 * memory, load offset, image and initrd blobs, bootargs, affinity, the
 * hypervisor's profile, error reporting, and random mutations of a valid
 * bundle.
 */
#include <libfdt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "arch/riscv/gstage.h"
#include "core/config.h"
#include "core/test/config_dt.h"

static void one_guest(void (*fn)(void))
{
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_node("alpha");
	fn();
	dt_finish(3, 2 * SZ_4K);
}

/*
 * A guest node the parser refuses, and what its reason must name besides the
 * guest. The tables of them keep a row a case (clang-format off).
 */
struct refusal {
	void (*guest)(void); /* the guest node's properties */
	int line;
	const char *want[4];
};
#define REFUSE(fn, ...)                                                                            \
	{                                                                                          \
		.guest = fn, .line = __LINE__, .want = { "alpha", __VA_ARGS__, NULL }              \
	}

static void refuse_all(const struct refusal *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		one_guest(r[i].guest);
		parse_fails_(__FILE__, r[i].line, r[i].want);
	}
}
#define REFUSE_ALL(table) refuse_all(table, sizeof(table) / sizeof(table[0]))

static void mem_ok(void)
{
	dt_pair("memory", 0x80000000, 64 * MiB);
}
static void img_ok(void)
{
	dt_pair("pmuvisor,image-blob", SZ_4K, SZ_4K);
}

static void g_no_vcpus(void)
{
	mem_ok();
	img_ok();
}
static void g_vcpus_0(void)
{
	dt_u32("vcpus", 0);
	mem_ok();
	img_ok();
}
static void g_vcpus_9(void)
{
	dt_u32("vcpus", 9);
	mem_ok();
	img_ok();
}
static void g_vcpus_huge(void)
{
	dt_u32("vcpus", 0xffffffff);
	mem_ok();
	img_ok();
}
static void g_vcpus_2cells(void)
{
	dt_cells("vcpus", 2, 0, 1);
	mem_ok();
	img_ok();
}
static void g_vcpus_empty(void)
{
	dt_raw("vcpus", NULL, 0);
	mem_ok();
	img_ok();
}
static void g_vcpus_string(void)
{
	dt_str("vcpus", "seven");
	mem_ok();
	img_ok();
}
/* "two\0" is 4 bytes: read as one big cell */
static void g_vcpus_string4(void)
{
	dt_str("vcpus", "two");
	mem_ok();
	img_ok();
}

/* clang-format off */
static const struct refusal vcpus_refused[] = {
	REFUSE(g_no_vcpus, "'vcpus'"),
	REFUSE(g_vcpus_0, "vcpus = 0", "1..8"),
	REFUSE(g_vcpus_9, "vcpus = 9", "1..8"),
	REFUSE(g_vcpus_huge, "vcpus = 4294967295"),
	REFUSE(g_vcpus_2cells, "'vcpus'"),
	REFUSE(g_vcpus_empty, "'vcpus'"),
	REFUSE(g_vcpus_string, "'vcpus'"),
	REFUSE(g_vcpus_string4, "vcpus = 1953984256", "1..8"),
};
/* clang-format on */

static void test_vcpus(void **state)
{
	(void)state;
	REFUSE_ALL(vcpus_refused);
}

#define MEM_CASE(fn, base, size)                                                                   \
	static void fn(void)                                                                       \
	{                                                                                          \
		dt_u32("vcpus", 1);                                                                \
		dt_pair("memory", (base), (size));                                                 \
		img_ok();                                                                          \
	}
MEM_CASE(g_mem_base_misaligned, 0x80100000, 64 * MiB)
MEM_CASE(g_mem_base_4k, 0x80001000, 64 * MiB)
MEM_CASE(g_mem_size_misaligned, 0x80000000, 64 * MiB + 0x1000)
MEM_CASE(g_mem_size_zero, 0x80000000, 0)
MEM_CASE(g_mem_base_at_limit, GPA_LIMIT, 4 * MiB)
MEM_CASE(g_mem_base_far, 1ULL << 60, 4 * MiB)
MEM_CASE(g_mem_end_past_limit, GPA_LIMIT - 2 * MiB, 4 * MiB)
MEM_CASE(g_mem_size_wraps, 0x80000000, 0xffffffffffe00000ULL)
static void g_no_mem(void)
{
	dt_u32("vcpus", 1);
	img_ok();
}
static void g_mem_3cells(void)
{
	dt_u32("vcpus", 1);
	dt_cells("memory", 3, 0, 0x80000000, 0x4000000);
	img_ok();
}
static void g_mem_2cells(void)
{
	dt_u32("vcpus", 1);
	dt_cells("memory", 2, 0x80000000, 0x4000000); /* #size-cells 1 style */
	img_ok();
}

/* clang-format off */
static const struct refusal memory_refused[] = {
	REFUSE(g_no_mem, "'memory'"),
	REFUSE(g_mem_3cells, "'memory'"),
	REFUSE(g_mem_2cells, "'memory'"),
	REFUSE(g_mem_base_misaligned, "2 MiB"),
	REFUSE(g_mem_base_4k, "2 MiB"),
	REFUSE(g_mem_size_misaligned, "2 MiB"),
	REFUSE(g_mem_size_zero, "non-zero"),
	REFUSE(g_mem_base_at_limit, "2^41"),
	REFUSE(g_mem_base_far, "2^41"),
	REFUSE(g_mem_end_past_limit, "2^41"),
	REFUSE(g_mem_size_wraps, "2^41"),
};
/* clang-format on */

static void test_memory(void **state)
{
	(void)state;
	REFUSE_ALL(memory_refused);
}

#define LOAD_CASE(fn, body)                                                                        \
	static void fn(void)                                                                       \
	{                                                                                          \
		dt_u32("vcpus", 1);                                                                \
		dt_pair("memory", 0x80000000, 4 * MiB);                                            \
		img_ok();                                                                          \
		body;                                                                              \
	}
LOAD_CASE(g_load_1cell, dt_u32("load-offset", 0x200000))
LOAD_CASE(g_load_4cells, dt_pair("load-offset", 0, 0x200000))
LOAD_CASE(g_load_misaligned, dt_cells("load-offset", 2, 0, 0x200800))
LOAD_CASE(g_load_at_end, dt_cells("load-offset", 2, 0, 0x400000))
LOAD_CASE(g_load_huge, dt_cells("load-offset", 2, 0xfffff000, 0xfffff000))
LOAD_CASE(g_load_last_page, dt_cells("load-offset", 2, 0, 0x3ff000))

/* clang-format off */
static const struct refusal load_offset_refused[] = {
	REFUSE(g_load_1cell, "'load-offset'"),
	REFUSE(g_load_4cells, "'load-offset'"),
	REFUSE(g_load_misaligned, "load-offset", "4 KiB"),
	REFUSE(g_load_at_end, "does not fit"),
	REFUSE(g_load_huge, "does not fit"),
};
/* clang-format on */

static void test_load_offset(void **state)
{
	(void)state;
	REFUSE_ALL(load_offset_refused);
	one_guest(g_load_last_page); /* the 4 KiB image fills the last page exactly */
	parse_ok();
	assert_int_equal(cfg.vms[0].load_offset, 0x3ff000);
}

#define IMG_CASE(fn, body)                                                                         \
	static void fn(void)                                                                       \
	{                                                                                          \
		dt_u32("vcpus", 1);                                                                \
		dt_pair("memory", 0x80000000, 4 * MiB);                                            \
		dt_u64("load-offset", 0x3ff000); /* 4 KiB left for the image */                    \
		body;                                                                              \
	}
/* bundle = 4 KiB DTB + 8 KiB of blobs = 12 KiB */
IMG_CASE(g_img_missing, (void)0)
IMG_CASE(g_img_2cells, dt_cells("pmuvisor,image-blob", 2, 0x1000, 0x1000))
IMG_CASE(g_img_off_beyond, dt_pair("pmuvisor,image-blob", 0x3001, 0))
IMG_CASE(g_img_end_beyond, dt_pair("pmuvisor,image-blob", 0x2000, 0x1001))
IMG_CASE(g_img_huge_off, dt_pair("pmuvisor,image-blob", 0xfffffffffffff000ULL, 0x2000))
IMG_CASE(g_img_wraps, dt_pair("pmuvisor,image-blob", 0x1000, 0xfffffffffffff000ULL))
IMG_CASE(g_img_empty, dt_pair("pmuvisor,image-blob", 0x1000, 0))
IMG_CASE(g_img_too_big, dt_pair("pmuvisor,image-blob", 0x1000, 0x1001))
IMG_CASE(g_img_fits, dt_pair("pmuvisor,image-blob", 0x1000, 0x1000))
IMG_CASE(g_img_to_end, dt_pair("pmuvisor,image-blob", 0x2000, 0x1000))

/* clang-format off */
static const struct refusal image_refused[] = {
	REFUSE(g_img_missing, "no valid image"),
	REFUSE(g_img_2cells, "no valid image"),
	REFUSE(g_img_off_beyond, "no valid image"),
	REFUSE(g_img_end_beyond, "no valid image"),
	REFUSE(g_img_huge_off, "no valid image"),
	REFUSE(g_img_wraps, "no valid image"),
	REFUSE(g_img_empty, "image (0 bytes)", "does not fit"),
	REFUSE(g_img_too_big, "image (4097 bytes) does not fit in its memory"),
};
/* clang-format on */

static void test_image_blob(void **state)
{
	(void)state;
	REFUSE_ALL(image_refused);
	one_guest(g_img_fits);
	parse_ok();
	assert_int_equal(cfg.vms[0].image_size, 0x1000);
	one_guest(g_img_to_end);
	parse_ok();
	assert_int_equal(cfg.vms[0].image_off + cfg.vms[0].image_size, bundle_size);
}

static void test_image_larger_than_memory(void **state)
{
	(void)state;
	/* a real 2 MiB + 4 KiB blob in the bundle for a 4 MiB guest loading at 2 MiB */
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_node("big");
	dt_u32("vcpus", 1);
	dt_pair("memory", 0x80000000, 4 * MiB);
	dt_pair("pmuvisor,image-blob", SZ_4K, SZ_2M + SZ_4K);
	dt_finish(3, SZ_2M + SZ_4K);
	parse_fails("big", "image (2101248 bytes) does not fit");
}

/* A guest of one vCPU with its memory and image, and body */
#define GUEST_CASE(fn, body)                                                                       \
	static void fn(void)                                                                       \
	{                                                                                          \
		dt_u32("vcpus", 1);                                                                \
		mem_ok();                                                                          \
		img_ok();                                                                          \
		body;                                                                              \
	}
GUEST_CASE(g_initrd_beyond, dt_pair("pmuvisor,initrd-blob", 0x2000, 0x1001))
GUEST_CASE(g_initrd_off_beyond, dt_pair("pmuvisor,initrd-blob", 0x10000, 0))
GUEST_CASE(g_initrd_wraps, dt_pair("pmuvisor,initrd-blob", 0x2000, ~0ULL))
GUEST_CASE(g_initrd_3cells, dt_cells("pmuvisor,initrd-blob", 3, 0, 0x2000, 0x1000))
GUEST_CASE(g_initrd_ok, dt_pair("pmuvisor,initrd-blob", 0x2000, 0x1000))

/* clang-format off */
static const struct refusal initrd_refused[] = {
	REFUSE(g_initrd_beyond, "initrd"),
	REFUSE(g_initrd_off_beyond, "initrd"),
	REFUSE(g_initrd_wraps, "initrd"),
	REFUSE(g_initrd_3cells, "initrd"),
};
/* clang-format on */

static void test_initrd_blob(void **state)
{
	(void)state;
	REFUSE_ALL(initrd_refused);
	one_guest(g_initrd_ok);
	parse_ok();
	assert_int_equal(cfg.vms[0].initrd_off, 0x2000);
	assert_int_equal(cfg.vms[0].initrd_size, 0x1000);
}

static char long_bootargs[BOOTARGS_MAX + 1];
#define ARGS_CASE(fn, body)                                                                        \
	static void fn(void)                                                                       \
	{                                                                                          \
		dt_u32("vcpus", 1);                                                                \
		mem_ok();                                                                          \
		img_ok();                                                                          \
		body;                                                                              \
	}
ARGS_CASE(g_args_unterminated, dt_raw("bootargs", "console=hvc0", 12))
ARGS_CASE(g_args_empty_prop, dt_raw("bootargs", NULL, 0))
ARGS_CASE(g_args_too_long, dt_str("bootargs", long_bootargs))
ARGS_CASE(g_args_empty_string, dt_str("bootargs", ""))
ARGS_CASE(g_args_list, dt_raw("bootargs", "one\0two", 8))

static void test_bootargs(void **state)
{
	(void)state;
	one_guest(g_args_unterminated);
	parse_fails("alpha", "bootargs");
	one_guest(g_args_empty_prop);
	parse_fails("alpha", "bootargs");
	memset(long_bootargs, 'x', BOOTARGS_MAX);
	long_bootargs[BOOTARGS_MAX] = '\0'; /* 512 characters + NUL: one too many */
	one_guest(g_args_too_long);
	parse_fails("alpha", "bootargs", "512");
	one_guest(g_args_empty_string);
	parse_ok();
	assert_string_equal(cfg.vms[0].bootargs, "");
	one_guest(g_args_list); /* a string list: only the first string */
	parse_ok();
	assert_string_equal(cfg.vms[0].bootargs, "one");
}

#define AFF_CASE(fn, body)                                                                         \
	static void fn(void)                                                                       \
	{                                                                                          \
		dt_u32("vcpus", 2);                                                                \
		mem_ok();                                                                          \
		img_ok();                                                                          \
		body;                                                                              \
	}
AFF_CASE(g_aff_short, dt_cells("cpu-affinity", 1, 0))
AFF_CASE(g_aff_long, dt_cells("cpu-affinity", 3, 0, 1, 2))
AFF_CASE(g_aff_empty, dt_raw("cpu-affinity", NULL, 0))
AFF_CASE(g_aff_odd_bytes, dt_raw("cpu-affinity", "\0\0\0\0\0\0\0", 7))
AFF_CASE(g_aff_ok, dt_cells("cpu-affinity", 2, 0x10, 0xffffffff))

/* clang-format off */
static const struct refusal affinity_refused[] = {
	REFUSE(g_aff_short, "cpu-affinity"),
	REFUSE(g_aff_long, "cpu-affinity"),
	REFUSE(g_aff_empty, "cpu-affinity"),
	REFUSE(g_aff_odd_bytes, "cpu-affinity"),
};
/* clang-format on */

static void test_affinity(void **state)
{
	(void)state;
	REFUSE_ALL(affinity_refused);
	one_guest(g_aff_ok); /* hart ids are not checked against the host here */
	parse_ok();
	assert_true(cfg.vms[0].has_affinity);
	assert_int_equal(cfg.vms[0].affinity[0], 0x10);
	assert_int_equal(cfg.vms[0].affinity[1], 0xffffffff);
}

/* Profiling from the hypervisor (docs/profiling.md): the guest's profile properties */
GUEST_CASE(g_prof_typo, dt_str("profile", "cyces"))
GUEST_CASE(g_prof_control, dt_str("profile", "cy\x05les\x1b[2J"))
GUEST_CASE(g_prof_zero, dt_str("profile", "0"))
GUEST_CASE(g_prof_wide, dt_str("profile", "0x100000"))
GUEST_CASE(g_prof_period_small, dt_str("profile", "cycles"); dt_u32("profile-period", 999))
GUEST_CASE(g_prof_depth_big, dt_str("profile", "cycles"); dt_u32("profile-depth", 65))
GUEST_CASE(g_prof_ok, dt_str("profile", "instructions"); dt_u32("profile-period", 5000))

/* clang-format off */
static const struct refusal profile_refused[] = {
	REFUSE(g_prof_typo, "profile \"cyces\" is not cycles, instructions or an event_idx"),
	REFUSE(g_prof_control, "profile is not cycles, instructions or an event_idx"),
	REFUSE(g_prof_zero, "profile \"0\" is not"),
	REFUSE(g_prof_wide, "profile \"0x100000\" is not"),
	REFUSE(g_prof_period_small, "profile-period must be at least 1000"),
	REFUSE(g_prof_depth_big, "profile-depth must be one cell <= 64"),
};
/* clang-format on */

static void test_profile(void **state)
{
	(void)state;
	REFUSE_ALL(profile_refused);
	/* a name that is not printable is not quoted: the error stays one printable line */
	one_guest(g_prof_control);
	parse_fails("alpha", "profile is not");
	for (const char *c = err; *c; c++)
		assert_true(*c >= 0x20 && *c < 0x7f);
	one_guest(g_prof_ok);
	parse_ok();
	assert_int_equal(cfg.vms[0].pmu.profile.event_idx, 0x2);
	assert_int_equal(cfg.vms[0].pmu.profile.period, 5000);
	assert_int_equal(cfg.vms[0].profile_depth, 32);
}

static void test_error_names_the_failing_guest(void **state)
{
	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_guest_std("good");
	dt_node("bad");
	dt_u32("vcpus", 1);
	img_ok();
	dt_end();
	dt_finish(2, SZ_4K);
	parse_fails("guest bad:", "'memory'");
	assert_null(strstr(err, "good"));
}

static void test_small_error_buffer(void **state)
{
	char small[8];

	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_finish(2, SZ_4K);
	memset(small, 0x5a, sizeof(small));
	assert_int_equal(config_parse(bundle, bundle_size, &cfg, small, sizeof(small)), -1);
	assert_string_equal(small, "configu"); /* truncated, terminated */
	/* no error buffer at all */
	assert_int_equal(config_parse(bundle, bundle_size, &cfg, NULL, 0), -1);
}

/*
 * Robustness: flip bytes of a valid configuration one position at a time,
 * and cut it short at every length. The parser must return 0 or -1 with a
 * terminated reason, never crash (run under ASan/UBSan).
 */
static void test_mutations_never_crash(void **state)
{
	unsigned char *orig, *m;
	size_t n;
	static const unsigned char vals[] = {0x00, 0xff, 0x01, 0x80, 0x7f};
	int ok = 0, bad = 0;

	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_node("alpha");
	dt_u32("vcpus", 2);
	dt_pair("memory", 0x80000000, 64 * MiB);
	dt_pair("pmuvisor,image-blob", SZ_4K, SZ_4K);
	dt_pair("pmuvisor,initrd-blob", 2 * SZ_4K, SZ_4K);
	dt_str("bootargs", "console=hvc0");
	dt_cells("cpu-affinity", 2, 0, 1);
	dt_end();
	dt_guest_std("beta");
	dt_finish(2, 2 * SZ_4K);
	n = fdt_totalsize(bundle);
	orig = malloc(bundle_size);
	memcpy(orig, bundle, bundle_size);

	for (size_t pos = 0; pos < n; pos++) {
		for (size_t v = 0; v < sizeof(vals); v++) {
			memcpy(bundle, orig, bundle_size);
			((unsigned char *)bundle)[pos] = vals[v];
			err[0] = '\0';
			int r = config_parse(bundle, bundle_size, &cfg, err, sizeof(err));
			assert_true(r == 0 || r == -1);
			if (r) {
				assert_non_null(memchr(err, '\0', sizeof(err)));
				assert_true(err[0] != '\0');
				bad++;
			} else {
				assert_true(cfg.nr_vms >= 1 && cfg.nr_vms <= CONFIG_VM_MAX);
				ok++;
			}
		}
	}
	/* truncations: exact-size copies so reads past the end are caught */
	for (size_t len = 0; len < n; len++) {
		m = malloc(len ? len : 1);
		memcpy(m, orig, len);
		assert_int_equal(config_parse(m, len, &cfg, err, sizeof(err)), -1);
		free(m);
	}
	free(orig);
	assert_true(ok > 0 && bad > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_vcpus),
		T(test_memory),
		T(test_load_offset),
		T(test_image_blob),
		T(test_image_larger_than_memory),
		T(test_initrd_blob),
		T(test_bootargs),
		T(test_affinity),
		T(test_profile),
		T(test_error_names_the_failing_guest),
		T(test_small_error_buffer),
		T(test_mutations_never_crash),
	};

	return cmocka_run_group_tests_name("core/config guest", tests, NULL, NULL);
}
