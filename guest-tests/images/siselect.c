// SPDX-License-Identifier: BSD-2-Clause
/*
 * siselect: a vCPU's siselect (the hypervisor's vsiselect) is its own, also
 * for a guest without a guest interrupt file (docs/security.md T14): on a
 * host with Ssaia VS-mode reads and writes it whether or not the guest's DT
 * names the extension.
 * Bootargs:
 *   write   for 200 ms writes 0x1a5 to siselect again and again, sleeping 1 ms
 *           between
 *   (none)  the reader: writes 0x70, then for 100 ms (many switches to the
 *           writer on the shared hart) every read must give 0x70
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("siselect");

#define CSR_SISELECT 0x150

void gt_main(unsigned long hartid, const void *fdt)
{
	unsigned long reads = 0, other = 0, v;
	uint64_t end;

	(void)hartid;
	(void)fdt;
	if (gt_arg_has("write")) {
		end = gt_rdtime() + gt_us_to_ticks(200000);
		gt_irq_disable();
		csr_write(sie, SIE_STIE);
		while (gt_rdtime() < end) {
			csr_write(CSR_SISELECT, 0x1a5);
			gt_sbi_set_timer(gt_rdtime() + gt_us_to_ticks(1000));
			gt_wfi();
		}
		csr_write(sie, 0);
		GT_CHECK_EQ("writer-own", csr_read(CSR_SISELECT), 0x1a5);
		gt_exit();
	}
	csr_write(CSR_SISELECT, 0x70);
	end = gt_rdtime() + gt_us_to_ticks(100000);
	while (gt_rdtime() < end) {
		v = csr_read(CSR_SISELECT);
		reads++;
		if (v != 0x70) {
			if (!other)
				gt_printf("siselect: read 0x%lx\n", v);
			other++;
		}
	}
	gt_printf("siselect: %lu reads, %lu of another value\n", reads, other);
	GT_CHECK_GE("reads", reads, 1000);
	GT_CHECK_EQ("siselect-always-own", other, 0);
	gt_exit();
}
