// SPDX-License-Identifier: BSD-2-Clause
/* A vCPU's RISC-V state: reset, loaded into a hart's CSRs and saved; its timer, its VM's G-stage. */
#include <string.h>
#include "arch/riscv/cpu.h"
#include "arch/riscv/csr.h"
#include "arch/riscv/gstage.h"
#include "arch/riscv/isa.h"
#include "core/lib.h"
#include "arch/riscv/timer.h"
#include "arch/riscv/vcpu_arch.h"
#include "arch/riscv/vcpu_internal.h"

#define VS_IRQ_BITS	((1UL << IRQ_VS_SOFT) | (1UL << IRQ_VS_TIMER) | (1UL << IRQ_VS_EXT))
#define VSSTATUS_UXL_64 (2UL << 32)

void fpu_save(unsigned long *area);
void fpu_restore(unsigned long *area);

static unsigned long hstatus_base;
static unsigned int vmid_bits_max = 14;
/*
 * hgatp values from this one up name a VMID above those some hart keeps
 * (the fewest any hart's probe found): those VMs share VMID 0 (share_vmid0).
 * Every hart has probed before the first VM is created.
 */
static unsigned long hgatp_vmid_limit = ~0UL;

void vcpu_arch_limit_vmid_bits(unsigned int bits)
{
	vmid_bits_max = bits;
}

/*
 * VMIDLEN, which the privileged spec lets be anything down to 0: the VMID
 * bits that keep the ones written to them (in a G-stage mode: with Bare,
 * hgatp's other fields must be 0). Nothing runs in V=1 meanwhile.
 */
static void probe_vmid_bits(void)
{
	unsigned long kept, limit, was;

	csr_write(CSR_HGATP, HGATP_MODE_SV39X4 | HGATP_VMID_MASK);
	kept = (csr_read(CSR_HGATP) & HGATP_VMID_MASK) >> HGATP_VMID_SHIFT;
	csr_write(CSR_HGATP, 0);
	hfence_gvma_all();
	limit = gstage_vmid_limit(kept, vmid_bits_max);
	was = __atomic_load_n(&hgatp_vmid_limit, __ATOMIC_RELAXED);
	while (limit < was && !__atomic_compare_exchange_n(&hgatp_vmid_limit, &was, limit, false,
							   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
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
	 * believes them (vpmu_phys_set_counteren); vpmu alone writes them after
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
	if (riscv_has(RISCV_EXT_SMSTATEEN)) {
		unsigned long hstateen0 = HSTATEEN0_ENVCFG;

		/* the AIA CSRs of a guest with a guest interrupt file (vcpu_imsic.c) */
		if (riscv_has(RISCV_EXT_SSAIA))
			hstateen0 |= HSTATEEN0_CSRIND | HSTATEEN0_AIA | HSTATEEN0_IMSIC;
		csr_write(CSR_HSTATEEN0, hstateen0);
	}
	csr_write(CSR_HENVCFG, henvcfg);
	csr_write(CSR_HTIMEDELTA, 0);
	csr_write(CSR_HVIP, 0);
	/* HS interrupts we act on: IPIs from other harts, our timer, counter overflow */
	csr_write(CSR_SIE, BIT(IRQ_S_SOFT) | BIT(IRQ_S_TIMER) |
				   (riscv_has(RISCV_EXT_SSCOFPMF) ? BIT(IRQ_PMU_OVF) : 0));
	/* ... and an MSI to the guest interrupt file of a vCPU that waits (hgeie) */
	if (vcpu_arch_guest_files())
		csr_set(CSR_HIE, BIT(IRQ_S_GEXT));
	vcpu_probe_lcofi_hvip();
	/*
	 * The same for every vCPU, so set once: vsie and hvip bit 13 exist while
	 * it is set, and every vCPU's sie.LCOFIE is its own (vcpu_irq.c)
	 */
	if (vcpu_lcofi_hvip)
		csr_write(CSR_HVIEN, BIT(IRQ_PMU_OVF));
	csr_clear(CSR_SSTATUS, SSTATUS_SIE);
	/* keep VSXL and friends as the hart reset them */
	hstatus_base = csr_read(CSR_HSTATUS) & ~(HSTATUS_SPV | HSTATUS_SPVP | HSTATUS_GVA |
						 HSTATUS_VTW | HSTATUS_VTSR | HSTATUS_VTVM);
	probe_vmid_bits();
}

/* The VM of this hgatp runs with VMID 0, shared: some hart does not keep its own */
static inline bool vmid_shared(unsigned long hgatp)
{
	return hgatp >= hgatp_vmid_limit;
}

/*
 * A VM whose VMID some hart does not keep runs with VMID 0, which no VM has
 * of its own (vm_arch_init is given 1 on), beside the other such VMs: the
 * hart's G-stage TLB may hold another one's translations, unless hgatp
 * still holds this one's (the hart's last VM, or a vCPU of it, runs again).
 * The fence comes before the caller's hgatp write, which the privileged
 * spec allows for a reused VMID ("before or after writing hgatp").
 */
static __attribute__((cold)) unsigned long share_vmid0(unsigned long hgatp)
{
	hgatp &= ~HGATP_VMID_MASK;
	if (csr_read(CSR_HGATP) != hgatp)
		hfence_gvma_vmid0();
	return hgatp;
}

void vcpu_arch_reset(struct vcpu_arch *a, unsigned long hartid, unsigned long pc, unsigned long a1)
{
	const size_t pend = offsetof(struct vcpu_arch, pending_irqs),
		     past = pend + sizeof(a->pending_irqs);
	unsigned long nr_lcofi = a->nr_lcofi, nr_dropped = a->nr_lcofi_dropped;
	bool by_software = a->lcofi_by_software;
	unsigned int file = a->guest_file;

	/*
	 * All but pending_irqs, which other harts raise at any time (an atomic
	 * OR): one raised after HSM start returned belongs to the new start
	 */
	memset(a, 0, pend);
	memset((char *)a + past, 0, sizeof(*a) - past);
	a->nr_lcofi = nr_lcofi;
	a->nr_lcofi_dropped = nr_dropped;
	a->lcofi_by_software = by_software;
	/* a fresh start fetches its code anew; a request in flight is not lost to the memset */
	a->fence_i_pending = 1;
	a->guest_file = (uint8_t)file;
	a->ctx.regs[10] = hartid;
	a->ctx.regs[11] = a1;
	a->ctx.sepc = pc;
	/* sret lands in VS-mode with FP usable at HS level; the guest still
	 * controls it through vsstatus.FS */
	a->ctx.sstatus = SSTATUS_SPP | SSTATUS_FS_INITIAL;
	a->ctx.hstatus = hstatus_base | HSTATUS_SPV | HSTATUS_SPVP | HSTATUS_VTW |
			 (unsigned long)file << HSTATUS_VGEIN_SHIFT;
	a->vsstatus = VSSTATUS_UXL_64;
	a->vstimecmp = UINT64_MAX;
	a->timer_next = UINT64_MAX;
	a->fp_live = true;
}

/*
 * What woke the vCPU stays pending and its SBI timer armed: natively both
 * are the hart's and the firmware's state, which a non-retentive suspend
 * keeps; only the vCPU's registers start afresh.
 */
void vcpu_arch_resume(struct vcpu_arch *a, unsigned long hartid, unsigned long pc, unsigned long a1)
{
	unsigned long hvip = a->hvip, vstimecmp = a->vstimecmp, timer_next = a->timer_next;
	bool soft = a->lcofi_soft, in_hvip = a->lcofi_in_hvip;

	vcpu_arch_reset(a, hartid, pc, a1);
	a->hvip = hvip;
	a->vstimecmp = vstimecmp;
	a->timer_next = timer_next;
	a->lcofi_soft = soft;
	a->lcofi_in_hvip = in_hvip;
}

void vcpu_arch_load(struct vcpu_arch *a, unsigned long hgatp)
{
	if (unlikely(vmid_shared(hgatp)))
		hgatp = share_vmid0(hgatp);
	csr_write(CSR_HGATP, hgatp);
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
	/* every vCPU's own, file or not: VS-mode reaches it with Ssaia (hstateen0.CSRIND) */
	if (riscv_has(RISCV_EXT_SSAIA))
		csr_write(CSR_VSISELECT, a->vsiselect);
	if (riscv_has(RISCV_EXT_SSTC))
		write_vstimecmp(a->vstimecmp);
	if (a->fp_live) {
		fpu_restore(a->fp);
		a->fp_live = false;
	}
	/* from here an LCOFI raised for it (vpmu's load, next) goes into the CSRs */
	this_arch_hart()->loaded = a;
	/*
	 * Loaded, then fenced: a guest's remote fence either sees it loaded and
	 * fences this hart, or was asked before and is done here
	 * (core/sbi_rfence.c). The VM's vCPUs share its VMID: this also drops
	 * translations another vCPU left.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	hfence_vvma_all();
	/* taken, not cleared: a request that comes meanwhile stays for the next load */
	if (unlikely(__atomic_load_n(&a->fence_i_pending, __ATOMIC_RELAXED)) &&
	    __atomic_exchange_n(&a->fence_i_pending, 0, __ATOMIC_ACQUIRE))
		fence_i();
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
	if (riscv_has(RISCV_EXT_SSAIA)) /* and not left for another guest to read */
		a->vsiselect = (uint16_t)csr_swap(CSR_VSISELECT, 0);
	if (riscv_has(RISCV_EXT_SSTC))
		a->vstimecmp = csr_read(CSR_VSTIMECMP);
	fpu_save(a->fp);
	a->fp_live = true;
	/*
	 * Its interrupts must not end this hart's wfi: its vstimecmp stays in
	 * the CSR, and once time passed it, an idle hart with nothing loaded
	 * would wake at once from every sleep (QEMU's wfi looks at VSTIP & hie).
	 */
	csr_write(CSR_VSIE, 0);
	this_arch_hart()->loaded = NULL;
}

void vcpu_arch_sync_timer(struct vcpu_arch *a)
{
	a->vsie = csr_read(CSR_VSIE);
	if (riscv_has(RISCV_EXT_SSTC))
		a->vstimecmp = csr_read(CSR_VSTIMECMP);
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

bool vm_arch_vmid_shared(const struct vm_arch *va)
{
	return vmid_shared(va->hgatp);
}

int vm_arch_init(struct vm_arch *va, unsigned int vmid, uint64_t gpa, uint64_t hpa, uint64_t size,
		 gstage_alloc_fn alloc)
{
	uint64_t *root = alloc(GSTAGE_ROOT_SIZE, GSTAGE_ROOT_SIZE);

	if (!root || gstage_map(root, gpa, hpa, size, PTE_RWX, alloc))
		return -1;
	va->gstage_root = (uintptr_t)root;
	va->hgatp = gstage_hgatp((uintptr_t)root, vmid);
	return 0;
}

int vm_arch_map_device(struct vm_arch *va, uint64_t gpa, uint64_t hpa, uint64_t size,
		       gstage_alloc_fn alloc)
{
	return gstage_map((uint64_t *)va->gstage_root, gpa, hpa, size, PTE_R | PTE_W, alloc);
}
