// SPDX-License-Identifier: BSD-2-Clause
/*
 * traps: what a guest kernel relies on when it takes its own exceptions:
 * illegal instructions and breakpoints in S-mode, ecall/illegal CSR access/
 * counter access from U-mode, misaligned accesses (emulated below the guest),
 * and register preservation across an SBI call.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("traps");

#define SCOUNTEREN_TM (1UL << 1)

unsigned long regs_sbi_check(void);
/*
 * Fill every caller-visible register except a0/a1 (the SBI result) and
 * sp/gp/tp/ra with a known value, make an SBI call (BASE get_spec_version),
 * and return a mask of x-register numbers whose value changed.
 */
asm(".text\n"
    ".globl regs_sbi_check\n"
    "regs_sbi_check:\n"
    "	addi sp, sp, -112\n"
    "	sd ra, 0(sp)\n"
    "	sd s0, 8(sp)\n"
    "	sd s1, 16(sp)\n"
    "	sd s2, 24(sp)\n"
    "	sd s3, 32(sp)\n"
    "	sd s4, 40(sp)\n"
    "	sd s5, 48(sp)\n"
    "	sd s6, 56(sp)\n"
    "	sd s7, 64(sp)\n"
    "	sd s8, 72(sp)\n"
    "	sd s9, 80(sp)\n"
    "	sd s10, 88(sp)\n"
    "	sd s11, 96(sp)\n"
    "	.irp r, 5,6,7,8,9,12,13,14,15,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
    "	li x\\r, 0x5a5a5a5a00 + \\r\n"
    "	.endr\n"
    "	li a7, 0x10\n"
    "	li a6, 0\n"
    "	ecall\n"
    "	li a0, 0\n"
    "	.irp r, 5,6,7,8,9,12,13,14,15,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
    "	li a1, 0x5a5a5a5a00 + \\r\n"
    "	xor a1, a1, x\\r\n"
    "	snez a1, a1\n"
    "	slli a1, a1, \\r\n"
    "	or a0, a0, a1\n"
    "	.endr\n"
    "	addi a1, a7, -0x10\n"
    "	snez a1, a1\n"
    "	slli a1, a1, 17\n"
    "	or a0, a0, a1\n"
    "	snez a1, a6\n"
    "	slli a1, a1, 16\n"
    "	or a0, a0, a1\n"
    "	ld ra, 0(sp)\n"
    "	ld s0, 8(sp)\n"
    "	ld s1, 16(sp)\n"
    "	ld s2, 24(sp)\n"
    "	ld s3, 32(sp)\n"
    "	ld s4, 40(sp)\n"
    "	ld s5, 48(sp)\n"
    "	ld s6, 56(sp)\n"
    "	ld s7, 64(sp)\n"
    "	ld s8, 72(sp)\n"
    "	ld s9, 80(sp)\n"
    "	ld s10, 88(sp)\n"
    "	ld s11, 96(sp)\n"
    "	addi sp, sp, 112\n"
    "	ret\n");

static unsigned long user_add_one(unsigned long x)
{
	return x + 1;
}

static unsigned long user_ecall(unsigned long x)
{
	register unsigned long a0 asm("a0") = x;
	register unsigned long a7 asm("a7") = 0x1234;

	/* the guest's own S-mode handler must see this, not the SBI */
	asm volatile("ecall" : "+r"(a0) : "r"(a7) : "memory");
	return a0 + 0x100;
}

static unsigned long user_read_sstatus(unsigned long x)
{
	(void)x;
	return csr_read(sstatus);
}

static unsigned long user_sret(unsigned long x)
{
	asm volatile("sret" ::: "memory");
	return x;
}

static unsigned long user_rdtime(unsigned long x)
{
	(void)x;
	return csr_read(time);
}

static volatile uint8_t buf[32] __attribute__((aligned(8)));

void gt_main(unsigned long hartid, const void *fdt)
{
	struct gt_hart *h = gt_this_hart();
	unsigned long v, t0, t1;
	long cause;

	(void)fdt;
	(void)hartid;

	/* S-mode: illegal instruction */
	gt_expect_trap(EXC_ILLEGAL_INSN);
	asm volatile(".4byte 0xffffffff" ::: "memory");
	cause = gt_trapped();
	GT_CHECK_EQ("s-illegal-insn", cause, EXC_ILLEGAL_INSN);
	GT_CHECK_EQ("s-illegal-insn-spp", h->trapped_spp, 1);

	/* S-mode: an M-mode CSR is illegal */
	gt_expect_trap(EXC_ILLEGAL_INSN);
	v = csr_read(mscratch);
	(void)v; /* the read is the test: it must trap */
	GT_CHECK_EQ("s-mcsr-illegal", gt_trapped(), EXC_ILLEGAL_INSN);

	/* VS-mode: a hypervisor CSR must look illegal too (native: it is HS) */
	if (!gt_native()) {
		gt_expect_trap(EXC_ILLEGAL_INSN);
		v = csr_read(hstatus);
		(void)v; /* the read is the test: it must trap */
		GT_CHECK_EQ("vs-hcsr-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	}

	/* breakpoint (32-bit ebreak), sepc = its address */
	gt_expect_trap(EXC_BREAKPOINT);
	asm volatile(".4byte 0x00100073" ::: "memory");
	GT_CHECK_EQ("s-ebreak", gt_trapped(), EXC_BREAKPOINT);
	GT_CHECK_GE("s-ebreak-sepc", h->trapped_sepc, 0x80200000);

	/* misaligned accesses complete with the right values */
	for (v = 0; v < sizeof(buf); v++)
		buf[v] = (uint8_t)(v + 1);
	v = *(volatile unsigned long *)(buf + 3);
	GT_CHECK_EQ("misaligned-load", v, 0x0b0a090807060504UL);
	*(volatile uint32_t *)(buf + 17) = 0xdeadbeef;
	GT_CHECK_EQ("misaligned-store", *(volatile uint32_t *)(buf + 16), 0xadbeef11);
	GT_CHECK_EQ("misaligned-store-hi", buf[20], 0xde);

	/* SBI calls preserve every register but a0/a1 */
	GT_CHECK_EQ("sbi-preserves-regs", regs_sbi_check(), 0);

	/* U-mode */
	GT_CHECK_EQ("u-return-value", gt_run_user(user_add_one, 41), 42);
	gt_expect_trap(EXC_ECALL_U);
	v = gt_run_user(user_ecall, 7);
	GT_CHECK_EQ("u-ecall-cause", gt_trapped(), EXC_ECALL_U);
	GT_CHECK_EQ("u-ecall-spp", h->trapped_spp, 0);
	GT_CHECK_EQ("u-ecall-resumed", v, 7 + 0x100);

	gt_expect_trap(EXC_ILLEGAL_INSN);
	gt_run_user(user_read_sstatus, 0);
	GT_CHECK_EQ("u-scsr-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	GT_CHECK_EQ("u-scsr-illegal-spp", h->trapped_spp, 0);

	gt_expect_trap(EXC_ILLEGAL_INSN);
	v = gt_run_user(user_sret, 5);
	GT_CHECK_EQ("u-sret-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	GT_CHECK_EQ("u-sret-resumed", v, 5);

	/*
	 * U-mode time reads with scounteren.TM = 0: informational only, since
	 * OpenSBI emulates a trapped time read without checking scounteren.
	 */
	csr_clear(scounteren, SCOUNTEREN_TM);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	gt_run_user(user_rdtime, 0);
	cause = gt_trapped();
	gt_printf("traps: U-mode rdtime with scounteren.TM=0: trap cause %ld\n", cause);
	if (!gt_native()) /* the hypervisor must make it an illegal instruction */
		GT_CHECK_EQ("u-rdtime-denied", cause, EXC_ILLEGAL_INSN);
	/* with scounteren.TM = 1 it works */
	csr_set(scounteren, SCOUNTEREN_TM);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	t0 = gt_rdtime();
	v = gt_run_user(user_rdtime, 0);
	t1 = gt_rdtime();
	GT_CHECK_EQ("u-rdtime-allowed-no-trap", gt_trapped(), -1L);
	GT_CHECK_GE("u-rdtime-allowed-lo", v, t0);
	GT_CHECK_LE("u-rdtime-allowed-hi", v, t1);
	csr_clear(scounteren, SCOUNTEREN_TM);

	/* the state of S-mode survives all of this */
	GT_CHECK_EQ("sscratch-zero", csr_read(sscratch), 0);
	GT_CHECK_BITS("sstatus-spp-untouched", csr_read(sstatus), SSTATUS_SIE, 0);
}
