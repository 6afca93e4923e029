// SPDX-License-Identifier: BSD-2-Clause
/*
 * ipi-flood: a guest that sends SBI IPIs, or remote fences, in a loop to one
 * of its vCPUs that never runs (never started) must not slow the guest that
 * runs on that vCPU's hart: an IPI stays pending for the vCPU, and its hart
 * is interrupted once, not at every call; a fence waits for the vCPU's first
 * load. Two guests; bootargs name the role, times are ms of rdtime since the
 * machine started:
 *   "flooder from=<a> to=<b> min-calls=<n> [rfence]"  vCPU 0 works until a,
 *                  then sends IPIs (rfence: REMOTE_FENCE_I, SFENCE_VMA and
 *                  _ASID in turn) to its vCPU 1 (placed on the other hart,
 *                  never started) until b, at least n of them (each one that
 *                  made the host interrupt that hart cost more)
 *   "victim quiet-from=<a> quiet-to=<b> flood-from=<c> flood-to=<d> min-pct=<p>"
 *                  works in a loop of ~2,000 instructions until d, counts
 *                  its loops in [a, b) and in [c, d), and checks that its
 *                  rate while the other floods is at least p % of its rate
 *                  before
 * Both print their figures and end with TEST DONE.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("ipi-flood");

/* About n instructions of work (2 per iteration) */
static void spin(unsigned long n)
{
	asm volatile("1: addi %0, %0, -2\n\tbgtz %0, 1b" : "+r"(n));
}

static uint64_t at_ms(unsigned long ms)
{
	return gt_us_to_ticks(ms * 1000);
}

static void flood(void)
{
	uint64_t from = at_ms(gt_arg_ul("from=", 0)), to = at_ms(gt_arg_ul("to=", 0));
	bool rfence = gt_arg_has("rfence");
	unsigned long calls = 0, bad = 0;

	GT_CHECK_EQ("flood-starts-before-from", gt_rdtime() < from, 1);
	while (gt_rdtime() < from)
		spin(2000);
	while (gt_rdtime() < to) {
		struct sbi_ret r;

		if (!rfence)
			r = gt_sbi_call(SBI_EXT_IPI, SBI_EXT_IPI_SEND_IPI, 2, 0, 0, 0, 0, 0);
		else /* FENCE_I, SFENCE_VMA, _ASID: the whole space (size -1), ASID 0 */
			r = gt_sbi_call(SBI_EXT_RFENCE, calls % 3, 2, 0, 0, -1UL, 0, 0);
		bad += r.error != SBI_SUCCESS;
		calls++;
	}
	gt_printf("ipi-flood: flood: %lu %s to vCPU 1 in %lu ms\n", calls,
		  rfence ? "remote fences" : "IPIs", gt_ticks_to_us(to - from) / 1000);
	GT_CHECK_EQ("flood-calls-succeed", bad, 0);
	GT_CHECK_GE("flood-calls", calls, gt_arg_ul("min-calls=", 1000));
	gt_exit();
}

static void victim(void)
{
	unsigned long qa = gt_arg_ul("quiet-from=", 0), qb = gt_arg_ul("quiet-to=", 0);
	unsigned long fa = gt_arg_ul("flood-from=", 0), fb = gt_arg_ul("flood-to=", 0);
	unsigned long quiet = 0, flooded = 0, rate_q, rate_f;
	uint64_t t;

	if (!GT_CHECK_EQ("victim-args", qa < qb && qb <= fa && fa < fb, 1))
		gt_exit();
	GT_CHECK_EQ("victim-starts-before-quiet", gt_rdtime() < at_ms(qa), 1);
	while ((t = gt_rdtime()) < at_ms(fb)) {
		spin(2000);
		quiet += t >= at_ms(qa) && t < at_ms(qb);
		flooded += t >= at_ms(fa);
	}
	/* loops per 10 ms */
	rate_q = quiet * 10 / (qb - qa);
	rate_f = flooded * 10 / (fb - fa);
	gt_printf("ipi-flood: victim: %lu loops per 10 ms before the flood, %lu during it\n",
		  rate_q, rate_f);
	GT_CHECK_EQ("victim-ran-before", rate_q > 0, 1);
	GT_CHECK_GE("victim-rate-during-flood-pct", rate_f * 100 / (rate_q ? rate_q : 1),
		    gt_arg_ul("min-pct=", 80));
	gt_exit();
}

void gt_main(unsigned long hartid, const void *fdt)
{
	(void)hartid;
	(void)fdt;
	if (gt_arg_has("victim"))
		victim();
	flood();
}
