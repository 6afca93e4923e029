// SPDX-License-Identifier: BSD-2-Clause
/*
 * fault-gpa: loads from a guest-physical address outside guest RAM and
 * every device (256 GiB). The hypervisor must stop this guest alone.
 * It prints no TEST lines: the runner checks the hypervisor's stop line.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("fault-gpa");

#define UNMAPPED_GPA 0x4000000000UL

void gt_main(unsigned long hartid, const void *fdt)
{
	unsigned long v;

	(void)fdt;
	gt_printf("fault-gpa: hart %lu: loading from unmapped guest-physical 0x%lx\n", hartid,
		  UNMAPPED_GPA);
	v = *(volatile unsigned long *)UNMAPPED_GPA;
	/* only reached if the hypervisor let the load complete */
	gt_printf("fault-gpa: load returned 0x%lx\n", v);
	gt_sbi_shutdown(true);
}
