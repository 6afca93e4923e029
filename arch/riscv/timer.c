// SPDX-License-Identifier: BSD-2-Clause
#include "arch/riscv/csr.h"
#include "arch/riscv/ipi.h"
#include "arch/riscv/sbi_call.h"
#include "arch/riscv/timer.h"
#include "arch/riscv/vcpu_arch.h"

#define SIP_SSIP  (1UL << 1)
#define SIP_STIP  (1UL << 5)
#define SIP_SGEIP (1UL << 12) /* in hip/hie: a guest interrupt file's MSI (hgeip & hgeie) */

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

bool timer_take_ipi(void)
{
	return ipi_arch_take();
}

/* What a sleep changes of the interrupt enables, to put back after it */
struct sleep_enables {
	unsigned long sie, vsie, hie;
};

/*
 * Only the interrupts in sie end the sleep: wfi also ends for the loaded
 * vCPU's pending interrupts (a VS timer past its deadline, an injected
 * LCOFI: its vsie enables them in mie) and for an MSI to a waiting vCPU's
 * guest interrupt file (hie.SGEIE), which these sleeps leave for later.
 */
static struct sleep_enables sleep_begin(unsigned long sie)
{
	struct sleep_enables e = {csr_read(CSR_SIE), csr_read(CSR_VSIE), csr_read(CSR_HIE)};

	csr_write(CSR_VSIE, 0);
	if (e.hie & SIP_SGEIP)
		csr_clear(CSR_HIE, SIP_SGEIP);
	csr_write(CSR_SIE, sie);
	return e;
}

static void sleep_end(const struct sleep_enables *e)
{
	csr_write(CSR_SIE, e->sie);
	csr_write(CSR_VSIE, e->vsie);
	if (e->hie & SIP_SGEIP)
		csr_set(CSR_HIE, SIP_SGEIP);
}

bool timer_wait_ipi(bool timer, volatile unsigned long *signal, unsigned long val)
{
	struct sleep_enables e = sleep_begin(ipi_arch_sip() | (timer ? SIP_STIP : 0));
	bool ipi;

	/* an IPI here already: no signal, the caller looks again */
	if (!(csr_read(CSR_SIP) & ipi_arch_sip())) {
		if (signal) {
			asm volatile("sd %1, 0(%0)\n\twfi" : : "r"(signal), "r"(val) : "memory");
			/* awake: the signal is withdrawn before the IPI is counted taken */
			__atomic_store_n(signal, ~0UL, __ATOMIC_SEQ_CST);
		} else {
			asm volatile("wfi");
		}
	}
	ipi = timer_take_ipi();
	sleep_end(&e);
	return ipi;
}

unsigned long timer_idle(void)
{
	unsigned long sip, vsie;

	/*
	 * Not for the loaded vCPU's guest interrupt file (hstatus.VGEIN, set
	 * again at its next entry): a waiting vCPU's MSI comes as SGEI
	 * (hgeie), and a stopped one's would end every sleep at once. Nor for
	 * its other VS interrupts (vsie): one a stopped vCPU left pending and
	 * enabled would too; a waiting vCPU's wake comes as this hart's own
	 * timer or IPI.
	 */
	csr_clear(CSR_HSTATUS, HSTATUS_VGEIN);
	vsie = csr_swap(CSR_VSIE, 0);
	asm volatile("wfi");
	csr_write(CSR_VSIE, vsie);
	sip = csr_read(CSR_SIP);
	timer_take_ipi();
	if (sip & SIP_STIP)
		timer_ack();
	return sip;
}

bool timer_nap(uint64_t until)
{
	struct sleep_enables e = sleep_begin(ipi_arch_sip() | SIP_STIP);
	bool ipi;

	timer_write(until);
	if (!(csr_read(CSR_SIP) & ipi_arch_sip()))
		asm volatile("wfi");
	ipi = timer_take_ipi();
	timer_write(UINT64_MAX);
	sleep_end(&e);
	return ipi;
}

void timer_halt(uint64_t until)
{
	struct sleep_enables e = sleep_begin(SIP_STIP);

	timer_write(until);
	asm volatile("wfi");
	timer_write(UINT64_MAX);
	sleep_end(&e);
}

void timer_repost_ipi(void)
{
	csr_set(CSR_SIP, SIP_SSIP);
}
