// SPDX-License-Identifier: BSD-2-Clause
/* pmu-api: EVENT_GET_INFO, its answers and its errors */
#include "guest-tests/images/pmu-api/pmu-api.h"

/* -------------------------------------------------------- EVENT_GET_INFO */

static struct gt_pmu_event_info ev_info[8] __attribute__((aligned(16)));

void check_event_info(void)
{
	/* cycles and instructions need a hardware counter, TLB events a programmable one */
	const struct {
		unsigned long ev;
		uint32_t supported;
	} want[8] = {
		{EV_CYCLES, hw_mask != 0},     {EV_INSTRET, hw_mask != 0},
		{EV_DTLB_RD, prog_mask != 0},  {EV_DTLB_WR, prog_mask != 0},
		{EV_ITLB_RD, prog_mask != 0},  {0x1234, 0},
		{SBI_PMU_HW_BRANCH_MISSES, 0}, {GT_PMU_EV_FW(SBI_PMU_FW_IPI_SENT), 1},
	};
	unsigned long base = (unsigned long)ev_info, i;
	struct sbi_ret r;

	for (i = 0; i < 8; i++) {
		ev_info[i].event_idx = (uint32_t)want[i].ev;
		ev_info[i].output = 0xdeadbeef;
		ev_info[i].event_data = 0;
	}
	r = gt_pmu_event_get_info(base, 0, 8, 0);
	if (gt_native()) { /* OpenSBI 1.5 implements SBI 2.0: no EVENT_GET_INFO */
		gt_printf("pmu-api: native: event_get_info -> %ld\n", r.error);
		return;
	}
	GT_CHECK_SBI("event-info-ok", r, SBI_SUCCESS);
	for (i = 0; i < 8; i++)
		GT_CHECK_EQ(NAME("event-info-0x%lx", want[i].ev), ev_info[i].output,
			    want[i].supported);
	GT_CHECK_EQ("event-info-idx-untouched", ev_info[2].event_idx, EV_DTLB_RD);
	/* the probes leave every counter free */
	if (ins_set) {
		r = gt_pmu_cfg(0, ins_set, 0, prog_mask ? EV_DTLB_RD : EV_INSTRET, 0);
		GT_CHECK_SBI("event-info-left-counters-free", r, SBI_SUCCESS);
		if (!r.error)
			gt_pmu_release(r.value);
	}

	for (i = 0; i < 8; i++)
		ev_info[i].output = 0xdeadbeef;
	r = gt_pmu_event_get_info(base, 0, 8, 1);
	GT_CHECK_SBI("event-info-flags-invalid", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_event_get_info(base, 0, 0, 0);
	GT_CHECK_SBI("event-info-zero-entries-invalid", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_event_get_info(base + 8, 0, 1, 0);
	GT_CHECK_SBI("event-info-misaligned-invalid", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_event_get_info(0x1000, 0, 1, 0);
	GT_CHECK_SBI("event-info-outside-ram", r, SBI_ERR_INVALID_ADDRESS);
	{
		/* a valid first entry in the last 16 bytes of RAM, the second one past it */
		volatile struct gt_pmu_event_info *last =
			(volatile struct gt_pmu_event_info *)(gt_ram_base() + gt_ram_size() - 16);
		struct gt_pmu_event_info saved = *last;

		last->event_idx = EV_CYCLES;
		last->event_data = 0;
		r = gt_pmu_event_get_info((unsigned long)last, 0, 2, 0);
		*last = saved;
		GT_CHECK_SBI("event-info-past-ram-end", r, SBI_ERR_INVALID_ADDRESS);
	}
	r = gt_pmu_event_get_info(base, 1, 1, 0);
	GT_CHECK_SBI("event-info-hi-invalid-address", r, SBI_ERR_INVALID_ADDRESS);
	ev_info[1].event_idx = 1UL << 20 | 2; /* a reserved bit of event_idx */
	r = gt_pmu_event_get_info(base, 0, 2, 0);
	GT_CHECK_SBI("event-info-reserved-bit-invalid", r, SBI_ERR_INVALID_PARAM);
	GT_CHECK_EQ("event-info-errors-write-nothing", ev_info[0].output, 0xdeadbeef);
	ev_info[1].event_idx = 0x40002; /* type 4: a reserved type, nothing counts it */
	r = gt_pmu_event_get_info(base, 0, 2, 0);
	GT_CHECK_SBI("event-info-reserved-type-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("event-info-reserved-type-zero", ev_info[1].output, 0);
	ev_info[1].event_idx = 0x20001; /* a raw event's code must be 0: a reserved value */
	ev_info[1].output = 0xdeadbeef;
	r = gt_pmu_event_get_info(base, 0, 2, 0);
	GT_CHECK_SBI("event-info-raw-code-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("event-info-raw-code-zero", ev_info[1].output, 0);
	/* event_data counts for types 2, 3 and 15 only: a general or cache event ignores it */
	ev_info[0].event_idx = (uint32_t)EV_INSTRET;
	ev_info[0].event_data = 0x77;
	ev_info[1].event_idx = (uint32_t)EV_DTLB_RD;
	ev_info[1].event_data = ~0ULL;
	ev_info[2].event_idx = (uint32_t)GT_PMU_EV_FW(SBI_PMU_FW_MISALIGNED_LOAD);
	ev_info[2].event_data = 0;
	r = gt_pmu_event_get_info(base, 0, 3, 0);
	GT_CHECK_SBI("event-info-data-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("event-info-general-data-ignored", ev_info[0].output, hw_mask != 0);
	GT_CHECK_EQ("event-info-cache-data-ignored", ev_info[1].output, prog_mask != 0);
	/* a misaligned load goes straight to the guest: offered all the same, it counts 0 */
	GT_CHECK_EQ("event-info-fw-misaligned-load-offered", ev_info[2].output, 1);
}
