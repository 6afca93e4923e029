// SPDX-License-Identifier: BSD-2-Clause
/*
 * SBI RFENCE for guests. A guest's "sfence.vma" on other harts is an
 * hfence.vvma for the guest's VMID on every physical hart that holds one of
 * the target vCPUs loaded; OpenSBI performs it for us, taking the VMID from
 * the hgatp of the calling hart, which holds this guest's while we handle
 * its ecall. A target vCPU no hart holds is fenced at its next load
 * (vcpu_arch_load drops its VMID's translations, and does a FENCE.I asked
 * for), so a guest fencing its vCPUs that do not run interrupts no other
 * guest's hart. The guest has no H extension, so the HFENCE functions are
 * absent.
 */
#include "core/excl.h"
#include "core/hart.h"
#include "arch/riscv/nospec.h"
#include "core/sbi.h"
#include "arch/riscv/sbi_call.h"
#include "core/sbi_hartmask.h"
#include "core/vcpu.h"
#include "core/vm.h"

struct rfence_kind {
	unsigned long host_fid;
	unsigned int fw_sent, fw_rcvd;
};

static const struct rfence_kind kinds[] = {
	[SBI_EXT_RFENCE_REMOTE_FENCE_I] = {SBI_EXT_RFENCE_REMOTE_FENCE_I, SBI_PMU_FW_FENCE_I_SENT,
					   SBI_PMU_FW_FENCE_I_RCVD},
	[SBI_EXT_RFENCE_REMOTE_SFENCE_VMA] = {SBI_EXT_RFENCE_REMOTE_HFENCE_VVMA,
					      SBI_PMU_FW_SFENCE_VMA_SENT,
					      SBI_PMU_FW_SFENCE_VMA_RCVD},
	[SBI_EXT_RFENCE_REMOTE_SFENCE_VMA_ASID] = {SBI_EXT_RFENCE_REMOTE_HFENCE_VVMA_ASID,
						   SBI_PMU_FW_SFENCE_VMA_ASID_SENT,
						   SBI_PMU_FW_SFENCE_VMA_ASID_RCVD},
};

static struct sbi_ret rfence_handler(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
				     const unsigned long args[6])
{
	struct vm *vm = vcpu->vm;
	const struct rfence_kind *k;
	unsigned long targets, hmask = 0;
	long err;

	(void)eid;
	if (fid >= sizeof(kinds) / sizeof(kinds[0]))
		return (struct sbi_ret){SBI_ERR_NOT_SUPPORTED, 0};
	k = &kinds[array_index_nospec(fid, sizeof(kinds) / sizeof(kinds[0]))];
	err = sbi_hartmask_resolve(vm, args[0], args[1], &targets);
	if (err)
		return (struct sbi_ret){err, 0};

	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		if (!(targets & (1UL << i)))
			continue;
		if (fid == SBI_EXT_RFENCE_REMOTE_FENCE_I)
			vcpu_arch_request_fence_i(&vm->vcpus[i]->arch);
		vcpu_fw_event(vcpu, k->fw_sent);
		vcpu_fw_event(vm->vcpus[i], k->fw_rcvd);
	}
	/* the guest's stores, and the requests, before the look at the harts (vcpu_arch_load) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		/* a vCPU loaded stays in its hart's queue (core/sched_steal.c) */
		const struct hart *h = __atomic_load_n(&vm->vcpus[i]->hart, __ATOMIC_RELAXED);

		if ((targets & (1UL << i)) && hart_loaded(h) == vm->vcpus[i])
			hmask |= 1UL << h->hartid;
	}
	hmask = excl_fence_now(hmask);
	if (!hmask)
		return (struct sbi_ret){0, 0};
	if (fid == SBI_EXT_RFENCE_REMOTE_FENCE_I)
		sbi_ecall(SBI_EXT_RFENCE, k->host_fid, hmask, 0, 0, 0, 0, 0);
	else
		/* start, size[, asid] pass through: they name guest virtual addresses */
		sbi_ecall(SBI_EXT_RFENCE, k->host_fid, hmask, 0, args[2], args[3], args[4], 0);
	return (struct sbi_ret){0, 0};
}

const struct sbi_ext sbi_ext_rfence = {
	.eid_min = SBI_EXT_RFENCE,
	.eid_max = SBI_EXT_RFENCE,
	.name = "rfence",
	.handler = rfence_handler,
};
