/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Layout of a guest's register context, shared by the trap assembly and C.
 * While a guest runs, sscratch points at its struct vcpu_ctx; while the
 * hypervisor runs, sscratch is 0, so a trap can tell where it came from.
 */
#ifndef ARCH_CTX_H
#define ARCH_CTX_H

#define CTX_REG(n)  ((n)*8) /* x1..x31; slot 0 unused */
#define CTX_SEPC    (32 * 8)
#define CTX_SSTATUS (33 * 8)
#define CTX_HSTATUS (34 * 8)
#define CTX_HV_SP   (35 * 8) /* hypervisor stack to return to */
#define CTX_SCAUSE  (36 * 8)
#define CTX_STVAL   (37 * 8)
#define CTX_HTVAL   (38 * 8)
#define CTX_HTINST  (39 * 8)
#define CTX_SIZE    (40 * 8)

#ifndef __ASSEMBLER__
struct vcpu_ctx {
	unsigned long regs[32];
	unsigned long sepc;
	unsigned long sstatus;
	unsigned long hstatus;
	unsigned long hv_sp;
	unsigned long scause;
	unsigned long stval;
	unsigned long htval;
	unsigned long htinst;
};
_Static_assert(sizeof(struct vcpu_ctx) == CTX_SIZE, "vcpu_ctx layout");

/* Enter the guest described by ctx; returns when the guest traps to HS. */
void ctx_enter_guest(struct vcpu_ctx *ctx);
#endif

#endif
