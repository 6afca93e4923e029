// SPDX-License-Identifier: BSD-2-Clause
/* SBI SRST: a guest's shutdown or reboot affects that guest only. */
#include "core/sbi.h"
#include "core/vcpu.h"
#include "core/vm.h"

static struct sbi_ret srst_handler(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
				   const unsigned long args[6])
{
	unsigned long type = args[0], reason = args[1];

	(void)eid;
	if (fid != SBI_EXT_SRST_RESET)
		return (struct sbi_ret){SBI_ERR_NOT_SUPPORTED, 0};
	/*
	 * Reserved, SBI-implementation- or platform-specific types and reasons:
	 * none is implemented, so INVALID_PARAM (SBI v3.0 SRST), as OpenSBI does
	 */
	if (type > SBI_SRST_RESET_TYPE_WARM_REBOOT || reason > SBI_SRST_RESET_REASON_SYSFAIL)
		return (struct sbi_ret){SBI_ERR_INVALID_PARAM, 0};

	if (type == SBI_SRST_RESET_TYPE_SHUTDOWN)
		vm_request_stop(
			vcpu->vm,
			reason == SBI_SRST_RESET_REASON_SYSFAIL ? VM_STOP_FAILED : VM_STOP_OK,
			reason == SBI_SRST_RESET_REASON_SYSFAIL ? "shutdown (reason=failure)"
								: "shutdown (reason=none)");
	else
		vm_request_reboot(vcpu);
	return (struct sbi_ret){SBI_RET_NO_REPLY, 0};
}

const struct sbi_ext sbi_ext_srst = {
	.eid_min = SBI_EXT_SRST,
	.eid_max = SBI_EXT_SRST,
	.name = "srst",
	.handler = srst_handler,
};
