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

void gt_main(unsigned long hartid, const void *fdt)
{
	unsigned long n = parse_entries(gt_fdt_getprop("/chosen", "bootargs", NULL));
	unsigned long i, bad = 0, t0, t1;
	struct sbi_ret r;

	(void)hartid;
	(void)fdt;
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
