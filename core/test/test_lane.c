// SPDX-License-Identifier: BSD-2-Clause
/*
 * The PMU lane (core/lane.c, sched_guest_ecall) against its contract
 * (vpmu/vpmu_sbi.h): after a PMU call it looks only at what the contract
 * says such a call may change. Each case makes the stub PMU call change one
 * thing, then answers the same call twice from the same state: through the
 * lane, and the long way's test (sched_fast_return, core/sched_internal.h,
 * what sched_sbi_ecall asks after any other SBI call). For everything the
 * contract allows, the lane must go back to the scheduler's loop when the
 * long way would (the differences: an LCOFI the guest can take now is
 * delivered, and a moved vPMU deadline armed, by the lane itself). The
 * LCOFI lane (sched_guest_lcofi) answers an overflow interrupt under the
 * same contract. For what the contract forbids, the lane
 * resumes the guest where the long way would not: the reason a PMU call
 * must never do it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/ecall.h"
#include "core/hart.h"
#include "core/sched.h"
#include "core/sched_internal.h"
#include "arch/riscv/timer.h" /* core/test/stubs: the test sets the time */
#include "core/vcpu.h"
#include "core/vm.h"
#include "vpmu/vpmu_sbi.h"

/* ---- what lane.c needs from the rest of the hypervisor ---- */
uint64_t stub_time;
void *host_tp; /* this_hart(): core/test/stubs/arch/riscv/cpu.h */
bool vpmu_offered = true;
bool excl_enabled;

/* What the stub PMU call does to the vCPU, its hart or its VM, and what it answers */
static void (*effect)(struct hart *h, struct vcpu *v);
static long answer;
static int excl_asked, excl_lane_asked, entry_prepared;
static bool excl_still;	    /* excl_unchanged's answer */
static bool excl_lane_ok;   /* excl_lane's */
static uint64_t excl_armed; /* excl_arm_timer's argument */
static bool lcofi_takeable;

long vpmu_counter_start(struct vpmu *p, unsigned long base, unsigned long mask, unsigned long flags,
			uint64_t value)
{
	struct vcpu *v = container_of(p, struct vcpu, vpmu);

	(void)base, (void)mask, (void)flags, (void)value;
	if (effect)
		effect(this_hart(), v);
	return answer;
}

/* The other eight are not called: every case issues a START */
long vpmu_counter_stop(struct vpmu *v, unsigned long base, unsigned long mask, unsigned long flags)
{
	(void)v, (void)base, (void)mask, (void)flags;
	fail();
	return 0;
}

static struct sbi_ret not_called(void)
{
	fail();
	return (struct sbi_ret){0, 0};
}

struct sbi_ret vpmu_num_counters(struct vpmu *v)
{
	(void)v;
	return not_called();
}

struct sbi_ret vpmu_counter_get_info(struct vpmu *v, unsigned long idx)
{
	(void)v, (void)idx;
	return not_called();
}

struct sbi_ret vpmu_counter_config_matching(struct vpmu *v, unsigned long base, unsigned long mask,
					    unsigned long flags, unsigned long event_idx,
					    uint64_t event_data)
{
	(void)v, (void)base, (void)mask, (void)flags, (void)event_idx, (void)event_data;
	return not_called();
}

struct sbi_ret vpmu_counter_fw_read(struct vpmu *v, unsigned long idx)
{
	(void)v, (void)idx;
	return not_called();
}

struct sbi_ret vpmu_counter_fw_read_hi(struct vpmu *v, unsigned long idx)
{
	(void)v, (void)idx;
	return not_called();
}

struct sbi_ret vpmu_snapshot_set_shmem(struct vpmu *v, unsigned long lo, unsigned long hi,
				       unsigned long flags)
{
	(void)v, (void)lo, (void)hi, (void)flags;
	return not_called();
}

struct sbi_ret vpmu_event_get_info(struct vpmu *v, unsigned long lo, unsigned long hi,
				   unsigned long n, unsigned long flags)
{
	(void)v, (void)lo, (void)hi, (void)n, (void)flags;
	return not_called();
}

struct sbi_ret sbi_dispatch(struct vcpu *v, unsigned long eid, unsigned long fid,
			    const unsigned long args[6])
{
	(void)v, (void)eid, (void)fid, (void)args;
	return not_called();
}

/* The other SBI calls' way (core/sched.c): the context it was given, counted */
static int sbi_ecalls;
struct vcpu_ctx *sched_sbi_ecall(struct vcpu_ctx *c)
{
	sbi_ecalls++;
	return c;
}

void vcpu_fold_pending_slow(struct vcpu *v)
{
	(void)v;
}

bool excl_unchanged(struct hart *h, struct vcpu *v, bool was_counting)
{
	(void)h, (void)v, (void)was_counting;
	excl_asked++;
	return excl_still;
}

static uint64_t timer_armed_at; /* the last timer_arm() */
static int overflow_irqs;

void timer_arm(uint64_t when)
{
	timer_armed_at = when;
}

/* The overflow the LCOFI lane handles: the same effects as a PMU call's */
void vpmu_overflow_irq(struct vpmu *p)
{
	overflow_irqs++;
	if (effect)
		effect(this_hart(), container_of(p, struct vcpu, vpmu));
}

bool excl_lane(struct hart *h, struct vcpu *v)
{
	(void)h, (void)v;
	excl_lane_asked++;
	return excl_lane_ok;
}

void excl_arm_timer(struct hart *h, uint64_t next)
{
	excl_armed = next;
	hart_arm_timer(h, next);
}

/* The arch's entry work: a software LCOFI is delivered if the guest can take it now */
void vcpu_arch_prepare_entry(struct vcpu_arch *a)
{
	(void)a;
	fail(); /* the lane does the LCOFI's part alone */
}

void vcpu_arch_deliver_lcofi(struct vcpu_arch *a)
{
	entry_prepared++;
	if (lcofi_takeable)
		a->lcofi_soft = false;
}

/* ---- one hart running one vCPU of one VM, as the loop left them at entry ---- */
static struct hart hart;
static struct hart_status status;
static struct vm vm;
static struct vcpu vcpu;

static void setup(bool excl_on)
{
	memset(&hart, 0, sizeof(hart));
	memset(&status, 0, sizeof(status));
	memset(&vm, 0, sizeof(vm));
	memset(&vcpu, 0, sizeof(vcpu));
	host_tp = &hart;
	hart.status = &status;
	hart.cur = &vcpu;
	hart.excl_on = excl_on;
	excl_enabled = excl_on;
	vm.state = VM_RUNNING;
	vcpu.vm = &vm;
	vcpu.state = VCPU_RUNNABLE;
	vcpu.arch.vstimecmp = UINT64_MAX;
	vcpu.arch.timer_next = UINT64_MAX;
	vcpu.arch.ctx.scause = CAUSE_VS_ECALL;
	vcpu.arch.ctx.sepc = 0x80001004; /* past the ecall (entry.S) */
	vcpu.arch.ctx.regs[17] = SBI_EXT_PMU;
	vcpu.arch.ctx.regs[16] = SBI_EXT_PMU_COUNTER_START;
	vcpu.vpmu.deadline = UINT64_MAX;
	status.doing = HART_GUEST;
	/* as sched_arm_timer left it: the slice's end, no vPMU deadline */
	hart.timer_rest = hart.timer_armed = timer_armed_at = 50000;
	sched_see(&hart, &vcpu);
	excl_asked = excl_lane_asked = entry_prepared = overflow_irqs = 0;
}

/* Before each test: a call that changes nothing and succeeds */
static int reset(void **state)
{
	(void)state;
	effect = NULL;
	answer = SBI_SUCCESS;
	excl_still = excl_lane_ok = lcofi_takeable = false;
	excl_armed = 0;
	return 0;
}

/* The lane: true if it resumes the guest at once */
static bool lane_resumes(bool excl_on)
{
	struct vcpu_ctx *c;

	setup(excl_on);
	c = sched_guest_ecall(&vcpu.arch.ctx);
	assert_true(c == NULL || c == &vcpu.arch.ctx);
	/* the loop takes over with the call answered, and the hang report says so */
	assert_int_equal(hart.exit_handled, c == NULL);
	assert_int_equal(status.doing, c ? HART_GUEST : HART_HYPERVISOR);
	return c != NULL;
}

/* The long way's question after the same call: would it resume the guest at once? */
static bool long_way_resumes(bool excl_on)
{
	setup(excl_on);
	vcpu_ecall_begin(&vcpu);
	vcpu_ecall_end(&vcpu,
		       vpmu_sbi_call(&vcpu.vpmu, vcpu.arch.ctx.regs[16], &vcpu.arch.ctx.regs[10]));
	return sched_fast_return(&hart, &vcpu, &hart.seen);
}

/* ---- the contract's list: what a PMU call may change ---- */
static void change_nothing_watched(struct hart *h, struct vcpu *v)
{
	(void)h;
	v->vpmu.backoff = 7; /* the vPMU's own state */
}

static void move_deadline(struct hart *h, struct vcpu *v)
{
	(void)h;
	v->vpmu.deadline = 12345;
}

static void start_counting(struct hart *h, struct vcpu *v)
{
	(void)h;
	v->vpmu.started_hw = BIT(3);
}

static void raise_soft_lcofi(struct hart *h, struct vcpu *v)
{
	(void)h;
	v->arch.lcofi_soft = true; /* vcpu_arch_raise_lcofi, software path */
}

static void raise_hvip_lcofi(struct hart *h, struct vcpu *v)
{
	(void)h;
	v->arch.lcofi_in_hvip = true; /* vcpu_arch_raise_lcofi, hvip path */
}

static void test_nothing_watched(void **state)
{
	(void)state;
	effect = change_nothing_watched;
	assert_true(lane_resumes(false));
	assert_int_equal(vcpu.arch.ctx.regs[10], SBI_SUCCESS);
	assert_int_equal(vcpu.arch.ctx.sepc, 0x80001004);
	assert_int_equal(status.entries, 0); /* the lane's entries are the guest's turn */
	assert_int_equal(entry_prepared, 0);
	assert_true(long_way_resumes(false));
}

static void move_deadline_later(struct hart *h, struct vcpu *v)
{
	(void)h;
	v->vpmu.deadline = 70000;
}

/*
 * A moved deadline: the lane arms the hart's timer as sched_arm_timer would
 * (the earlier of it and the rest); the long way's loop arms it. Under
 * exclusive counting, core/excl.c's timer (excl_arm_timer) adds its own.
 */
static void test_deadline(void **state)
{
	(void)state;
	effect = move_deadline;
	assert_true(lane_resumes(false));
	assert_int_equal(timer_armed_at, 12345);
	assert_int_equal(hart.timer_armed, 12345);
	assert_int_equal(hart.seen.pmu_deadline, 12345);
	assert_false(long_way_resumes(false));
	effect = move_deadline_later;
	assert_true(lane_resumes(false));
	assert_int_equal(hart.timer_armed, 50000); /* the slice ends first */
	assert_int_equal(hart.seen.pmu_deadline, 70000);
	/* exclusive counting, whose state did not change: excl_arm_timer re-arms */
	excl_still = true;
	effect = move_deadline;
	assert_true(lane_resumes(true));
	assert_int_equal(excl_lane_asked, 0); /* excl_unchanged said so */
	assert_int_equal(excl_armed, 12345);
	assert_int_equal(hart.seen.pmu_deadline, 12345);
	assert_false(long_way_resumes(true));
	/* ... whose state changed (the vCPU stopped counting, say): only if excl_lane says so */
	excl_still = false;
	excl_armed = 0;
	assert_false(lane_resumes(true));
	assert_int_equal(excl_armed, 0);
	assert_int_equal(hart.seen.pmu_deadline, UINT64_MAX);
	excl_lane_ok = true;
	assert_true(lane_resumes(true));
	assert_int_equal(excl_armed, 12345);
}

static void test_restart(void **state)
{
	(void)state;
	answer = VPMU_RET_RESTART;
	assert_false(lane_resumes(false));
	assert_true(hart.resched);
	assert_int_equal(vcpu.arch.ctx.sepc, 0x80001000); /* the same ecall again */
	assert_false(long_way_resumes(false));
}

static void test_counting(void **state)
{
	(void)state;
	effect = start_counting;
	/* without exclusive counting whether it counts is nobody's business */
	assert_true(lane_resumes(false));
	assert_int_equal(excl_asked, 0);
	assert_true(long_way_resumes(false));
	/* with it, core/excl.c answers: a vCPU that starts counting needs the token */
	excl_still = false;
	assert_false(lane_resumes(true));
	assert_int_equal(excl_lane_asked, 1); /* excl_unchanged said no: excl_lane decides */
	assert_false(long_way_resumes(true));
	excl_still = true;
	assert_true(lane_resumes(true));
	assert_true(long_way_resumes(true));
	/* it starts counting within its turn with the token: the lane, and the loop sees it so */
	excl_still = false;
	excl_lane_ok = true;
	assert_true(lane_resumes(true));
	assert_int_equal(excl_lane_asked, 1);
	assert_true(hart.seen.counting);
	assert_int_equal(excl_armed, 50000);
}

static void test_soft_lcofi(void **state)
{
	(void)state;
	effect = raise_soft_lcofi;
	/* the guest cannot take it yet: the loop re-checks it soon, both ways */
	lcofi_takeable = false;
	assert_false(lane_resumes(false));
	assert_int_equal(entry_prepared, 1);
	assert_false(long_way_resumes(false));
	/* it can: the lane delivers it at once, the long way at the loop's next entry */
	lcofi_takeable = true;
	assert_true(lane_resumes(false));
	assert_int_equal(entry_prepared, 1);
	assert_false(vcpu.arch.lcofi_soft);
	assert_false(long_way_resumes(false));
}

static void test_hvip_lcofi(void **state)
{
	(void)state;
	effect = raise_hvip_lcofi;
	/* hvip: the hardware keeps it pending for the guest; no re-check to arm */
	assert_true(lane_resumes(false));
	assert_int_equal(entry_prepared, 1);
	assert_true(long_way_resumes(false));
}

static void ask_resched(struct hart *h, struct vcpu *v)
{
	(void)v;
	h->resched = true;
}

/* ---- what the contract forbids: the lane does not look ---- */
static void stop_vcpu(struct hart *h, struct vcpu *v)
{
	(void)h;
	v->state = VCPU_WFI;
}

static void stop_vm(struct hart *h, struct vcpu *v)
{
	(void)h;
	v->vm->state = VM_STOPPING;
}

static void set_guest_timer(struct hart *h, struct vcpu *v)
{
	(void)h;
	v->arch.timer_next = 1000;
}

static void switch_vcpu(struct hart *h, struct vcpu *v)
{
	(void)v;
	h->cur = NULL;
}

static void test_forbidden(void **state)
{
	void (*const forbidden[])(struct hart *, struct vcpu *) = {stop_vcpu, stop_vm,
								   set_guest_timer, switch_vcpu};

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(forbidden); i++) {
		effect = forbidden[i];
		assert_true(lane_resumes(false));
		assert_false(long_way_resumes(false));
	}
}

/* ---- the LCOFI lane: an overflow interrupt's effects, answered as a PMU call's ---- */
static bool lcofi_lane_resumes(void)
{
	struct vcpu_ctx *c;

	setup(false);
	vcpu.arch.ctx.scause = CAUSE_IRQ_FLAG | IRQ_PMU_OVF;
	c = sched_guest_lcofi(&vcpu.arch.ctx);
	assert_true(c == NULL || c == &vcpu.arch.ctx);
	return c != NULL;
}

static void test_lcofi_lane(void **state)
{
	(void)state;
	effect = raise_hvip_lcofi;
	assert_true(lcofi_lane_resumes());
	assert_int_equal(overflow_irqs, 1);
	assert_int_equal(entry_prepared, 1); /* the guest's LCOFI delivered on the way back */
	assert_false(hart.exit_handled);
	effect = move_deadline;
	assert_true(lcofi_lane_resumes());
	assert_int_equal(hart.timer_armed, 12345);
	effect = ask_resched;
	assert_false(lcofi_lane_resumes()); /* handled: the loop must not take it again */
	assert_int_equal(overflow_irqs, 1);
	assert_true(hart.exit_handled);
	assert_int_equal(status.doing, HART_HYPERVISOR);
}

/* The hypervisor samples the vCPU: its sample reads the registers the long way saves */
static void test_lcofi_lane_sampled(void **state)
{
	(void)state;
	effect = raise_hvip_lcofi;
	setup(false);
	vcpu.vpmu.prof_mask = BIT(31);
	assert_null(sched_guest_lcofi(&vcpu.arch.ctx));
	assert_int_equal(overflow_irqs, 0);
	assert_false(hart.exit_handled); /* the loop handles the interrupt */
	assert_int_equal(status.doing, HART_GUEST);
}

/* Any other extension goes the other SBI calls' way, with no PMU call and nothing looked at */
static void test_other_calls_leave_the_lane(void **state)
{
	(void)state;
	effect = move_deadline;
	setup(false);
	vcpu.arch.ctx.regs[17] = SBI_EXT_BASE;
	sbi_ecalls = 0;
	assert_ptr_equal(sched_guest_ecall(&vcpu.arch.ctx), &vcpu.arch.ctx);
	assert_int_equal(sbi_ecalls, 1);
	assert_int_equal(vcpu.vpmu.deadline, UINT64_MAX); /* the PMU stub did not run */
	assert_int_equal(timer_armed_at, 50000);
	assert_false(hart.exit_handled);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_nothing_watched, reset),
		cmocka_unit_test_setup(test_other_calls_leave_the_lane, reset),
		cmocka_unit_test_setup(test_deadline, reset),
		cmocka_unit_test_setup(test_restart, reset),
		cmocka_unit_test_setup(test_counting, reset),
		cmocka_unit_test_setup(test_soft_lcofi, reset),
		cmocka_unit_test_setup(test_hvip_lcofi, reset),
		cmocka_unit_test_setup(test_forbidden, reset),
		cmocka_unit_test_setup(test_lcofi_lane, reset),
		cmocka_unit_test_setup(test_lcofi_lane_sampled, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
