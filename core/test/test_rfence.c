// SPDX-License-Identifier: BSD-2-Clause
/*
 * core/sbi_rfence.c: a guest's remote fence goes, through the host's SBI,
 * only to the harts that hold a target vCPU loaded; a target no hart holds
 * is left to its next load (vcpu_arch_load), with a FENCE.I asked of it
 * when the guest asked for one. The host's SBI here records its calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/excl.h"
#include "core/hart.h"
#include "core/sbi.h"
#include "core/vcpu.h"
#include "core/vm.h"

void *host_tp; /* this_hart(): core/test/stubs/arch/riscv/cpu.h */

extern const struct sbi_ext sbi_ext_rfence;

struct hart harts[HART_MAX];
unsigned int nr_harts = 2;

static struct vm vm;
static struct vcpu vcpus[3];
static unsigned long fw_counted[32];
static unsigned long parked_hmask; /* harts excl_fence_now takes out, as parked ones */

static struct {
	unsigned int n;
	unsigned long fid, hmask, a2, a3, a4;
} host;

struct sbi_ret sbi_ecall(unsigned long ext, unsigned long fid, unsigned long arg0,
			 unsigned long arg1, unsigned long arg2, unsigned long arg3,
			 unsigned long arg4, unsigned long arg5)
{
	assert_int_equal(ext, SBI_EXT_RFENCE);
	assert_int_equal(arg1, 0); /* hart_mask_base 0: the mask names host hart ids */
	assert_int_equal(arg5, 0);
	host.n++;
	host.fid = fid;
	host.hmask = arg0;
	host.a2 = arg2;
	host.a3 = arg3;
	host.a4 = arg4;
	return (struct sbi_ret){0, 0};
}

unsigned long excl_fence_now(unsigned long hmask)
{
	return hmask & ~parked_hmask;
}

void vcpu_fw_event(struct vcpu *v, unsigned int fw_event)
{
	assert_true(fw_event < 32);
	fw_counted[fw_event] += v == &vcpus[0] ? 1 : 100; /* sent by vCPU 0, received by others */
}

/* vCPU i placed on hart `on`, loaded there or not; no FENCE.I asked */
static void place(unsigned int i, unsigned int on, bool loaded)
{
	vcpus[i].hart = &harts[on];
	vcpus[i].arch.fence_i_pending = 0;
	if (loaded)
		harts[on].arch.loaded = &vcpus[i].arch;
}

static int setup(void **state)
{
	(void)state;
	memset(harts, 0, sizeof(harts));
	memset(&vm, 0, sizeof(vm));
	memset(vcpus, 0, sizeof(vcpus));
	memset(&host, 0, sizeof(host));
	memset(fw_counted, 0, sizeof(fw_counted));
	parked_hmask = 0;
	harts[0].hartid = 3; /* host hart ids differ from the indices */
	harts[1].hartid = 5;
	vm.nr_vcpus = 3;
	for (unsigned int i = 0; i < 3; i++) {
		vcpus[i].vm = &vm;
		vcpus[i].id = i;
		vm.vcpus[i] = &vcpus[i];
	}
	/* the caller, vCPU 0, runs on hart 0; vCPU 1 waits on hart 1, whose loaded one is vCPU 2 */
	place(0, 0, true);
	place(1, 1, false);
	place(2, 1, true);
	return 0;
}

static struct sbi_ret rfence(unsigned long fid, unsigned long mask, unsigned long base)
{
	const unsigned long args[6] = {mask, base, 0x4000, 0x2000, 7, 0};

	return sbi_ext_rfence.handler(&vcpus[0], SBI_EXT_RFENCE, fid, args);
}

/* A target no hart holds: no host call, its next load does the FENCE.I */
static void test_not_loaded_waits_for_load(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = rfence(SBI_EXT_RFENCE_REMOTE_SFENCE_VMA, 1UL << 1, 0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(host.n, 0);
	assert_int_equal(vcpus[1].arch.fence_i_pending, 0);
	r = rfence(SBI_EXT_RFENCE_REMOTE_FENCE_I, 1UL << 1, 0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(host.n, 0);
	assert_int_equal(vcpus[1].arch.fence_i_pending, 1);
	assert_int_equal(vcpus[2].arch.fence_i_pending, 0);
	/* both counted as sent and received, as natively */
	assert_int_equal(fw_counted[SBI_PMU_FW_SFENCE_VMA_SENT], 1);
	assert_int_equal(fw_counted[SBI_PMU_FW_SFENCE_VMA_RCVD], 100);
	assert_int_equal(fw_counted[SBI_PMU_FW_FENCE_I_SENT], 1);
	assert_int_equal(fw_counted[SBI_PMU_FW_FENCE_I_RCVD], 100);
}

/* A target loaded on its hart: that hart, by its host hart id, with the range and ASID */
static void test_loaded_fenced_now(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = rfence(SBI_EXT_RFENCE_REMOTE_SFENCE_VMA_ASID, 1UL << 2, 0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(host.n, 1);
	assert_int_equal(host.fid, SBI_EXT_RFENCE_REMOTE_HFENCE_VVMA_ASID);
	assert_int_equal(host.hmask, 1UL << 5);
	assert_int_equal(host.a2, 0x4000);
	assert_int_equal(host.a3, 0x2000);
	assert_int_equal(host.a4, 7);
	r = rfence(SBI_EXT_RFENCE_REMOTE_SFENCE_VMA, 1UL << 2, 0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(host.n, 2);
	assert_int_equal(host.fid, SBI_EXT_RFENCE_REMOTE_HFENCE_VVMA);
	assert_int_equal(host.hmask, 1UL << 5);
	r = rfence(SBI_EXT_RFENCE_REMOTE_FENCE_I, 1UL << 2, 0);
	assert_int_equal(host.n, 3);
	assert_int_equal(host.fid, SBI_EXT_RFENCE_REMOTE_FENCE_I);
	assert_int_equal(host.hmask, 1UL << 5);
	assert_int_equal(host.a2, 0); /* FENCE_I has no range */
	assert_int_equal(r.error, SBI_SUCCESS);
}

/* All three (base -1): the caller's own hart and the hart holding vCPU 2, once each */
static void test_all_vcpus(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = rfence(SBI_EXT_RFENCE_REMOTE_FENCE_I, 0, -1UL);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(host.n, 1);
	assert_int_equal(host.hmask, (1UL << 3) | (1UL << 5));
	assert_int_equal(vcpus[1].arch.fence_i_pending, 1);
	assert_int_equal(fw_counted[SBI_PMU_FW_FENCE_I_SENT], 3);
	assert_int_equal(fw_counted[SBI_PMU_FW_FENCE_I_RCVD], 1 + 200);
}

/* A vCPU put since (its hart holds none): no host call */
static void test_put_vcpu(void **state)
{
	(void)state;
	harts[1].arch.loaded = NULL;
	assert_int_equal(rfence(SBI_EXT_RFENCE_REMOTE_SFENCE_VMA, 0x6, 0).error, SBI_SUCCESS);
	assert_int_equal(host.n, 0);
}

/* A parked hart holding a target is left to excl (fenced when it leaves its park) */
static void test_parked_hart(void **state)
{
	(void)state;
	parked_hmask = 1UL << 5;
	assert_int_equal(rfence(SBI_EXT_RFENCE_REMOTE_SFENCE_VMA, 1UL << 2, 0).error, SBI_SUCCESS);
	assert_int_equal(host.n, 0);
	assert_int_equal(rfence(SBI_EXT_RFENCE_REMOTE_SFENCE_VMA, 0x5, 0).error, SBI_SUCCESS);
	assert_int_equal(host.n, 1);
	assert_int_equal(host.hmask, 1UL << 3);
}

/* Bad input: the spec's codes, and nothing fenced or asked */
static void test_bad_input(void **state)
{
	(void)state;
	/* vCPU 3 does not exist, in the mask or through the base */
	assert_int_equal(rfence(SBI_EXT_RFENCE_REMOTE_FENCE_I, (1UL << 3) | 2, 0).error,
			 SBI_ERR_INVALID_PARAM);
	assert_int_equal(rfence(SBI_EXT_RFENCE_REMOTE_FENCE_I, 3, 2).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(host.n, 0);
	assert_int_equal(rfence(3, 1, 0).error, SBI_ERR_NOT_SUPPORTED); /* HFENCE_GVMA_VMID */
	assert_int_equal(rfence(6, 1, 0).error, SBI_ERR_NOT_SUPPORTED); /* HFENCE_VVMA */
	assert_int_equal(rfence(~0UL, 1, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(vcpus[1].arch.fence_i_pending, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_not_loaded_waits_for_load, setup),
		cmocka_unit_test_setup(test_loaded_fenced_now, setup),
		cmocka_unit_test_setup(test_all_vcpus, setup),
		cmocka_unit_test_setup(test_put_vcpu, setup),
		cmocka_unit_test_setup(test_parked_hart, setup),
		cmocka_unit_test_setup(test_bad_input, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
