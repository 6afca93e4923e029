// SPDX-License-Identifier: BSD-2-Clause
/* What the vPMU needs from the core: its vCPU's guest memory. */
#include "hart.h"
#include "hostdt.h"
#include "timer.h"
#include "vcpu.h"
#include "vm.h"
#include "vpmu_host.h"

struct vpmu *vcpu_vpmu(struct vcpu *vcpu)
{
	return &vcpu->vpmu;
}

uint64_t vpmu_host_now(void)
{
	return timer_now();
}

void vpmu_host_raise_lcofi(struct vpmu *v)
{
	vcpu_arch_raise_lcofi(container_of(v, struct vcpu, vpmu));
}

bool vpmu_host_has_sscofpmf(void)
{
	return host.ext[HOST_EXT_SSCOFPMF];
}

bool vpmu_host_busy_other_hart(unsigned long iters)
{
	return sched_busy_other_hart(iters);
}

struct vpmu_hart *vpmu_host_hart(void)
{
	return &this_hart()->pmu;
}

static struct vm *vpmu_vm(struct vpmu *v)
{
	return container_of(v, struct vcpu, vpmu)->vm;
}

int vpmu_host_read_guest(struct vpmu *v, uint64_t gpa, void *dst, size_t len)
{
	return vm_read(vpmu_vm(v), gpa, dst, len);
}

int vpmu_host_write_guest(struct vpmu *v, uint64_t gpa, const void *src, size_t len)
{
	return vm_write(vpmu_vm(v), gpa, src, len);
}
