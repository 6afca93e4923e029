// SPDX-License-Identifier: BSD-2-Clause
/* SBI TIME and IPI extensions */
#include "core/sbi.h"
#include "core/sbi_hartmask.h"
#include "core/vcpu.h"
#include "core/vm.h"

static struct sbi_ret time_handler(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
				   const unsigned long args[6])
{
	(void)eid;
	if (fid != SBI_EXT_TIME_SET_TIMER)
		return (struct sbi_ret){SBI_ERR_NOT_SUPPORTED, 0};
	vcpu_fw_event(vcpu, SBI_PMU_FW_SET_TIMER);
	vcpu_arch_set_timer(&vcpu->arch, args[0]);
	return (struct sbi_ret){0, 0};
}

const struct sbi_ext sbi_ext_time = {
	.eid_min = SBI_EXT_TIME,
	.eid_max = SBI_EXT_TIME,
	.name = "time",
	.handler = time_handler,
};

/* Deliver a virtual supervisor software interrupt to each selected vCPU */
static void sbi_send_ipis(struct vcpu *from, unsigned long targets)
{
	struct vm *vm = from->vm;

	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		if (!(targets & (1UL << i)))
			continue;
		vcpu_fw_event(from, SBI_PMU_FW_IPI_SENT);
		vcpu_fw_event(vm->vcpus[i], SBI_PMU_FW_IPI_RCVD);
		vcpu_raise_irq(vm->vcpus[i], 1UL << IRQ_VS_SOFT);
	}
}

static struct sbi_ret ipi_handler(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
				  const unsigned long args[6])
{
	unsigned long targets;
	long err;

	(void)eid;
	if (fid != SBI_EXT_IPI_SEND_IPI)
		return (struct sbi_ret){SBI_ERR_NOT_SUPPORTED, 0};
	err = sbi_hartmask_resolve(vcpu->vm, args[0], args[1], &targets);
	if (!err)
		sbi_send_ipis(vcpu, targets);
	return (struct sbi_ret){err, 0};
}

const struct sbi_ext sbi_ext_ipi = {
	.eid_min = SBI_EXT_IPI,
	.eid_max = SBI_EXT_IPI,
	.name = "ipi",
	.handler = ipi_handler,
};
