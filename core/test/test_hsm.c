// SPDX-License-Identifier: BSD-2-Clause
/*
 * core/sbi_hsm.c: HART_START of a sibling only ever changes a STOPPED
 * vCPU. A call that loses (the target runs, is suspended, another start
 * won) must not touch its start address or opaque: a vCPU in non-retentive
 * suspend resumes with its own opaque, and of two racing starts the winner's
 * address and opaque are the ones the target starts with.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/hart.h"
#include "core/sbi.h"
#include "core/vcpu.h"
#include "core/vm.h"

void *host_tp; /* this_hart(): core/test/stubs/arch/riscv/cpu.h */
uint64_t stub_time;

extern const struct sbi_ext sbi_ext_hsm;

#define RAM	 0x80000000UL
#define RAM_SIZE 0x100000UL

static struct hart hart0;
static struct vm vm;
static struct vcpu vcpus[2];
static unsigned long kicks;
static uint8_t ram[64];

void *vm_gpa_to_hva(struct vm *m, uint64_t gpa, size_t len)
{
	assert_ptr_equal(m, &vm);
	if (gpa < RAM || gpa + len > RAM + RAM_SIZE)
		return NULL;
	return ram; /* only tested for non-NULL */
}

void vcpu_kick(struct vcpu *v)
{
	(void)v;
	__atomic_add_fetch(&kicks, 1, __ATOMIC_RELAXED);
}

void vpmu_vcpu_reset(struct vpmu *v)
{
	(void)v;
}

static struct sbi_ret hsm(struct vcpu *v, unsigned long fid, unsigned long a0, unsigned long a1,
			  unsigned long a2)
{
	const unsigned long args[6] = {a0, a1, a2, 0, 0, 0};

	return sbi_ext_hsm.handler(v, SBI_EXT_HSM, fid, args);
}

static int setup(void **state)
{
	(void)state;
	memset(vcpus, 0, sizeof(vcpus));
	memset(&vm, 0, sizeof(vm));
	vm.nr_vcpus = 2;
	for (unsigned int i = 0; i < 2; i++) {
		vcpus[i].vm = &vm;
		vcpus[i].id = i;
		vcpus[i].hart = &hart0;
		vm.vcpus[i] = &vcpus[i];
	}
	vcpus[0].state = VCPU_RUNNABLE;
	vcpus[1].state = VCPU_STOPPED;
	host_tp = &hart0;
	kicks = 0;
	return 0;
}

static void test_start_stopped(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_START, 1, RAM + 0x1000, 0xabcd);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(vcpus[1].state, VCPU_START_PENDING);
	assert_int_equal(vcpus[1].start_pc, RAM + 0x1000);
	assert_int_equal(vcpus[1].start_arg, 0xabcd);
	assert_int_equal(kicks, 1);
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_GET_STATUS, 1, 0, 0);
	assert_int_equal(r.value, SBI_HSM_STATE_START_PENDING);
}

/*
 * An SBI IPI sent to a stopped vCPU is dropped by its start, as OpenSBI
 * (which sends none to a stopped hart) and KVM (its vCPU reset) drop it; a
 * losing start leaves a running vCPU's pending IPI alone.
 */
static void test_start_drops_ipi_sent_while_stopped(void **state)
{
	struct sbi_ret r;

	(void)state;
	vcpus[1].arch.pending_irqs = 1UL << IRQ_VS_SOFT;
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_START, 1, RAM, 0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(vcpus[1].arch.pending_irqs, 0);

	vcpus[1].state = VCPU_RUNNABLE;
	vcpus[1].arch.pending_irqs = 1UL << IRQ_VS_SOFT;
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_START, 1, RAM, 0);
	assert_int_equal(r.error, SBI_ERR_ALREADY_AVAILABLE);
	assert_int_equal(vcpus[1].arch.pending_irqs, 1UL << IRQ_VS_SOFT);
}

/*
 * The start address must leave room for one instruction of guest RAM: a
 * compressed one in its last two bytes will do, past its end will not
 */
static void test_start_address_at_ram_end(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_START, 1, RAM + RAM_SIZE, 0);
	assert_int_equal(r.error, SBI_ERR_INVALID_ADDRESS);
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_START, 1, RAM + RAM_SIZE - 1, 0);
	assert_int_equal(r.error, SBI_ERR_INVALID_ADDRESS);
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_START, 1, RAM - 2, 0);
	assert_int_equal(r.error, SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(vcpus[1].state, VCPU_STOPPED);
	assert_int_equal(kicks, 0);
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_START, 1, RAM + RAM_SIZE - 2, 0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(vcpus[1].start_pc, RAM + RAM_SIZE - 2);
	/* and a non-retentive suspend's resume address alike */
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_SUSPEND, SBI_HSM_SUSPEND_NON_RET_DEFAULT,
		RAM + RAM_SIZE, 0);
	assert_int_equal(r.error, SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(vcpus[0].state, VCPU_RUNNABLE);
}

/*
 * suspend_type is a uint32_t: the register's upper half is not part of it,
 * sign-extended (as the RV64 psABI passes one) or anything else
 */
static void test_suspend_type_low_32_bits(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_SUSPEND, 0xffffffff80000000UL, RAM + 0x40, 0x77);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(vcpus[0].state, VCPU_SUSPENDED_NR);
	assert_int_equal(vcpus[0].resume_pc, RAM + 0x40);
	assert_int_equal(vcpus[0].start_arg, 0x77);
	vcpus[0].state = VCPU_RUNNABLE;
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_SUSPEND, 0x1200000000UL, 0, 0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(vcpus[0].state, VCPU_SUSPENDED);
	vcpus[0].state = VCPU_RUNNABLE;
	/* the low half still decides: 1 is reserved, 0x80000000 + 1 is platform-specific */
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_SUSPEND, 0xffffffff00000001UL, 0, 0);
	assert_int_equal(r.error, SBI_ERR_INVALID_PARAM);
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_SUSPEND, 0x80000001UL, RAM + 0x40, 0);
	assert_int_equal(r.error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(vcpus[0].state, VCPU_RUNNABLE);
}

/* A start that loses changes nothing of its target, whatever the target's state */
static void test_failed_start_changes_nothing(void **state)
{
	static const int states[] = {VCPU_START_PENDING, VCPU_RUNNABLE,	    VCPU_WFI,
				     VCPU_SUSPENDED,	 VCPU_SUSPENDED_NR, VCPU_DEAD};

	(void)state;
	for (unsigned int i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		struct sbi_ret r;

		vcpus[1].state = states[i];
		vcpus[1].start_pc = RAM + 0x100;
		vcpus[1].start_arg = 0x1111;
		vcpus[1].resume_pc = RAM + 0x200;
		r = hsm(&vcpus[0], SBI_EXT_HSM_HART_START, 1, RAM + 0x3000, 0x2222);
		assert_int_equal(r.error, SBI_ERR_ALREADY_AVAILABLE);
		assert_int_equal(vcpus[1].state, states[i]);
		assert_int_equal(vcpus[1].start_pc, RAM + 0x100);
		assert_int_equal(vcpus[1].start_arg, 0x1111);
		assert_int_equal(vcpus[1].resume_pc, RAM + 0x200);
	}
	assert_int_equal(kicks, 0);
}

/* vCPU 1 suspends non-retentively, vCPU 0 tries to start it: it resumes with its own opaque */
static void test_suspended_sibling_keeps_opaque(void **state)
{
	struct sbi_ret r;

	(void)state;
	vcpus[1].state = VCPU_RUNNABLE;
	r = hsm(&vcpus[1], SBI_EXT_HSM_HART_SUSPEND, SBI_HSM_SUSPEND_NON_RET_DEFAULT, RAM + 0x400,
		0x5151);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(vcpus[1].state, VCPU_SUSPENDED_NR);
	r = hsm(&vcpus[0], SBI_EXT_HSM_HART_START, 1, RAM + 0x800, 0xbad);
	assert_int_equal(r.error, SBI_ERR_ALREADY_AVAILABLE);
	assert_int_equal(vcpus[1].resume_pc, RAM + 0x400);
	assert_int_equal(vcpus[1].start_arg, 0x5151);
}

/*
 * Two vCPUs start a third one at once, on two threads, 2,000 times: the
 * target always holds the address and the opaque of the one call that
 * succeeded, never the loser's (nor a mix)
 */
#define RACE_ROUNDS 2000
static volatile unsigned long race_round, race_ready, race_done;
static struct sbi_ret race_ret[2][RACE_ROUNDS];

static void *racer(void *arg)
{
	unsigned long me = (unsigned long)arg;

	for (unsigned long i = 0; i < RACE_ROUNDS; i++) {
		while (__atomic_load_n(&race_round, __ATOMIC_ACQUIRE) != i)
			sched_yield();
		__atomic_add_fetch(&race_ready, 1, __ATOMIC_ACQ_REL);
		while (__atomic_load_n(&race_ready, __ATOMIC_ACQUIRE) < 2 * (i + 1))
			;
		race_ret[me][i] = hsm(&vcpus[me], SBI_EXT_HSM_HART_START, 2,
				      RAM + 0x1000 * (me + 1), 0x100 + me);
		__atomic_add_fetch(&race_done, 1, __ATOMIC_ACQ_REL);
	}
	return NULL;
}

static void test_racing_starts_winner_only(void **state)
{
	static struct vcpu third;
	pthread_t t[2];
	unsigned long mixed = 0;

	(void)state;
	memset(&third, 0, sizeof(third));
	third.vm = &vm;
	third.id = 2;
	vm.vcpus[2] = &third;
	vm.nr_vcpus = 3;
	race_round = ~0UL;
	race_ready = race_done = 0;
	for (unsigned long k = 0; k < 2; k++)
		assert_int_equal(pthread_create(&t[k], NULL, racer, (void *)k), 0);
	for (unsigned long i = 0; i < RACE_ROUNDS; i++) {
		unsigned long w;

		third.state = VCPU_STOPPED;
		third.start_pc = third.start_arg = 0;
		__atomic_store_n(&race_round, i, __ATOMIC_RELEASE);
		while (__atomic_load_n(&race_done, __ATOMIC_ACQUIRE) < 2 * (i + 1))
			sched_yield();
		assert_int_equal(race_ret[0][i].error == SBI_SUCCESS,
				 race_ret[1][i].error == SBI_ERR_ALREADY_AVAILABLE);
		w = race_ret[0][i].error == SBI_SUCCESS ? 0 : 1;
		assert_int_equal(third.state, VCPU_START_PENDING);
		if (third.start_pc != RAM + 0x1000 * (w + 1) || third.start_arg != 0x100 + w)
			mixed++;
	}
	for (unsigned long k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	assert_int_equal(mixed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_start_stopped, setup),
		cmocka_unit_test_setup(test_start_drops_ipi_sent_while_stopped, setup),
		cmocka_unit_test_setup(test_start_address_at_ram_end, setup),
		cmocka_unit_test_setup(test_failed_start_changes_nothing, setup),
		cmocka_unit_test_setup(test_suspended_sibling_keeps_opaque, setup),
		cmocka_unit_test_setup(test_suspend_type_low_32_bits, setup),
		cmocka_unit_test_setup(test_racing_starts_winner_only, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
