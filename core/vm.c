// SPDX-License-Identifier: BSD-2-Clause
/* Guest creation, (re)boot and stop. */
#include <string.h>
#include "arch/riscv/gstage.h"
#include "core/bundle.h"
#include "core/console.h"
#include "core/guest_fdt.h"
#include "core/hart.h"
#include "core/hostdt.h"
#include "arch/riscv/timer.h"
#include "core/mm.h"
#include "core/vcpu.h"
#include "core/vm.h"

#define GUEST_FDT_MAX 0x10000ULL

struct vm *vms[VM_MAX];
unsigned int nr_vms;

static struct vm vm_pool[VM_MAX];
static struct vcpu vcpu_pool[VM_MAX][VCPU_MAX];

void *vm_gpa_to_hva(struct vm *vm, uint64_t gpa, size_t len)
{
	if (gpa < vm->ram_gpa || gpa - vm->ram_gpa > vm->ram_size ||
	    len > vm->ram_size - (gpa - vm->ram_gpa))
		return NULL;
	return (void *)(vm->ram_hpa + (uintptr_t)(gpa - vm->ram_gpa));
}

int vm_read(struct vm *vm, uint64_t gpa, void *dst, size_t len)
{
	void *p = vm_gpa_to_hva(vm, gpa, len);

	if (!p)
		return -1;
	memcpy(dst, p, len);
	return 0;
}

int vm_write(struct vm *vm, uint64_t gpa, const void *src, size_t len)
{
	void *p = vm_gpa_to_hva(vm, gpa, len);

	if (!p)
		return -1;
	memcpy(p, src, len);
	return 0;
}

int vm_create(const struct vm_config *cfg, unsigned int id)
{
	struct vm *vm = &vm_pool[id];

	memset(vm, 0, sizeof(*vm));
	vm->cfg = cfg;
	vm->id = id;
	strcpy(vm->name, cfg->name);
	vm->nr_vcpus = cfg->nr_vcpus;
	vm->ram_gpa = cfg->ram_gpa;
	vm->ram_size = cfg->ram_size;
	/*
	 * Whole gigabytes on a 1 GiB boundary: the G-stage maps them with 1 GiB
	 * leaves. The aligned place may split the free memory where the top one
	 * would not: a larger guest created later may then not fit.
	 */
	if (!((cfg->ram_gpa | cfg->ram_size) & (SZ_1G - 1)))
		vm->ram_hpa = (uintptr_t)mm_alloc(&host_mm, cfg->ram_size, SZ_1G);
	if (!vm->ram_hpa)
		vm->ram_hpa = (uintptr_t)mm_alloc(&host_mm, cfg->ram_size, SZ_2M);
	if (!vm->ram_hpa) {
		hv_printf("pmuvisor: guest %s: not enough memory for %lu MiB\n", vm->name,
			  (unsigned long)(cfg->ram_size >> 20));
		return -1;
	}
	if (vm_arch_init(&vm->arch, vm->id + 1, vm->ram_gpa, vm->ram_hpa, vm->ram_size,
			 mm_zalloc_pages)) {
		hv_printf("pmuvisor: guest %s: cannot map its memory\n", vm->name);
		return -1;
	}
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *v = &vcpu_pool[id][i];

		memset(v, 0, sizeof(*v));
		v->vm = vm;
		v->id = i;
		v->state = VCPU_DEAD;
		v->arch.lcofi_by_software = cfg->lcofi_software;
		vpmu_vcpu_init(&v->vpmu);
		vpmu_vcpu_set_policy(&v->vpmu, &cfg->pmu);
		vpmu_vcpu_set_guest(&v->vpmu, id);
		vm->vcpus[i] = v;
	}
	vms[id] = vm;
	return 0;
}

int vm_boot(struct vm *vm)
{
	const struct vm_config *cfg = vm->cfg;
	uint64_t ram_end = vm->ram_gpa + vm->ram_size;
	uint64_t initrd_gpa = 0;
	void *fdt;

	vm->entry_gpa = vm->ram_gpa + cfg->load_offset;
	vm->fdt_gpa = ram_end - GUEST_FDT_MAX;
	if (vm_write(vm, vm->entry_gpa, bundle_at(cfg->image_off), cfg->image_size))
		return -1;
	if (cfg->initrd_size) {
		initrd_gpa = (vm->fdt_gpa - cfg->initrd_size) & ~0xfffULL;
		if (initrd_gpa < vm->entry_gpa + cfg->image_size ||
		    vm_write(vm, initrd_gpa, bundle_at(cfg->initrd_off), cfg->initrd_size)) {
			hv_printf("pmuvisor: guest %s: initrd does not fit in memory\n", vm->name);
			return -1;
		}
	}
	fdt = vm_gpa_to_hva(vm, vm->fdt_gpa, GUEST_FDT_MAX);
	if (guest_fdt_build(vm, fdt, GUEST_FDT_MAX, initrd_gpa, cfg->initrd_size)) {
		hv_printf("pmuvisor: guest %s: cannot build its device tree\n", vm->name);
		return -1;
	}

	vm->live_vcpus = (int)vm->nr_vcpus;
	vm->watchdog_ticks = (uint64_t)cfg->watchdog_ms * host.timebase / 1000;
	vm->last_sbi = timer_now();
	vm->state = VM_RUNNING;
	/* after the VM's state: a hart that sees a vCPU STOPPED sees the VM running */
	for (unsigned int i = 1; i < vm->nr_vcpus; i++)
		__atomic_store_n(&vm->vcpus[i]->state, VCPU_STOPPED, __ATOMIC_RELEASE);
	vm->vcpus[0]->start_pc = vm->entry_gpa;
	vm->vcpus[0]->start_arg = vm->fdt_gpa;
	__atomic_store_n(&vm->vcpus[0]->state, VCPU_START_PENDING, __ATOMIC_RELEASE);
	return 0;
}

static volatile int live_vms;
static volatile int failed_vms;

void vm_count_live(int n)
{
	live_vms = n;
}

static void request_stop(struct vm *vm, enum vm_stop_kind kind, const char *why, struct vcpu *by)
{
	int expected = VM_RUNNING;

	if (!__atomic_compare_exchange_n(&vm->state, &expected, VM_STOPPING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	vm->stop_kind = kind;
	vm->reboot_by = by;
	console_guest_flush(vm);
	/*
	 * A guest can reboot thousands of times a second, and the hypervisor's
	 * lines wait for the UART: the 1st, 2nd, 4th, 8th, ... reboot is said
	 */
	if (kind != VM_STOP_REBOOT)
		hv_printf("pmuvisor: guest %s %s\n", vm->name, why);
	else if (vm->reboots++, !(vm->reboots & (vm->reboots - 1)))
		hv_printf("pmuvisor: guest %s %s (%lu so far)\n", vm->name, why, vm->reboots);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		vcpu_kick(vm->vcpus[i]);
	this_hart()->resched = true;
}

void vm_request_stop(struct vm *vm, enum vm_stop_kind kind, const char *why)
{
	request_stop(vm, kind, why, NULL);
}

void vm_request_reboot(struct vcpu *by)
{
	request_stop(by->vm, VM_STOP_REBOOT, "reboot", by);
}

/*
 * RAM keeps its contents, as a machine's does across QEMU's system reset:
 * only the image, the initrd and the device tree are loaded again. Zeroing
 * it all (hundreds of MiB) would keep the hart, and under exclusive
 * counting every hart, from running anything else for as long.
 */
void vm_reboot(struct vm *vm)
{
	if (!vm_boot(vm)) {
		vcpu_kick(vm->vcpus[0]);
		return;
	}
	vm->stop_kind = VM_STOP_FAILED;
	vm_stopped(vm);
}

void vm_stopped(struct vm *vm)
{
	int left;

	vm->state = VM_STOPPED;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *v = vm->vcpus[i];

		if (v->vpmu.nr_overflows || v->arch.nr_lcofi)
			hv_printf("pmuvisor: guest %s vcpu %u: %lu counter overflows (%lu the "
				  "platform did not flag), %lu LCOFI raised (%lu dropped: cause "
				  "gone before delivery)\n",
				  vm->name, i, v->vpmu.nr_overflows, v->vpmu.nr_unsignalled,
				  v->arch.nr_lcofi, v->arch.nr_lcofi_dropped);
	}
	if (vm->stop_kind == VM_STOP_FAILED)
		__atomic_add_fetch(&failed_vms, 1, __ATOMIC_RELAXED);
	left = __atomic_sub_fetch(&live_vms, 1, __ATOMIC_ACQ_REL);
	if (left == 0) {
		int failed = failed_vms;

		hv_printf("pmuvisor: all guests stopped: %d ok, %d failed\n", (int)nr_vms - failed,
			  failed);
		hv_poweroff(failed != 0);
	}
}
