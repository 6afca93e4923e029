// SPDX-License-Identifier: BSD-2-Clause
/*
 * core/vcpu.c: firmware events for a vCPU that another hart runs or that is
 * away are posted atomically and folded in by its own hart before it runs.
 * The fold adds each event's whole count at once: with interrupts off, a
 * vCPU that was away while a guest posted a million IPIs to it must not
 * cost its hart a million walks over its firmware counters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/hart.h"
#include "core/vcpu.h"

void *host_tp; /* this_hart(): core/test/stubs/arch/riscv/cpu.h */
uint64_t stub_time;

static struct hart here, there;
static struct vcpu vcpu;

/* What the vPMU was asked to count: calls and the events they add up to */
static unsigned long fw_calls, fw_counted[SBI_PMU_FW_MAX];

void vpmu_fw_event(struct vpmu *v, unsigned int fw_event, uint64_t n)
{
	assert_ptr_equal(v, &vcpu.vpmu);
	assert_true(fw_event < SBI_PMU_FW_MAX);
	fw_calls++;
	fw_counted[fw_event] += n;
}

bool excl_defer_kick(struct hart *h)
{
	(void)h;
	return true;
}

struct sbi_ret sbi_ecall(unsigned long eid, unsigned long fid, unsigned long a0, unsigned long a1,
			 unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)
{
	(void)eid, (void)fid, (void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return (struct sbi_ret){0, 0};
}

static int setup(void **state)
{
	(void)state;
	memset(&vcpu, 0, sizeof(vcpu));
	memset(fw_counted, 0, sizeof(fw_counted));
	fw_calls = 0;
	vcpu.hart = &there;
	here.cur = NULL;
	there.cur = &vcpu;
	host_tp = &here;
	return 0;
}

/* Posted from another hart, folded on its own: every event counted, in one call per event */
static void test_fold_adds_counts_at_once(void **state)
{
	(void)state;
	for (unsigned long i = 0; i < 1000000; i++)
		vcpu_fw_event(&vcpu, SBI_PMU_FW_IPI_RCVD);
	for (unsigned long i = 0; i < 3; i++)
		vcpu_fw_event(&vcpu, SBI_PMU_FW_SET_TIMER);
	assert_int_equal(fw_calls, 0); /* not this hart's vCPU: posted only */
	host_tp = &there;
	vcpu_fold_pending(&vcpu);
	assert_int_equal(fw_counted[SBI_PMU_FW_IPI_RCVD], 1000000);
	assert_int_equal(fw_counted[SBI_PMU_FW_SET_TIMER], 3);
	/* one call per posted event kind, whatever the counts */
	assert_int_equal(fw_calls, 2);
	/* nothing left to fold */
	vcpu_fold_pending(&vcpu);
	assert_int_equal(fw_calls, 2);
	assert_int_equal(vcpu.fw_pending_any, 0);
}

/* On the hart that runs it, an event is counted at once */
static void test_event_on_own_hart_counted_at_once(void **state)
{
	(void)state;
	host_tp = &there;
	vcpu_fw_event(&vcpu, SBI_PMU_FW_ILLEGAL_INSN);
	assert_int_equal(fw_counted[SBI_PMU_FW_ILLEGAL_INSN], 1);
	assert_int_equal(vcpu.fw_pending_any, 0);
	vcpu_fw_event(&vcpu, SBI_PMU_FW_MAX); /* not an event: ignored */
	assert_int_equal(fw_calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_fold_adds_counts_at_once, setup),
		cmocka_unit_test_setup(test_event_on_own_hart_counted_at_once, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
