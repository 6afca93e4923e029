// SPDX-License-Identifier: BSD-2-Clause
/*
 * insn-fetch: the hypervisor reads the instruction a virtual-instruction
 * exception trapped on from guest memory (hlvx) where the hart leaves stval
 * 0; QEMU writes the instruction there, so this test runs the hypervisor with
 * bootargs "trapped-insn=fetch" to take that path. The
 * read goes through the guest's translation and can fault although the guest
 * fetched the instruction: this guest fetches a counter read (a trap for the
 * hypervisor) through a page-table entry it has just made invalid without
 * sfence.vma, so the hart still uses the old translation (allowed) and the
 * hypervisor's read finds the new one. The guest must get the fault its own
 * fetch would have raised, an instruction page fault at that address; the
 * hypervisor used to trap on its read and panic. With bootargs "gpa" the
 * entry points outside guest RAM instead: the guest is stopped alone, with
 * a line that says why.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("insn-fetch");

#define ALIAS_VA  0x100000000UL /* VPN2 = 4: 4 KiB pages below */
#define OUTSIDE	  0x4000000000UL
#define INSN_READ 0xc0302573 /* csrr a0, hpmcounter3 */

static unsigned long root[512] __attribute__((aligned(4096)));
static unsigned long l1[512] __attribute__((aligned(4096)));
static unsigned long l0[512] __attribute__((aligned(4096)));

/*
 * A page of U-mode code, mapped U at ALIAS_VA: at 0 an exit (the guest's own
 * ecall, no trap to the hypervisor), at 64 an unconfigured counter read
 * (a virtual-instruction exception the hypervisor answers with an illegal
 * instruction), then the exit
 */
extern char upage[], upage_read[];
asm(".section .text.upage, \"ax\"\n"
    ".balign 4096\n"
    "upage:\n"
    "	li a7, " gt_str(
	    GT_USER_EXIT_EID) "\n"
			      "	ecall\n"
			      "	j upage\n"
			      ".balign 64\n"
			      "upage_read:\n"
			      "	.4byte " gt_str(
				      INSN_READ) "\n"
						 "	li a7, " gt_str(
							 GT_USER_EXIT_EID) "\n"
									   "	ecall\n"
									   "	j upage_read\n"
									   ".balign 4096\n"
									   ".text\n");

/*
 * The same layout with the halfword 0x0000 (defined illegal) where upage has
 * the counter read: what the hypervisor reads when the guest remaps the page
 * between its fetch and that read
 */
extern char zpage[], zpage_read[];
/* clang-format off */
asm(".section .text.upage, \"ax\"\n"
    ".balign 4096\n"
    "zpage:\n"
    "	li a7, " gt_str(GT_USER_EXIT_EID) "\n"
    "	ecall\n"
    "	j zpage\n"
    ".balign 64\n"
    "zpage_read:\n"
    "	.2byte 0\n"
    "	li a7, " gt_str(GT_USER_EXIT_EID) "\n"
    "	ecall\n"
    "	j zpage_read\n"
    ".balign 4096\n"
    ".text\n");
/* clang-format on */

static unsigned long (*at(const char *sym))(unsigned long)
{
	return (unsigned long (*)(unsigned long))(ALIAS_VA + (unsigned long)(sym - upage));
}

/* Run the counter read in U-mode: the cause it trapped with (-1: none) and its stval */
static long run_read(unsigned long *stval)
{
	long cause;

	gt_expect_trap(EXC_ILLEGAL_INSN);
	gt_run_user(at(upage_read), 0);
	cause = gt_trapped();
	*stval = gt_this_hart()->trapped_stval;
	return cause;
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	bool gpa = args && !__builtin_strcmp(args, "gpa");
	unsigned long stval, satp;
	struct gt_pmu_layout pl;
	long cause, fw;

	(void)hartid;
	(void)fdt;
	root[2] = gt_pte(0x80000000UL, PTE_V | PTE_R | PTE_W | PTE_X | PTE_A | PTE_D | PTE_G);
	root[ALIAS_VA >> 30] = gt_pte((unsigned long)l1, PTE_V);
	l1[0] = gt_pte((unsigned long)l0, PTE_V);
	l0[0] = gt_pte((unsigned long)upage, PTE_V | PTE_R | PTE_X | PTE_U | PTE_A);
	satp = SATP_SV39 | ((unsigned long)root >> 12);
	asm volatile("sfence.vma" ::: "memory");
	csr_write(satp, satp);
	asm volatile("sfence.vma" ::: "memory");
	csr_set(sstatus,
		SSTATUS_SUM); /* the trap handler reads the U page to skip an instruction */

	/* the read as it should be: an illegal instruction, the instruction in stval */
	cause = run_read(&stval);
	GT_CHECK_EQ("mapped-illegal", cause, EXC_ILLEGAL_INSN);
	GT_CHECK_EQ("mapped-insn-in-stval", stval, (unsigned long)INSN_READ);

	/*
	 * Fill the hart's translation of the page (no trap to the hypervisor on
	 * the way), change its entry without sfence.vma, fetch through it again
	 */
	gt_run_user(at(upage), 0);
	l0[0] = gpa ? gt_pte(OUTSIDE, PTE_V | PTE_R | PTE_X | PTE_U | PTE_A) : 0;
	gt_expect_trap(EXC_INSN_PAGE);
	gt_run_user(at(upage_read), 0);
	cause = gt_trapped();
	stval = gt_this_hart()->trapped_stval;
	if (gpa) /* not reached: the guest is stopped */
		GT_CHECK_EQ("gpa-not-reached", 1, 0);
	GT_CHECK_EQ("stale-fetch-page-fault", cause, EXC_INSN_PAGE);
	GT_CHECK_EQ("stale-fetch-stval", stval, (unsigned long)at(upage_read));

	/*
	 * The same with the entry remapped to zpage: the hypervisor reads 0x0000,
	 * an instruction (illegal), not a fault: the guest gets the illegal
	 * instruction with stval 0 (an uninitialised fault record was read before).
	 * The hypervisor's answer, not the guest's own fetch of 0x0000 (which
	 * hedeleg would give it directly): the ILLEGAL_INSN firmware event counts
	 * only the hypervisor's injections.
	 */
	GT_CHECK_EQ("zpage-layout", (unsigned long)zpage_read - (unsigned long)zpage,
		    (unsigned long)upage_read - (unsigned long)upage);
	/* SBI calls before the fill: each trap to the hypervisor flushes QEMU's TLB */
	gt_pmu_layout(&pl);
	fw = gt_pmu_cfg_idx(0, pl.fw_mask,
			    SBI_PMU_CFG_FLAG_CLEAR_VALUE | SBI_PMU_CFG_FLAG_AUTO_START,
			    GT_PMU_EV_FW(SBI_PMU_FW_ILLEGAL_INSN));
	GT_CHECK_LE("zero-insn-fw-counter", (unsigned long)fw, 63);
	l0[0] = gt_pte((unsigned long)upage, PTE_V | PTE_R | PTE_X | PTE_U | PTE_A);
	asm volatile("sfence.vma" ::: "memory");
	gt_run_user(at(upage), 0);
	l0[0] = gt_pte((unsigned long)zpage, PTE_V | PTE_R | PTE_X | PTE_U | PTE_A);
	cause = run_read(&stval);
	GT_CHECK_EQ("zero-insn-illegal", cause, EXC_ILLEGAL_INSN);
	GT_CHECK_EQ("zero-insn-stval", stval, 0);
	GT_CHECK_EQ("zero-insn-by-hypervisor", gt_pmu_fw_read((unsigned long)fw).value, 1);
	gt_pmu_release((unsigned long)fw);

	/* mapped again, with the fence: as before */
	l0[0] = gt_pte((unsigned long)upage, PTE_V | PTE_R | PTE_X | PTE_U | PTE_A);
	asm volatile("sfence.vma" ::: "memory");
	cause = run_read(&stval);
	GT_CHECK_EQ("remapped-illegal", cause, EXC_ILLEGAL_INSN);
	GT_CHECK_EQ("remapped-insn-in-stval", stval, (unsigned long)INSN_READ);
	csr_clear(sstatus, SSTATUS_SUM);
	csr_write(satp, 0);
	asm volatile("sfence.vma" ::: "memory");
	gt_exit();
}
