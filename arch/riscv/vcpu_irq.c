// SPDX-License-Identifier: BSD-2-Clause
/*
 * Interrupts into a vCPU: which are pending for it, its timer, and its counter
 * overflow interrupt (LCOFI, 13), injected by hardware through hvip
 * (Ssaia's hvien) or as an emulated trap, and delivered before the
 * interrupts it becomes pending with.
 */
#include "arch/riscv/csr.h"
#include "arch/riscv/isa.h"
#include "core/lib.h"
#include "arch/riscv/timer.h"
#include "arch/riscv/vcpu_arch.h"
#include "arch/riscv/vcpu_internal.h"

bool vcpu_lcofi_hvip;

/* Probe once whether hvip bit 13 can inject LCOFI into VS-mode */
void vcpu_probe_lcofi_hvip(void)
{
	static bool probed;

	if (probed)
		return;
	probed = true;
	if (!riscv_has(RISCV_EXT_SSAIA))
		return; /* no hvien CSR at all */
	csr_write(CSR_HVIEN, BIT(IRQ_PMU_OVF));
	if (csr_read(CSR_HVIEN) & BIT(IRQ_PMU_OVF)) {
		csr_set(CSR_HVIP, BIT(IRQ_PMU_OVF));
		vcpu_lcofi_hvip = (csr_read(CSR_HVIP) & BIT(IRQ_PMU_OVF)) != 0;
		csr_clear(CSR_HVIP, BIT(IRQ_PMU_OVF));
	}
	csr_write(CSR_HVIEN, 0);
}

/*
 * hvien bit 13 for every vCPU where the host has it (vcpu_arch_hart_init):
 * also on the software path, the guest's sie.LCOFIE (vsie bit 13) is then a
 * register of its own, which the software delivery honours. Without it the
 * bit is read-only 0: the guest cannot clear (nor set) it, and the software
 * path assumes it set.
 */
static inline bool lcofie_set(void)
{
	return !vcpu_lcofi_hvip || (csr_read(CSR_VSIE) & BIT(IRQ_PMU_OVF));
}

const char *vcpu_arch_lcofi_path(void)
{
	return vcpu_lcofi_hvip ? "hvip" : "software";
}

bool vcpu_arch_irq_pending(struct vcpu_arch *a, unsigned long now)
{
	bool live = loaded(a);
	unsigned long hvip = (live ? csr_read(CSR_HVIP) : a->hvip) | a->pending_irqs;
	unsigned long vsie = live ? csr_read(CSR_VSIE) : a->vsie;
	uint64_t deadline = riscv_has(RISCV_EXT_SSTC) && live ? csr_read(CSR_VSTIMECMP)
							      : vcpu_arch_timer_deadline(a);
	/* vsie holds the guest's view: SSIE bit 1 enables VSSIP bit 2, etc. */
	unsigned long enabled = ((vsie & 0x222UL) << 1) | (vsie & BIT(IRQ_PMU_OVF));

	/* an MSI in its guest interrupt file (this hart's, as the callers are its hart) */
	if (a->guest_file && (csr_read(CSR_HGEIP) & BIT(a->guest_file)))
		hvip |= BIT(IRQ_VS_EXT);
	if (now >= deadline) {
		hvip |= BIT(IRQ_VS_TIMER);
		/*
		 * Sstc lets VSTIP follow time "eventually, but not necessarily
		 * immediately": QEMU raises it from a host timer, late under host
		 * load, and a guest woken from WFI or suspend by this comparison
		 * saw no timer interrupt and suspended again, 100 times (the
		 * hsm-shared test, 1 run in 80). A write of the same compare value
		 * raises it at once (QEMU riscv_timer_write_timecmp; a no-op where
		 * the comparison is combinational).
		 */
		if (riscv_has(RISCV_EXT_SSTC) && live)
			write_vstimecmp(deadline);
	}
	/* software LCOFI: pending while the guest's enable bit is set (or invisible) */
	if (a->lcofi_soft && (!vcpu_lcofi_hvip || (vsie & BIT(IRQ_PMU_OVF))))
		return true;
	return (hvip & enabled) != 0;
}

void vcpu_arch_clear_irq(struct vcpu_arch *a, unsigned long bits)
{
	if (loaded(a))
		csr_clear(CSR_HVIP, bits);
	else
		a->hvip &= ~bits;
}

/* The guest's timer interrupt: Sstc compares vstimecmp itself, else the entry sets VSTIP */
void vcpu_arch_set_timer(struct vcpu_arch *a, uint64_t when)
{
	if (riscv_has(RISCV_EXT_SSTC)) {
		a->vstimecmp = when;
		if (loaded(a))
			write_vstimecmp(when);
		return;
	}
	a->timer_next = when;
	vcpu_arch_clear_irq(a, BIT(IRQ_VS_TIMER));
}

void vcpu_arch_raise_lcofi(struct vcpu_arch *a)
{
	a->nr_lcofi++;
	if (!uses_hvip(a))
		a->lcofi_soft = true;
	else if (loaded(a))
		csr_set(CSR_HVIP, BIT(IRQ_PMU_OVF));
	else
		a->hvip |= BIT(IRQ_PMU_OVF);
	a->lcofi_in_hvip = uses_hvip(a);
}

/*
 * Software path only: the pending LCOFI is ours, the guest cannot see it
 * (no hvien), and its cause is gone. Delivered anyway, Linux would find no
 * overflow bit, return IRQ_NONE and leave every counter it had just stopped
 * stopped until its next context switch: counts and samples lost. The hvip
 * path keeps the guest-visible sip.LCOFIP as hardware does.
 */
void vcpu_arch_cancel_lcofi(struct vcpu_arch *a)
{
	if (!a->lcofi_soft)
		return;
	a->lcofi_soft = false;
	a->nr_lcofi_dropped++;
}

/* Emulate the interrupt trap into VS-mode, as hardware would take it */
static void inject_interrupt(struct vcpu_arch *a, unsigned long irq)
{
	unsigned long vstvec = csr_read(CSR_VSTVEC);

	vcpu_arch_inject_exception(a, CAUSE_IRQ_FLAG | irq, 0);
	if ((vstvec & 3) == 1)
		a->ctx.sepc = (vstvec & ~3UL) + 4 * irq;
}

/*
 * A pending LCOFI the guest can take now (in VU-mode, or VS-mode with SIE
 * set, and sie.LCOFIE set) is taken here, by an emulated trap, never left to
 * the hardware: it ranks below the timer, software and external interrupts,
 * and here, unlike natively, it often becomes pending together with one of
 * them (a timer that expired while we handled the overflow or while the
 * vCPU was away). The guest would take it late, inside that other handler,
 * and a user-mode sampler would record a kernel IP. Not takeable now: the
 * software path keeps it pending and the scheduler re-checks soon (every
 * 10 us: a guest's write of sie or sstatus does not trap); the hvip path
 * leaves it to the hardware, as natively, for when the guest enables
 * interrupts.
 *
 * Taken as hardware takes it: on the hvip path hvip bit 13, the guest's
 * sip.LCOFIP, stays set in its handler until the guest clears it (a handler
 * that returns without clearing it takes it again). On the software path
 * it stays pending until the guest sets sie.LCOFIE. (Its sip.LCOFIP cannot
 * show it: no hvip bit there.)
 *
 * lcofi_in_hvip makes every entry come here (vcpu_arch_entry_work), so it
 * goes as soon as hvip bit 13 is found clear, whatever the guest's SIE: the
 * guest cleared sip.LCOFIP, or this function took the interrupt for it.
 * Otherwise a guest that makes its SBI calls with interrupts off, as Linux
 * makes its PMU calls, would keep every later entry coming here.
 */
void vcpu_arch_deliver_lcofi(struct vcpu_arch *a)
{
	bool in_vu = !(a->ctx.sstatus & SSTATUS_SPP);

	if (a->lcofi_soft) {
		if (!in_vu && !(csr_read(CSR_VSSTATUS) & SSTATUS_SIE))
			return;
		if (!lcofie_set())
			return;
		a->lcofi_soft = false;
		inject_interrupt(a, IRQ_PMU_OVF);
		return;
	}
	if (!uses_hvip(a) || !(csr_read(CSR_HVIP) & BIT(IRQ_PMU_OVF))) {
		a->lcofi_in_hvip = false; /* the guest cleared it, or it went */
		return;
	}
	if (!in_vu && !(csr_read(CSR_VSSTATUS) & SSTATUS_SIE))
		return;
	if (!(csr_read(CSR_VSIE) & BIT(IRQ_PMU_OVF)))
		return;
	/* hvip bit 13 stays: the handler finds sip.LCOFIP set, the trap cleared SIE */
	inject_interrupt(a, IRQ_PMU_OVF);
}

void vcpu_arch_prepare_entry(struct vcpu_arch *a)
{
	/* a bit set elsewhere after this read comes with a kick: the guest exits again at once */
	unsigned long pending =
		a->pending_irqs ? __atomic_exchange_n(&a->pending_irqs, 0, __ATOMIC_ACQUIRE) : 0;

	if (a->lcofi_soft || a->lcofi_in_hvip)
		vcpu_arch_deliver_lcofi(a);
	/* UINT64_MAX on Sstc hosts (vcpu_arch_timer_deadline) */
	if (a->timer_next != UINT64_MAX && timer_now() >= a->timer_next) {
		pending |= BIT(IRQ_VS_TIMER);
		a->timer_next = UINT64_MAX;
	}
	if (pending)
		csr_set(CSR_HVIP, pending);
	/* hcounteren: vpmu keeps its bits current at load, put and every PMU call */
}
