// SPDX-License-Identifier: BSD-2-Clause
/*
 * Configuration parsing (core/config.c), whole bundles: valid
 * configurations and malformed bundles. A guest's properties are in
 * test_config_guest.c; the DTB builder in config_dt.c.
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
	};

	return cmocka_run_group_tests_name("core/config", tests, NULL, NULL);
}
