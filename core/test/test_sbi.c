// SPDX-License-Identifier: BSD-2-Clause
/*
 * SBI dispatch (core/sbi.c), BASE (core/sbi_base.c) and hart masks
 * (core/sbi_hartmask.c). The other extensions are test-local stubs with the
 * real EID ranges: their own files need the whole hypervisor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/lib.h"
#include "arch/riscv/nospec.h"
#include "core/sbi.h"
#include "arch/riscv/sbi_call.h" /* core/test/stubs/sbi_call.h */
#include "core/sbi_hartmask.h"
#include "core/vm.h"

extern const struct sbi_ext sbi_ext_base; /* the real one, core/sbi_base.c */

/* ---- stub extensions: the handler records the call ---- */
static struct {
	const char *ext;
	struct vcpu *vcpu;
	unsigned long eid, fid, args[6];
	int calls;
} last;

#define STUB_EXT(var, min, max, nm, probe_fn)                                                      \
	static struct sbi_ret var##_handler(struct vcpu *vcpu, unsigned long eid,                  \
					    unsigned long fid, const unsigned long args[6])        \
	{                                                                                          \
		last.ext = nm;                                                                     \
		last.vcpu = vcpu;                                                                  \
		last.eid = eid;                                                                    \
		last.fid = fid;                                                                    \
		memcpy(last.args, args, sizeof(last.args));                                        \
		last.calls++;                                                                      \
		return (struct sbi_ret){0, 0x5000 + (unsigned long)fid};                           \
	}                                                                                          \
	const struct sbi_ext var = {min, max, nm, var##_handler, probe_fn}

static long pmu_probe_value;
static long pmu_probe(struct vcpu *vcpu)
{
	(void)vcpu;
	return pmu_probe_value;
}

STUB_EXT(sbi_ext_time, SBI_EXT_TIME, SBI_EXT_TIME, "time", NULL);
STUB_EXT(sbi_ext_ipi, SBI_EXT_IPI, SBI_EXT_IPI, "ipi", NULL);
STUB_EXT(sbi_ext_rfence, SBI_EXT_RFENCE, SBI_EXT_RFENCE, "rfence", NULL);
STUB_EXT(sbi_ext_hsm, SBI_EXT_HSM, SBI_EXT_HSM, "hsm", NULL);
STUB_EXT(sbi_ext_srst, SBI_EXT_SRST, SBI_EXT_SRST, "srst", NULL);
STUB_EXT(sbi_ext_dbcn, SBI_EXT_DBCN, SBI_EXT_DBCN, "dbcn", NULL);
STUB_EXT(sbi_ext_legacy, SBI_EXT_0_1_SET_TIMER, SBI_EXT_0_1_CLEAR_IPI, "legacy", NULL);
STUB_EXT(sbi_ext_legacy_shutdown, SBI_EXT_0_1_SHUTDOWN, SBI_EXT_0_1_SHUTDOWN, "legacy-shutdown",
	 NULL);
STUB_EXT(sbi_ext_pmu, SBI_EXT_PMU, SBI_EXT_PMU, "pmu", pmu_probe);
static long absent_probe(struct vcpu *vcpu)
{
	(void)vcpu;
	return 0;
}
STUB_EXT(sbi_ext_legacy_absent, 0x04, 0x07, "legacy-absent", absent_probe);
STUB_EXT(sbi_ext_legacy_reserved, 0x09, 0x0f, "legacy-reserved", absent_probe);

/* ---- host SBI stub used by sbi_base.c ---- */
static struct {
	unsigned long ext, fid;
	int calls;
	struct sbi_ret ret;
} host;

struct sbi_ret sbi_ecall(unsigned long ext, unsigned long fid, unsigned long arg0,
			 unsigned long arg1, unsigned long arg2, unsigned long arg3,
			 unsigned long arg4, unsigned long arg5)
{
	(void)arg0, (void)arg1, (void)arg2, (void)arg3, (void)arg4, (void)arg5;
	host.ext = ext;
	host.fid = fid;
	host.calls++;
	if (host.ret.error) /* a distinct value per ID: which call each came from */
		return host.ret;
	return (struct sbi_ret){0, host.ret.value + fid - SBI_EXT_BASE_GET_MVENDORID};
}

static int reset(void **state)
{
	(void)state;
	memset(&last, 0, sizeof(last));
	memset(&host, 0, sizeof(host));
	pmu_probe_value = 1;
	return 0;
}

static const unsigned long no_args[6];

/* ---- sbi_find_ext ---- */
/* Guest indices are clamped after their bounds check: in range kept, any other value 0 */
static void test_array_index_nospec(void **state)
{
	static const unsigned long sizes[] = {1, 2, 3, 8, 64, 4096, 1UL << 40, (1UL << 62) + 5};
	static const unsigned long far[] = {~0UL, 1UL << 63, (1UL << 63) + 1, ~0UL >> 1};

	(void)state;
	for (unsigned int s = 0; s < ARRAY_SIZE(sizes); s++) {
		unsigned long n = sizes[s];

		assert_int_equal(array_index_nospec(0, n), 0);
		assert_int_equal(array_index_nospec(n - 1, n), n - 1);
		assert_int_equal(array_index_nospec(n / 2, n), n / 2);
		assert_int_equal(array_index_nospec(n, n), 0);
		assert_int_equal(array_index_nospec(n + 1, n), 0);
		assert_int_equal(array_index_nospec(2 * n + 7, n), 0);
		for (unsigned int f = 0; f < ARRAY_SIZE(far); f++)
			assert_int_equal(array_index_nospec(far[f], n), 0);
		if (n & (n - 1))
			continue;
		/* a power of two: array_index_pow2 keeps what is below, folds the rest inside */
		assert_int_equal(array_index_pow2(n - 1, n), n - 1);
		assert_int_equal(array_index_pow2(n / 2, n), n / 2);
		assert_int_equal(array_index_pow2(n, n), 0);
		assert_int_equal(array_index_pow2(n + 5, n), 5 % n);
		for (unsigned int f = 0; f < ARRAY_SIZE(far); f++)
			assert_true(array_index_pow2(far[f], n) < n);
	}
}

static void test_find_known(void **state)
{
	static const struct {
		unsigned long eid;
		const char *name;
	} k[] = {
		{0x00, "legacy"},	    {0x01, "legacy"},	       {0x02, "legacy"},
		{0x03, "legacy"},	    {0x08, "legacy-shutdown"}, {SBI_EXT_BASE, "base"},
		{0x04, "legacy-absent"},    {0x07, "legacy-absent"},   {0x09, "legacy-reserved"},
		{0x0f, "legacy-reserved"},  {SBI_EXT_TIME, "time"},    {SBI_EXT_IPI, "ipi"},
		{SBI_EXT_RFENCE, "rfence"}, {SBI_EXT_HSM, "hsm"},      {SBI_EXT_SRST, "srst"},
		{SBI_EXT_DBCN, "dbcn"},	    {SBI_EXT_PMU, "pmu"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		const struct sbi_ext *e = sbi_find_ext(k[i].eid);

		assert_non_null(e);
		assert_string_equal(e->name, k[i].name);
		assert_true(k[i].eid >= e->eid_min && k[i].eid <= e->eid_max);
	}
	assert_ptr_equal(sbi_find_ext(SBI_EXT_BASE), &sbi_ext_base);
	assert_ptr_equal(sbi_find_ext(SBI_EXT_PMU), &sbi_ext_pmu);
}

static void test_find_unknown(void **state)
{
	static const unsigned long eids[] = {
		/* gaps around the known IDs */
		0x11,
		SBI_EXT_TIME - 1,
		SBI_EXT_TIME + 1,
		SBI_EXT_IPI + 1,
		SBI_EXT_RFENCE + 1,
		SBI_EXT_HSM - 1,
		SBI_EXT_SRST + 1,
		SBI_EXT_DBCN - 1,
		SBI_EXT_PMU + 1,
		/* extensions of the spec that pmuvisor does not implement */
		0x53555350 /* SUSP */,
		0x43505043 /* CPPC */,
		0x4E41434C /* NACL */,
		0x535441 /* STA */,
		0x535345 /* SSE */,
		0x46574654 /* FWFT */,
		/* experimental, vendor and firmware ranges */
		0x08000000,
		0x08ffffff,
		0x09000000,
		0x09ffffff,
		0x0a000000,
		0x0affffff,
		0xffffffff,
		0x100000010,
		~0UL,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(eids) / sizeof(eids[0]); i++) {
		if (sbi_find_ext(eids[i]))
			fail_msg("eid 0x%lx unexpectedly found", eids[i]);
	}
}

/* ---- sbi_dispatch ---- */
static void test_dispatch_unknown(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = sbi_dispatch(NULL, 0x12345678, 0, no_args);
	assert_int_equal(r.error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(r.value, 0);
	r = sbi_dispatch(NULL, 0x11, 0, no_args); /* just past BASE */
	assert_int_equal(r.error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(r.value, 0);
	r = sbi_dispatch(NULL, ~0UL, ~0UL, no_args);
	assert_int_equal(r.error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(last.calls, 0);
}

static void test_dispatch_passes_everything(void **state)
{
	const unsigned long args[6] = {1, 2, 3, 4, 5, 0xdeadbeefcafeUL};
	struct vcpu *vcpu = (struct vcpu *)(uintptr_t)0x1000; /* opaque to sbi.c */
	struct sbi_ret r;

	(void)state;
	r = sbi_dispatch(vcpu, SBI_EXT_RFENCE, 6, args);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.value, 0x5006);
	assert_int_equal(last.calls, 1);
	assert_string_equal(last.ext, "rfence");
	assert_ptr_equal(last.vcpu, vcpu);
	assert_int_equal(last.eid, SBI_EXT_RFENCE);
	assert_int_equal(last.fid, 6);
	assert_memory_equal(last.args, args, sizeof(args));

	/* the legacy range hands the actual EID to the handler */
	r = sbi_dispatch(vcpu, 0x02, 0, args);
	assert_string_equal(last.ext, "legacy");
	assert_int_equal(last.eid, 0x02);
	r = sbi_dispatch(vcpu, 0x08, 0, args);
	assert_string_equal(last.ext, "legacy-shutdown");
	assert_int_equal(last.eid, 0x08);
	assert_int_equal(last.calls, 3);
}

static void test_dispatch_every_stub(void **state)
{
	static const struct {
		unsigned long eid;
		const char *name;
	} k[] = {
		{SBI_EXT_TIME, "time"}, {SBI_EXT_IPI, "ipi"},	{SBI_EXT_HSM, "hsm"},
		{SBI_EXT_SRST, "srst"}, {SBI_EXT_DBCN, "dbcn"}, {SBI_EXT_PMU, "pmu"},
		{0x00, "legacy"},	{0x03, "legacy"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct sbi_ret r = sbi_dispatch(NULL, k[i].eid, i, no_args);

		assert_string_equal(last.ext, k[i].name);
		assert_int_equal(r.value, 0x5000 + i);
	}
}

/* ---- BASE through the real handler (core/sbi_base.c) ---- */
static struct sbi_ret base(unsigned long fid, unsigned long arg0)
{
	const unsigned long args[6] = {arg0};

	return sbi_dispatch(NULL, SBI_EXT_BASE, fid, args);
}

static void test_base_versions(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = base(SBI_EXT_BASE_GET_SPEC_VERSION, 0);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.value, 0x03000000); /* v3.0 */
	r = base(SBI_EXT_BASE_GET_IMP_ID, 0);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.value, 0x706d7576);
	r = base(SBI_EXT_BASE_GET_IMP_VERSION, 0);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.value, 0x100);
	r = base(7, 0);
	assert_int_equal(r.error, SBI_ERR_NOT_SUPPORTED);
	r = base(~0UL, 0);
	assert_int_equal(r.error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(host.calls, 0);
}

static void test_base_probe(void **state)
{
	static const unsigned long present[] = {
		0x00,	      0x01,	   0x02,	   0x03,	0x08,	      SBI_EXT_BASE,
		SBI_EXT_TIME, SBI_EXT_IPI, SBI_EXT_RFENCE, SBI_EXT_HSM, SBI_EXT_SRST, SBI_EXT_DBCN};
	static const unsigned long absent[] = {0x04, 0x05,	 0x06,	     0x07, 0x09,
					       0x11, 0x53555350, 0x0a000000, ~0UL};
	struct sbi_ret r;

	(void)state;
	for (size_t i = 0; i < sizeof(present) / sizeof(present[0]); i++) {
		r = base(SBI_EXT_BASE_PROBE_EXT, present[i]);
		assert_int_equal(r.error, 0);
		assert_int_equal(r.value, 1);
	}
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		r = base(SBI_EXT_BASE_PROBE_EXT, absent[i]);
		assert_int_equal(r.error, 0);
		assert_int_equal(r.value, 0);
	}
	/* PMU's probe function decides */
	pmu_probe_value = 0;
	r = base(SBI_EXT_BASE_PROBE_EXT, SBI_EXT_PMU);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.value, 0);
	pmu_probe_value = 1;
	r = base(SBI_EXT_BASE_PROBE_EXT, SBI_EXT_PMU);
	assert_int_equal(r.value, 1);
	assert_int_equal(last.calls, 0); /* probing never calls a handler */
}

static void test_base_machine_ids_from_host(void **state)
{
	static const unsigned long fids[] = {SBI_EXT_BASE_GET_MVENDORID, SBI_EXT_BASE_GET_MARCHID,
					     SBI_EXT_BASE_GET_MIMPID};
	struct sbi_ret r;

	(void)state;
	/* asked once at boot, each ID by its own call */
	host.calls = 0;
	host.ret = (struct sbi_ret){0, 0x489};
	sbi_base_init();
	assert_int_equal(host.calls, 3);
	assert_int_equal(host.ext, SBI_EXT_BASE);
	assert_int_equal(host.fid, SBI_EXT_BASE_GET_MIMPID);
	for (size_t i = 0; i < 3; i++) {
		r = base(fids[i], 0);
		assert_int_equal(r.error, 0);
		assert_int_equal(r.value, 0x489 + i);
	}
	assert_int_equal(host.calls, 3); /* the guest's calls ask the host nothing */
	/* a host error reads as 0, not as an error to the guest */
	host.ret = (struct sbi_ret){SBI_ERR_NOT_SUPPORTED, 0x1234};
	sbi_base_init();
	r = base(SBI_EXT_BASE_GET_MARCHID, 0);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.value, 0);
}

/* ---- sbi_hartmask_resolve ---- */
static void test_hartmask_all(void **state)
{
	struct vm vm = {.nr_vcpus = 4};
	unsigned long v = 0x55;

	(void)state;
	assert_int_equal(sbi_hartmask_resolve(&vm, 0, ~0UL, &v), 0);
	assert_int_equal(v, 0xf);
	assert_int_equal(sbi_hartmask_resolve(&vm, ~0UL, ~0UL, &v), 0); /* mask ignored */
	assert_int_equal(v, 0xf);
	vm.nr_vcpus = 1;
	assert_int_equal(sbi_hartmask_resolve(&vm, 0, ~0UL, &v), 0);
	assert_int_equal(v, 0x1);
	vm.nr_vcpus = 8;
	assert_int_equal(sbi_hartmask_resolve(&vm, 0, ~0UL, &v), 0);
	assert_int_equal(v, 0xff);
	vm.nr_vcpus = 64;
	assert_int_equal(sbi_hartmask_resolve(&vm, 0, ~0UL, &v), 0);
	assert_int_equal(v, ~0UL);
}

static void test_hartmask_select(void **state)
{
	struct vm vm = {.nr_vcpus = 4};
	unsigned long v;

	(void)state;
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x5, 0, &v), 0);
	assert_int_equal(v, 0x5);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0xf, 0, &v), 0);
	assert_int_equal(v, 0xf);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x1, 3, &v), 0);
	assert_int_equal(v, 0x8);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x3, 2, &v), 0);
	assert_int_equal(v, 0xc);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x6, 1, &v), 0);
	assert_int_equal(v, 0xc);
	/* empty mask selects nothing, whatever the base */
	v = 0x55;
	assert_int_equal(sbi_hartmask_resolve(&vm, 0, 0, &v), 0);
	assert_int_equal(v, 0);
	v = 0x55;
	assert_int_equal(sbi_hartmask_resolve(&vm, 0, 1000, &v), 0);
	assert_int_equal(v, 0);
	vm.nr_vcpus = 8;
	assert_int_equal(sbi_hartmask_resolve(&vm, 0xff, 0, &v), 0);
	assert_int_equal(v, 0xff);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x1, 7, &v), 0);
	assert_int_equal(v, 0x80);
}

static void test_hartmask_invalid(void **state)
{
	struct vm vm = {.nr_vcpus = 4};
	unsigned long v;

	(void)state;
	/* bits beyond nr_vcpus */
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x10, 0, &v), SBI_ERR_INVALID_PARAM);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x1f, 0, &v), SBI_ERR_INVALID_PARAM);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x1, 4, &v), SBI_ERR_INVALID_PARAM);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x3, 3, &v), SBI_ERR_INVALID_PARAM);
	assert_int_equal(sbi_hartmask_resolve(&vm, 1UL << 63, 0, &v), SBI_ERR_INVALID_PARAM);
	assert_int_equal(sbi_hartmask_resolve(&vm, ~0UL, 0, &v), SBI_ERR_INVALID_PARAM);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x1, 64, &v), SBI_ERR_INVALID_PARAM);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x1, 1UL << 40, &v), SBI_ERR_INVALID_PARAM);
	/* base + bit wraps around to a small (valid-looking) hart id */
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x4, ~0UL - 1, &v), SBI_ERR_INVALID_PARAM);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x2, ~0UL - 1, &v), SBI_ERR_INVALID_PARAM);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x1, ~0UL - 1, &v), SBI_ERR_INVALID_PARAM);
	assert_int_equal(sbi_hartmask_resolve(&vm, 1UL << 63, 1UL << 63, &v),
			 SBI_ERR_INVALID_PARAM);
	assert_int_equal(sbi_hartmask_resolve(&vm, 0x6, ~0UL - 4, &v), SBI_ERR_INVALID_PARAM);
}

#define T(f) cmocka_unit_test_setup(f, reset)

/* As the boot does, before any call */
static int build_index(void **state)
{
	(void)state;
	sbi_init();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_array_index_nospec),
		T(test_find_known),
		T(test_find_unknown),
		T(test_dispatch_unknown),
		T(test_dispatch_passes_everything),
		T(test_dispatch_every_stub),
		T(test_base_versions),
		T(test_base_probe),
		T(test_base_machine_ids_from_host),
		T(test_hartmask_all),
		T(test_hartmask_select),
		T(test_hartmask_invalid),
	};

	return cmocka_run_group_tests_name("core/sbi", tests, build_index, NULL);
}
