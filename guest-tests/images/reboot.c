// SPDX-License-Identifier: BSD-2-Clause
/*
 * reboot: SBI SRST cold and warm reboots of a guest. After each it starts
 * again at its entry with its image loaded again, its vPMU as at its first
 * boot (no counter configured, no snapshot area) and soon: the hypervisor
 * loads the guest again without the exclusive-counting token and without
 * zeroing its RAM (core/vm.c, vm_reboot), so a guest on another hart
 * (excl-fair's neighbour in dts/tests/reboot.dts) is not kept waiting.
 *
 * RAM keeps its contents across a reboot: a record in the first 2 MiB,
 * where nothing is loaded (the image goes 2 MiB into RAM), carries what
 * each boot saw into the next, and the last boot checks it all (a check
 * line printed before a reboot would not be counted by the last boot's
 * TEST DONE line).
 *
 * Boots 1 to 5 each configure a firmware counter and start an instructions
 * counter (under -icount on 2 harts its hart then holds the token), set a
 * snapshot area, change a word of their .data, and ask for a reboot (cold
 * first, then warm); boot 6 checks and shuts down.
 *
 * "loop until=<ms> min-boots=<n>": a reboot loop instead, cold reboots
 * until rdtime passes <ms> ms, then a check of the number of boots.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("reboot");

#define MAGIC	  0x7265626f6f74UL /* "reboot" */
#define BOOTS	  6
#define DATA_INIT 0x1234UL
/* A reboot's start, from the SRST call to the next boot's first check (measured: ~0.2 ms) */
#define MAX_REBOOT_US 5000

struct carry {
	unsigned long magic;
	unsigned long boots;
	unsigned long srst_returned; /* a reboot call that returned: its error */
	uint64_t srst_at;	     /* rdtime at the last SRST call */
	unsigned long reboot_us[BOOTS];
	unsigned long data_seen[BOOTS]; /* `data` as each boot found it */
	long fw_read_err[BOOTS];	/* FW_READ of the counter the boot before configured */
	long stop_snapshot_err[BOOTS];	/* STOP + TAKE_SNAPSHOT of its hardware counter */
	long setup_err[BOOTS];		/* what failed of a boot's set-up (0: nothing) */
	unsigned long fw_idx, hw_idx;	/* the counters the boot before used */
};

static volatile unsigned long data = DATA_INIT;
static uint64_t shmem[512] __attribute__((aligned(4096)));

static volatile struct carry *carry(void)
{
	return (volatile struct carry *)(gt_ram_base() + 0x100000UL);
}

/* Configure and start what a reboot must forget; 0, or the failing step's error */
static long set_up(volatile struct carry *c)
{
	struct gt_pmu_layout pl;
	struct sbi_ret r;
	long idx;

	gt_pmu_layout(&pl);
	idx = gt_pmu_cfg_idx(0, pl.fw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE,
			     GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER));
	if (idx < 0)
		return idx;
	c->fw_idx = (unsigned long)idx;
	idx = gt_pmu_cfg_idx(0, pl.hw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, SBI_PMU_HW_INSTRUCTIONS);
	if (idx < 0)
		return idx;
	c->hw_idx = (unsigned long)idx;
	r = gt_pmu_start(c->hw_idx, 1, 0, 0);
	if (r.error)
		return r.error;
	r = gt_pmu_snapshot_set((unsigned long)shmem, 0, 0);
	return r.error;
}

static void reboot_loop(volatile struct carry *c, unsigned long boots)
{
	if (gt_rdtime() < gt_us_to_ticks(gt_arg_ul("until=", 0) * 1000)) {
		struct sbi_ret r =
			gt_sbi2(SBI_EXT_SRST, SBI_EXT_SRST_RESET, SBI_SRST_RESET_TYPE_COLD_REBOOT,
				SBI_SRST_RESET_REASON_NONE);

		c->srst_returned = (unsigned long)r.error | 1;
	}
	gt_printf("reboot: %lu boots\n", boots);
	GT_CHECK_EQ("srst-no-return", c->srst_returned, 0);
	GT_CHECK_GE("loop-boots", boots, gt_arg_ul("min-boots=", 1));
	c->magic = 0;
	gt_exit();
}

void gt_main(unsigned long hartid, const void *fdt)
{
	volatile struct carry *c = carry();
	unsigned long n;
	struct sbi_ret r;

	(void)hartid;
	(void)fdt;
	if (c->magic != MAGIC) {
		for (unsigned long i = 0; i < sizeof(*c) / sizeof(unsigned long); i++)
			((volatile unsigned long *)c)[i] = 0;
		c->magic = MAGIC;
	}
	n = c->boots++;
	if (gt_arg_has("loop"))
		reboot_loop(c, n + 1);
	c->data_seen[n] = data;
	if (n) {
		c->reboot_us[n] =
			(unsigned long)((gt_rdtime() - c->srst_at) * 1000000 / gt_timebase());
		c->fw_read_err[n] = gt_pmu_fw_read(c->fw_idx).error;
		c->stop_snapshot_err[n] =
			gt_pmu_stop(c->hw_idx, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT).error;
	}
	gt_printf("reboot: boot %lu\n", n + 1);
	if (n + 1 < BOOTS) {
		c->setup_err[n] = set_up(c);
		data = ~DATA_INIT;
		c->srst_at = gt_rdtime();
		r = gt_sbi2(SBI_EXT_SRST, SBI_EXT_SRST_RESET,
			    n ? SBI_SRST_RESET_TYPE_WARM_REBOOT : SBI_SRST_RESET_TYPE_COLD_REBOOT,
			    SBI_SRST_RESET_REASON_NONE);
		c->srst_returned = (unsigned long)r.error | 1;
	}

	GT_CHECK_EQ("srst-no-return", c->srst_returned, 0);
	GT_CHECK_EQ("boots", c->boots, BOOTS);
	for (n = 0; n < BOOTS; n++) {
		GT_CHECK_EQ("data-loaded-again", c->data_seen[n], DATA_INIT);
		if (n + 1 < BOOTS)
			GT_CHECK_EQ("set-up", c->setup_err[n], 0);
		if (!n)
			continue;
		gt_printf("reboot: boot %lu began %lu us after its SRST call\n", n + 1,
			  c->reboot_us[n]);
		GT_CHECK_LE("reboot-us", c->reboot_us[n], MAX_REBOOT_US);
		GT_CHECK_EQ("fw-counter-forgotten", c->fw_read_err[n], SBI_ERR_INVALID_PARAM);
		GT_CHECK_EQ("snapshot-area-forgotten", c->stop_snapshot_err[n], SBI_ERR_NO_SHMEM);
	}
	c->magic = 0;
	gt_exit();
}
