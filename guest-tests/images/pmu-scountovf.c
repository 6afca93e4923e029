// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-scountovf: a vCPU's scountovf shows its own counters' overflow bits
 * and no other vCPU's (issue 28, item 10). Two vCPUs of this guest share one
 * hart. vCPU 0 makes instret wrap on a programmable counter a (VS-mode, its
 * interrupt off) and stops it: it reads exactly bit a. vCPU 1, switched in
 * on the same hart, reads 0 while vCPU 0's counter sits there with its
 * overflow flag, then makes cycles wrap on another counter b (never a) and
 * reads exactly bit b. vCPU 0, switched in again, reads exactly bit a; started again from
 * 0 (re-armed), it reads 0. Run on both physical backends: counter
 * delegation, where a VS read of scountovf traps and the hypervisor
 * answers (vpmu_csr_read), and the SBI backend (a CPU without Smcdeleg),
 * where the read does not trap and the hypervisor releases other vCPUs'
 * overflowed counters before one runs (vpmu_vcpu_load).
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("pmu-scountovf");

#define CSR_SCOUNTOVF 0xda0
#define NEAR_TOP      10000UL

static struct gt_pmu_layout pl;
/* the step each vCPU is at: vCPU 0 writes `step`, vCPU 1 answers in `done` */
static volatile unsigned long step, done, a_idx, b_idx = ~0UL;
static volatile unsigned long ovf1_before, ovf1_after;

static unsigned long scountovf(void)
{
	return csr_read(CSR_SCOUNTOVF);
}

/* A counter of mask for event, VS-mode only, wrapped once and stopped: its index */
static long wrap_stopped(unsigned long mask, unsigned long event, const char *name)
{
	long idx = gt_pmu_cfg_idx(0, mask, SBI_PMU_CFG_FLAG_SET_UINH, event);
	char n[64];

	gt_snprintf(n, sizeof(n), "%s-configure", name);
	if (!GT_CHECK_CTR(n, idx, 3))
		return -1;
	gt_snprintf(n, sizeof(n), "%s-start", name);
	GT_CHECK_SBI(
		n,
		gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -NEAR_TOP),
		SBI_SUCCESS);
	gt_pmu_user_loop(NEAR_TOP); /* in VS-mode: 2 * NEAR_TOP instructions, it wraps */
	gt_snprintf(n, sizeof(n), "%s-stop", name);
	GT_CHECK_SBI(n, gt_pmu_stop((unsigned long)idx, 1, 0), SBI_SUCCESS);
	return idx;
}

/* Wait (the hart goes round its vCPUs every 10 ms) until *flag == want */
static void wait_for(volatile unsigned long *flag, unsigned long want)
{
	while (*flag != want)
		gt_cpu_relax();
}

static void vcpu1(unsigned long hartid, unsigned long opaque)
{
	long b;

	(void)hartid;
	(void)opaque;
	wait_for(&step, 1);
	ovf1_before = scountovf();
	b = wrap_stopped(pl.prog_mask & ~(1UL << a_idx), SBI_PMU_HW_CPU_CYCLES, "vcpu1-cycles");
	b_idx = (unsigned long)b;
	ovf1_after = scountovf();
	gt_pmu_release((unsigned long)b);
	done = 1;
	for (;;)
		gt_cpu_relax();
}

void gt_main(unsigned long hartid, const void *fdt)
{
	unsigned long a_bit, ovf;
	long a;

	(void)hartid;
	(void)fdt;
	gt_pmu_layout(&pl);
	if (!GT_CHECK_EQ("sscofpmf-in-isa", gt_hart_has_ext(0, "sscofpmf"), 1))
		gt_exit();
	GT_CHECK_EQ("fresh-reads-0", scountovf(), 0);
	a = wrap_stopped(pl.prog_mask, SBI_PMU_HW_INSTRUCTIONS, "vcpu0-instret");
	if (a < 0)
		gt_exit();
	a_bit = 1UL << a;
	a_idx = (unsigned long)a;
	GT_CHECK_EQ("vcpu0-own-bit", scountovf(), a_bit);
	GT_CHECK_SBI("vcpu1-start", gt_hart_start(1, vcpu1, 0), SBI_SUCCESS);
	step = 1;
	wait_for(&done, 1);
	GT_CHECK_EQ("vcpu1-other-vcpus-bit-hidden", ovf1_before, 0);
	GT_CHECK_CTR("vcpu1-cycles-counter", b_idx, 3);
	GT_CHECK_EQ("vcpu1-cycles-not-on-a", b_idx == a_idx, 0);
	if (b_idx < 64)
		GT_CHECK_EQ("vcpu1-own-bit-only", ovf1_after, 1UL << b_idx);
	ovf = scountovf();
	GT_CHECK_EQ("vcpu0-own-bit-again", ovf, a_bit);
	GT_CHECK_SBI("vcpu0-restart",
		     gt_pmu_start((unsigned long)a, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0),
		     SBI_SUCCESS);
	GT_CHECK_EQ("vcpu0-restart-clears-bit", scountovf(), 0);
	gt_pmu_release((unsigned long)a);
	gt_printf("pmu-scountovf: vcpu 0 counter %ld, vcpu 1 counter %lu, vcpu 0 read 0x%lx\n", a,
		  b_idx, ovf);
	gt_exit();
}
