// SPDX-License-Identifier: BSD-2-Clause
/*
 * fault-illegal: with stvec = 0 (no handler) executes an illegal
 * instruction. The hypervisor must stop this guest alone; other guests go on.
 * It prints no TEST lines: the runner checks the hypervisor's stop line.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("fault-illegal");

void gt_main(unsigned long hartid, const void *fdt)
{
	(void)fdt;
	gt_printf("fault-illegal: hart %lu: stvec = 0, executing an illegal instruction\n", hartid);
	gt_irq_disable();
	csr_write(sie, 0);
	csr_write(stvec, 0);
	asm volatile(".4byte 0xffffffff" ::: "memory"); /* reserved (> 32-bit) encoding */
	gt_printf("fault-illegal: still running after the illegal instruction\n");
	gt_sbi_shutdown(true);
}
