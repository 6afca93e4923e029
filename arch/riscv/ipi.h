/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IPIs between the host's harts. Where every hart has an S-level IMSIC
 * interrupt file (AIA), an IPI is an MSI to the target's file: one store,
 * taken as a supervisor external interrupt. Else it is an SBI IPI: an ecall
 * on the sender and an M-mode interrupt on the target, which OpenSBI turns
 * into sip.SSIP. Receivers take both kinds.
 */
#ifndef ARCH_RISCV_IPI_H
#define ARCH_RISCV_IPI_H

#include <stdbool.h>
#include <stdint.h>

#define IPI_HARTS_MAX 8

/*
 * Before the other harts start, once per hart, and for every hart or none:
 * hart `hartid`'s S-level interrupt file is at s_file
 */
void ipi_arch_add_file(unsigned long hartid, uint64_t s_file);
/*
 * On each hart, after vcpu_arch_hart_init set its sie: its file takes the
 * IPI identity, and other harts send it MSIs from then on
 */
void ipi_arch_hart_init(unsigned long hartid);
/* Send a supervisor IPI to one physical hart */
void hart_send_ipi(unsigned long hartid);
/* The sip bits an IPI sets: SSIP, and SEIP where harts have files */
unsigned long ipi_arch_sip(void);
/* Clear this hart's pending IPI, if any; returns whether there was one */
bool ipi_arch_take(void);

#endif
