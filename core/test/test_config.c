// SPDX-License-Identifier: BSD-2-Clause
/*
 * Configuration parsing (core/config.c). Each test builds its configuration
 * DTB inline with libfdt's sequential-write API; the bundle is that DTB
 * padded to 4 KiB followed by blob space, in a buffer of exactly
 * bundle_size bytes so ASan catches any read past the bundle.
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

#define MiB (1ULL << 20)

/* ---- DTB builder ---- */
static char fdtbuf[256 * 1024];
static void *bundle;
static size_t bundle_size;
static struct hv_config cfg;
static char err[256];

#define OK(x) assert_int_equal((x), 0)

/* Root node with the given compatible (NULL: none) */
static void dt_begin(const char *compatible)
{
	OK(fdt_create(fdtbuf, sizeof(fdtbuf)));
	OK(fdt_finish_reservemap(fdtbuf));
	OK(fdt_begin_node(fdtbuf, ""));
	OK(fdt_property_u32(fdtbuf, "#address-cells", 2));
	if (compatible)
		OK(fdt_property_string(fdtbuf, "compatible", compatible));
}
static void dt_node(const char *name)
{
	OK(fdt_begin_node(fdtbuf, name));
}
static void dt_end(void)
{
	OK(fdt_end_node(fdtbuf));
}
static void dt_u32(const char *name, uint32_t v)
{
	OK(fdt_property_u32(fdtbuf, name, v));
}
static void dt_str(const char *name, const char *s)
{
	OK(fdt_property_string(fdtbuf, name, s));
}
static void dt_raw(const char *name, const void *p, int len)
{
	OK(fdt_property(fdtbuf, name, p, len));
}

/* A property of n 32-bit cells */
static void dt_cells(const char *name, int n, ...)
{
	fdt32_t c[16];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		c[i] = cpu_to_fdt32(va_arg(ap, uint32_t));
	va_end(ap);
	dt_raw(name, c, 4 * n);
}

/* <a-hi a-lo b-hi b-lo> */
static void dt_pair(const char *name, uint64_t a, uint64_t b)
{
	dt_cells(name, 4, (uint32_t)(a >> 32), (uint32_t)a, (uint32_t)(b >> 32), (uint32_t)b);
}

/* <hi lo>: one 64-bit number in two cells */
static void dt_u64(const char *name, uint64_t v)
{
	dt_cells(name, 2, (uint32_t)(v >> 32), (uint32_t)v);
}

/* A guest that parses: 1 vCPU, 64 MiB at 2 GiB, a 4 KiB image at bundle offset 4 KiB */
static void dt_guest_std(const char *name)
{
	dt_node(name);
	dt_u32("vcpus", 1);
	dt_pair("memory", 0x80000000, 64 * MiB);
	dt_pair("pmuvisor,image-blob", SZ_4K, SZ_4K);
	dt_end();
}

/*
 * Close the open nodes (depth: how many are still open, root included),
 * finish the tree and build the bundle: the DTB padded to 4 KiB, then
 * blob_bytes of blob space.
 */
static void dt_finish(int depth, size_t blob_bytes)
{
	size_t dtb, padded;

	while (depth--)
		dt_end();
	OK(fdt_finish(fdtbuf));
	dtb = fdt_totalsize(fdtbuf);
	padded = (dtb + SZ_4K - 1) & ~(SZ_4K - 1);
	free(bundle);
	bundle_size = padded + blob_bytes;
	bundle = calloc(1, bundle_size);
	assert_non_null(bundle);
	memcpy(bundle, fdtbuf, dtb);
}

/* Parse the bundle, expect success */
static void parse_ok(void)
{
	int r;

	memset(err, 0, sizeof(err));
	r = config_parse(bundle, bundle_size, &cfg, err, sizeof(err));
	if (r)
		fail_msg("config_parse failed: %s", err);
}

/* Parse the bundle, expect failure with a reason containing every substring */
#define parse_fails(...) parse_fails_(__FILE__, __LINE__, (const char *[]){__VA_ARGS__, NULL})
static void parse_fails_(const char *file, int line, const char **subs)
{
	int r;

	memset(err, 0x5a, sizeof(err));
	r = config_parse(bundle, bundle_size, &cfg, err, sizeof(err));
	if (r != -1)
		fail_msg("%s:%d: config_parse returned %d, expected -1", file, line, r);
	if (!memchr(err, '\0', sizeof(err)))
		fail_msg("%s:%d: error string not terminated", file, line);
	if (!err[0] || strchr(err, '\n'))
		fail_msg("%s:%d: error not one non-empty line: '%s'", file, line, err);
	for (; *subs; subs++)
		if (!strstr(err, *subs))
			fail_msg("%s:%d: error '%s' does not mention '%s'", file, line, err, *subs);
}

static int teardown(void **state)
{
	(void)state;
	free(bundle);
	bundle = NULL;
	bundle_size = 0;
	return 0;
}

/* ---- valid configurations ---- */
static void test_one_guest_defaults(void **state)
{
	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_guest_std("alpha");
	dt_finish(2, SZ_4K);
	parse_ok();

	assert_int_equal(cfg.nr_vms, 1);
	assert_string_equal(cfg.vms[0].name, "alpha");
	assert_int_equal(cfg.vms[0].nr_vcpus, 1);
	assert_int_equal(cfg.vms[0].ram_gpa, 0x80000000);
	assert_int_equal(cfg.vms[0].ram_size, 64 * MiB);
	assert_int_equal(cfg.vms[0].load_offset, SZ_2M); /* default */
	assert_int_equal(cfg.vms[0].image_off, SZ_4K);
	assert_int_equal(cfg.vms[0].image_size, SZ_4K);
	assert_int_equal(cfg.vms[0].initrd_off, 0);
	assert_int_equal(cfg.vms[0].initrd_size, 0);
	assert_string_equal(cfg.vms[0].bootargs, "");
	assert_false(cfg.vms[0].has_affinity);
}

static void test_one_guest_everything(void **state)
{
	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_node("linux");
	dt_u32("vcpus", 4);
	dt_pair("memory", 0x100000000ULL, 256 * MiB);
	dt_str("image", "build/linux/Image"); /* source path: ignored by the parser */
	dt_u64("load-offset", 0x400000);
	dt_pair("pmuvisor,image-blob", 0x1000, 0x3000);
	dt_pair("pmuvisor,initrd-blob", 0x4000, 0x2345);
	dt_str("bootargs", "console=hvc0 earlycon=sbi");
	dt_cells("cpu-affinity", 4, 3, 2, 1, 0);
	dt_finish(3, 0x5345);
	parse_ok();

	assert_int_equal(cfg.nr_vms, 1);
	const struct vm_config *v = &cfg.vms[0];
	assert_string_equal(v->name, "linux");
	assert_int_equal(v->nr_vcpus, 4);
	assert_int_equal(v->ram_gpa, 0x100000000ULL);
	assert_int_equal(v->ram_size, 256 * MiB);
	assert_int_equal(v->load_offset, 0x400000);
	assert_int_equal(v->image_off, 0x1000);
	assert_int_equal(v->image_size, 0x3000);
	assert_int_equal(v->initrd_off, 0x4000);
	assert_int_equal(v->initrd_size, 0x2345);
	assert_string_equal(v->bootargs, "console=hvc0 earlycon=sbi");
	assert_true(v->has_affinity);
	assert_int_equal(v->affinity[0], 3);
	assert_int_equal(v->affinity[1], 2);
	assert_int_equal(v->affinity[2], 1);
	assert_int_equal(v->affinity[3], 0);
}

static void test_several_guests(void **state)
{
	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_node("alpha");
	dt_u32("vcpus", 2);
	dt_pair("memory", 0x80000000, 32 * MiB);
	dt_pair("pmuvisor,image-blob", 0x1000, 0x1000);
	dt_cells("cpu-affinity", 2, 1, 1);
	dt_end();
	dt_node("beta");
	dt_u32("vcpus", 8);
	dt_pair("memory", 0x40000000, 4 * MiB);
	dt_u64("load-offset", 0);
	dt_pair("pmuvisor,image-blob", 0x1000, 0x1000); /* same image: deduplicated blob */
	dt_str("bootargs", "quiet");
	dt_end();
	dt_node("gamma");
	dt_u32("vcpus", 1);
	dt_pair("memory", 0x80000000, 2 * MiB + 2 * MiB);
	dt_pair("pmuvisor,image-blob", 0x2000, 0x800);
	dt_end();
	dt_finish(2, 0x2000);
	parse_ok();

	assert_int_equal(cfg.nr_vms, 3);
	assert_string_equal(cfg.vms[0].name, "alpha");
	assert_string_equal(cfg.vms[1].name, "beta");
	assert_string_equal(cfg.vms[2].name, "gamma");
	assert_int_equal(cfg.vms[0].nr_vcpus, 2);
	assert_int_equal(cfg.vms[1].nr_vcpus, 8);
	assert_int_equal(cfg.vms[2].nr_vcpus, 1);
	assert_true(cfg.vms[0].has_affinity);
	assert_int_equal(cfg.vms[0].affinity[0], 1);
	assert_int_equal(cfg.vms[0].affinity[1], 1);
	assert_false(cfg.vms[1].has_affinity);
	assert_int_equal(cfg.vms[1].load_offset, 0);
	assert_int_equal(cfg.vms[1].ram_gpa, 0x40000000);
	assert_string_equal(cfg.vms[1].bootargs, "quiet");
	assert_string_equal(cfg.vms[2].bootargs, "");
	assert_int_equal(cfg.vms[2].image_off, 0x2000);
	assert_int_equal(cfg.vms[2].image_size, 0x800);
	assert_int_equal(cfg.vms[2].load_offset, SZ_2M);
}

static void test_eight_guests(void **state)
{
	char name[16];

	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	for (int i = 0; i < CONFIG_VM_MAX; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		dt_guest_std(name);
	}
	dt_finish(2, SZ_4K);
	parse_ok();
	assert_int_equal(cfg.nr_vms, 8);
	assert_string_equal(cfg.vms[7].name, "g7");
}

static void test_compatible_list_and_extra_nodes(void **state)
{
	static const char compat[] = "acme,board\0pmuvisor,config";

	(void)state;
	dt_begin(NULL);
	dt_raw("compatible", compat, sizeof(compat));
	dt_node("chosen");
	dt_str("note", "ignored");
	dt_end();
	dt_node("guests");
	dt_u32("#size-cells", 0); /* properties of /guests itself are not guests */
	dt_guest_std("alpha");
	dt_finish(2, SZ_4K);
	parse_ok();
	assert_int_equal(cfg.nr_vms, 1);
}

static void test_limits_accepted(void **state)
{
	char name31[32];
	char bootargs[BOOTARGS_MAX];

	(void)state;
	memset(name31, 'n', 31);
	name31[31] = '\0';
	memset(bootargs, 'b', sizeof(bootargs) - 1);
	bootargs[sizeof(bootargs) - 1] = '\0'; /* 511 characters + NUL = BOOTARGS_MAX */

	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_node(name31);
	dt_u32("vcpus", VCPU_MAX);
	/* memory ending exactly at 2^41 */
	dt_pair("memory", GPA_LIMIT - 8 * MiB, 8 * MiB);
	/* image filling memory exactly from a 4 KiB aligned load offset */
	dt_u64("load-offset", 8 * MiB - 0x2000);
	dt_pair("pmuvisor,image-blob", SZ_4K, 0x2000);
	/* an initrd that ends exactly at the end of the bundle */
	dt_pair("pmuvisor,initrd-blob", SZ_4K + 0x2000, 0x1000);
	dt_str("bootargs", bootargs);
	dt_cells("cpu-affinity", 8, 0, 1, 2, 3, 4, 5, 6, 7);
	dt_finish(3, 0x3000);
	parse_ok();

	assert_string_equal(cfg.vms[0].name, name31);
	assert_int_equal(cfg.vms[0].nr_vcpus, 8);
	assert_int_equal(cfg.vms[0].ram_gpa + cfg.vms[0].ram_size, GPA_LIMIT);
	assert_int_equal(strlen(cfg.vms[0].bootargs), BOOTARGS_MAX - 1);
	assert_int_equal(cfg.vms[0].initrd_size, 0x1000);
	assert_int_equal(cfg.vms[0].affinity[7], 7);
}

/* ---- malformed bundles ---- */
static void test_not_a_dtb(void **state)
{
	(void)state;
	bundle_size = 8192;
	bundle = malloc(bundle_size);
	for (size_t i = 0; i < bundle_size; i++)
		((unsigned char *)bundle)[i] = (unsigned char)(i * 37 + 11);
	parse_fails("not a valid device tree");

	/* all zeroes */
	memset(bundle, 0, bundle_size);
	parse_fails("not a valid device tree");

	/* smaller than an FDT header: must not read the header at all */
	free(bundle);
	bundle_size = 8;
	bundle = malloc(bundle_size);
	memcpy(bundle, "\xd0\x0d\xfe\xed\0\0\0\0", 8);
	parse_fails("not a valid device tree");
	assert_int_equal(config_parse(bundle, 0, &cfg, err, sizeof(err)), -1);
}

static void test_truncated_dtb(void **state)
{
	size_t dtb;
	void *shorter;

	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_guest_std("alpha");
	dt_finish(2, SZ_4K);
	dtb = fdt_totalsize(bundle);

	/* the bundle is one byte shorter than the DTB says it is */
	shorter = malloc(dtb - 1);
	memcpy(shorter, bundle, dtb - 1);
	free(bundle);
	bundle = shorter;
	bundle_size = dtb - 1;
	parse_fails("not a valid device tree");

	/* and truncated to just the header */
	bundle_size = sizeof(struct fdt_header);
	parse_fails("not a valid device tree");
}

static void test_corrupted_header(void **state)
{
	struct fdt_header *h;

	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_guest_std("alpha");
	dt_finish(2, SZ_4K);
	h = bundle;
	h->version = cpu_to_fdt32(1); /* unsupported version */
	parse_fails("not a valid device tree");

	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_guest_std("alpha");
	dt_finish(2, SZ_4K);
	h = bundle;
	h->off_dt_struct = cpu_to_fdt32(0x7ffffff0); /* struct block outside the blob */
	parse_fails("not a valid device tree");
}

static void test_wrong_compatible(void **state)
{
	(void)state;
	dt_begin("pmuvisor,configuration");
	dt_node("guests");
	dt_guest_std("alpha");
	dt_finish(2, SZ_4K);
	parse_fails("compatible", "pmuvisor,config");

	dt_begin(NULL); /* none at all */
	dt_node("guests");
	dt_guest_std("alpha");
	dt_finish(2, SZ_4K);
	parse_fails("compatible", "pmuvisor,config");

	/* compatible on /guests instead of the root does not count */
	dt_begin(NULL);
	dt_node("guests");
	dt_str("compatible", "pmuvisor,config");
	dt_guest_std("alpha");
	dt_finish(2, SZ_4K);
	parse_fails("compatible");
}

static void test_no_guests_node(void **state)
{
	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guest"); /* misspelt */
	dt_guest_std("alpha");
	dt_finish(2, SZ_4K);
	parse_fails("no /guests");

	dt_begin("pmuvisor,config");
	dt_node("chosen");
	dt_node("guests"); /* /chosen/guests is not /guests */
	dt_guest_std("alpha");
	dt_finish(3, SZ_4K);
	parse_fails("no /guests");
}

static void test_empty_guests(void **state)
{
	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_u32("vcpus", 1); /* a property, not a guest */
	dt_finish(2, SZ_4K);
	parse_fails("no guests");
}

static void test_too_many_guests(void **state)
{
	char name[16];

	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	for (int i = 0; i < CONFIG_VM_MAX + 1; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		dt_guest_std(name);
	}
	dt_finish(2, SZ_4K);
	parse_fails("more than 8 guests");
}

static void test_duplicate_names(void **state)
{
	(void)state;
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_guest_std("alpha");
	dt_guest_std("beta");
	dt_guest_std("alpha");
	dt_finish(2, SZ_4K);
	parse_fails("two guests named alpha");
}

static void test_bad_names(void **state)
{
	char name32[33];

	(void)state;
	memset(name32, 'n', 32);
	name32[32] = '\0';
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_guest_std(name32);
	dt_finish(2, SZ_4K);
	parse_fails("name", "31");
}

/* One guest whose body is written by fn; the bundle holds 2 pages of blobs */
static void one_guest(void (*fn)(void))
{
	dt_begin("pmuvisor,config");
	dt_node("guests");
	dt_node("alpha");
	fn();
	dt_finish(3, 2 * SZ_4K);
}

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

static void test_vcpus(void **state)
{
	(void)state;
	one_guest(g_no_vcpus);
	parse_fails("alpha", "'vcpus'");
	one_guest(g_vcpus_0);
	parse_fails("alpha", "vcpus = 0", "1..8");
	one_guest(g_vcpus_9);
	parse_fails("alpha", "vcpus = 9", "1..8");
	one_guest(g_vcpus_huge);
	parse_fails("alpha", "vcpus = 4294967295");
	one_guest(g_vcpus_2cells);
	parse_fails("alpha", "'vcpus'");
	one_guest(g_vcpus_empty);
	parse_fails("alpha", "'vcpus'");
	one_guest(g_vcpus_string);
	parse_fails("alpha", "'vcpus'");
	one_guest(g_vcpus_string4);
	parse_fails("alpha", "vcpus = 1953984256", "1..8");
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

static void test_memory(void **state)
{
	(void)state;
	one_guest(g_no_mem);
	parse_fails("alpha", "'memory'");
	one_guest(g_mem_3cells);
	parse_fails("alpha", "'memory'");
	one_guest(g_mem_2cells);
	parse_fails("alpha", "'memory'");
	one_guest(g_mem_base_misaligned);
	parse_fails("alpha", "2 MiB");
	one_guest(g_mem_base_4k);
	parse_fails("alpha", "2 MiB");
	one_guest(g_mem_size_misaligned);
	parse_fails("alpha", "2 MiB");
	one_guest(g_mem_size_zero);
	parse_fails("alpha", "non-zero");
	one_guest(g_mem_base_at_limit);
	parse_fails("alpha", "2^41");
	one_guest(g_mem_base_far);
	parse_fails("alpha", "2^41");
	one_guest(g_mem_end_past_limit);
	parse_fails("alpha", "2^41");
	one_guest(g_mem_size_wraps);
	parse_fails("alpha", "2^41");
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

static void test_load_offset(void **state)
{
	(void)state;
	one_guest(g_load_1cell);
	parse_fails("alpha", "'load-offset'");
	one_guest(g_load_4cells);
	parse_fails("alpha", "'load-offset'");
	one_guest(g_load_misaligned);
	parse_fails("alpha", "load-offset", "4 KiB");
	one_guest(g_load_at_end);
	parse_fails("alpha", "does not fit");
	one_guest(g_load_huge);
	parse_fails("alpha", "does not fit");
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

static void test_image_blob(void **state)
{
	(void)state;
	one_guest(g_img_missing);
	parse_fails("alpha", "no valid image");
	one_guest(g_img_2cells);
	parse_fails("alpha", "no valid image");
	one_guest(g_img_off_beyond);
	parse_fails("alpha", "no valid image");
	one_guest(g_img_end_beyond);
	parse_fails("alpha", "no valid image");
	one_guest(g_img_huge_off);
	parse_fails("alpha", "no valid image");
	one_guest(g_img_wraps);
	parse_fails("alpha", "no valid image");
	one_guest(g_img_empty);
	parse_fails("alpha", "image (0 bytes)", "does not fit");
	one_guest(g_img_too_big);
	parse_fails("alpha", "image (4097 bytes) does not fit in its memory");
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

#define INITRD_CASE(fn, body)                                                                      \
	static void fn(void)                                                                       \
	{                                                                                          \
		dt_u32("vcpus", 1);                                                                \
		mem_ok();                                                                          \
		img_ok();                                                                          \
		body;                                                                              \
	}
INITRD_CASE(g_initrd_beyond, dt_pair("pmuvisor,initrd-blob", 0x2000, 0x1001))
INITRD_CASE(g_initrd_off_beyond, dt_pair("pmuvisor,initrd-blob", 0x10000, 0))
INITRD_CASE(g_initrd_wraps, dt_pair("pmuvisor,initrd-blob", 0x2000, ~0ULL))
INITRD_CASE(g_initrd_3cells, dt_cells("pmuvisor,initrd-blob", 3, 0, 0x2000, 0x1000))
INITRD_CASE(g_initrd_ok, dt_pair("pmuvisor,initrd-blob", 0x2000, 0x1000))

static void test_initrd_blob(void **state)
{
	(void)state;
	one_guest(g_initrd_beyond);
	parse_fails("alpha", "initrd");
	one_guest(g_initrd_off_beyond);
	parse_fails("alpha", "initrd");
	one_guest(g_initrd_wraps);
	parse_fails("alpha", "initrd");
	one_guest(g_initrd_3cells);
	parse_fails("alpha", "initrd");
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

static void test_affinity(void **state)
{
	(void)state;
	one_guest(g_aff_short);
	parse_fails("alpha", "cpu-affinity");
	one_guest(g_aff_long);
	parse_fails("alpha", "cpu-affinity");
	one_guest(g_aff_empty);
	parse_fails("alpha", "cpu-affinity");
	one_guest(g_aff_odd_bytes);
	parse_fails("alpha", "cpu-affinity");
	one_guest(g_aff_ok); /* hart ids are not checked against the host here */
	parse_ok();
	assert_true(cfg.vms[0].has_affinity);
	assert_int_equal(cfg.vms[0].affinity[0], 0x10);
	assert_int_equal(cfg.vms[0].affinity[1], 0xffffffff);
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

#define T(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_one_guest_defaults),
		T(test_one_guest_everything),
		T(test_several_guests),
		T(test_eight_guests),
		T(test_compatible_list_and_extra_nodes),
		T(test_limits_accepted),
		T(test_not_a_dtb),
		T(test_truncated_dtb),
		T(test_corrupted_header),
		T(test_wrong_compatible),
		T(test_no_guests_node),
		T(test_empty_guests),
		T(test_too_many_guests),
		T(test_duplicate_names),
		T(test_bad_names),
		T(test_vcpus),
		T(test_memory),
		T(test_load_offset),
		T(test_image_blob),
		T(test_image_larger_than_memory),
		T(test_initrd_blob),
		T(test_bootargs),
		T(test_affinity),
		T(test_error_names_the_failing_guest),
		T(test_small_error_buffer),
		T(test_mutations_never_crash),
	};

	return cmocka_run_group_tests_name("core/config", tests, NULL, NULL);
}
