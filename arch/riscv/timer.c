// SPDX-License-Identifier: BSD-2-Clause
#include "csr.h"
#include "sbi_call.h"
#include "timer.h"

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

void timer_wait_ipi(bool timer)
{
	unsigned long sie = csr_read(CSR_SIE);

	csr_write(CSR_SIE, SIP_SSIP | (timer ? SIP_STIP : 0));
	asm volatile("wfi");
	csr_write(CSR_SIE, sie);
	csr_clear(CSR_SIP, SIP_SSIP);
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
