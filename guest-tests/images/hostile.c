// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostile: a guest that misbehaves in the way its bootargs name. The
 * hypervisor must contain it: stop it alone (a fault) or through its
 * watchdog (`watchdog-ms`: no SBI call for that long), with one line saying
 * which guest and why, while the other guests run to completion.
 *   spin       interrupts off (sstatus.SIE = 0, sie = 0), endless loop
 *   wfi        interrupts off, endless WFI
 *   trapstorm  stvec points at an illegal instruction: a trap loop that
 *              never leaves VS-mode
 *   hartstop   its only vCPU stops itself through HSM: never calls SRST
 *   wildjump   jumps to a guest-physical address outside its RAM
 *   mmio       stores to the host UART's address (not mapped for guests)
 *   hvstore    stores past the end of its RAM (where the next guest's or
 *              the hypervisor's memory could be in host-physical space)
 *   longcall   not a fault: EVENT_GET_INFO over all of its (zeroed) RAM,
 *              the longest PMU call a guest can ask for; prints its cost
 *              and exits normally (TEST lines)
 * Modes other than longcall print no TEST lines: the runner checks the
 * hypervisor's stop line (expect-stopped).
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("hostile");

extern char _end[];

static bool mode_is(const char *args, const char *m)
{
	return args && !__builtin_strcmp(args, m);
}

static void longcall(const void *fdt)
{
	unsigned long lo = ((unsigned long)_end + 4095) & ~4095UL;
	unsigned long hi = (unsigned long)fdt & ~4095UL, n = (hi - lo) / 16, worst = 0, total = 0;
	struct sbi_ret r = {0, 0};

	/* all entries but the last well formed (zeroed RAM: event 0): the hypervisor walks them all */
	for (int i = 0; i < 20; i++) {
		uint64_t t = gt_rdtime();

		r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_EVENT_GET_INFO, lo, 0, n + 1, 0, 0, 0);
		t = gt_rdtime() - t;
		total += t;
		if (t > worst)
			worst = t;
	}
	gt_printf("hostile: longcall: EVENT_GET_INFO of %lu entries (the last one the FDT's "
		  "first): error %ld, worst %lu us, mean %lu us\n",
		  n + 1, r.error, worst * 1000000 / gt_timebase(),
		  total * 1000000 / gt_timebase() / 20);
	/* every entry read before the last, whose event_idx (the FDT's magic) has no type */
	GT_CHECK_SBI("longcall-refused", r, SBI_ERR_INVALID_PARAM);
	/* one entry past RAM's end: refused without reading any */
	r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_EVENT_GET_INFO, lo, 0,
			(gt_ram_base() + gt_ram_size() - lo) / 16 + 1, 0, 0, 0);
	GT_CHECK_SBI("longcall-past-ram-end", r, SBI_ERR_INVALID_ADDRESS);
	/* the same, ending inside RAM: succeeds, writes only output words */
	r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_EVENT_GET_INFO, lo, 0, n, 0, 0, 0);
	GT_CHECK_SBI("longcall-whole-ram-ok", r, SBI_SUCCESS);
	/*
	 * Raw events with distinct event_data: nothing can be cached, so the
	 * hypervisor asks the host about every candidate counter of every entry.
	 */
	{
		struct {
			uint32_t idx, out;
			uint64_t data;
		} *e = (void *)lo;
		unsigned long k = 1024;
		uint64_t t;

		for (unsigned long i = 0; i < k; i++) {
			e[i].idx = SBI_PMU_EVENT_TYPE_RAW << 16;
			e[i].out = 0;
			e[i].data = 0x1000 + i;
		}
		t = gt_rdtime();
		r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_EVENT_GET_INFO, lo, 0, k, 0, 0, 0);
		t = gt_rdtime() - t;
		gt_printf(
			"hostile: longcall: EVENT_GET_INFO of %lu distinct raw events: error %ld, "
			"%lu us (%lu us per entry; a guest may ask for %lu entries in one call)\n",
			k, r.error, t * 1000000 / gt_timebase(), t * 1000000 / gt_timebase() / k,
			n);
		GT_CHECK_SBI("longcall-raw-ok", r, SBI_SUCCESS);
	}
	gt_exit();
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);

	gt_printf("hostile: hart %lu: mode '%s'\n", hartid, args ? args : "(none)");
	if (mode_is(args, "longcall"))
		longcall(fdt);
	gt_irq_disable();
	csr_write(sie, 0);
	if (mode_is(args, "spin")) {
		for (;;)
			asm volatile("" ::: "memory");
	} else if (mode_is(args, "wfi")) {
		for (;;)
			gt_wfi();
	} else if (mode_is(args, "trapstorm")) {
		extern char hostile_storm[];

		csr_write(stvec, (unsigned long)hostile_storm);
		asm volatile(".globl hostile_storm\n"
			     ".align 2\n"
			     "hostile_storm:\n"
			     ".4byte 0xffffffff\n" ::
				     : "memory");
	} else if (mode_is(args, "hartstop")) {
		gt_sbi_hart_stop();
	} else if (mode_is(args, "wildjump")) {
		((void (*)(void))0x4000000000UL)();
	} else if (mode_is(args, "mmio")) {
		*(volatile uint32_t *)0x10000000UL = 'X';
	} else if (mode_is(args, "hvstore")) {
		*(volatile uint64_t *)(gt_ram_base() + gt_ram_size()) = 0xbadbadbadUL;
	}
	gt_printf("hostile: mode '%s' was not stopped by the hypervisor\n", args ? args : "");
	gt_sbi_shutdown(true);
}
