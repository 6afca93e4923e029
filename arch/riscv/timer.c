// SPDX-License-Identifier: BSD-2-Clause
#include "arch/riscv/csr.h"
#include "arch/riscv/sbi_call.h"
#include "arch/riscv/timer.h"

#define SIP_SSIP (1UL << 1)
#define SIP_STIP (1UL << 5)

static bool use_sstc;

void timer_init(bool sstc)
{
	use_sstc = sstc;
}

static void timer_write(uint64_t when)
{
	if (use_sstc)
		csr_write(CSR_STIMECMP, when);
	else
		sbi_ecall(SBI_EXT_TIME, SBI_EXT_TIME_SET_TIMER, when, 0, 0, 0, 0, 0);
}

void timer_arm(uint64_t when)
{
	timer_write(when);
}

void timer_ack(void)
{
	timer_write(UINT64_MAX);
}

void timer_wait_ipi(bool timer, volatile unsigned long *signal, unsigned long val)
{
	unsigned long sie = csr_read(CSR_SIE), vsie = csr_read(CSR_VSIE);

	/*
	 * wfi also ends for the loaded vCPU's pending interrupts (a VS timer
	 * past its deadline, an injected LCOFI): its vsie enables them in mie.
	 */
	csr_write(CSR_VSIE, 0);
	csr_write(CSR_SIE, SIP_SSIP | (timer ? SIP_STIP : 0));
	if (csr_read(CSR_SIP) & SIP_SSIP) {
		/* an IPI is here already: no signal, the caller looks again */
		csr_clear(CSR_SIP, SIP_SSIP);
	} else if (signal) {
		asm volatile("sd %1, 0(%0)\n\twfi" : : "r"(signal), "r"(val) : "memory");
		csr_clear(CSR_SIP, SIP_SSIP);
	} else {
		asm volatile("wfi");
		csr_clear(CSR_SIP, SIP_SSIP);
	}
	csr_write(CSR_SIE, sie);
	csr_write(CSR_VSIE, vsie);
}

unsigned long timer_idle(void)
{
	unsigned long sip;

	asm volatile("wfi");
	sip = csr_read(CSR_SIP);
	if (sip & SIP_SSIP)
		csr_clear(CSR_SIP, SIP_SSIP);
	if (sip & SIP_STIP)
		timer_ack();
	return sip;
}

bool timer_nap(uint64_t until)
{
	unsigned long sie = csr_read(CSR_SIE), vsie = csr_read(CSR_VSIE);
	bool ipi;

	csr_write(CSR_VSIE, 0);
	csr_write(CSR_SIE, SIP_SSIP | SIP_STIP);
	timer_write(until);
	if (!(csr_read(CSR_SIP) & SIP_SSIP))
		asm volatile("wfi");
	ipi = (csr_read(CSR_SIP) & SIP_SSIP) != 0;
	if (ipi)
		csr_clear(CSR_SIP, SIP_SSIP);
	timer_write(UINT64_MAX);
	csr_write(CSR_SIE, sie);
	csr_write(CSR_VSIE, vsie);
	return ipi;
}

void timer_repost_ipi(void)
{
	csr_set(CSR_SIP, SIP_SSIP);
}
