// SPDX-License-Identifier: BSD-2-Clause
/* What the vPMU needs from the core: its vCPU's guest memory. */
#include "core/excl.h"
#include "core/hart.h"
#include "core/hostdt.h"
#include "core/profile.h"
#include "arch/riscv/isa.h"
#include "core/sched.h"
#include "arch/riscv/timer.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "vpmu/vpmu_host.h"

unsigned long vpmu_host_ecall_pc(struct vpmu *v)
{
	return container_of(v, struct vcpu, vpmu)->arch.ctx.sepc;
}

uint64_t vpmu_host_now(void)
{
	return timer_now();
}

void vpmu_host_raise_lcofi(struct vpmu *v)
{
	vcpu_arch_raise_lcofi(&container_of(v, struct vcpu, vpmu)->arch);
}

void vpmu_host_cancel_lcofi(struct vpmu *v)
{
	vcpu_arch_cancel_lcofi(&container_of(v, struct vcpu, vpmu)->arch);
}

bool vpmu_host_option(const char *word)
{
	return hostdt_option(word);
}

const char *vpmu_host_option_value(const char *key)
{
	return hostdt_option_value(key);
}

bool vpmu_host_is_qemu(void)
{
	return host.qemu_virt;
}

bool vpmu_host_has_sscofpmf(void)
{
	return riscv_has(RISCV_EXT_SSCOFPMF);
}

void vpmu_host_sample(struct vpmu *v)
{
	profile_sample(container_of(v, struct vcpu, vpmu));
}

void vpmu_host_counting_starts(struct vpmu *v)
{
	excl_counting_starts(container_of(v, struct vcpu, vpmu));
}

bool vpmu_host_busy_other_hart(unsigned long iters)
{
	return sched_busy_other_hart(iters);
}

static struct vm *vpmu_vm(struct vpmu *v)
{
	return container_of(v, struct vcpu, vpmu)->vm;
}

int vpmu_host_read_guest(struct vpmu *v, uint64_t gpa, void *dst, size_t len)
{
	return vm_read(vpmu_vm(v), gpa, dst, len);
}

void *vpmu_host_guest_ram(struct vpmu *v, uint64_t gpa, size_t len)
{
	return vm_gpa_to_hva(vpmu_vm(v), gpa, len);
}

int vpmu_host_write_guest(struct vpmu *v, uint64_t gpa, const void *src, size_t len)
{
	return vm_write(vpmu_vm(v), gpa, src, len);
}
