/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The configuration tests' DTB builder (core/test/config_dt.c): each test
 * builds its configuration DTB inline with libfdt's sequential-write API;
 * the bundle is that DTB padded to 4 KiB followed by blob space, in a
 * buffer of exactly bundle_size bytes so ASan catches any read past the
 * bundle. Shared by test_config.c (whole bundles) and test_config_guest.c
 * (a guest's properties).
 */
#ifndef CORE_TEST_CONFIG_DT_H
#define CORE_TEST_CONFIG_DT_H

#include <stddef.h>
#include <stdint.h>
#include "core/config.h"

#define MiB   (1ULL << 20)
#define OK(x) assert_int_equal((x), 0)

extern char fdtbuf[256 * 1024];
extern void *bundle;
extern size_t bundle_size;
extern struct hv_config cfg;
extern char err[256];

/* Root node with the given compatible (NULL: none) */
void dt_begin(const char *compatible);
void dt_node(const char *name);
void dt_end(void);
void dt_u32(const char *name, uint32_t v);
void dt_str(const char *name, const char *s);
void dt_raw(const char *name, const void *p, int len);
/* A property of n 32-bit cells */
void dt_cells(const char *name, int n, ...);
/* <a-hi a-lo b-hi b-lo> */
void dt_pair(const char *name, uint64_t a, uint64_t b);
/* <hi lo>: one 64-bit number in two cells */
void dt_u64(const char *name, uint64_t v);
/* A guest that parses: 1 vCPU, 64 MiB at 2 GiB, a 4 KiB image at bundle offset 4 KiB */
void dt_guest_std(const char *name);
/*
 * Close the open nodes (depth: how many are still open, root included),
 * finish the tree and build the bundle: the DTB padded to 4 KiB, then
 * blob_bytes of blob space.
 */
void dt_finish(int depth, size_t blob_bytes);
/* Parse the bundle, expect success */
void parse_ok(void);
void parse_fails_(const char *file, int line, const char *const *subs);
/* Parse the bundle, expect failure with a reason containing every substring */
#define parse_fails(...) parse_fails_(__FILE__, __LINE__, (const char *[]){__VA_ARGS__, NULL})

/* Frees the bundle: every test's teardown */
int teardown(void **state);
#define T(f) cmocka_unit_test_teardown(f, teardown)

#endif
