// SPDX-License-Identifier: BSD-2-Clause
#include "core/sbi_hartmask.h"
#include "core/sbi.h"
#include "core/vm.h"

long sbi_hartmask_resolve(const struct vm *vm, unsigned long mask, unsigned long base,
			  unsigned long *vcpus)
{
	unsigned long all = vm->nr_vcpus >= 64 ? ~0UL : (1UL << vm->nr_vcpus) - 1;

	if (base == ~0UL) {
		*vcpus = all;
		return 0;
	}
	*vcpus = 0;
	for (unsigned int bit = 0; bit < 64; bit++) {
		if (!(mask & (1UL << bit)))
			continue;
		if (base + bit < base || base + bit >= vm->nr_vcpus)
			return SBI_ERR_INVALID_PARAM;
		*vcpus |= 1UL << (base + bit);
	}
	return 0;
}
