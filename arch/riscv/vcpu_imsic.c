// SPDX-License-Identifier: BSD-2-Clause
/*
 * AIA guest interrupt files: a vCPU that owns one of its hart's IMSIC guest
 * files (hstatus.VGEIN) takes the MSIs written to it, IPIs from its other
 * vCPUs among them, in VS-mode: no trap on either side. A vCPU that waits
 * (WFI, suspend) while not in VS-mode is woken through hgeie: the file's
 * pending interrupt becomes the hart's SGEI (interrupt 12).
 */
#include "arch/riscv/csr.h"
#include "arch/riscv/isa.h"
#include "core/lib.h"
#include "arch/riscv/vcpu_arch.h"
#include "arch/riscv/vcpu_internal.h"

/* The IMSIC registers siselect reaches (AIA spec, "Indirectly accessed interrupt-file registers") */
#define IMSIC_EIDELIVERY  0x70
#define IMSIC_EITHRESHOLD 0x72
#define IMSIC_EIP0	  0x80
#define IMSIC_EIE0	  0xc0

/* Interrupt identities of a guest file (host DT), the same on every hart */
static unsigned int file_ids;

unsigned int vcpu_arch_guest_files(void)
{
	unsigned long geilen;

	if (!riscv_has(RISCV_EXT_SSAIA))
		return 0;
	/* hgeie's writable bits are 1..GEILEN */
	csr_write(CSR_HGEIE, ~0UL);
	geilen = csr_read(CSR_HGEIE);
	csr_write(CSR_HGEIE, 0);
	return (unsigned int)__builtin_popcountl(geilen);
}

void vcpu_arch_set_guest_file(struct vcpu_arch *a, unsigned int file, unsigned int nr_ids)
{
	a->guest_file = (uint8_t)file;
	file_ids = nr_ids;
}

void vcpu_arch_clear_guest_file(struct vcpu_arch *a)
{
	unsigned long hstatus, vsiselect;

	if (!a->guest_file)
		return; /* and the host may have no vsiselect */
	/* another vCPU may be loaded: its VGEIN and siselect are put back */
	hstatus = csr_read(CSR_HSTATUS);
	vsiselect = csr_read(CSR_VSISELECT);
	csr_write(CSR_HSTATUS,
		  (hstatus & ~HSTATUS_VGEIN) | (unsigned long)a->guest_file << HSTATUS_VGEIN_SHIFT);
	csr_write(CSR_VSISELECT, IMSIC_EIDELIVERY);
	csr_write(CSR_VSIREG, 0);
	csr_write(CSR_VSISELECT, IMSIC_EITHRESHOLD);
	csr_write(CSR_VSIREG, 0);
	/* on RV64 only the even eipN/eieN exist, each for identities 32N..32N+63 */
	for (unsigned int i = 0; i * 32 <= file_ids; i += 2) {
		csr_write(CSR_VSISELECT, IMSIC_EIE0 + i);
		csr_write(CSR_VSIREG, 0);
		csr_write(CSR_VSISELECT, IMSIC_EIP0 + i);
		csr_write(CSR_VSIREG, 0);
	}
	csr_write(CSR_VSISELECT, vsiselect);
	csr_write(CSR_HSTATUS, hstatus);
}

void vcpu_arch_wake_on_msi(struct vcpu_arch *a, bool wake)
{
	unsigned long vsie;

	if (!a->guest_file)
		return;
	vsie = loaded(a) ? csr_read(CSR_VSIE) : a->vsie;
	/* as WFI, only for an interrupt the guest enabled (its sie.SEIE): else an MSI would wake
	 * the hart for nothing, and again */
	if (wake && (vsie & BIT(IRQ_S_EXT)))
		csr_set(CSR_HGEIE, BIT(a->guest_file));
	else
		csr_clear(CSR_HGEIE, BIT(a->guest_file));
}

void vcpu_arch_take_sgei(void)
{
	csr_clear(CSR_HGEIE, csr_read(CSR_HGEIP));
}
