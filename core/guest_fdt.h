/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef CORE_GUEST_FDT_H
#define CORE_GUEST_FDT_H

#include <stddef.h>
#include <stdint.h>

struct vm;

/* The host DT, for the ISA each hart reports */
void guest_fdt_set_host(const void *fdt);
/* Write the guest's device tree into buf; 0 or -1 when it does not fit */
int guest_fdt_build(struct vm *vm, void *buf, size_t size, uint64_t initrd_gpa,
		    uint64_t initrd_size);
/* The ISA extensions a guest is offered, filtered by what the host has */
unsigned int guest_isa_extensions(const char **out, unsigned int max);

#endif
