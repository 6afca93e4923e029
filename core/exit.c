// SPDX-License-Identifier: BSD-2-Clause
/*
 * What to do when a guest's vCPU leaves guest mode (arch/riscv/entry.S saved
 * its registers): SBI calls go to the dispatch table, virtual instructions
 * are emulated or refused, HS interrupts go to the scheduler and the vPMU,
 * faults stop the guest. The trap vector's short way (core/lane.c) and the
 * scheduler's switch (core/sched.c) reach the vPMU too.
 */
#include "arch/riscv/csr.h"
#include "core/console.h"
#include "core/ecall.h"
#include "core/hart.h"
#include "core/lib.h"
#include "core/sbi.h"
#include "core/sched.h"
#include "arch/riscv/timer.h"
#include "core/vcpu.h"
#include "core/vm.h"

#define INSN_WFI 0x10500073UL
/* Zawrs: wait for a store to the reservation set; traps under hstatus.VTW (wrs.sto never) */
#define INSN_WRS_NTO 0x00d00073UL

static const char *const cause_names[] = {
	[CAUSE_MISALIGNED_FETCH] = "misaligned fetch",
	[CAUSE_FETCH_ACCESS] = "instruction access fault",
	[CAUSE_ILLEGAL_INSN] = "illegal instruction",
	[CAUSE_BREAKPOINT] = "breakpoint",
	[CAUSE_MISALIGNED_LOAD] = "misaligned load",
	[CAUSE_LOAD_ACCESS] = "load access fault",
	[CAUSE_MISALIGNED_STORE] = "misaligned store",
	[CAUSE_STORE_ACCESS] = "store access fault",
	[CAUSE_FETCH_GUEST_PAGE_FAULT] = "instruction guest-page fault",
	[CAUSE_LOAD_GUEST_PAGE_FAULT] = "load guest-page fault",
	[CAUSE_STORE_GUEST_PAGE_FAULT] = "store guest-page fault",
};

static const char *cause_name(unsigned long cause)
{
	if (cause < ARRAY_SIZE(cause_names) && cause_names[cause])
		return cause_names[cause];
	return "unexpected exception";
}

/* Stop the vCPU's whole guest, with one line that says why */
static void guest_fault(struct vcpu *v)
{
	struct vcpu_ctx *c = vcpu_ctx(v);
	char why[200];
	int n;

	n = snprintf(why, sizeof(why),
		     "vcpu %u stopped: %s (scause=0x%lx sepc=0x%lx stval=0x%lx htval=0x%lx)", v->id,
		     cause_name(c->scause), c->scause, c->sepc, c->stval, c->htval);
	/* A jump through an unset trap vector hides the original trap: show it */
	if (c->sepc == (csr_read(CSR_VSTVEC) & ~3UL))
		snprintf(why + n, sizeof(why) - (size_t)n,
			 " after guest trap vscause=0x%lx vsepc=0x%lx with no handler",
			 csr_read(CSR_VSCAUSE), csr_read(CSR_VSEPC));
	vm_request_stop(v->vm, VM_STOP_FAILED, why);
}

static bool emulate_counter_read(struct vcpu *v, unsigned long insn)
{
	struct vcpu_ctx *c = vcpu_ctx(v);
	unsigned int funct3 = (insn >> 12) & 7, rs1 = (insn >> 15) & 31, rd = (insn >> 7) & 31;
	unsigned int csr = (unsigned int)(insn >> 20);
	unsigned long val;

	bool ovf = csr == CSR_SCOUNTOVF;

	if ((insn & 0x7f) != 0x73 || ((csr < CSR_CYCLE || csr > CSR_HPMCOUNTER31) && !ovf))
		return false;
	/* only reads: csrrs/csrrc with x0, csrrsi/csrrci with 0 */
	if (!((funct3 == 2 || funct3 == 3 || funct3 == 6 || funct3 == 7) && rs1 == 0))
		return false;
	/* from VU-mode: scountovf never, counters if the guest's scounteren allows */
	if (!(c->sstatus & SSTATUS_SPP) &&
	    (ovf || !(csr_read(CSR_SCOUNTEREN) & BIT(csr - CSR_CYCLE))))
		return false;
	if (vpmu_csr_read(&v->vpmu, csr, &val))
		return false;
	if (rd)
		c->regs[rd] = val;
	c->sepc += 4;
	return true;
}

/* Bootargs word "trapped-insn=fetch": read trapped instructions from memory, never from stval */
bool exit_insn_from_memory;

/*
 * The trapped instruction could not be read (the guest changed the mapping
 * it was fetched through): the guest gets the fault its fetch would have
 * raised, as if it had come a moment later. A fault of the guest-physical
 * stage (htval set) means code outside its RAM: stopped like a fetch from
 * there. The read's fault is a load fault by the H spec; QEMU 10 reports an
 * instruction page fault for both stages (raise_mmu_exception looks at V,
 * which is 0 in the hypervisor), with htval set for the second.
 */
static __attribute__((cold)) void insn_unreadable(struct vcpu *v, const struct vcpu_fetch_fault *f)
{
	struct vcpu_ctx *c = vcpu_ctx(v);
	bool page = f->cause == CAUSE_LOAD_PAGE_FAULT || f->cause == CAUSE_FETCH_PAGE_FAULT;
	bool access = f->cause == CAUSE_LOAD_ACCESS || f->cause == CAUSE_FETCH_ACCESS;
	char why[160];

	if (!f->htval && (page || access)) {
		vcpu_arch_inject_exception(
			&v->arch, page ? CAUSE_FETCH_PAGE_FAULT : CAUSE_FETCH_ACCESS, f->stval);
		return;
	}
	snprintf(why, sizeof(why),
		 "vcpu %u stopped: trapped instruction unreadable (scause=0x%lx sepc=0x%lx "
		 "stval=0x%lx htval=0x%lx)",
		 v->id, f->cause, c->sepc, f->stval, f->htval);
	vm_request_stop(v->vm, VM_STOP_FAILED, why);
}

static void inject_illegal(struct vcpu *v, unsigned long insn)
{
	vcpu_fw_event(v, SBI_PMU_FW_ILLEGAL_INSN);
	vcpu_arch_inject_exception(&v->arch, CAUSE_ILLEGAL_INSN, insn);
}

static void handle_virtual_insn(struct vcpu *v)
{
	struct vcpu_ctx *c = vcpu_ctx(v);
	struct vcpu_fetch_fault f;
	unsigned long insn = vcpu_arch_trapped_insn(c, exit_insn_from_memory, &f);

	/* 0 read from memory is the all-zero instruction: illegal, below */
	if (unlikely(!insn) && f.cause) {
		insn_unreadable(v, &f);
		return;
	}
	if (insn == INSN_WFI) {
		/* VU-mode's is illegal, as U-mode's is natively with S-mode there */
		if (!(c->sstatus & SSTATUS_SPP)) {
			inject_illegal(v, insn);
			return;
		}
		c->sepc += 4;
		/*
		 * No resched: the scheduler looks at a vCPU that left RUNNABLE
		 * anyway, and one that an interrupt made ready again meanwhile
		 * (sched_poll) goes on in its slice instead of losing the hart
		 * to the next vCPU for a whole slice.
		 */
		if (!vcpu_arch_irq_pending(&v->arch, timer_now()))
			v->state = VCPU_WFI;
		return;
	}
	if (emulate_counter_read(v, insn))
		return;
	if (insn == INSN_WRS_NTO) {
		/*
		 * Zawrs lets a wait end for any reason: it ends now. The guest
		 * spins on a store another vCPU must make (a spinlock's
		 * holder): that one gets the hart, or the turn, to make it.
		 */
		c->sepc += 4;
		sched_yield_spin(this_hart());
		return;
	}
	/* anything else a VS-mode guest may not do is, to it, an illegal instruction */
	inject_illegal(v, insn);
}

static void handle_irq(struct vcpu *v, unsigned long irq)
{
	struct hart *h = this_hart();

	/* the timer first: it ends every slice */
	if (irq == IRQ_S_TIMER) {
		sched_timer_tick(h);
		vpmu_timer(&v->vpmu); /* a counter may have wrapped unsignalled */
		console_poll();	      /* output that waited for the UART, if any */
	} else if (irq == IRQ_S_SOFT || irq == IRQ_S_EXT) { /* an IPI (arch/riscv/ipi.h) */
		timer_take_ipi();
	} else if (irq == IRQ_PMU_OVF) {
		/* counters only count guest modes: the overflow is the running vCPU's */
		vpmu_overflow_irq(&v->vpmu);
	} else if (irq == IRQ_S_GEXT) {
		/*
		 * An MSI to the file of a vCPU waiting on this hart: the scheduler
		 * finds it ready (sched_poll). As a woken vCPU does after an SBI
		 * IPI, it runs when the running one's slice ends or it waits:
		 * preempting it would let a guest that wakes its vCPU often
		 * take another guest's time.
		 */
		vcpu_arch_take_sgei();
	} else {
		hv_printf("pmuvisor: unexpected interrupt %lu while running guest %s\n", irq,
			  v->vm->name);
		csr_clear(CSR_SIE, BIT(irq));
	}
}

void vcpu_handle_exit(struct vcpu *v)
{
	unsigned long cause = vcpu_ctx(v)->scause;

	if (cause & CAUSE_IRQ_FLAG) {
		handle_irq(v, cause & ~CAUSE_IRQ_FLAG);
		return;
	}
	switch (cause) {
	case CAUSE_VS_ECALL:
		vcpu_handle_ecall(v);
		break;
	case CAUSE_VIRTUAL_INSN:
		handle_virtual_insn(v);
		break;
	default:
		guest_fault(v);
	}
}
