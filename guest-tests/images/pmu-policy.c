// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-policy: a guest's PMU policy from the `pmu` subnode of its node in the
 * configuration DT (docs/configuration.md), as the guest sees it through the
 * SBI PMU extension. Virtual counter index = physical index, so NUM_COUNTERS
 * keeps the host's hardware layout (H = highest hardware counter + 1 = 19 on
 * QEMU 10 virt: 16 programmable counters), plus the 22 firmware counters
 * unless `firmware-counters = "off"`. A counter outside `counters-mask` is
 * absent: COUNTER_GET_INFO -> INVALID_PARAM, a counter set naming it ->
 * INVALID_PARAM (like a host hole), its CSR -> illegal instruction. An event
 * in `deny-events`, or missing from a present `riscv,event-to-mhpmcounters`
 * table -> NOT_SUPPORTED; a listed event goes only on counters inside
 * counters-mask & its bitmap. EVENT_GET_INFO reports the same.
 * Under -icount shift=0 the allowed counters count exactly (2n + 4 for a
 * VU-mode loop, see pmu-exact.c).
 *
 * Modes (/chosen/bootargs), each matching one configuration:
 *   "policy"  dts/tests/pmu-policy.dts: counters-mask 0x7f8 (3..10), table
 *             <2 2 0x3f8>, <0x10019 0x10019 0x78>, deny 0x10019, firmware off:
 *             instructions never on counter 10 although counters-mask has it
 *   "lo"      dts/tests/pmu-policy-split.dts guest lo: counters-mask 0x7d (0, 2..6),
 *             no table, firmware on
 *   "hi"      dts/tests/pmu-policy-split.dts guest hi: counters-mask 0x7ff80 (7..18),
 *             table of two ranges <1 2 0x7ff80>, <0x1001b 0x10021 0x600>, firmware
 *             off; lo and hi share one hart and both count exactly.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("pmu-policy");

#define EV_CYCLES	SBI_PMU_HW_CPU_CYCLES
#define EV_INSTRUCTIONS SBI_PMU_HW_INSTRUCTIONS
#define EV_DTLB_RD	0x10019UL
#define EV_DTLB_WR	0x1001bUL
#define EV_ITLB		0x10021UL
#define SINH		SBI_PMU_CFG_FLAG_SET_SINH
#define CLEAR		SBI_PMU_CFG_FLAG_CLEAR_VALUE
#define HOST_HW		19 /* QEMU 10 virt: counters 0..18 (1 = time is not a counter) */
#define NUM_FW		22

#define NAME(...)                                                                                  \
	({                                                                                         \
		static char __b[80];                                                               \
		gt_snprintf(__b, sizeof(__b), __VA_ARGS__);                                        \
		__b;                                                                               \
	})

static uint32_t allowed; /* counters-mask of this mode */

#define VU(n) GT_PMU_USER_LOOP_COUNT(n)

/* NUM_COUNTERS and COUNTER_GET_INFO of every index: only the allowed ones exist */
static void check_layout(bool fw_on)
{
	struct sbi_ret r = gt_pmu_num_counters();
	unsigned long wrong_hw = 0, wrong_fw = 0;

	GT_CHECK_SBI("num-counters-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("num-counters", r.value, fw_on ? HOST_HW + NUM_FW : HOST_HW);
	for (unsigned long i = 0; i < HOST_HW; i++) {
		struct sbi_ret info = gt_pmu_counter_info(i);
		bool want = (allowed >> i) & 1;

		if (want) {
			GT_CHECK_SBI(NAME("get-info-allowed-%lu", i), info, SBI_SUCCESS);
			GT_CHECK_EQ(NAME("get-info-csr-%lu", i),
				    info.value & (SBI_PMU_CTR_INFO_FW | 0xfff), 0xc00 + i);
		} else if (info.error != SBI_ERR_INVALID_PARAM) {
			gt_printf("get-info %lu outside counters-mask: error %ld value 0x%lx\n", i,
				  info.error, info.value);
			wrong_hw++;
		}
	}
	GT_CHECK_EQ("get-info-outside-mask-invalid", wrong_hw, 0);
	for (unsigned long i = HOST_HW; i < HOST_HW + NUM_FW + 2; i++) {
		struct sbi_ret info = gt_pmu_counter_info(i);
		bool want = fw_on && i < HOST_HW + NUM_FW;

		if (want ? info.error || !(info.value & SBI_PMU_CTR_INFO_FW)
			 : info.error != SBI_ERR_INVALID_PARAM)
			wrong_fw++;
	}
	GT_CHECK_EQ(fw_on ? "get-info-fw-present" : "get-info-fw-absent", wrong_fw, 0);
	/* counters outside the mask: their CSRs are never readable */
	wrong_hw = 0;
	for (unsigned long i = 0; i < HOST_HW; i++)
		if (i != 1 && !((allowed >> i) & 1) && !gt_pmu_csr_traps(i))
			wrong_hw++;
	GT_CHECK_EQ("csr-outside-mask-traps", wrong_hw, 0);
}

/* config_matching over every allowed counter until none is left */
static void check_fill(const char *what, unsigned long event, uint32_t expect_mask)
{
	uint32_t got = 0;
	unsigned int n = __builtin_popcount(expect_mask), k;
	long idx = 0;

	/* started, so that they are busy: a stopped counter may be matched again */
	for (k = 0; k <= n; k++) {
		idx = gt_pmu_cfg_idx(0, allowed, CLEAR | SBI_PMU_CFG_FLAG_AUTO_START, event);
		if (idx < 0)
			break;
		if (idx >= 32 || (got >> idx) & 1)
			break;
		got |= 1U << idx;
	}
	GT_CHECK_EQ(NAME("%s-fills-exactly-allowed-counters", what), got, expect_mask);
	GT_CHECK_EQ(NAME("%s-then-not-supported", what), idx, SBI_ERR_NOT_SUPPORTED);
	for (k = 0; k < 32; k++)
		if ((got >> k) & 1)
			gt_pmu_release(k);
}

/* one counter for event over the allowed set, a VU loop, exact */
static void check_exact(const char *what, unsigned long event, uint32_t expect_mask,
			unsigned long n)
{
	long idx = gt_pmu_cfg_idx(0, allowed, CLEAR | SINH, event);

	GT_CHECK_EQ(NAME("%s-cfg-inside-allowed", what), idx >= 0 && ((expect_mask >> idx) & 1), 1);
	if (idx < 0)
		return;
	GT_CHECK_EQ(NAME("%s-start", what), gt_pmu_start((unsigned long)idx, 1, 0, 0).error, 0);
	gt_run_user(gt_pmu_user_loop, n);
	gt_pmu_stop((unsigned long)idx, 1, 0);
	GT_CHECK_EQ(NAME("%s-exact-%lu", what, n), gt_pmu_read_csr((unsigned long)idx), VU(n));
	gt_pmu_release((unsigned long)idx);
}

static struct gt_pmu_event_info ev_info[6] __attribute__((aligned(16)));

static void check_event_info(const unsigned long *ev, const uint32_t *want, unsigned int n)
{
	struct sbi_ret r;

	for (unsigned int i = 0; i < n; i++) {
		ev_info[i].event_idx = (uint32_t)ev[i];
		ev_info[i].output = 0xdeadbeef;
		ev_info[i].event_data = 0;
	}
	r = gt_pmu_event_get_info((unsigned long)ev_info, 0, n, 0);
	GT_CHECK_SBI("event-info-ok", r, SBI_SUCCESS);
	for (unsigned int i = 0; i < n; i++)
		GT_CHECK_EQ(NAME("event-info-0x%lx", ev[i]), ev_info[i].output, want[i]);
}

static void mode_policy(void)
{
	static const unsigned long ev[] = {EV_INSTRUCTIONS, EV_CYCLES, EV_DTLB_RD, EV_DTLB_WR,
					   GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER)};
	static const uint32_t sup[] = {1, 0, 0, 0, 0};
	long r;

	allowed = 0x7f8;
	check_layout(false);
	/* instructions: table <2 2 0x3f8> & mask 0x7f8; never counter 2 nor 10 */
	check_fill("instret", EV_INSTRUCTIONS, 0x3f8);
	/* cycles: not in the table */
	GT_CHECK_EQ("cycles-not-in-table", gt_pmu_cfg_idx(0, allowed, 0, EV_CYCLES),
		    SBI_ERR_NOT_SUPPORTED);
	/* DTLB read miss: in the table (0x78), but denied: deny wins */
	GT_CHECK_EQ("dtlb-read-denied", gt_pmu_cfg_idx(0, allowed, 0, EV_DTLB_RD),
		    SBI_ERR_NOT_SUPPORTED);
	GT_CHECK_EQ("dtlb-read-denied-on-listed-counter", gt_pmu_cfg_idx(3, 1, 0, EV_DTLB_RD),
		    SBI_ERR_NOT_SUPPORTED);
	GT_CHECK_EQ("dtlb-write-not-in-table", gt_pmu_cfg_idx(0, allowed, 0, EV_DTLB_WR),
		    SBI_ERR_NOT_SUPPORTED);
	GT_CHECK_EQ("itlb-not-in-table", gt_pmu_cfg_idx(0, allowed, 0, EV_ITLB),
		    SBI_ERR_NOT_SUPPORTED);
	GT_CHECK_EQ("fw-event-no-fw-counters",
		    gt_pmu_cfg_idx(0, allowed, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER)),
		    SBI_ERR_NOT_SUPPORTED);
	/* sets naming a counter outside counters-mask */
	GT_CHECK_EQ("set-with-counter-2-invalid", gt_pmu_cfg_idx(0, 0x4, 0, EV_INSTRUCTIONS),
		    SBI_ERR_INVALID_PARAM);
	GT_CHECK_EQ("set-with-counter-0-invalid", gt_pmu_cfg_idx(0, 0x1, 0, EV_CYCLES),
		    SBI_ERR_INVALID_PARAM);
	GT_CHECK_EQ("set-with-counter-11-invalid", gt_pmu_cfg_idx(3, 0x1ff, 0, EV_INSTRUCTIONS),
		    SBI_ERR_INVALID_PARAM);
	GT_CHECK_EQ("set-fw-index-invalid",
		    gt_pmu_cfg_idx(HOST_HW, 1, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER)),
		    SBI_ERR_INVALID_PARAM);
	GT_CHECK_EQ("fw-read-fw-index-invalid", gt_pmu_fw_read(HOST_HW).error,
		    SBI_ERR_INVALID_PARAM);
	/* SKIP_MATCH picks exactly the named counter, inside the policy only */
	r = gt_pmu_cfg_idx(9, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH | CLEAR, EV_INSTRUCTIONS);
	GT_CHECK_EQ("skip-match-allowed-counter", r, 9);
	if (r == 9)
		gt_pmu_release(9);
	/* counter 10: inside counters-mask, outside instructions' bitmap */
	r = gt_pmu_cfg_idx(10, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH | CLEAR, EV_INSTRUCTIONS);
	GT_CHECK_EQ("skip-match-outside-event-bitmap", r, SBI_ERR_NOT_SUPPORTED);
	if (r == 10)
		gt_pmu_release(10);
	GT_CHECK_EQ("skip-match-counter-11-invalid",
		    gt_pmu_cfg_idx(11, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTRUCTIONS),
		    SBI_ERR_INVALID_PARAM);
	check_exact("instret", EV_INSTRUCTIONS, 0x3f8, 3000000);
	check_event_info(ev, sup, 5);
}

/* lo and hi share hart 0 (-smp 1) and each counts exactly, long enough for many slices */
static void mode_split(bool lo)
{
	uint32_t prog = allowed & ~7U;

	check_layout(lo);
	check_fill("instret", EV_INSTRUCTIONS, lo ? allowed & ~1U : prog);
	/* cycles: all of lo's counters that count cycles; hi has no counter 0 */
	check_fill("cycles", EV_CYCLES, lo ? 1U | prog : prog);
	for (int round = 0; round < 3; round++) {
		check_exact(NAME("instret-r%d", round), EV_INSTRUCTIONS, prog,
			    lo ? 9000001 + round : 7000003 + round);
		/* both on a programmable counter: exact although they evict each other */
		check_exact(NAME("cycles-r%d", round), EV_CYCLES, prog,
			    lo ? 6000007 + round : 8000009 + round);
	}
	if (lo) { /* firmware counters on (the default): the first one is index 19 */
		long f = gt_pmu_cfg_idx(HOST_HW, 1, CLEAR, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER));

		GT_CHECK_EQ("fw-counter-cfg", f, HOST_HW);
		if (f == HOST_HW)
			gt_pmu_release(HOST_HW);
	} else {
		/* both ends of the rule <0x1001b 0x10021 0x600>, on its counters only */
		check_fill("range-first-dtlb-write", EV_DTLB_WR, 0x600);
		check_fill("range-last-itlb", EV_ITLB, 0x600);
		GT_CHECK_EQ("range-outside-not-in-table", gt_pmu_cfg_idx(0, allowed, 0, EV_DTLB_RD),
			    SBI_ERR_NOT_SUPPORTED);
		GT_CHECK_EQ("fw-event-no-fw-counters",
			    gt_pmu_cfg_idx(0, allowed, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER)),
			    SBI_ERR_NOT_SUPPORTED);
	}
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);

	(void)hartid;
	(void)fdt;
	if (gt_native()) {
		gt_printf("pmu-policy: needs pmuvisor (a guest policy), nothing to do natively\n");
		gt_exit();
	}
	if (args && !__builtin_strcmp(args, "policy")) {
		mode_policy();
	} else if (args && !__builtin_strcmp(args, "lo")) {
		allowed = 0x7d;
		mode_split(true);
	} else if (args && !__builtin_strcmp(args, "hi")) {
		allowed = 0x7ff80;
		mode_split(false);
	} else {
		GT_CHECK_EQ("known-bootargs", 0, 1);
	}
	gt_exit();
}
