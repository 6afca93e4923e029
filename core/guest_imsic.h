/* SPDX-License-Identifier: BSD-2-Clause */
/* A guest's IMSIC: for each of its vCPUs a guest interrupt file of the vCPU's hart. */
#ifndef CORE_GUEST_IMSIC_H
#define CORE_GUEST_IMSIC_H

struct vm;

/*
 * Where the host has AIA guest interrupt files and the VM's vCPUs are all
 * pinned (cpu-affinity), give each vCPU a free file of its hart and map it
 * at vm->imsic_gpa + its id's page; else the VM has none (vm->imsic_gpa 0)
 * and its IPIs go through SBI. At boot, after the vCPUs have their harts.
 */
void guest_imsic_assign(struct vm *vm);

#endif
