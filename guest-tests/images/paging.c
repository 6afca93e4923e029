// SPDX-License-Identifier: BSD-2-Clause
/*
 * paging: the guest turns on its own Sv39 translation (VS-stage under the
 * hypervisor): identity gigapage for RAM, an alias region with 4 KiB pages,
 * remapping with sfence.vma, page faults with the right cause and stval,
 * SUM, and U-mode code running from a U-mode alias of the image.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("paging");

#define GIGA	  0x40000000UL
#define ALIAS_VA  0x100000000UL /* VPN2 = 4: 4 KiB pages below */
#define UALIAS_VA 0xc0000000UL	/* VPN2 = 3: U alias of the RAM gigapage */

static unsigned long root[512] __attribute__((aligned(4096)));
static unsigned long l1[512] __attribute__((aligned(4096)));
static unsigned long l0[512] __attribute__((aligned(4096)));
static volatile unsigned long page_a[512] __attribute__((aligned(4096)));
static volatile unsigned long page_b[512] __attribute__((aligned(4096)));
static volatile unsigned long page_c[512] __attribute__((aligned(4096)));
static volatile unsigned long page_ro[512] __attribute__((aligned(4096)));

static inline void sfence_vma(unsigned long va)
{
	asm volatile("sfence.vma %0, zero" ::"r"(va) : "memory");
}

static inline void sfence_all(void)
{
	asm volatile("sfence.vma" ::: "memory");
}

/* U-mode code: loads *a0 and ends with the library's exit ecall (no ret) */
unsigned long user_load_exit(unsigned long va);
asm(".text\n"
    ".align 2\n"
    ".globl user_load_exit\n"
    "user_load_exit:\n"
    "	ld a0, 0(a0)\n"
    "	li a7, " gt_str(GT_USER_EXIT_EID) "\n"
					  "	ecall\n"
					  "	j user_load_exit\n");

static unsigned long to_ualias(const void *p)
{
	return (unsigned long)p - 0x80000000UL + UALIAS_VA;
}

void gt_main(unsigned long hartid, const void *fdt)
{
	struct gt_hart *h = gt_this_hart();
	unsigned long satp, v, i;
	long cause;

	(void)hartid;
	(void)fdt;
	for (i = 0; i < 512; i++) {
		page_a[i] = 0xaaaa000000000000UL | i;
		page_b[i] = 0xbbbb000000000000UL | i;
		page_c[i] = 0xcccc000000000000UL | i;
		page_ro[i] = 0xeeee000000000000UL | i;
	}
	/* RAM identity (S only), RAM U alias, the 4 KiB alias region */
	root[2] = gt_pte(0x80000000UL, PTE_V | PTE_R | PTE_W | PTE_X | PTE_A | PTE_D | PTE_G);
	root[3] = gt_pte(0x80000000UL, PTE_V | PTE_R | PTE_W | PTE_X | PTE_U | PTE_A | PTE_D);
	root[ALIAS_VA / GIGA] = gt_pte((unsigned long)l1, PTE_V);
	l1[0] = gt_pte((unsigned long)l0, PTE_V);
	l0[0] = gt_pte((unsigned long)page_a, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);
	l0[1] = gt_pte((unsigned long)page_b, PTE_V | PTE_R | PTE_W | PTE_U | PTE_A | PTE_D);
	l0[2] = gt_pte((unsigned long)page_ro, PTE_V | PTE_R | PTE_A);
	/* l0[3]: not mapped */

	satp = SATP_SV39 | ((unsigned long)root >> 12);
	sfence_all();
	csr_write(satp, satp);
	sfence_all();
	GT_CHECK_EQ("satp-readback", csr_read(satp), satp);
	gt_printf("paging: Sv39 on (this line is printed with translation enabled)\n");

	/* reads and writes through the alias */
	GT_CHECK_EQ("alias-read", *(volatile unsigned long *)(ALIAS_VA + 8), 0xaaaa000000000001UL);
	*(volatile unsigned long *)(ALIAS_VA + 16) = 0x1234567890UL;
	GT_CHECK_EQ("alias-write", page_a[2], 0x1234567890UL);
	GT_CHECK_EQ("alias-read-ro", *(volatile unsigned long *)(ALIAS_VA + 0x2000 + 24),
		    0xeeee000000000003UL);

	/* remap page 0 to page_c */
	l0[0] = gt_pte((unsigned long)page_c, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);
	sfence_vma(ALIAS_VA);
	GT_CHECK_EQ("remap-read", *(volatile unsigned long *)(ALIAS_VA + 8), 0xcccc000000000001UL);

	/* faults: unmapped load, read-only store, S access to a U page */
	gt_expect_trap(EXC_LOAD_PAGE);
	v = *(volatile unsigned long *)(ALIAS_VA + 0x3000 + 40);
	(void)v; /* the read is the test: it must trap */
	cause = gt_trapped();
	GT_CHECK_EQ("unmapped-load-cause", cause, EXC_LOAD_PAGE);
	GT_CHECK_EQ("unmapped-load-stval", h->trapped_stval, ALIAS_VA + 0x3000 + 40);
	gt_expect_trap(EXC_STORE_PAGE);
	*(volatile unsigned long *)(ALIAS_VA + 0x2000 + 8) = 1;
	GT_CHECK_EQ("ro-store-cause", gt_trapped(), EXC_STORE_PAGE);
	GT_CHECK_EQ("ro-store-stval", h->trapped_stval, ALIAS_VA + 0x2000 + 8);
	GT_CHECK_EQ("ro-store-not-written", page_ro[1], 0xeeee000000000001UL);
	gt_expect_trap(EXC_LOAD_PAGE);
	v = *(volatile unsigned long *)(ALIAS_VA + 0x1000);
	(void)v; /* the read is the test: it must trap */
	GT_CHECK_EQ("s-load-u-page-sum0", gt_trapped(), EXC_LOAD_PAGE);
	csr_set(sstatus, SSTATUS_SUM);
	gt_expect_trap(EXC_LOAD_PAGE);
	v = *(volatile unsigned long *)(ALIAS_VA + 0x1000 + 8);
	GT_CHECK_EQ("s-load-u-page-sum1-no-trap", gt_trapped(), -1L);
	GT_CHECK_EQ("s-load-u-page-sum1", v, 0xbbbb000000000001UL);

	/* a newly mapped page after a fault: l0[3] -> page_b, S only */
	l0[3] = gt_pte((unsigned long)page_b, PTE_V | PTE_R | PTE_A);
	sfence_vma(ALIAS_VA + 0x3000);
	GT_CHECK_EQ("map-after-fault", *(volatile unsigned long *)(ALIAS_VA + 0x3000 + 16),
		    0xbbbb000000000002UL);

	/* U-mode code from the U alias (SUM stays on for the trap handler) */
	v = gt_run_user((unsigned long (*)(unsigned long))to_ualias(user_load_exit),
			ALIAS_VA + 0x1000 + 24);
	GT_CHECK_EQ("u-load-u-page", v, 0xbbbb000000000003UL);
	gt_expect_trap(EXC_LOAD_PAGE);
	gt_run_user((unsigned long (*)(unsigned long))to_ualias(user_load_exit), ALIAS_VA + 8);
	GT_CHECK_EQ("u-load-s-page", gt_trapped(), EXC_LOAD_PAGE);
	GT_CHECK_EQ("u-load-s-page-spp", h->trapped_spp, 0);
	gt_expect_trap(EXC_INSN_PAGE);
	gt_run_user(user_load_exit, ALIAS_VA + 0x1000);
	cause = gt_trapped();
	GT_CHECK_EQ("u-fetch-s-page", cause, EXC_INSN_PAGE);
	if (cause == EXC_INSN_PAGE) /* nothing to skip: a fetch fault, leave U for good */
		GT_CHECK_EQ("u-fetch-s-page-stval", h->trapped_stval,
			    (unsigned long)user_load_exit);
	csr_clear(sstatus, SSTATUS_SUM);

	/* paging off again */
	csr_write(satp, 0);
	sfence_all();
	GT_CHECK_EQ("satp-off", csr_read(satp), 0);
	gt_printf("paging: Sv39 off\n");
}
