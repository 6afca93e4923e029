// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for config_parse() (core/config.c): the configuration
 * DTB at the start of a boot bundle is operator input read by the
 * hypervisor before any guest runs; a malformed one must stop the boot with
 * one clear line, never crash or read outside the bundle.
 *
 * Input: <bundle head> <4-byte big-endian pad>. The bundle is the head
 * followed by `pad` zero bytes (capped at 16 MiB): seeds are real
 * configuration DTBs (tools/fuzz.py --make-corpus: every .dts under dts/
 * compiled, with small blob references) and the pad makes
 * their blob references point inside the bundle, as mkbundle.py does, without
 * carrying the images. The bundle lives at the start of a 4 KiB aligned
 * buffer whose bytes past the bundle are poisoned for ASan, so any read
 * beyond bundle_size is caught.
 *
 * Checks: returns 0 or -1; on -1 the error is non-empty, NUL-terminated
 * inside the buffer, and one line of printable characters; on 0 the
 * configuration satisfies every promise config.h makes (the hypervisor
 * relies on them: vm_create, vm_boot, guest_fdt, the scheduler).
 */
#include <sanitizer/asan_interface.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/config.h"
#include "core/lib.h"

#define BUF_MAX (16u << 20)
#define ERRLEN	160 /* as core/main.c */

#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #c);      \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* core/lib.h services config.c may reach */
void hv_printf(const char *fmt, ...)
{
	(void)fmt;
}

void hv_panic(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "hv_panic: %s\n", buf);
	abort();
}

void hv_poweroff(bool failure)
{
	fprintf(stderr, "hv_poweroff(%d)\n", failure);
	abort();
}

/* CONFIG_FUZZ_LAX=1: skip the printable-name/one-line checks (to look past that finding) */
static int lax;
static uint8_t *buf; /* BUF_MAX bytes, 4 KiB aligned */
static size_t dirty; /* bytes of buf the last input wrote */
static struct hv_config cfg;

/*
 * A guest name prefixes every console line of that guest ("[name] ...") and
 * appears in the hypervisor's log lines: one token of printable characters,
 * no ']' (tools/run-tests.py parses "[name]"). Strict unless CONFIG_FUZZ_LAX.
 */
static bool name_ok(const char *n)
{
	size_t len = strnlen(n, VM_NAME_MAX);

	if (len == 0 || len >= VM_NAME_MAX)
		return false;
	for (size_t i = 0; i < len && !lax; i++)
		if ((unsigned char)n[i] <= 0x20 || (unsigned char)n[i] >= 0x7f || n[i] == ']' ||
		    n[i] == '[')
			return false;
	return true;
}

static void check_config(const struct hv_config *c, size_t bundle_size)
{
	CHECK(c->nr_vms >= 1 && c->nr_vms <= CONFIG_VM_MAX, "nr_vms %u", c->nr_vms);
	for (unsigned int i = 0; i < c->nr_vms; i++) {
		const struct vm_config *v = &c->vms[i];

		CHECK(name_ok(v->name), "guest %u name", i);
		for (unsigned int j = 0; j < i; j++)
			CHECK(strcmp(v->name, c->vms[j].name), "duplicate name %s", v->name);
		CHECK(v->nr_vcpus >= 1 && v->nr_vcpus <= VCPU_MAX, "%s: vcpus %u", v->name,
		      v->nr_vcpus);
		CHECK(v->ram_size && IS_ALIGNED(v->ram_size, 0x200000) &&
			      IS_ALIGNED(v->ram_gpa, 0x200000),
		      "%s: memory alignment", v->name);
		CHECK(v->ram_gpa < GPA_LIMIT && v->ram_size <= GPA_LIMIT - v->ram_gpa,
		      "%s: memory past the GPA limit", v->name);
		CHECK(IS_ALIGNED(v->load_offset, 4096) && v->load_offset < v->ram_size,
		      "%s: load-offset 0x%llx", v->name, (unsigned long long)v->load_offset);
		CHECK(v->image_size > 0 && v->image_off <= bundle_size &&
			      v->image_size <= bundle_size - v->image_off,
		      "%s: image blob outside the bundle", v->name);
		CHECK(v->image_size <= v->ram_size - v->load_offset, "%s: image does not fit",
		      v->name);
		CHECK(v->initrd_off <= bundle_size && v->initrd_size <= bundle_size - v->initrd_off,
		      "%s: initrd blob outside the bundle", v->name);
		CHECK(memchr(v->bootargs, 0, BOOTARGS_MAX) != NULL, "%s: bootargs unterminated",
		      v->name);
		CHECK(v->pmu.nr_allow <= VPMU_POLICY_RULES && v->pmu.nr_deny <= VPMU_POLICY_RULES,
		      "%s: pmu rules", v->name);
	}
}

static void check_error(const char *err)
{
	size_t len = strnlen(err, ERRLEN);

	CHECK(len > 0, "empty error");
	CHECK(len < ERRLEN, "error not NUL-terminated");
	if (lax)
		return;
	for (size_t i = 0; i < len; i++)
		CHECK((unsigned char)err[i] >= 0x20 && (unsigned char)err[i] < 0x7f,
		      "error is not one printable line: byte 0x%02x at %zu in \"%s\"",
		      (unsigned char)err[i], i, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[ERRLEN + 16];
	size_t head, bundle_size;
	uint32_t pad = 0;
	int r;

	if (!buf) {
		buf = aligned_alloc(4096, BUF_MAX);
		if (!buf)
			abort();
		memset(buf, 0, BUF_MAX);
		lax = getenv("CONFIG_FUZZ_LAX") != NULL;
	}
	head = size;
	if (size >= 4) {
		head = size - 4;
		pad = (uint32_t)data[head] << 24 | (uint32_t)data[head + 1] << 16 |
		      (uint32_t)data[head + 2] << 8 | data[head + 3];
	}
	if (head > BUF_MAX)
		return 0;
	bundle_size = head + (pad % (BUF_MAX - head + 1));

	ASAN_UNPOISON_MEMORY_REGION(buf, BUF_MAX);
	memset(buf, 0, dirty);
	memcpy(buf, data, head);
	dirty = head;
	ASAN_POISON_MEMORY_REGION(buf + bundle_size, BUF_MAX - bundle_size);

	memset(err, 0x55, sizeof(err));
	err[ERRLEN] = 0;
	r = config_parse(buf, bundle_size, &cfg, err, ERRLEN);
	CHECK(r == 0 || r == -1, "config_parse returned %d", r);
	if (r == 0)
		check_config(&cfg, bundle_size);
	else
		check_error(err);
	if (getenv("CONFIG_FUZZ_VERBOSE"))
		fprintf(stderr, "config_parse: %s\n", r ? err : "ok");
	ASAN_UNPOISON_MEMORY_REGION(buf, BUF_MAX);
	return 0;
}
