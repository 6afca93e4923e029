// SPDX-License-Identifier: BSD-2-Clause
/*
 * fpu: every vCPU fills f0-f31 and fcsr with values of its own and checks
 * them for a while (dts/tests/fpu.dts shares one physical hart between
 * several vCPUs of two guests, so the hypervisor switches between them many
 * times meanwhile). Any register that changes is a lost or leaked FP context.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("fpu");

#define SSTATUS_FS_DIRTY (3UL << 13)
#define RUN_MS		 300

void fp_fill(unsigned long seed, unsigned long fcsr);
unsigned long fp_check(unsigned long seed); /* mask of f registers that differ */
unsigned long fp_fcsr(void);

asm(".text\n"
    ".option push\n"
    ".option arch, +d\n"
    ".globl fp_fill\n"
    "fp_fill:\n"
    "	.irp r, "
    "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
    "	addi t0, a0, \\r * 61\n"
    "	fmv.d.x f\\r, t0\n"
    "	.endr\n"
    "	fscsr a1\n"
    "	ret\n"
    ".globl fp_check\n"
    "fp_check:\n"
    "	li a1, 0\n"
    "	.irp r, "
    "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
    "	fmv.x.d t0, f\\r\n"
    "	addi t1, a0, \\r * 61\n"
    "	xor t0, t0, t1\n"
    "	snez t0, t0\n"
    "	slli t0, t0, \\r\n"
    "	or a1, a1, t0\n"
    "	.endr\n"
    "	mv a0, a1\n"
    "	ret\n"
    ".globl fp_fcsr\n"
    "fp_fcsr:\n"
    "	frcsr a0\n"
    "	ret\n"
    ".option pop\n");

static volatile unsigned long done, bad_mask[GT_MAX_HARTS], bad_fcsr[GT_MAX_HARTS];
static volatile unsigned long rounds[GT_MAX_HARTS];

static void fp_work(unsigned long hartid)
{
	unsigned long seed = (gt_rdtime() << 20) ^ (hartid * 0x9e3779b97f4a7c15UL);
	unsigned long fcsr = ((hartid + seed) & 0x1f) | (((hartid + 1) % 5) << 5);
	uint64_t end = gt_rdtime() + gt_us_to_ticks((uint64_t)RUN_MS * 1000);
	unsigned long m;

	csr_set(sstatus, SSTATUS_FS_DIRTY);
	fp_fill(seed, fcsr);
	while (gt_rdtime() < end) {
		m = fp_check(seed);
		if (m) {
			bad_mask[hartid] |= m;
			fp_fill(seed, fcsr);
		}
		if (fp_fcsr() != fcsr) {
			bad_fcsr[hartid]++;
			fp_fill(seed, fcsr);
		}
		rounds[hartid]++;
	}
	gt_atomic_add(&done, 1);
}

static void secondary(unsigned long hartid, unsigned long opaque)
{
	(void)opaque;
	fp_work(hartid);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	unsigned long i, id, n = gt_nr_harts();
	char name[40];

	(void)fdt;
	gt_printf("fpu: %lu harts, %d ms each\n", n, RUN_MS);
	for (i = 0; i < n; i++) {
		id = gt_hart_id_at(i);
		if (id != hartid)
			gt_hart_start(id, secondary, 0);
	}
	fp_work(hartid);
	GT_CHECK_EQ("all-done", gt_wait_ge(&done, n, 20 * gt_timebase()), 1);
	for (i = 0; i < n; i++) {
		id = gt_hart_id_at(i);
		gt_snprintf(name, sizeof(name), "hart%lu-fregs-kept", id);
		GT_CHECK_EQ(name, bad_mask[id], 0);
		gt_snprintf(name, sizeof(name), "hart%lu-fcsr-kept", id);
		GT_CHECK_EQ(name, bad_fcsr[id], 0);
		gt_snprintf(name, sizeof(name), "hart%lu-ran", id);
		GT_CHECK_GE(name, rounds[id], 1);
		gt_printf("fpu: hart %lu: %lu rounds\n", id, rounds[id]);
	}
}
