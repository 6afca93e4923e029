// SPDX-License-Identifier: BSD-2-Clause
/*
 * AIA's IMSIC for guests. A vCPU that owns a guest interrupt file of its
 * hart takes MSIs in VS-mode: an IPI from another of its VM's vCPUs is a
 * store to that file's page, which the G-stage maps, and no trap on either
 * side. The file belongs to the hart, so only a vCPU that never moves
 * (cpu-affinity) can own one; a guest whose vCPUs move keeps SBI IPIs.
 */
#include "core/console.h"
#include "core/guest_imsic.h"
#include "core/hart.h"
#include "core/hostdt.h"
#include "core/lib.h"
#include "core/mm.h"
#include "core/vcpu.h"
#include "core/vm.h"

/* Where a guest finds its files, as QEMU's virt puts the S-level IMSIC */
#define GUEST_IMSIC_GPA 0x28000000ULL

/* Files given out per hart (its index: host.hartids order), from file 1 on; boot time only */
static unsigned int files_used[HOST_HART_MAX];

void guest_imsic_assign(struct vm *vm)
{
	unsigned int want[HOST_HART_MAX] = {0};
	unsigned int files = vcpu_arch_guest_files(); /* every hart has as many as this one */
	uint64_t size = (uint64_t)vm->nr_vcpus * SZ_4K;

	if (host.imsic_guest_bits && files > (1U << host.imsic_guest_bits) - 1)
		files = (1U << host.imsic_guest_bits) - 1;
	if (!files || !host.imsic_guest_bits || !vm->cfg->has_affinity)
		return;
	if (GUEST_IMSIC_GPA < vm->ram_gpa + vm->ram_size && vm->ram_gpa < GUEST_IMSIC_GPA + size) {
		hv_printf("pmuvisor: guest %s: its memory covers the IMSIC page(s) at 0x%lx: "
			  "IPIs through SBI\n",
			  vm->name, (unsigned long)GUEST_IMSIC_GPA);
		return;
	}
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		unsigned int k = vm->vcpus[i]->hart->index;

		if (!host.imsic_file[k] || files_used[k] + ++want[k] > files) {
			hv_printf("pmuvisor: guest %s: no guest interrupt file left on hart %lu: "
				  "IPIs through SBI\n",
				  vm->name, vm->vcpus[i]->hart->hartid);
			return;
		}
	}
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		unsigned int k = vm->vcpus[i]->hart->index;
		unsigned int file = ++files_used[k];

		if (vm_arch_map_device(&vm->arch, GUEST_IMSIC_GPA + i * SZ_4K,
				       host.imsic_file[k] + file * SZ_4K, SZ_4K, mm_zalloc_pages))
			hv_panic("guest %s: cannot map its IMSIC", vm->name);
		vcpu_arch_set_guest_file(&vm->vcpus[i]->arch, file, host.imsic_guest_ids);
	}
	vm->imsic_gpa = GUEST_IMSIC_GPA;
}
