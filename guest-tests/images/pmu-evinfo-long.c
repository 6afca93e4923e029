// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-evinfo-long: one SBI PMU EVENT_GET_INFO call with many entries, as a
 * hostile or careless guest may make. The hypervisor answers it in slices
 * (the guest's ecall is re-executed until the call is done) so that the
 * other vCPUs of the hart keep running; this image checks the answers:
 * general events from the host's table, cache events, and many raw events
 * (one host probe each: QEMU knows none, so all are unsupported).
 * Run beside a guest with a short watchdog-ms on the same hart.
 * bootargs: "entries=<n>" (default 65536).
 * bootargs "slice entries=<n>" (2 vCPUs on one hart, -icount): n raw events
 * the host refuses, all different (16 host probes each), while vCPU 1
 * measures the longest time it waits for the hart during the call: one
 * slice of the call, which must stay within docs/security.md's figure,
 * about 0.5 M instructions (5,000 ticks of 100 instructions).
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("pmu-evinfo-long");

#define MAX_ENTRIES (1UL << 17)
static struct gt_pmu_event_info info[MAX_ENTRIES] __attribute__((aligned(16)));

static unsigned long parse_entries(const char *args)
{
	unsigned long n = 0;
	const char *p = args ? __builtin_strstr(args, "entries=") : NULL;

	if (!p)
		return 65536;
	for (p += 8; *p >= '0' && *p <= '9'; p++)
		n = n * 10 + (unsigned long)(*p - '0');
	return n && n <= MAX_ENTRIES ? n : 65536;
}

#define SLICE_BOUND_TICKS 5000

/* 0 before the call, 1 during it, 2 after; the longest wait vCPU 1 saw during it */
static volatile unsigned long in_call, longest_gap, gaps;

static void gap_meter(unsigned long hartid, unsigned long opaque)
{
	unsigned long last = gt_rdtime(), t;

	(void)hartid;
	(void)opaque;
	while (in_call != 2) {
		t = gt_rdtime();
		if (in_call == 1 && t - last > 100) { /* the hart went to the other vCPU */
			gaps++;
			if (t - last > longest_gap)
				longest_gap = t - last;
		}
		last = t;
	}
}

static void slice(unsigned long n)
{
	unsigned long i, bad = 0;
	struct sbi_ret r;

	for (i = 0; i < n; i++)
		info[i] = (struct gt_pmu_event_info){0x20000, 7, 0x10000 + i};
	GT_CHECK_SBI("slice-meter-start", gt_hart_start(1, gap_meter, 0), SBI_SUCCESS);
	in_call = 1;
	r = gt_pmu_event_get_info((unsigned long)info, 0, n, 0);
	in_call = 2;
	GT_CHECK_SBI("slice-ok", r, SBI_SUCCESS);
	for (i = 0; i < n; i++)
		if (info[i].output != 0)
			bad++;
	GT_CHECK_EQ("slice-every-answer", bad, 0);
	GT_CHECK_GE("slice-several-slices", gaps, 4);
	GT_CHECK_LE("slice-longest-within-bound", longest_gap, SLICE_BOUND_TICKS);
	gt_printf("pmu-evinfo-long: %lu entries, %lu waits of the other vCPU, longest %lu ticks\n",
		  n, gaps, longest_gap);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	unsigned long n = parse_entries(args);
	unsigned long i, bad = 0, t0, t1;
	struct sbi_ret r;

	(void)hartid;
	(void)fdt;
	if (args && !__builtin_strncmp(args, "slice", 5)) {
		slice(n);
		gt_exit();
	}
	for (i = 0; i < n; i++) {
		switch (i % 4) {
		case 0: /* instructions: counted */
			info[i] = (struct gt_pmu_event_info){0x2, 7, 0};
			break;
		case 1: /* DTLB read miss: counted */
			info[i] = (struct gt_pmu_event_info){0x10019, 7, 0};
			break;
		default: /* raw events, all different: QEMU has none */
			info[i] = (struct gt_pmu_event_info){0x20000, 7, 0x10000 + i};
			break;
		}
	}
	t0 = gt_rdtime();
	r = gt_pmu_event_get_info((unsigned long)info, 0, n, 0);
	t1 = gt_rdtime();
	GT_CHECK_SBI("evinfo-long-ok", r, SBI_SUCCESS);
	for (i = 0; i < n; i++)
		if (info[i].output != (i % 4 < 2 ? 1U : 0U))
			bad++;
	GT_CHECK_EQ("evinfo-long-every-answer", bad, 0);
	gt_printf("pmu-evinfo-long: %lu entries answered in %lu ticks\n", n, t1 - t0);
	gt_exit();
}
