// SPDX-License-Identifier: BSD-2-Clause
/*
 * prof-target: a guest the hypervisor profiles (docs/profiling.md). It does
 * nothing for it: tools/check_profile.py reads the samples pmuvisor writes
 * and checks them against this image's symbols, in the windows the image
 * prints ("PROF <window> start|end <rdtime>").
 *
 *   hot:     rounds of hot_a (3 units), hot_b (1), spin_irqoff (1, with
 *            sstatus.SIE clear) and top3 -> mid3 -> leaf3 (1, in leaf3):
 *            shares 3:1:1:1, a 3-deep call chain, every pc in them
 *   hostile: spins with s0 (the frame pointer) wild, cyclic, outside RAM,
 *            misaligned: chains end cleanly, the hypervisor survives
 *   own:     the guest samples itself with its own counter at the same
 *            time: its LCOFI handler never sees spin_irqoff (interrupts
 *            off), the hypervisor's samples do
 *
 *   overhead: (bootargs "overhead") 400 M instructions in top3's chain, alone:
 *            the same run with and without the profile gives its cost
 *
 * The guest's own checks: the sampling counter (bootargs "hidden=N") is not
 * offered (COUNTER_GET_INFO, CONFIG_MATCHING), not readable (its CSR traps),
 * never in scountovf, and no LCOFI reaches the guest from it. With bootargs
 * "other" it only runs the hot rounds (a second guest whose samples must
 * never appear).
 */
#include <stdlib.h>
#include <string.h>
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("prof-target");

#define IRQ_LCOF      13
#define UNIT	      100000UL /* loop iterations (2 instructions each) of one share */
#define ROUNDS	      20
#define OWN_PERIOD    20000UL
#define CSR_SCOUNTOVF 0xda0

#define NOINLINE __attribute__((noinline))

/* 2n instructions, nothing else: the shares are the loops' lengths */
static inline void spin(unsigned long n)
{
	asm volatile("1: addi %0, %0, -1\n bnez %0, 1b" : "+r"(n));
}

NOINLINE void hot_a(unsigned long n)
{
	spin(3 * n);
}

NOINLINE void hot_b(unsigned long n)
{
	asm volatile(".globl hot_b_loop\n"
		     "hot_b_loop:\n"
		     "1: addi %0, %0, -1\n"
		     "bnez %0, 1b\n"
		     ".globl hot_b_loop_end\n"
		     "hot_b_loop_end:"
		     : "+r"(n));
}

/* What an in-guest sampler cannot see: no interrupt is taken in its loop */
NOINLINE void spin_irqoff(unsigned long n)
{
	csr_clear(sstatus, SSTATUS_SIE);
	asm volatile(".globl irqoff_loop\n"
		     "irqoff_loop:\n"
		     "1: addi %0, %0, -1\n"
		     "bnez %0, 1b\n"
		     ".globl irqoff_loop_end\n"
		     "irqoff_loop_end:"
		     : "+r"(n));
	csr_set(sstatus, SSTATUS_SIE);
}

NOINLINE void leaf3(unsigned long n)
{
	spin(n);
}

NOINLINE void mid3(unsigned long n)
{
	leaf3(n);
	asm volatile("" ::: "memory"); /* a call, not a tail jump: mid3 stays in the chain */
}

NOINLINE void top3(unsigned long n)
{
	mid3(n);
	asm volatile("" ::: "memory");
}

static void window(const char *name, const char *what)
{
	gt_printf("PROF %s %s %lu\n", name, what, (unsigned long)gt_rdtime());
}

static void hot_rounds(void)
{
	for (int r = 0; r < ROUNDS; r++) {
		hot_a(UNIT);
		hot_b(UNIT);
		spin_irqoff(UNIT);
		top3(UNIT);
	}
}

/* Spin with s0 = fp: the hypervisor's chain walk starts from a bad frame pointer */
NOINLINE void hostile_fp(unsigned long fp, unsigned long n)
{
	asm volatile("mv t0, s0\n"
		     "mv s0, %1\n"
		     "1: addi %0, %0, -1\n"
		     "bnez %0, 1b\n"
		     "mv s0, t0"
		     : "+r"(n)
		     : "r"(fp)
		     : "t0", "memory");
}

static uint64_t cycle[2] __attribute__((aligned(16)));

static void hostile_frames(void)
{
	/* a frame record pointing at itself: fp - 16 holds fp */
	cycle[0] = (uint64_t)(uintptr_t)&cycle[2];
	cycle[1] = (uint64_t)(uintptr_t)hot_b;
	hostile_fp(0xdead00000000beefUL & ~7UL, UNIT);	       /* wild */
	hostile_fp((unsigned long)(uintptr_t)&cycle[2], UNIT); /* cyclic */
	hostile_fp(0x1000, UNIT);			       /* below RAM: no G-stage mapping */
	hostile_fp(gt_ram_base() + gt_ram_size() + 0x10000, UNIT); /* past RAM */
	hostile_fp(gt_ram_base() + 0x1003, UNIT);		   /* misaligned */
}

/* ---- the guest's own sampler ---- */
static volatile unsigned long own_samples, own_in_irqoff, own_in_hot_b;
static long own_ctr = -1;

extern char irqoff_loop[], irqoff_loop_end[], hot_b_loop[], hot_b_loop_end[];

static bool in(unsigned long pc, const char *lo, const char *hi)
{
	return pc >= (uintptr_t)lo && pc <= (uintptr_t)hi;
}

static void own_lcofi(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	own_samples++;
	if (in(f->sepc, irqoff_loop, irqoff_loop_end))
		own_in_irqoff++;
	if (in(f->sepc, hot_b_loop, hot_b_loop_end))
		own_in_hot_b++;
	csr_clear(sip, 1UL << IRQ_LCOF);
	gt_pmu_stop((unsigned long)own_ctr, 1, 0);
	gt_pmu_start((unsigned long)own_ctr, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -OWN_PERIOD);
}

static void own_sampling(void)
{
	struct gt_pmu_layout l;

	gt_pmu_layout(&l);
	own_ctr = gt_pmu_cfg_idx(0, l.prog_mask, 0, SBI_PMU_HW_INSTRUCTIONS);
	if (!GT_CHECK_CTR("own-counter", own_ctr, 3))
		return;
	gt_irq_register(IRQ_LCOF, own_lcofi);
	csr_set(sie, 1UL << IRQ_LCOF);
	window("own", "start");
	gt_pmu_start((unsigned long)own_ctr, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -OWN_PERIOD);
	for (int r = 0; r < 4; r++) {
		spin_irqoff(UNIT);
		hot_b(UNIT);
	}
	gt_pmu_release((unsigned long)own_ctr);
	window("own", "end");
	/* the guest saw its own samples in hot_b's loop, none in the interrupts-off one */
	GT_CHECK_GE("own-samples", own_samples, 10);
	GT_CHECK_GE("own-samples-in-hot-b", own_in_hot_b, 5);
	GT_CHECK_EQ("own-samples-in-irqoff", own_in_irqoff, 0);
}

/* The sampling counter is not the guest's to see */
static void hidden_counter(unsigned long hidden)
{
	struct gt_pmu_layout l;
	unsigned long ovf;

	gt_pmu_layout(&l);
	GT_CHECK_EQ("hidden-not-in-layout", (l.hw_mask >> hidden) & 1, 0);
	GT_CHECK_SBI("hidden-get-info", gt_pmu_counter_info(hidden), SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("hidden-cfg-skip-match",
		     gt_pmu_cfg(hidden, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, SBI_PMU_HW_CPU_CYCLES, 0),
		     SBI_ERR_INVALID_PARAM);
	GT_CHECK_EQ("hidden-csr-traps", gt_pmu_csr_traps(hidden), true);
	GT_CHECK_EQ("lcofi-none", gt_irq_count(IRQ_LCOF), 0);
	ovf = csr_read(CSR_SCOUNTOVF);
	GT_CHECK_EQ("scountovf-clear", ovf & (1UL << hidden), 0);
}

static void lcofi_leak(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	(void)f;
	csr_clear(sip, 1UL << IRQ_LCOF);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	const char *h = args ? strstr(args, "hidden=") : NULL;
	unsigned long hidden = h ? strtoul(h + 7, NULL, 0) : 0;

	(void)hartid;
	(void)fdt;
	/* any LCOFI would be taken (and counted) while the rounds run */
	gt_irq_register(IRQ_LCOF, lcofi_leak);
	csr_set(sie, 1UL << IRQ_LCOF);
	csr_set(sstatus, SSTATUS_SIE);
	if (args && strstr(args, "other")) {
		hot_rounds();
		return;
	}
	if (args && strstr(args, "overhead")) {
		/* 400 M instructions through a 3-deep call chain, timed from outside */
		window("overhead", "start");
		for (int i = 0; i < 2000; i++)
			top3(UNIT);
		window("overhead", "end");
		return;
	}
	GT_CHECK_GE("hidden-given", hidden, 3);
	window("hot", "start");
	hot_rounds();
	window("hot", "end");
	hidden_counter(hidden);
	window("hostile", "start");
	hostile_frames();
	window("hostile", "end");
	own_sampling();
}
