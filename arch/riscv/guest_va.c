// SPDX-License-Identifier: BSD-2-Clause
/* Guest-virtual loads that cannot trap the hypervisor (guest_va.h, guest_va.S). */
#include "arch/riscv/csr.h"
#include "arch/riscv/guest_va.h"

long guest_va_load(unsigned long va, uint64_t *out);
extern char guest_va_fault[];

/*
 * A trap taken from HS-mode overwrites sstatus.SPP/SPIE and hstatus.SPV/
 * SPVP/GVA, which still say how to return to the guest whose trap is being
 * handled: every load keeps them and puts them back.
 */
int guest_va_read(unsigned long va, bool vs, void *dst, size_t len)
{
	unsigned long hstatus = csr_read(CSR_HSTATUS), sstatus = csr_read(CSR_SSTATUS);
	unsigned long first = va & ~7UL, last = (va + len - 1) & ~7UL;
	uint8_t *out = dst;
	int err = 0;

	if (!len)
		return 0;
	/* past the top of the address space: no such bytes */
	if (va + len - 1 < va)
		return -1;
	csr_write(CSR_HSTATUS, vs ? hstatus | HSTATUS_SPVP : hstatus & ~HSTATUS_SPVP);
	/*
	 * The aligned doublewords holding them, counted from first to last: a
	 * bound on w would wrap with the last doubleword of the address space
	 * and walk on from 0 for as long as the guest maps pages there.
	 */
	for (unsigned long n = (last - first) / 8 + 1, w = first; n; n--, w += 8) {
		uint64_t x;

		if (guest_va_load(w, &x)) {
			err = -1;
			break;
		}
		for (unsigned int b = 0; b < 8; b++)
			if (w + b - va < len) /* va <= w + b < va + len, without wrapping */
				out[w + b - va] = (uint8_t)(x >> (8 * b));
	}
	csr_write(CSR_HSTATUS, hstatus);
	csr_write(CSR_SSTATUS, sstatus);
	return err;
}

bool guest_va_fixup(unsigned long scause, unsigned long sepc)
{
	/* load faults of any kind, misaligned loads: what a wild pointer gives */
	if (sepc != (unsigned long)guest_va_load ||
	    !(scause == CAUSE_MISALIGNED_LOAD || scause == CAUSE_LOAD_ACCESS ||
	      scause == CAUSE_LOAD_PAGE_FAULT || scause == CAUSE_LOAD_GUEST_PAGE_FAULT))
		return false;
	csr_write(CSR_SEPC, (unsigned long)guest_va_fault);
	return true;
}
