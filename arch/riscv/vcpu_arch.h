/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RISC-V state of a vCPU, a VM and a hart, embedded in core's struct vcpu,
 * struct vm and struct hart, and every hook the core calls on them: the
 * arch sees only these structs and the arguments it is given.
 */
#ifndef ARCH_VCPU_ARCH_H
#define ARCH_VCPU_ARCH_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/riscv/csr.h"
#include "arch/riscv/ctx.h"
#include "arch/riscv/gstage.h"

struct vcpu_arch {
	struct vcpu_ctx ctx; /* first: the trap path finds it through sscratch */
	/* VS-level CSRs, live only while the vCPU is loaded on a hart */
	unsigned long vsstatus, vsie, vstvec, vsscratch, vsepc, vscause, vstval, vsatp;
	/* VS-mode writes these HS registers directly: there is no VS copy */
	unsigned long scounteren, senvcfg;
	unsigned long hvip;
	unsigned long vstimecmp;  /* Sstc hosts: the guest writes it directly */
	unsigned long timer_next; /* non-Sstc hosts: deadline from SBI set_timer */
	unsigned long fp[33];	  /* f0..f31, fcsr */
	volatile unsigned long
		pending_irqs; /* hvip bits other harts raised, set at the next entry */
	/* side by side: the scheduler's short way tests both at once (vcpu_arch_entry_work) */
	bool lcofi_soft;	/* a virtual LCOFI waits for software delivery */
	bool lcofi_in_hvip;	/* hvip path: an LCOFI was raised and may still be pending */
	bool fp_live;		/* fp[] holds the state, not the hart */
	bool lcofi_by_software; /* the core's choice: never through hvip (kept across resets) */
	/*
	 * AIA: the guest interrupt file of its (pinned) hart it owns, as an
	 * hgeie bit and hstatus.VGEIN (0: none; kept across resets), and the
	 * guest's siselect while not loaded
	 */
	uint8_t guest_file;
	uint16_t vsiselect;
	/* a FENCE.I waits for its next load (vcpu_arch_request_fence_i); a word: amoswap.w */
	uint32_t fence_i_pending;
	unsigned long nr_lcofi;		/* virtual LCOFIs raised, for statistics */
	unsigned long nr_lcofi_dropped; /* software LCOFIs dropped before delivery */
};

/*
 * Earliest time the vCPU's own timer fires, while it is not loaded. Only one
 * of the two is ever set, the other stays UINT64_MAX: vstimecmp on Sstc
 * hosts (the guest writes it directly), timer_next (SBI set_timer) on the
 * others. Inline: the scheduler's short way reads it after every SBI call.
 */
static inline uint64_t vcpu_arch_timer_deadline(const struct vcpu_arch *a)
{
	return a->vstimecmp < a->timer_next ? a->vstimecmp : a->timer_next;
}

/*
 * When the vCPU's own timer can end its wait (WFI, HSM suspend): its
 * deadline while the guest enables the timer interrupt (vsie.STIE, bit 5 of
 * the guest's view), else UINT64_MAX: a disabled timer, in the past, wakes
 * nothing. Of a vCPU not loaded, or synced (vcpu_arch_sync_timer).
 */
static inline uint64_t vcpu_arch_wake_deadline(const struct vcpu_arch *a)
{
	if (!(a->vsie & (1UL << 5)))
		return UINT64_MAX;
	return vcpu_arch_timer_deadline(a);
}

/*
 * The loaded vCPU's timer and its enable into the copies
 * vcpu_arch_wake_deadline reads, for a vCPU that stays loaded without running
 * (Sstc: the guest writes vstimecmp directly, and the copy is what its last
 * put saved)
 */
void vcpu_arch_sync_timer(struct vcpu_arch *a);

/* The vCPU needs the hart back soon even without a trap (pending software LCOFI) */
static inline bool vcpu_arch_wants_recheck(const struct vcpu_arch *a)
{
	return a->lcofi_soft;
}

struct vm_arch {
	unsigned long hgatp;
	uintptr_t gstage_root;
};

/* The arch's part of a physical hart, first in core's struct hart: tp points at both */
struct arch_hart {
	unsigned long stack_top;  /* first: read by _secondary_start (entry.S) */
	struct vcpu_arch *loaded; /* whose VS CSRs, hvip, vstimecmp and FP state the hart holds */
};

/* This hart: its HS CSRs (delegation, counters, henvcfg), once, before any vCPU is loaded */
void vcpu_arch_hart_init(void);
/*
 * Boot hart, before any vcpu_arch_hart_init: harts keep at most this many
 * VMID bits, as on a hart that implements no more (a test's switch)
 */
void vcpu_arch_limit_vmid_bits(unsigned int bits);

/* A vCPU from reset (HSM start): a0 = hartid, a1, at pc */
void vcpu_arch_reset(struct vcpu_arch *a, unsigned long hartid, unsigned long pc, unsigned long a1);
/* The non-retentive suspend's resume: as a reset, its pending interrupts and timer kept */
void vcpu_arch_resume(struct vcpu_arch *a, unsigned long hartid, unsigned long pc,
		      unsigned long a1);
/* Its state into this hart's CSRs, in the VM's G-stage (hgatp); it is the hart's loaded one */
void vcpu_arch_load(struct vcpu_arch *a, unsigned long hgatp);
/* ... and back out of them: the hart has none loaded */
void vcpu_arch_put(struct vcpu_arch *a);

/*
 * A FENCE.I at the vCPU's next load, on whichever hart: for code stored
 * before (a guest's remote FENCE.I while no hart holds the vCPU loaded;
 * every reset asks too, for the guest image a boot wrote), or FENCE.Is done
 * on another hart (it moved). A remote fence then looks where the vCPU is
 * loaded (a full fence between): either that load sees the request, or the
 * caller sees the vCPU loaded and fences its hart.
 */
static inline void vcpu_arch_request_fence_i(struct vcpu_arch *a)
{
	/* after the code stores: the load that takes the request fences after them */
	__atomic_store_n(&a->fence_i_pending, 1, __ATOMIC_RELEASE);
}
/* Before every entry: interrupts other harts raised, LCOFI first, the non-Sstc timer */
void vcpu_arch_prepare_entry(struct vcpu_arch *a);
/*
 * Whether vcpu_arch_prepare_entry has anything to do: inline, so that the
 * common entry (an SBI call answered on the short way) makes no call for it.
 */
static inline bool vcpu_arch_entry_work(const struct vcpu_arch *a)
{
	return a->pending_irqs || a->lcofi_soft || a->lcofi_in_hvip || a->timer_next != UINT64_MAX;
}
/* Of that work, what an SBI PMU call can add: an LCOFI to deliver */
static inline bool vcpu_arch_lcofi_work(const struct vcpu_arch *a)
{
	return a->lcofi_soft || a->lcofi_in_hvip;
}
/* ... and that part alone (the PMU lane's entry work) */
void vcpu_arch_deliver_lcofi(struct vcpu_arch *a);
/* Enter the guest (loaded and prepared); returns on its next trap that the
 * trap vector's short way (SBI calls, core's sched_guest_ecall) did not answer */
void vcpu_arch_run(struct vcpu_arch *a);
/* Why reading a trapped instruction from guest memory failed: the read's trap */
struct vcpu_fetch_fault {
	unsigned long cause; /* a load fault's scause: page (13), access (5), guest-page (21) */
	unsigned long stval; /* the guest virtual address that faulted */
	unsigned long htval; /* guest-page faults: its guest physical address >> 2 */
};
/*
 * The instruction at the vCPU's sepc, read through its translation: 0 and
 * *f if that faults (f->cause 0: it did not, the guest's halfword is 0)
 */
unsigned long vcpu_arch_fetch_insn(const struct vcpu_ctx *c, struct vcpu_fetch_fault *f);
/*
 * The instruction the vCPU trapped on (virtual-instruction exceptions): the
 * hart's stval (QEMU writes it there), unless 0 or from_memory; else read
 * at sepc (vcpu_arch_fetch_insn: 0 and *f if that faults). Inline: the
 * trapping counter reads take the stval way.
 */
static inline unsigned long vcpu_arch_trapped_insn(const struct vcpu_ctx *c, bool from_memory,
						   struct vcpu_fetch_fault *f)
{
	if (__builtin_expect(c->stval && !from_memory, 1))
		return c->stval;
	return vcpu_arch_fetch_insn(c, f);
}
/* A VS interrupt is pending and enabled, per the vCPU's saved state (on its file's hart) */
bool vcpu_arch_irq_pending(struct vcpu_arch *a, unsigned long now);

/*
 * Whether the guest's WFI may halt its hart in VS-mode: a vCPU with a guest
 * interrupt file, whose waits its timer (Sstc) and its file's MSIs end with
 * no trap, while the hypervisor's own interrupts still reach HS-mode.
 */
static inline bool vcpu_arch_wfi_may_halt(const struct vcpu_arch *a)
{
	return a->guest_file != 0;
}
/*
 * ... and whether it does (hstatus.VTW clear), from the next entry on;
 * else WFI traps and the vCPU leaves the hart to others
 */
static inline void vcpu_arch_wfi_halts(struct vcpu_arch *a, bool halt)
{
	if (halt)
		a->ctx.hstatus &= ~HSTATUS_VTW;
	else
		a->ctx.hstatus |= HSTATUS_VTW;
}

/* ... whether it does, as its next entry will have it */
static inline bool vcpu_arch_wfi_halting(const struct vcpu_arch *a)
{
	return !(a->ctx.hstatus & HSTATUS_VTW);
}
/* ... and traps from now on, for a vCPU that runs on this hart (the short way keeps hstatus) */
static inline void vcpu_arch_wfi_traps_now(struct vcpu_arch *a)
{
	a->ctx.hstatus |= HSTATUS_VTW;
	csr_set(CSR_HSTATUS, HSTATUS_VTW);
}

/* AIA guest interrupt files (vcpu_imsic.c); each call on the hart that has the file */
/* How many guest interrupt files this hart has (GEILEN), 0 without AIA's IMSIC CSRs */
unsigned int vcpu_arch_guest_files(void);
/* Give the vCPU a guest interrupt file (1..GEILEN, of nr_ids identities) of its hart */
void vcpu_arch_set_guest_file(struct vcpu_arch *a, unsigned int file, unsigned int nr_ids);
/*
 * At the vCPU's start (HSM): its file as after a reset (nothing enabled,
 * pending or delivered), whatever the guest's last boot left in it. Not at
 * a resume from non-retentive suspend: the MSI that ended it stays pending.
 */
void vcpu_arch_clear_guest_file(struct vcpu_arch *a);
/* Whether an MSI to the vCPU's file wakes this hart (the vCPU waits in WFI or suspend) */
void vcpu_arch_wake_on_msi(struct vcpu_arch *a, bool wake);
/* A guest external interrupt (SGEI) came: the files it names wake no more */
void vcpu_arch_take_sgei(void);
/* Emulate an exception trap into the guest's VS-mode handler (the vCPU is loaded) */
void vcpu_arch_inject_exception(struct vcpu_arch *a, unsigned long cause, unsigned long tval);
/* Clear hvip bits of the vCPU, loaded or not */
void vcpu_arch_clear_irq(struct vcpu_arch *a, unsigned long hvip_bits);
/* Raise the guest's counter-overflow interrupt (LCOFI, 13) */
void vcpu_arch_raise_lcofi(struct vcpu_arch *a);
void vcpu_arch_cancel_lcofi(struct vcpu_arch *a);

/* How LCOFI reaches guests on this host: "hvip" (Ssaia) or "software" */
const char *vcpu_arch_lcofi_path(void);
/* Set the guest's timer (SBI set_timer) */
void vcpu_arch_set_timer(struct vcpu_arch *a, uint64_t when);

/*
 * A VM's G-stage table mapping its RAM [gpa, gpa + size) to hpa, from
 * alloc's memory, and its hgatp with VMID vmid. Returns 0, or -1 when the
 * range cannot be mapped.
 */
int vm_arch_init(struct vm_arch *va, unsigned int vmid, uint64_t gpa, uint64_t hpa, uint64_t size,
		 gstage_alloc_fn alloc);
/*
 * Whether the VM runs with VMID 0, shared, because some hart keeps fewer
 * VMID bits than its own VMID needs (known once every hart has probed)
 */
bool vm_arch_vmid_shared(const struct vm_arch *va);
/* Map a device's page(s) [gpa, gpa + size) to hpa in the VM's G-stage, read and write */
int vm_arch_map_device(struct vm_arch *va, uint64_t gpa, uint64_t hpa, uint64_t size,
		       gstage_alloc_fn alloc);

#endif
