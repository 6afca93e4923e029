/* SPDX-License-Identifier: BSD-2-Clause */
/* A guest: its memory, its vCPUs and its life cycle. */
#ifndef CORE_VM_H
#define CORE_VM_H

#include <stddef.h>
#include <stdint.h>
#include "core/lib.h"
#include "arch/riscv/vcpu_arch.h"
#include "core/config.h"

#define VM_MAX 8

enum vm_state { VM_RUNNING, VM_STOPPING, VM_STOPPED };
enum vm_stop_kind { VM_STOP_OK, VM_STOP_FAILED, VM_STOP_REBOOT };

struct vcpu;

struct vm {
	struct vm_arch arch;
	const struct vm_config *cfg;
	char name[VM_NAME_MAX];
	unsigned int id; /* VMID = id + 1 */
	unsigned int nr_vcpus;
	struct vcpu *vcpus[VCPU_MAX];
	uint64_t ram_gpa, ram_size;
	uintptr_t ram_hpa;
	uint64_t entry_gpa, fdt_gpa;
	volatile int state;
	int stop_kind;
	unsigned long reboots; /* asked for so far */
	volatile int live_vcpus;
	uint64_t watchdog_ticks;    /* from watchdog-ms; 0: no watchdog */
	volatile uint64_t last_sbi; /* time of the guest's last SBI call */
	size_t con_len;		    /* guest console output not yet written (console.c) */
	char con_buf[1024];
	uint64_t
		imsic_gpa; /* its vCPUs' guest interrupt files, a page each (guest_imsic.c); 0: none */
	/*
	 * A reboot's reload runs on the hart of the vCPU that asked for it, not
	 * on whichever hart stops the last vCPU: that may run another guest,
	 * and a reload copies megabytes. That hart, if another, makes the
	 * asking vCPU VCPU_RELOAD and kicks it (sched_stop_vcpu).
	 */
	struct vcpu *reboot_by;
};

extern struct vm *vms[VM_MAX];
extern unsigned int nr_vms;

int vm_create(const struct vm_config *cfg, unsigned int id);
/* (Re)load the image, initrd and FDT and make vCPU 0 ready to start */
int vm_boot(struct vm *vm);
/* Ask every hart to stop this VM's vCPUs; the first request wins */
void vm_request_stop(struct vm *vm, enum vm_stop_kind kind, const char *why);
/* ... to reboot it, asked by its vCPU `by` (SBI SRST) */
void vm_request_reboot(struct vcpu *by);
/* Called on the hart that stopped the VM's last vCPU (a reboot: vm_reboot, on reboot_by's) */
void vm_stopped(struct vm *vm);
/* ... of a VM that asked for a reboot: boot it again, else it stops as failed */
void vm_reboot(struct vm *vm);

/* How many VMs must stop before the machine powers off */
void vm_count_live(int n);

/* Guest-physical -> hypervisor pointer for [gpa, gpa+len) inside RAM, else NULL */
void *vm_gpa_to_hva(struct vm *vm, uint64_t gpa, size_t len);
int vm_read(struct vm *vm, uint64_t gpa, void *dst, size_t len);
int vm_write(struct vm *vm, uint64_t gpa, const void *src, size_t len);

#endif
