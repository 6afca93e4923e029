// SPDX-License-Identifier: BSD-2-Clause
/* The configuration tests' DTB builder and parse checks (config_dt.h) */
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

/* ---- DTB builder ---- */
char fdtbuf[256 * 1024];
void *bundle;
size_t bundle_size;
struct hv_config cfg;
char err[256];

/* Root node with the given compatible (NULL: none) */
void dt_begin(const char *compatible)
{
	OK(fdt_create(fdtbuf, sizeof(fdtbuf)));
	OK(fdt_finish_reservemap(fdtbuf));
	OK(fdt_begin_node(fdtbuf, ""));
	OK(fdt_property_u32(fdtbuf, "#address-cells", 2));
	if (compatible)
		OK(fdt_property_string(fdtbuf, "compatible", compatible));
}
void dt_node(const char *name)
{
	OK(fdt_begin_node(fdtbuf, name));
}
void dt_end(void)
{
	OK(fdt_end_node(fdtbuf));
}
void dt_u32(const char *name, uint32_t v)
{
	OK(fdt_property_u32(fdtbuf, name, v));
}
void dt_str(const char *name, const char *s)
{
	OK(fdt_property_string(fdtbuf, name, s));
}
void dt_raw(const char *name, const void *p, int len)
{
	OK(fdt_property(fdtbuf, name, p, len));
}

/* A property of n 32-bit cells */
void dt_cells(const char *name, int n, ...)
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
void dt_pair(const char *name, uint64_t a, uint64_t b)
{
	dt_cells(name, 4, (uint32_t)(a >> 32), (uint32_t)a, (uint32_t)(b >> 32), (uint32_t)b);
}

/* <hi lo>: one 64-bit number in two cells */
void dt_u64(const char *name, uint64_t v)
{
	dt_cells(name, 2, (uint32_t)(v >> 32), (uint32_t)v);
}

/* A guest that parses: 1 vCPU, 64 MiB at 2 GiB, a 4 KiB image at bundle offset 4 KiB */
void dt_guest_std(const char *name)
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
void dt_finish(int depth, size_t blob_bytes)
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
void parse_ok(void)
{
	int r;

	memset(err, 0, sizeof(err));
	r = config_parse(bundle, bundle_size, &cfg, err, sizeof(err));
	if (r)
		fail_msg("config_parse failed: %s", err);
}

/* Parse the bundle, expect failure with a reason containing every substring */
void parse_fails_(const char *file, int line, const char *const *subs)
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

int teardown(void **state)
{
	(void)state;
	free(bundle);
	bundle = NULL;
	bundle_size = 0;
	return 0;
}
