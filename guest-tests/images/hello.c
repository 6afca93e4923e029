// SPDX-License-Identifier: BSD-2-Clause
/* hello: greets with its hart count and shuts down cleanly. */
#include "guest-tests/lib/gt.h"

GT_IMAGE("hello");

void gt_main(unsigned long hartid, const void *fdt)
{
	gt_printf("Hello from a pmuvisor guest: hart %lu of %lu, FDT at %p\n", hartid,
		  gt_nr_harts(), fdt);
	GT_CHECK_GE("hart-count", gt_nr_harts(), 1);
}
