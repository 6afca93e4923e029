/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef CORE_SBI_HARTMASK_H
#define CORE_SBI_HARTMASK_H

struct vm;

/*
 * Turn an SBI (hart_mask, hart_mask_base) pair into a bitmap of the VM's
 * vCPUs. base == -1 selects every vCPU. Returns 0 or SBI_ERR_INVALID_PARAM
 * when a selected hart id does not exist.
 */
long sbi_hartmask_resolve(const struct vm *vm, unsigned long mask, unsigned long base,
			  unsigned long *vcpus);

#endif
