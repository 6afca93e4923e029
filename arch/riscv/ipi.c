// SPDX-License-Identifier: BSD-2-Clause
#include "arch/riscv/csr.h"
#include "arch/riscv/ipi.h"
#include "arch/riscv/sbi_call.h"
#include "arch/riscv/sbi_spec.h"

/* AIA: the interrupt identity of host IPIs, and a file's indirect registers */
#define IPI_ID		1
#define ISEL_EIDELIVERY 0x70
#define ISEL_EITHRESH	0x72
#define ISEL_EIE0	0xc0
#define TOPEI_ID_SHIFT	16

static struct {
	unsigned long hartid;
	volatile uint32_t *seteipnum; /* the file's first register: writing n makes n pending */
	bool ready;		      /* its hart takes MSIs (ipi_arch_hart_init) */
} files[IPI_HARTS_MAX];
static unsigned int nr_files;

void ipi_arch_add_file(unsigned long hartid, uint64_t s_file)
{
	if (nr_files < IPI_HARTS_MAX && s_file) {
		files[nr_files].hartid = hartid;
		files[nr_files].seteipnum = (volatile uint32_t *)(uintptr_t)s_file;
		nr_files++;
	}
}

static int file_of(unsigned long hartid)
{
	for (unsigned int i = 0; i < nr_files; i++)
		if (files[i].hartid == hartid)
			return (int)i;
	return -1;
}

void ipi_arch_hart_init(unsigned long hartid)
{
	int f = file_of(hartid);

	if (f < 0)
		return;
	/* MSIs delivered, none masked by priority, the one identity enabled */
	csr_write(CSR_SISELECT, ISEL_EIDELIVERY);
	csr_write(CSR_SIREG, 1);
	csr_write(CSR_SISELECT, ISEL_EITHRESH);
	csr_write(CSR_SIREG, 0);
	/* of identities 1-63 only the IPI's enabled (the file's others reset disabled) */
	csr_write(CSR_SISELECT, ISEL_EIE0);
	csr_write(CSR_SIREG, 1UL << IPI_ID);
	csr_set(CSR_SIE, 1UL << IRQ_S_EXT);
	/* an MSI that came before is still pending: it ends the first wait */
	__atomic_store_n(&files[f].ready, true, __ATOMIC_RELEASE);
}

void hart_send_ipi(unsigned long hartid)
{
	int f = file_of(hartid);

	if (f >= 0 && __atomic_load_n(&files[f].ready, __ATOMIC_ACQUIRE)) {
		/* what the sender loaded and stored before comes first (excl_acquire's token) */
		asm volatile("fence rw, o" ::: "memory");
		*files[f].seteipnum = IPI_ID;
		/* ... and it is on its way before what the sender stores next (excl_acquire's mark) */
		asm volatile("fence o, w" ::: "memory");
		return;
	}
	sbi_ecall(SBI_EXT_IPI, SBI_EXT_IPI_SEND_IPI, 1, hartid, 0, 0, 0, 0);
}

unsigned long ipi_arch_sip(void)
{
	return (1UL << IRQ_S_SOFT) | (nr_files ? 1UL << IRQ_S_EXT : 0);
}

bool ipi_arch_take(void)
{
	unsigned long sip = csr_read(CSR_SIP);
	bool got = false;

	if (sip & (1UL << IRQ_S_SOFT)) {
		csr_clear(CSR_SIP, 1UL << IRQ_S_SOFT);
		got = true;
	}
	/*
	 * Reading stopei and writing it in one instruction claims the identity
	 * read: the only one enabled, so one claim clears SEIP
	 */
	if (nr_files && (sip & (1UL << IRQ_S_EXT)) && (csr_swap(CSR_STOPEI, 0) >> TOPEI_ID_SHIFT))
		got = true;
	return got;
}
