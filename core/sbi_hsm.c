// SPDX-License-Identifier: BSD-2-Clause
/* SBI HSM: guests start, stop and suspend their own vCPUs. */
#include "core/hart.h"
#include "arch/riscv/nospec.h"
#include "core/sbi.h"
#include "core/vcpu.h"
#include "core/vm.h"

/* Guest RAM for at least one instruction there: a compressed one is 2 bytes */
static bool executable_gpa(struct vm *vm, unsigned long addr)
{
	return vm_gpa_to_hva(vm, addr, 2) != NULL;
}

static struct sbi_ret hart_start(struct vcpu *vcpu, unsigned long id, unsigned long pc,
				 unsigned long opaque)
{
	struct vm *vm = vcpu->vm;
	struct vcpu *t;
	int expected = VCPU_STOPPED;

	if (id >= vm->nr_vcpus)
		return (struct sbi_ret){SBI_ERR_INVALID_PARAM, 0};
	if (!executable_gpa(vm, pc))
		return (struct sbi_ret){SBI_ERR_INVALID_ADDRESS, 0};
	t = vm->vcpus[array_index_nospec(id, vm->nr_vcpus)];
	/*
	 * Claim the target first, then write its start: written before, a
	 * losing call changed a vCPU that is not STOPPED (one in non-retentive
	 * suspend resumed with this opaque) or a winner's start. Only the VM's
	 * stop moves a claimed vCPU (to DEAD): then it does not start.
	 */
	if (!__atomic_compare_exchange_n(&t->state, &expected, VCPU_STARTING, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return (struct sbi_ret){SBI_ERR_ALREADY_AVAILABLE, 0};
	/*
	 * An IPI sent while it was stopped is not pending at the start: OpenSBI
	 * sends none to a stopped hart, and KVM's vCPU reset clears its pending
	 * interrupts. One sent after this call returned is kept (both of them
	 * drop it too until the hart runs): the reset leaves pending_irqs alone.
	 */
	__atomic_and_fetch(&t->arch.pending_irqs, ~(1UL << IRQ_VS_SOFT), __ATOMIC_RELAXED);
	t->start_pc = pc;
	t->start_arg = opaque;
	expected = VCPU_STARTING;
	if (!__atomic_compare_exchange_n(&t->state, &expected, VCPU_START_PENDING, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return (struct sbi_ret){SBI_ERR_FAILED, 0};
	vcpu_kick(t);
	return (struct sbi_ret){0, 0};
}

static long hsm_state(const struct vcpu *v)
{
	switch (v->state) {
	case VCPU_STOPPED:
	case VCPU_DEAD:
	case VCPU_RELOAD:
		return SBI_HSM_STATE_STOPPED;
	case VCPU_STARTING:
	case VCPU_START_PENDING:
		return SBI_HSM_STATE_START_PENDING;
	case VCPU_SUSPENDED:
	case VCPU_SUSPENDED_NR:
		return SBI_HSM_STATE_SUSPENDED;
	default:
		return SBI_HSM_STATE_STARTED;
	}
}

/* suspend_type is a uint32_t: its register's upper half is not part of it */
static struct sbi_ret hart_suspend(struct vcpu *vcpu, uint32_t suspend_type, unsigned long resume,
				   unsigned long opaque)
{
	if (suspend_type != SBI_HSM_SUSPEND_RET_DEFAULT &&
	    suspend_type != SBI_HSM_SUSPEND_NON_RET_DEFAULT)
		return (struct sbi_ret){SBI_ERR_INVALID_PARAM, 0};
	if (suspend_type == SBI_HSM_SUSPEND_NON_RET_DEFAULT) {
		if (!executable_gpa(vcpu->vm, resume))
			return (struct sbi_ret){SBI_ERR_INVALID_ADDRESS, 0};
		vcpu->resume_pc = resume;
		vcpu->start_arg = opaque;
		vcpu->state = VCPU_SUSPENDED_NR;
	} else {
		vcpu->state = VCPU_SUSPENDED;
	}
	this_hart()->resched = true;
	return (struct sbi_ret){0, 0};
}

static struct sbi_ret hsm_handler(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
				  const unsigned long args[6])
{
	(void)eid;
	switch (fid) {
	case SBI_EXT_HSM_HART_START:
		return hart_start(vcpu, args[0], args[1], args[2]);
	case SBI_EXT_HSM_HART_STOP:
		/* a stopped hart's PMU is reset, as OpenSBI and KVM do */
		vpmu_vcpu_reset(&vcpu->vpmu);
		vcpu->state = VCPU_STOPPED;
		this_hart()->resched = true;
		return (struct sbi_ret){SBI_RET_NO_REPLY, 0};
	case SBI_EXT_HSM_HART_GET_STATUS:
		if (args[0] >= vcpu->vm->nr_vcpus)
			return (struct sbi_ret){SBI_ERR_INVALID_PARAM, 0};
		return (struct sbi_ret){
			0,
			(unsigned long)hsm_state(
				vcpu->vm->vcpus[array_index_nospec(args[0], vcpu->vm->nr_vcpus)])};
	case SBI_EXT_HSM_HART_SUSPEND:
		return hart_suspend(vcpu, (uint32_t)args[0], args[1], args[2]);
	default:
		return (struct sbi_ret){SBI_ERR_NOT_SUPPORTED, 0};
	}
}

const struct sbi_ext sbi_ext_hsm = {
	.eid_min = SBI_EXT_HSM,
	.eid_max = SBI_EXT_HSM,
	.name = "hsm",
	.handler = hsm_handler,
};
