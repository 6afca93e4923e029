// SPDX-License-Identifier: BSD-2-Clause
/* Loading, saving and resetting a vCPU's RISC-V state. */
#include <string.h>
#include "arch/riscv/cpu.h"
#include "arch/riscv/csr.h"
#include "arch/riscv/gstage.h"
#include "arch/riscv/isa.h"
#include "core/lib.h"
#include "arch/riscv/timer.h"
#include "arch/riscv/vcpu_arch.h"

#define VS_IRQ_BITS	((1UL << IRQ_VS_SOFT) | (1UL << IRQ_VS_TIMER) | (1UL << IRQ_VS_EXT))
#define VSSTATUS_UXL_64 (2UL << 32)

void fpu_save(unsigned long *area);
void fpu_restore(unsigned long *area);

static unsigned long hstatus_base;
/* hvien/hvip bit 13 are writable: LCOFI can be injected by hardware (Ssaia) */
static bool lcofi_hvip;

/* Probe once whether hvip bit 13 can inject LCOFI into VS-mode */
static void probe_lcofi_hvip(void)
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
		lcofi_hvip = (csr_read(CSR_HVIP) & BIT(IRQ_PMU_OVF)) != 0;
		csr_clear(CSR_HVIP, BIT(IRQ_PMU_OVF));
	}
	csr_write(CSR_HVIEN, 0);
}

const char *vcpu_arch_lcofi_path(void)
{
	return lcofi_hvip ? "hvip" : "software";
}

static bool uses_hvip(const struct vcpu_arch *a)
{
	return lcofi_hvip && !a->lcofi_by_software;
}

/* This hart's part of its state (struct arch_hart, first in what tp points at) */
static struct arch_hart *this_arch_hart(void)
{
	return cpu_get_tp();
}

/* Whether a's state is live in this hart's CSRs, or saved in *a */
static bool loaded(const struct vcpu_arch *a)
{
	return this_arch_hart()->loaded == a;
}

void vcpu_arch_hart_init(void)
{
	unsigned long henvcfg = 0;

	/* exceptions the guest handles itself; ecalls, guest-page faults and
	 * virtual instructions stay with us */
	csr_write(CSR_HEDELEG, BIT(CAUSE_MISALIGNED_FETCH) | BIT(CAUSE_FETCH_ACCESS) |
				       BIT(CAUSE_ILLEGAL_INSN) | BIT(CAUSE_BREAKPOINT) |
				       BIT(CAUSE_MISALIGNED_LOAD) | BIT(CAUSE_LOAD_ACCESS) |
				       BIT(CAUSE_MISALIGNED_STORE) | BIT(CAUSE_STORE_ACCESS) |
				       BIT(CAUSE_USER_ECALL) | BIT(CAUSE_FETCH_PAGE_FAULT) |
				       BIT(CAUSE_LOAD_PAGE_FAULT) | BIT(CAUSE_STORE_PAGE_FAULT));
	csr_write(CSR_HIDELEG, VS_IRQ_BITS);
	/*
	 * Before any vCPU is loaded: the PMU bits 0, as vpmu's table of the hart
	 * believes them (vpmu_phys_set_counteren_on); vpmu alone writes them after
	 */
	csr_write(CSR_HCOUNTEREN, HCOUNTEREN_TM);
	if (riscv_has(RISCV_EXT_SSTC))
		henvcfg |= ENVCFG_STCE;
	if (riscv_has(RISCV_EXT_SVPBMT))
		henvcfg |= ENVCFG_PBMTE;
	/* cache-block operations on guest memory: the guest's DT offers them (guest_fdt.c) */
	if (riscv_has(RISCV_EXT_ZICBOM) && riscv_isa.cbom_block)
		henvcfg |= ENVCFG_CBCFE | ENVCFG_CBIE_FLUSH;
	if (riscv_has(RISCV_EXT_ZICBOZ) && riscv_isa.cboz_block)
		henvcfg |= ENVCFG_CBZE;
	/*
	 * With Smstateen, VS-mode reaches senvcfg (saved per vCPU) only through
	 * this bit; Linux writes senvcfg on every task switch once it has Zicboz.
	 */
	if (riscv_has(RISCV_EXT_SMSTATEEN))
		csr_write(CSR_HSTATEEN0, HSTATEEN0_ENVCFG);
	csr_write(CSR_HENVCFG, henvcfg);
	csr_write(CSR_HTIMEDELTA, 0);
	csr_write(CSR_HVIP, 0);
	/* HS interrupts we act on: IPIs from other harts, our timer, counter overflow */
	csr_write(CSR_SIE, BIT(IRQ_S_SOFT) | BIT(IRQ_S_TIMER) |
				   (riscv_has(RISCV_EXT_SSCOFPMF) ? BIT(IRQ_PMU_OVF) : 0));
	probe_lcofi_hvip();
	csr_clear(CSR_SSTATUS, SSTATUS_SIE);
	/* keep VSXL and friends as the hart reset them */
	hstatus_base = csr_read(CSR_HSTATUS) & ~(HSTATUS_SPV | HSTATUS_SPVP | HSTATUS_GVA |
						 HSTATUS_VTW | HSTATUS_VTSR | HSTATUS_VTVM);
}

void vcpu_arch_reset(struct vcpu_arch *a, unsigned long hartid, unsigned long pc, unsigned long a1)
{
	unsigned long nr_lcofi = a->nr_lcofi, nr_dropped = a->nr_lcofi_dropped;
	bool by_software = a->lcofi_by_software;
	unsigned long pending = a->pending_irqs;

	memset(a, 0, sizeof(*a));
	a->pending_irqs = pending; /* other harts' business: not the vCPU's reset */
	a->nr_lcofi = nr_lcofi;
	a->nr_lcofi_dropped = nr_dropped;
	a->lcofi_by_software = by_software;
	a->ctx.regs[10] = hartid;
	a->ctx.regs[11] = a1;
	a->ctx.sepc = pc;
	/* sret lands in VS-mode with FP usable at HS level; the guest still
	 * controls it through vsstatus.FS */
	a->ctx.sstatus = SSTATUS_SPP | SSTATUS_FS_INITIAL;
	a->ctx.hstatus = hstatus_base | HSTATUS_SPV | HSTATUS_SPVP | HSTATUS_VTW;
	a->vsstatus = VSSTATUS_UXL_64;
	a->vstimecmp = UINT64_MAX;
	a->timer_next = UINT64_MAX;
	a->fp_live = true;
}

/*
 * Every write of vstimecmp goes through here. QEMU 10 (time_helper.c,
 * riscv_timer_write_timecmp) keeps one host timer per hart for it: a value
 * in the past raises VSTIP at once but leaves armed the timer an earlier
 * value set, and that timer's callback sets VSTIP whatever vstimecmp holds
 * when it runs, late under host load. Another vCPU's deadline became a
 * timer interrupt for a guest whose compare value was UINT64_MAX (a fourth
 * tick in smp4-onehart, about 1 run in 100; docs/architecture.md, "A vCPU's
 * life"). UINT64_MAX drops the timer; a callback QEMU has already taken off
 * its list holds the lock (BQL) the second write waits for, so the value is
 * written after it.
 */
static void write_vstimecmp(uint64_t when)
{
	csr_write(CSR_VSTIMECMP, UINT64_MAX);
	csr_write(CSR_VSTIMECMP, UINT64_MAX);
	csr_write(CSR_VSTIMECMP, when);
}

void vcpu_arch_load(struct vcpu_arch *a, unsigned long hgatp)
{
	csr_write(CSR_HGATP, hgatp);
	/* before vsie and hvip: their bit 13 exists only while hvien allows it */
	if (riscv_has(RISCV_EXT_SSAIA))
		csr_write(CSR_HVIEN, uses_hvip(a) ? BIT(IRQ_PMU_OVF) : 0);
	csr_write(CSR_VSSTATUS, a->vsstatus);
	csr_write(CSR_VSIE, a->vsie);
	csr_write(CSR_VSTVEC, a->vstvec);
	csr_write(CSR_VSSCRATCH, a->vsscratch);
	csr_write(CSR_VSEPC, a->vsepc);
	csr_write(CSR_VSCAUSE, a->vscause);
	csr_write(CSR_VSTVAL, a->vstval);
	csr_write(CSR_VSATP, a->vsatp);
	csr_write(CSR_SCOUNTEREN, a->scounteren);
	csr_write(CSR_SENVCFG, a->senvcfg);
	csr_write(CSR_HVIP, a->hvip);
	if (riscv_has(RISCV_EXT_SSTC))
		write_vstimecmp(a->vstimecmp);
	if (a->fp_live) {
		fpu_restore(a->fp);
		a->fp_live = false;
	}
	/* vCPUs of one VM share its VMID: drop translations another vCPU left */
	hfence_vvma_all();
	/* from here an LCOFI raised for it (vpmu's load, next) goes into the CSRs */
	this_arch_hart()->loaded = a;
}

void vcpu_arch_put(struct vcpu_arch *a)
{
	a->vsstatus = csr_read(CSR_VSSTATUS);
	a->vsie = csr_read(CSR_VSIE);
	a->vstvec = csr_read(CSR_VSTVEC);
	a->vsscratch = csr_read(CSR_VSSCRATCH);
	a->vsepc = csr_read(CSR_VSEPC);
	a->vscause = csr_read(CSR_VSCAUSE);
	a->vstval = csr_read(CSR_VSTVAL);
	a->vsatp = csr_read(CSR_VSATP);
	a->scounteren = csr_read(CSR_SCOUNTEREN);
	a->senvcfg = csr_read(CSR_SENVCFG);
	a->hvip = csr_read(CSR_HVIP);
	if (riscv_has(RISCV_EXT_SSTC))
		a->vstimecmp = csr_read(CSR_VSTIMECMP);
	fpu_save(a->fp);
	a->fp_live = true;
	this_arch_hart()->loaded = NULL;
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
	/* software LCOFI: the guest's enable bit is not visible, assume it set */
	if (a->lcofi_soft)
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
 * set) is taken here, by an emulated trap, never left to the hardware: it
 * ranks below the timer, software and external interrupts, and here, unlike
 * natively, it often becomes pending together with one of them (a timer that
 * expired while we handled the overflow or while the vCPU was away). The
 * guest would take it late, inside that other handler, and a user-mode
 * sampler would record a kernel IP. Not takeable now: the software path
 * keeps it pending and the scheduler re-checks soon; the hvip path leaves it
 * to the hardware, as natively, for when the guest enables interrupts.
 */
static __attribute__((noinline)) void deliver_lcofi_first(struct vcpu_arch *a)
{
	bool in_vu = !(a->ctx.sstatus & SSTATUS_SPP);

	if (!in_vu && !(csr_read(CSR_VSSTATUS) & SSTATUS_SIE))
		return;
	if (a->lcofi_soft) {
		/* the guest's enable bit is not visible without hvien: assume it set */
		a->lcofi_soft = false;
		inject_interrupt(a, IRQ_PMU_OVF);
		return;
	}
	if (!uses_hvip(a) || !(csr_read(CSR_HVIP) & BIT(IRQ_PMU_OVF))) {
		a->lcofi_in_hvip = false; /* the guest cleared it, or it went */
		return;
	}
	if (!(csr_read(CSR_VSIE) & BIT(IRQ_PMU_OVF)))
		return;
	vcpu_arch_clear_irq(a, BIT(IRQ_PMU_OVF));
	inject_interrupt(a, IRQ_PMU_OVF);
}

void vcpu_arch_prepare_entry(struct vcpu_arch *a)
{
	/* a bit set elsewhere after this read comes with a kick: the guest exits again at once */
	unsigned long pending =
		a->pending_irqs ? __atomic_exchange_n(&a->pending_irqs, 0, __ATOMIC_ACQUIRE) : 0;

	if (a->lcofi_soft || a->lcofi_in_hvip)
		deliver_lcofi_first(a);
	/* UINT64_MAX on Sstc hosts (vcpu_arch_timer_deadline) */
	if (a->timer_next != UINT64_MAX && timer_now() >= a->timer_next) {
		pending |= BIT(IRQ_VS_TIMER);
		a->timer_next = UINT64_MAX;
	}
	if (pending)
		csr_set(CSR_HVIP, pending);
	/* hcounteren: vpmu keeps its bits current at load, put and every PMU call */
}

void vcpu_arch_run(struct vcpu_arch *a)
{
	ctx_enter_guest(&a->ctx);
}

void vcpu_arch_inject_exception(struct vcpu_arch *a, unsigned long cause, unsigned long tval)
{
	struct vcpu_ctx *c = &a->ctx;
	unsigned long vsstatus = csr_read(CSR_VSSTATUS);

	vsstatus &= ~(SSTATUS_SPP | SSTATUS_SPIE);
	if (c->sstatus & SSTATUS_SPP)
		vsstatus |= SSTATUS_SPP;
	if (vsstatus & SSTATUS_SIE)
		vsstatus |= SSTATUS_SPIE;
	vsstatus &= ~SSTATUS_SIE;
	csr_write(CSR_VSSTATUS, vsstatus);
	csr_write(CSR_VSEPC, c->sepc);
	csr_write(CSR_VSCAUSE, cause);
	csr_write(CSR_VSTVAL, tval);
	c->sepc = csr_read(CSR_VSTVEC) & ~3UL;
	c->sstatus |= SSTATUS_SPP;
	/* the trap vector's short way resumes with the CSR as the trap left it (entry.S) */
	csr_set(CSR_SSTATUS, SSTATUS_SPP);
}

int vm_arch_init(struct vm_arch *va, unsigned int vmid, uint64_t gpa, uint64_t hpa, uint64_t size,
		 gstage_alloc_fn alloc)
{
	uint64_t *root = alloc(GSTAGE_ROOT_SIZE, GSTAGE_ROOT_SIZE);

	if (!root || gstage_map(root, gpa, hpa, size, PTE_RWX, alloc))
		return -1;
	va->gstage_root = (uintptr_t)root;
	va->hgatp = HGATP_MODE_SV39X4 | ((unsigned long)vmid << HGATP_VMID_SHIFT) |
		    ((uintptr_t)root >> 12);
	return 0;
}
