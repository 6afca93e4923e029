// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-overflow: Sscofpmf for guests. A counter started near the top of its
 * range overflows, the guest takes interrupt 13 (LCOFI), sees the counter's
 * bit in the snapshot overflow bitmap and re-arms it through SBI start;
 * n re-arms give exactly n + 1 interrupts, a sampling period P over a loop
 * of L instructions gives floor(L / P), and nothing arrives for counters
 * that are stopped or were never started. Run under -icount shift=0.
 * With bootargs "no-sscofpmf" (a host CPU without Sscofpmf) it checks that
 * the guest is offered no overflow at all: no sscofpmf in its ISA, counters
 * that wrap raise no interrupt and the snapshot bitmap stays 0, while
 * counting, stopping and the snapshot values still work.
 * With bootargs "dtlb" it runs the DTLB-miss overflow instead, without
 * icount: QEMU aborts ("Raised interrupt while not in I/O function") when a
 * TLB-event counter overflows inside a TLB fill in icount mode, natively too.
 * QEMU counts a DTLB miss per fill of its own TLB, which it flushes on
 * sfence.vma and on every change of V: the workload runs in VS-mode and
 * flushes after each pass, so the number of misses is its own, not a
 * function of how often the hypervisor happens to trap.
 * lcofi-before-timer: an overflow in U-mode and a timer interrupt that
 * become pending together (the timer expired while the hypervisor handled
 * the overflow, or while the vCPU was away) are taken in the order they
 * happened: LCOFI from U-mode. Linux enables interrupts again in its timer
 * handler (softirqs): a late LCOFI there gives a :u sampler a kernel IP.
 * cost-after-overflow: an overflow taken and cleared leaves the SBI calls of
 * the vCPU as cheap as before it (issue 30).
 * lcofie-*: an overflow while sie.LCOFIE is clear stays pending and is taken
 * once LCOFIE is set, as on hardware, on both delivery paths; lcofip-*: on
 * the hvip path sip.LCOFIP reads 1 in the handler, and a handler that
 * returns without clearing it takes the interrupt again (issue 28, item 8).
 * Bootargs word "lcofi-software": the hypervisor delivers LCOFI by software
 * (the configuration's lcofi-injection = "software"), where the guest's
 * sip.LCOFIP cannot show the interrupt (docs/vpmu.md).
 */
#include "guest-tests/images/pmu-overflow/pmu-overflow.h"

GT_IMAGE("pmu-overflow");

uint64_t shmem[512] __attribute__((aligned(4096)));
/* programmable counters: 0 (cycle) and 2 (instret) have no overflow interrupt */
unsigned long prog_mask;

volatile unsigned long nirq, bad_scause, ovf_missing, not_wrapped, stop_errors;
volatile unsigned long rearms_left, rearm_value;
volatile long ctr = -1;
volatile unsigned long lcofi_from_s, timer_irqs;
/* handler entries that found sip.LCOFIP set; entries still to return leaving it set */
volatile unsigned long lcofip_seen, leave_pending;
bool sstc, lcofi_software;

/* Whether a word of the bootargs is w */
static bool has_arg(const char *args, const char *w)
{
	size_t n = __builtin_strlen(w);

	for (const char *p = args; p && *p;) {
		if (!__builtin_strncmp(p, w, n) && (p[n] == ' ' || !p[n]))
			return true;
		p = __builtin_strchr(p, ' ');
		if (p)
			p++;
	}
	return false;
}

void gt_main(unsigned long hartid, const void *fdt)
{
	struct gt_pmu_layout pl;
	struct call_cost fresh;
	const char *args;
	struct sbi_ret r;

	(void)hartid;
	(void)fdt;
	args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	lcofi_software = has_arg(args, "lcofi-software");
	if (has_arg(args, "no-sscofpmf")) {
		gt_pmu_layout(&pl);
		prog_mask = pl.prog_mask;
		r = gt_pmu_snapshot_set((unsigned long)shmem, 0, 0);
		GT_CHECK_SBI("snapshot-set", r, SBI_SUCCESS);
		gt_irq_register(IRQ_LCOF, lcofi_handler);
		no_overflow(pl.hw_mask);
		gt_exit();
	}
	GT_CHECK_EQ("sscofpmf-in-isa", gt_hart_has_ext(0, "sscofpmf"), 1);
	gt_pmu_layout(&pl);
	prog_mask = pl.prog_mask;
	r = gt_pmu_snapshot_set((unsigned long)shmem, 0, 0);
	GT_CHECK_SBI("snapshot-set", r, SBI_SUCCESS);

	gt_irq_register(IRQ_LCOF, lcofi_handler);
	csr_set(sie, SIP_LCOFIP);

	if (has_arg(args, "lower-half")) {
		lower_half_beside_sampler();
		lower_half_pair();
		lower_half_restart();
		gt_exit();
	}
	if (has_arg(args, "dtlb")) {
		counted_first("dtlb-miss", EV_DTLB_RD_MISS);
		overflow_run("dtlb-miss", EV_DTLB_RD_MISS, false, 2, vs_touch, 40, true);
		gt_exit();
	}
	measure_calls(&fresh);
	no_spurious();
	overflow_run("instret-init-value", EV_INSTRUCTIONS, false, 4, gt_pmu_user_loop, 100000,
		     false);
	overflow_run("instret-snapshot", EV_INSTRUCTIONS, true, 4, gt_pmu_user_loop, 100000, false);
	/* 30.5 periods: far from a boundary, so a few instructions between the
	 * wrap and the interrupt cannot change the count */
	sampling(100000, 1524998);
	sstc = gt_hart_has_ext(0, "sstc");
	lcofi_before_timer();
	stale_lcofi();
	lcofie_gates();
	if (!lcofi_software)
		lcofip_stays_pending();
	reset_forgets_overflow();
	lower_half_beside_sampler();
	lower_half_pair();
	lower_half_restart();
	cost_after_overflow(&fresh);
	gt_exit();
}
