// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-api: the SBI PMU extension function by function, as a guest sees it:
 * NUM_COUNTERS and COUNTER_GET_INFO for every index, CFG_MATCH with every
 * flag and every invalid counter set and event type, START/STOP with their
 * flags and state errors, FW_READ/FW_READ_HI errors, EVENT_GET_INFO, and
 * the counter CSRs themselves: an unconfigured counter read is an illegal
 * instruction, a configured one reads its value (directly or emulated), a
 * write is always illegal, and U-mode reads obey scounteren.
 *
 * Counter sets are built from COUNTER_GET_INFO like Linux does. Values are
 * exact where nothing can count: a counter configured with every inhibit
 * flag holds exactly its initial value. Checks where OpenSBI 1.5 (run
 * without the hypervisor) is documented to diverge from the spec
 * (docs/vpmu.md, platform.md) are skipped under gt_native(), with the
 * native result printed.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("pmu-api");

/*
 * SANE: the `*-sane` upper bounds hold under the hypervisor's test config,
 * which runs QEMU with -icount shift=0 (exact instret). The native command
 * (guest-tests/README.md) has no -icount, where QEMU's instret follows host
 * time, so they are skipped natively; the lower bounds hold in both.
 */

#define EV_CYCLES  SBI_PMU_HW_CPU_CYCLES
#define EV_INSTRET SBI_PMU_HW_INSTRUCTIONS
#define EV_DTLB_RD 0x10019UL /* cache: DTLB read miss */
#define EV_DTLB_WR 0x1001bUL
#define EV_ITLB_RD 0x10021UL

static unsigned long num;	/* NUM_COUNTERS */
static unsigned long hw_mask;	/* hardware counters (COUNTER_GET_INFO, type 0) */
static unsigned long prog_mask; /* hardware counters 3.. */
static unsigned long fw_first, nfw;
static unsigned long info[64];
static char nm[80];

#define NAME(...) (gt_snprintf(nm, sizeof(nm), __VA_ARGS__), nm)

static void spin(unsigned long n)
{
	asm volatile("1: addi %0, %0, -1\n bnez %0, 1b" : "+r"(n)::"memory");
}

static unsigned long lowest(unsigned long mask)
{
	return mask ? (unsigned long)__builtin_ctzl(mask) : ~0UL;
}

/* ---------------------------------------------------------------- layout */
static void check_layout(void)
{
	struct sbi_ret r;
	unsigned long i, last_hw = 0;

	GT_CHECK_NE("probe-pmu", gt_sbi_probe(SBI_EXT_PMU), 0);
	r = gt_pmu_num_counters();
	GT_CHECK_SBI("num-counters-ok", r, SBI_SUCCESS);
	GT_CHECK_LE("num-counters-lt-64", r.value, 63);
	GT_CHECK_GE("num-counters-ge-3", r.value, 3);
	num = r.value < 64 ? r.value : 63;
	gt_printf("pmu-api: %lu counters\n", num);

	fw_first = ~0UL;
	for (i = 0; i < num; i++) {
		r = gt_pmu_counter_info(i);
		if (i == 1) {
			GT_CHECK_SBI("info-1-time-invalid", r, SBI_ERR_INVALID_PARAM);
			continue;
		}
		if (r.error) {
			gt_printf("pmu-api: counter %lu: error %ld\n", i, r.error);
			continue;
		}
		info[i] = r.value;
		if (r.value & SBI_PMU_CTR_INFO_FW) {
			GT_CHECK_BITS(NAME("info-%lu-fw-64bit", i), r.value,
				      SBI_PMU_CTR_INFO_FW | (0x3fUL << 12),
				      SBI_PMU_CTR_INFO_FW | (63UL << 12));
			if (fw_first == ~0UL)
				fw_first = i;
			nfw++;
			continue;
		}
		hw_mask |= 1UL << i;
		if (i >= 3)
			prog_mask |= 1UL << i;
		last_hw = i;
		GT_CHECK_EQ(NAME("info-%lu-csr", i), SBI_PMU_CTR_INFO_CSR(r.value), 0xc00 + i);
		/* QEMU's counters are all 64 bits wide: width field 63 */
		GT_CHECK_EQ(NAME("info-%lu-width", i), SBI_PMU_CTR_INFO_WIDTH(r.value), 63);
	}
	{
		/* bootargs "firmware-only": a host that can filter no counter by mode */
		const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);

		if (args && !__builtin_strcmp(args, "firmware-only"))
			GT_CHECK_EQ("hw-none-unfiltered", hw_mask, 0);
		else
			GT_CHECK_BITS("hw-has-cycle-instret", hw_mask, 5, 5);
	}
	/*
	 * Without Sscofpmf the host cannot keep the hypervisor out of its
	 * programmable counters (OpenSBI sets their inhibit bits only with it):
	 * pmuvisor offers none then (docs/vpmu.md).
	 */
	if (gt_hart_has_ext(0, "sscofpmf") || gt_native())
		GT_CHECK_NE("hw-has-programmable", prog_mask, 0);
	else
		GT_CHECK_EQ("hw-no-unfiltered-programmable", prog_mask, 0);
	GT_CHECK_GE("fw-counters-after-hw", fw_first, last_hw + 1);
	GT_CHECK_EQ("fw-counters-contiguous-to-end", fw_first + nfw, num);
	if (gt_native()) /* OpenSBI 1.5 has 16 firmware counters */
		gt_printf("pmu-api: native: %lu firmware counters\n", nfw);
	else
		GT_CHECK_EQ("fw-counters-22", nfw, SBI_PMU_FW_MAX);
	r = gt_pmu_counter_info(num);
	GT_CHECK_SBI("info-num-invalid", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_counter_info(64);
	GT_CHECK_SBI("info-64-invalid", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_counter_info(~0UL);
	GT_CHECK_SBI("info-all-ones-invalid", r, SBI_ERR_INVALID_PARAM);
}

/* --------------------------------------------------- counter CSRs, before */
static void check_unconfigured_csrs(void)
{
	uint64_t t0, t1;

	if (gt_native()) {
		/* OpenSBI leaves mcounteren open: an unconfigured counter just reads */
		gt_printf("pmu-api: native: unconfigured hpmcounter5 reads 0x%lx\n",
			  csr_read(0xc05));
	} else {
		gt_expect_trap(EXC_ILLEGAL_INSN);
		(void)csr_read(0xc05);
		GT_CHECK_EQ("csr-unconfigured-hpmcounter5-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
		gt_expect_trap(EXC_ILLEGAL_INSN);
		(void)csr_read(cycle);
		GT_CHECK_EQ("csr-unconfigured-cycle-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
		gt_expect_trap(EXC_ILLEGAL_INSN);
		(void)csr_read(instret);
		GT_CHECK_EQ("csr-unconfigured-instret-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
		/* beyond the host's counters (QEMU has 3..18) */
		gt_expect_trap(EXC_ILLEGAL_INSN);
		(void)csr_read(0xc1f);
		GT_CHECK_EQ("csr-hpmcounter31-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	}
	/* time is not a PMU counter: always readable */
	gt_expect_trap(EXC_ILLEGAL_INSN);
	t0 = gt_rdtime();
	spin(1000);
	t1 = gt_rdtime();
	GT_CHECK_EQ("csr-time-no-trap", gt_trapped(), -1L);
	GT_CHECK_GE("csr-time-advances", t1 - t0, 1);
}

/* ------------------------------------------------------------ CFG_MATCH */
static void check_cfg_errors(void)
{
	struct sbi_ret r;
	unsigned long p = lowest(prog_mask);

	/* reserved flag bits 8..63 */
	r = gt_pmu_cfg(0, prog_mask, 1UL << 8, EV_INSTRET, 0);
	if (gt_native()) {
		gt_printf("pmu-api: native: cfg flag bit 8 -> %ld\n", r.error);
		if (!r.error)
			gt_pmu_release(r.value);
	} else {
		GT_CHECK_SBI("cfg-reserved-flag-8", r, SBI_ERR_INVALID_PARAM);
		r = gt_pmu_cfg(0, prog_mask, 1UL << 63, EV_INSTRET, 0);
		GT_CHECK_SBI("cfg-reserved-flag-63", r, SBI_ERR_INVALID_PARAM);
	}

	/* invalid counter sets */
	r = gt_pmu_cfg(0, 0, 0, EV_INSTRET, 0);
	if (gt_native()) /* OpenSBI: an empty set finds no counter */
		gt_printf("pmu-api: native: cfg mask 0 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-mask-0", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(0, hw_mask | (1UL << num), 0, EV_INSTRET, 0);
	GT_CHECK_SBI("cfg-mask-past-last", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(num - 1, 1UL | (1UL << 63), 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("cfg-base-plus-bit63", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(~0UL, 2, 0, EV_INSTRET, 0); /* base + 1 wraps to 0 */
	if (gt_native())
		gt_printf("pmu-api: native: cfg base ~0 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-base-wraps", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(num, 1, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("cfg-base-eq-num", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(num + 5, 1, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("cfg-base-gt-num", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_cfg(1, 1, 0, EV_CYCLES, 0);
	if (gt_native())
		gt_printf("pmu-api: native: cfg on counter 1 (time) -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-counter-1-time", r, SBI_ERR_INVALID_PARAM);

	/* events nobody counts */
	r = gt_pmu_cfg(0, hw_mask, 0, 0x1234, 0);
	if (gt_native()) /* platform.md: OpenSBI 1.5 answers INVALID_PARAM */
		gt_printf("pmu-api: native: event 0x1234 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-event-0x1234", r, SBI_ERR_NOT_SUPPORTED);
	r = gt_pmu_cfg(0, hw_mask, 0, SBI_PMU_HW_BRANCH_MISSES, 0);
	GT_CHECK_SBI("cfg-hw-branch-misses-unsupported", r, SBI_ERR_NOT_SUPPORTED);
	r = gt_pmu_cfg(0, hw_mask, 0, 0x10000 | (7 << 3), 0); /* cache id 7 is reserved */
	if (gt_native())
		gt_printf("pmu-api: native: cache id 7 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-cache-reserved-id", r, SBI_ERR_NOT_SUPPORTED);
	r = gt_pmu_cfg(0, ((1UL << nfw) - 1) << fw_first, 0, GT_PMU_EV_FW(SBI_PMU_FW_MAX), 0);
	if (gt_native())
		gt_printf("pmu-api: native: fw event 22 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-fw-event-22", r, SBI_ERR_NOT_SUPPORTED);
	/* pmuvisor defines no platform firmware events (docs/vpmu.md) */
	r = gt_pmu_cfg(0, ((1UL << nfw) - 1) << fw_first, 0, GT_PMU_EV_FW(SBI_PMU_FW_PLATFORM),
		       0x1);
	if (gt_native()) {
		gt_printf("pmu-api: native: fw platform event -> %ld\n", r.error);
		if (!r.error)
			gt_pmu_release(r.value);
	} else {
		GT_CHECK_SBI("cfg-fw-platform-unsupported", r, SBI_ERR_NOT_SUPPORTED);
	}
	r = gt_pmu_cfg(0, hw_mask, 0, 0x40002, 0); /* type 4 */
	if (gt_native())
		gt_printf("pmu-api: native: event type 4 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-event-type-4", r, SBI_ERR_NOT_SUPPORTED);
	/* raw events with reserved event_data bits */
	r = gt_pmu_cfg(0, prog_mask, 0, 0x20000, 1UL << 48);
	if (gt_native())
		gt_printf("pmu-api: native: raw data bit 48 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-raw-data-bit48", r, SBI_ERR_NOT_SUPPORTED);
	/* SBI v3.0: raw event v2 data is event_data[55:0]; bits 56.. are reserved */
	r = gt_pmu_cfg(0, prog_mask, 0, 0x30000, 1UL << 56);
	if (gt_native())
		gt_printf("pmu-api: native: raw v2 data bit 56 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-raw-v2-data-bit56", r, SBI_ERR_NOT_SUPPORTED);
	(void)p;
}

/* The raw event types: whatever the host says, never INVALID_PARAM; a raw v2 event with
 * all 56 data bits reaches the host untouched (pmuvisor mirrors the host's answer). */
static void check_cfg_raw(void)
{
	struct sbi_ret r1, r2, r3;

	r1 = gt_pmu_cfg(0, prog_mask, 0, 0x20000, 0x12);
	r2 = gt_pmu_cfg(0, prog_mask, 0, 0x30000, (1UL << 55) | (1UL << 54) | 0x12);
	r3 = gt_pmu_cfg(0, prog_mask, 0, 0x30000, 0x12);
	gt_printf("pmu-api: raw 0x12 -> %ld/%lu, raw v2 bits 55+54 -> %ld/%lu, raw v2 0x12 -> "
		  "%ld/%lu\n",
		  r1.error, r1.value, r2.error, r2.value, r3.error, r3.value);
	GT_CHECK_NE("cfg-raw-not-invalid", r1.error, SBI_ERR_INVALID_PARAM);
	if (gt_native()) /* OpenSBI 1.5 implements SBI 2.0: no raw v2 type */
		gt_printf("pmu-api: native: raw v2 -> %ld\n", r2.error);
	else
		GT_CHECK_NE("cfg-raw-v2-56bit-not-invalid", r2.error, SBI_ERR_INVALID_PARAM);
	if (!r1.error)
		GT_CHECK_BITS("cfg-raw-on-programmable", 1UL << r1.value, prog_mask,
			      1UL << r1.value);
	if (!r2.error)
		GT_CHECK_BITS("cfg-raw-v2-on-programmable", 1UL << r2.value, prog_mask,
			      1UL << r2.value);
	/* the same raw v2 event with and without bits 54/55 gets the same answer only if the
	 * bits are passed on; just require both answers be SUCCESS or NOT_SUPPORTED */
	if (!gt_native())
		GT_CHECK_EQ("cfg-raw-v2-answer-kind",
			    r3.error == SBI_SUCCESS || r3.error == SBI_ERR_NOT_SUPPORTED, 1);
	if (!r1.error)
		gt_pmu_release(r1.value);
	if (!r2.error)
		gt_pmu_release(r2.value);
	if (!r3.error)
		gt_pmu_release(r3.value);
}

static void check_cfg_events(void)
{
	struct sbi_ret r;
	unsigned long idx, n, v0, v1, i;

	/*
	 * type 0: cycles go to a programmable counter (it can overflow: cycles
	 * can be sampled), like OpenSBI natively (which picks the last one)
	 */
	r = gt_pmu_cfg(0, hw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_CYCLES, 0);
	GT_CHECK_SBI("cfg-cycles-ok", r, SBI_SUCCESS);
	if (gt_native())
		gt_printf("pmu-api: native: cycles -> counter %lu\n", r.value);
	GT_CHECK_BITS("cfg-cycles-programmable", 1UL << r.value, prog_mask, 1UL << r.value);
	if (!r.error)
		gt_pmu_release(r.value);
	/* type 0: instructions, a programmable counter when one is in the set */
	r = gt_pmu_cfg(0, prog_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET, 0);
	GT_CHECK_SBI("cfg-instret-ok", r, SBI_SUCCESS);
	GT_CHECK_BITS("cfg-instret-in-set", 1UL << r.value, prog_mask, 1UL << r.value);
	if (!r.error)
		gt_pmu_release(r.value);
	r = gt_pmu_cfg(2, 1, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET, 0);
	GT_CHECK_SBI("cfg-instret-fixed-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("cfg-instret-fixed-counter-2", r.value, 2);
	if (!r.error)
		gt_pmu_release(r.value);
	/* type 1: the three TLB events QEMU counts, on programmable counters */
	{
		static const unsigned long ev[] = {EV_DTLB_RD, EV_DTLB_WR, EV_ITLB_RD};

		for (i = 0; i < 3; i++) {
			r = gt_pmu_cfg(0, hw_mask, 0, ev[i], 0);
			GT_CHECK_SBI(NAME("cfg-cache-0x%lx-ok", ev[i]), r, SBI_SUCCESS);
			GT_CHECK_BITS(NAME("cfg-cache-0x%lx-programmable", ev[i]), 1UL << r.value,
				      prog_mask, 1UL << r.value);
			if (!r.error)
				gt_pmu_release(r.value);
		}
	}
	/* type 15: a firmware event on a firmware counter */
	r = gt_pmu_cfg(0, hw_mask | (((1UL << nfw) - 1) << fw_first), 0,
		       GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("cfg-fw-ok", r, SBI_SUCCESS);
	GT_CHECK_GE("cfg-fw-on-fw-counter", r.value, fw_first);
	if (!r.error)
		gt_pmu_release(r.value);
	/*
	 * the same with counter_idx_base = the first firmware counter (natively
	 * skipped: OpenSBI 1.5 answers a hardware counter index, e.g. 1, and later
	 * calls on it take a store/load fault in M-mode)
	 */
	if (!gt_native()) {
		r = gt_pmu_cfg(fw_first, (1UL << nfw) - 1, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER),
			       0);
		GT_CHECK_SBI("cfg-fw-base-ok", r, SBI_SUCCESS);
		GT_CHECK_EQ("cfg-fw-base-first-counter", r.value, fw_first);
		if (!r.error)
			gt_pmu_release(r.value);
	}
	/* a firmware event is not offered a hardware counter */
	r = gt_pmu_cfg(0, hw_mask, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("cfg-fw-hw-only-set", r, SBI_ERR_NOT_SUPPORTED);

	/* each inhibit flag is accepted */
	{
		static const struct {
			const char *name;
			unsigned long flag;
		} inh[] = {{"vuinh", SBI_PMU_CFG_FLAG_SET_VUINH},
			   {"vsinh", SBI_PMU_CFG_FLAG_SET_VSINH},
			   {"uinh", SBI_PMU_CFG_FLAG_SET_UINH},
			   {"sinh", SBI_PMU_CFG_FLAG_SET_SINH},
			   {"minh", SBI_PMU_CFG_FLAG_SET_MINH},
			   {"all-inh", GT_PMU_NO_COUNT}};

		for (i = 0; i < 6; i++) {
			r = gt_pmu_cfg(0, prog_mask, inh[i].flag | SBI_PMU_CFG_FLAG_CLEAR_VALUE,
				       EV_INSTRET, 0);
			GT_CHECK_SBI(NAME("cfg-flag-%s-accepted", inh[i].name), r, SBI_SUCCESS);
			if (!r.error)
				gt_pmu_release(r.value);
		}
	}

	/*
	 * no free counter: configure instructions until the programmable counters
	 * are used up (not counter 2: OpenSBI 1.5 lets a fixed counter be
	 * configured again and again, platform.md). Natively skipped: OpenSBI
	 * 1.5 puts instructions on counter 2 although the set excludes it, and
	 * after these loops it hands out wrong firmware counter indices and
	 * finally takes a store fault in M-mode.
	 */
	if (!gt_native()) {
		unsigned long used = 0;

		/* started: busy (a configured, stopped counter may be matched again) */
		for (n = 0; n < 64; n++) {
			r = gt_pmu_cfg(0, prog_mask, GT_PMU_NO_COUNT | SBI_PMU_CFG_FLAG_AUTO_START,
				       EV_INSTRET, 0);
			if (r.error)
				break;
			used |= 1UL << r.value;
		}
		GT_CHECK_SBI("cfg-hw-no-free-counter", r, SBI_ERR_NOT_SUPPORTED);
		GT_CHECK_EQ("cfg-hw-all-programmable-used", used, prog_mask);
		for (i = 0; i < 64; i++)
			if ((used >> i) & 1)
				gt_pmu_release(i);
	}
	if (!gt_native()) {
		unsigned long used = 0, fwm = ((1UL << nfw) - 1);

		for (n = 0; n < 64; n++) {
			r = gt_pmu_cfg(0, fwm << fw_first, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER),
				       0);
			if (r.error)
				break;
			used |= 1UL << (r.value - fw_first);
		}
		/* all configured, none started: config_matching takes a stopped one again */
		GT_CHECK_SBI("cfg-fw-stopped-counter-reused", r, SBI_SUCCESS);
		GT_CHECK_EQ("cfg-fw-all-counters-used", used, fwm);
		r = gt_pmu_start(fw_first, fwm, 0, 0);
		GT_CHECK_SBI("start-all-fw-counters", r, SBI_SUCCESS);
		r = gt_pmu_cfg(0, fwm << fw_first, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
		GT_CHECK_SBI("cfg-fw-no-free-counter", r, SBI_ERR_NOT_SUPPORTED);
		r = gt_pmu_stop(fw_first, fwm, SBI_PMU_STOP_FLAG_RESET);
		GT_CHECK_SBI("stop-reset-started-fw-set", r, SBI_SUCCESS);
		r = gt_pmu_cfg(0, fwm << fw_first, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
		GT_CHECK_SBI("cfg-fw-free-after-reset", r, SBI_SUCCESS);
		if (!r.error)
			gt_pmu_release(r.value);
	}

	/* one counter busy: a set of only that counter has nothing free */
	idx = lowest(prog_mask);
	r = gt_pmu_cfg(idx, 1, 0, EV_DTLB_RD, 0);
	GT_CHECK_SBI("cfg-single-counter-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("cfg-single-counter-idx", r.value, idx);
	/* stopped: reconfigured; started: busy */
	r = gt_pmu_cfg(idx, 1, 0, EV_DTLB_WR, 0);
	GT_CHECK_SBI("cfg-single-counter-stopped-reused", r, SBI_SUCCESS);
	GT_CHECK_EQ("cfg-single-counter-reused-idx", r.value, idx);
	GT_CHECK_SBI("cfg-single-counter-start", gt_pmu_start(idx, 1, 0, 0), SBI_SUCCESS);
	r = gt_pmu_cfg(idx, 1, 0, EV_DTLB_RD, 0);
	GT_CHECK_SBI("cfg-single-counter-busy", r, SBI_ERR_NOT_SUPPORTED);
	gt_pmu_release(idx);

	/*
	 * SKIP_MATCH and CLEAR_VALUE on a configured, stopped counter (as Linux
	 * reuses one). Every inhibit flag set: the value is exact.
	 */
	r = gt_pmu_cfg(0, prog_mask, GT_PMU_NO_COUNT, EV_INSTRET, 0);
	idx = r.value;
	GT_CHECK_SBI("start-init-value-ok",
		     gt_pmu_start(idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 5000), SBI_SUCCESS);
	GT_CHECK_SBI("stop-after-init-ok", gt_pmu_stop(idx, 1, 0), SBI_SUCCESS);
	GT_CHECK_EQ("start-init-value-read-back", gt_pmu_read_csr(idx), 5000);
	r = gt_pmu_cfg(idx, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH | GT_PMU_NO_COUNT, EV_INSTRET, 0);
	GT_CHECK_SBI("cfg-skip-match-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("cfg-skip-match-same-counter", r.value, idx);
	GT_CHECK_EQ("cfg-skip-match-keeps-value", gt_pmu_read_csr(idx), 5000);
	r = gt_pmu_cfg(idx, 1,
		       SBI_PMU_CFG_FLAG_SKIP_MATCH | SBI_PMU_CFG_FLAG_CLEAR_VALUE | GT_PMU_NO_COUNT,
		       EV_INSTRET, 0);
	GT_CHECK_SBI("cfg-clear-value-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("cfg-clear-value-zero", gt_pmu_read_csr(idx), 0);
	/* a started counter is not reconfigured */
	gt_pmu_start(idx, 1, 0, 0);
	r = gt_pmu_cfg(idx, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTRET, 0);
	if (gt_native())
		gt_printf("pmu-api: native: skip_match on a started counter -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cfg-skip-match-started-refused", r, SBI_ERR_NOT_SUPPORTED);
	gt_pmu_release(idx);

	/* AUTO_START: counting right after the call */
	r = gt_pmu_cfg(0, prog_mask, SBI_PMU_CFG_FLAG_AUTO_START | SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		       EV_INSTRET, 0);
	GT_CHECK_SBI("cfg-auto-start-ok", r, SBI_SUCCESS);
	idx = r.value;
	v0 = gt_pmu_read_csr(idx);
	spin(1000);
	v1 = gt_pmu_read_csr(idx);
	GT_CHECK_GE("cfg-auto-start-counts", v1 - v0, 2000);
	if (!gt_native()) /* see SANE above */
		GT_CHECK_LE("cfg-auto-start-counts-sane", v1 - v0, 2100);
	GT_CHECK_SBI("cfg-auto-start-already-started", gt_pmu_start(idx, 1, 0, 0),
		     SBI_ERR_ALREADY_STARTED);
	gt_pmu_release(idx);
	/* AUTO_START of a firmware counter */
	r = gt_pmu_cfg(0, ((1UL << nfw) - 1) << fw_first,
		       SBI_PMU_CFG_FLAG_AUTO_START | SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		       GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("cfg-fw-auto-start-ok", r, SBI_SUCCESS);
	gt_sbi_set_timer(~0UL);
	gt_sbi_set_timer(~0UL);
	GT_CHECK_EQ("cfg-fw-auto-start-counts", gt_pmu_fw_read(r.value).value, 2);
	gt_pmu_release(r.value);
}

/* ---------------------------------------------------------- START / STOP */
static void check_start_stop(void)
{
	struct sbi_ret r, r2, r3;
	unsigned long idx, v0, v1, v2, f, fwm = (1UL << nfw) - 1;

	r = gt_pmu_cfg(0, prog_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET, 0);
	idx = r.value;
	/* flag errors before anything starts */
	r = gt_pmu_start(idx, 1, 1UL << 2, 0);
	if (gt_native())
		gt_printf("pmu-api: native: start flag bit 2 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("start-reserved-flag", r, SBI_ERR_INVALID_PARAM);
	if (!gt_native()) {
		r = gt_pmu_start(
			idx, 1,
			SBI_PMU_START_FLAG_SET_INIT_VALUE | SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0);
		GT_CHECK_SBI("start-both-init-flags", r, SBI_ERR_INVALID_PARAM);
	}
	gt_pmu_stop(idx, 1, 0);
	r = gt_pmu_start(idx, 1, SBI_PMU_START_FLAG_INIT_SNAPSHOT, 0);
	GT_CHECK_SBI("start-init-snapshot-no-shmem", r, SBI_ERR_NO_SHMEM);
	gt_pmu_stop(idx, 1, 0);
	r = gt_pmu_start(idx, 0, 0, 0);
	if (gt_native())
		gt_printf("pmu-api: native: start mask 0 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("start-mask-0", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_start(num, 1, 0, 0);
	GT_CHECK_SBI("start-base-eq-num", r, SBI_ERR_INVALID_PARAM);

	/* counts, stops, continues */
	/* no check prints while the counter runs: the bound below is for the loop and two calls */
	r = gt_pmu_start(idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 100);
	r2 = gt_pmu_start(idx, 1, 0, 0);
	spin(10000);
	r3 = gt_pmu_stop(idx, 1, 0);
	v0 = gt_pmu_read_csr(idx);
	GT_CHECK_SBI("start-ok", r, SBI_SUCCESS);
	GT_CHECK_SBI("start-double-already-started", r2, SBI_ERR_ALREADY_STARTED);
	GT_CHECK_SBI("stop-ok", r3, SBI_SUCCESS);
	GT_CHECK_GE("stop-counted-loop", v0, 100 + 20000);
	if (!gt_native()) /* see SANE above */
		GT_CHECK_LE("stop-counted-loop-sane", v0, 100 + 20000 + 2000);
	spin(10000);
	v1 = gt_pmu_read_csr(idx);
	GT_CHECK_EQ("stopped-does-not-advance", v1, v0);
	GT_CHECK_SBI("stop-double-already-stopped", gt_pmu_stop(idx, 1, 0),
		     SBI_ERR_ALREADY_STOPPED);
	r = gt_pmu_stop(idx, 1, 1UL << 2);
	if (gt_native())
		gt_printf("pmu-api: native: stop flag bit 2 -> %ld\n", r.error);
	else
		GT_CHECK_SBI("stop-reserved-flag", r, SBI_ERR_INVALID_PARAM);
	r = gt_pmu_stop(idx, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT);
	GT_CHECK_SBI("stop-take-snapshot-no-shmem", r, SBI_ERR_NO_SHMEM);
	r = gt_pmu_stop(num, 1, 0);
	GT_CHECK_SBI("stop-base-eq-num", r, SBI_ERR_INVALID_PARAM);
	/* start without SET_INIT_VALUE continues from the stopped value */
	gt_pmu_start(idx, 1, 0, 0);
	spin(10000);
	gt_pmu_stop(idx, 1, 0);
	v2 = gt_pmu_read_csr(idx);
	GT_CHECK_GE("restart-continues", v2, v0 + 20000);
	if (!gt_native()) /* see SANE above */
		GT_CHECK_LE("restart-continues-sane", v2, v0 + 20000 + 2000);
	/* RESET releases: start refused, the counter is free again */
	GT_CHECK_SBI("stop-reset-ok", gt_pmu_stop(idx, 1, SBI_PMU_STOP_FLAG_RESET),
		     SBI_ERR_ALREADY_STOPPED);
	GT_CHECK_SBI("start-after-reset-invalid", gt_pmu_start(idx, 1, 0, 0),
		     SBI_ERR_INVALID_PARAM);
	if (!gt_native()) {
		gt_expect_trap(EXC_ILLEGAL_INSN);
		(void)gt_pmu_read_csr(idx);
		GT_CHECK_EQ("csr-after-reset-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	}
	r = gt_pmu_cfg(idx, 1, 0, EV_INSTRET, 0);
	GT_CHECK_SBI("cfg-after-reset-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("cfg-after-reset-same-counter", r.value, idx);
	/* a started counter reset in one call */
	gt_pmu_start(idx, 1, 0, 0);
	GT_CHECK_SBI("stop-reset-started-ok", gt_pmu_stop(idx, 1, SBI_PMU_STOP_FLAG_RESET),
		     SBI_SUCCESS);
	GT_CHECK_SBI("start-unconfigured-invalid", gt_pmu_start(idx, 1, 0, 0),
		     SBI_ERR_INVALID_PARAM);

	/* firmware counter: start/stop errors and FW_READ/FW_READ_HI */
	r = gt_pmu_cfg(0, fwm << fw_first, SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		       GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	f = r.value;
	GT_CHECK_SBI("fw-read-configured", gt_pmu_fw_read(f), SBI_SUCCESS);
	GT_CHECK_EQ("fw-read-cleared-zero", gt_pmu_fw_read(f).value, 0);
	gt_pmu_start(f, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 40);
	r = gt_pmu_start(f, 1, 0, 0);
	if (gt_native()) /* OpenSBI 1.5: SUCCESS for a started firmware counter */
		gt_printf("pmu-api: native: fw double start -> %ld\n", r.error);
	else
		GT_CHECK_SBI("fw-start-double", r, SBI_ERR_ALREADY_STARTED);
	gt_sbi_set_timer(~0UL);
	GT_CHECK_EQ("fw-read-init-plus-1", gt_pmu_fw_read(f).value, 41);
	r = gt_pmu_fw_read_hi(f);
	GT_CHECK_SBI("fw-read-hi-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("fw-read-hi-zero", r.value, 0);
	GT_CHECK_SBI("fw-stop-ok", gt_pmu_stop(f, 1, 0), SBI_SUCCESS);
	r = gt_pmu_stop(f, 1, 0);
	if (gt_native()) /* platform.md: OpenSBI answers SUCCESS */
		gt_printf("pmu-api: native: fw double stop -> %ld\n", r.error);
	else
		GT_CHECK_SBI("fw-stop-double-already-stopped", r, SBI_ERR_ALREADY_STOPPED);
	gt_pmu_release(f);
	GT_CHECK_SBI("fw-read-after-reset-invalid", gt_pmu_fw_read(f), SBI_ERR_INVALID_PARAM);
	/* OpenSBI 1.5 answers FW_READ_HI with SUCCESS, 0 for any index on RV64 */
	if (!gt_native())
		GT_CHECK_SBI("fw-read-hi-after-reset-invalid", gt_pmu_fw_read_hi(f),
			     SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("fw-start-after-reset-invalid", gt_pmu_start(f, 1, 0, 0),
		     SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("fw-read-unconfigured-invalid", gt_pmu_fw_read(fw_first + nfw - 1),
		     SBI_ERR_INVALID_PARAM);
	GT_CHECK_SBI("fw-read-num-invalid", gt_pmu_fw_read(num), SBI_ERR_INVALID_PARAM);
	/* FW_READ(_HI) of a hardware counter, configured or not */
	r = gt_pmu_cfg(0, prog_mask, 0, EV_INSTRET, 0);
	idx = r.value;
	r = gt_pmu_fw_read(idx);
	if (gt_native())
		gt_printf("pmu-api: native: fw_read of a hw counter -> %ld\n", r.error);
	else
		GT_CHECK_SBI("fw-read-hw-invalid", r, SBI_ERR_INVALID_PARAM);
	if (!gt_native())
		GT_CHECK_SBI("fw-read-hi-hw-invalid", gt_pmu_fw_read_hi(idx),
			     SBI_ERR_INVALID_PARAM);
	gt_pmu_release(idx);
}

/* -------------------------------------------------- counter CSRs, after */
static void check_csrs(void)
{
	struct sbi_ret r;
	unsigned long idx, v0, v1;

	/* configured, never started, value cleared: reads 0 (emulated on pmuvisor) */
	r = gt_pmu_cfg(0, prog_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET, 0);
	idx = r.value;
	gt_expect_trap(EXC_ILLEGAL_INSN);
	v0 = gt_pmu_read_csr(idx);
	GT_CHECK_EQ("csr-configured-no-trap", gt_trapped(), -1L);
	GT_CHECK_EQ("csr-configured-not-started-zero", v0, 0);
	/* started: a direct read, advancing with the guest's instructions */
	gt_pmu_start(idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 1UL << 40);
	v0 = gt_pmu_read_csr(idx);
	spin(5000);
	v1 = gt_pmu_read_csr(idx);
	GT_CHECK_GE("csr-started-init-value", v0, 1UL << 40);
	GT_CHECK_GE("csr-started-advances", v1 - v0, 10000);
	if (!gt_native()) /* see SANE above */
		GT_CHECK_LE("csr-started-advances-sane", v1 - v0, 10100);
	/* writes to a counter CSR are illegal (read-only CSRs), configured or not */
	gt_expect_trap(EXC_ILLEGAL_INSN);
	asm volatile("csrw hpmcounter3, zero" ::: "memory");
	GT_CHECK_EQ("csr-write-hpmcounter3-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	asm volatile("csrw cycle, zero" ::: "memory");
	GT_CHECK_EQ("csr-write-cycle-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	asm volatile("csrs hpmcounter5, %0" ::"r"(1UL) : "memory");
	GT_CHECK_EQ("csr-set-hpmcounter5-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	gt_pmu_stop(idx, 1, 0);
	v0 = gt_pmu_read_csr(idx);
	GT_CHECK_GE("csr-stopped-value", v0, (1UL << 40) + 10000);
	gt_pmu_release(idx);

	/* cycles on counter 0, read with rdcycle */
	r = gt_pmu_cfg(0, 1, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_CYCLES, 0);
	GT_CHECK_SBI("cycle-cfg-ok", r, SBI_SUCCESS);
	r = gt_pmu_start(0, 1, 0, 0);
	if (gt_native()) /* platform.md: OpenSBI reports the fixed counter already started */
		gt_printf("pmu-api: native: start of counter 0 after cfg -> %ld\n", r.error);
	else
		GT_CHECK_SBI("cycle-start-ok", r, SBI_SUCCESS);
	v0 = csr_read(cycle);
	spin(5000);
	v1 = csr_read(cycle);
	GT_CHECK_GE("cycle-advances", v1 - v0, 1);
	gt_pmu_release(0);
}

/* ------------------------------------------------------------ U-mode */
static unsigned long user_read(unsigned long idx)
{
	return gt_pmu_read_csr(idx);
}

static void check_user(void)
{
	struct sbi_ret r;
	unsigned long idx, v, saved = csr_read(scounteren);
	long c;

	r = gt_pmu_cfg(0, prog_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET, 0);
	idx = r.value;
	gt_pmu_start(idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 1UL << 32);

	/* scounteren bit clear: illegal instruction, as on hardware */
	csr_write(scounteren, 0);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	gt_run_user(user_read, idx);
	c = gt_trapped();
	GT_CHECK_EQ("user-no-scounteren-illegal", c, EXC_ILLEGAL_INSN);
	/* taken from U-mode (SPP = 0); ~0 when there was no trap at all */
	GT_CHECK_EQ("user-no-scounteren-trap-from-u",
		    c == EXC_ILLEGAL_INSN ? gt_this_hart()->trapped_spp : ~0UL, 0);
	/* the bit of another counter does not help */
	csr_write(scounteren, ~(1UL << idx) & ~2UL);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	gt_run_user(user_read, idx);
	GT_CHECK_EQ("user-other-scounteren-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	/* with it: the value */
	csr_write(scounteren, 1UL << idx);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	v = gt_run_user(user_read, idx);
	GT_CHECK_EQ("user-scounteren-no-trap", gt_trapped(), -1L);
	GT_CHECK_GE("user-scounteren-value", v, 1UL << 32);
	if (!gt_native()) /* see SANE above */
		GT_CHECK_LE("user-scounteren-value-sane", v, (1UL << 32) + 100000);
	/* stopped: still readable, the stopped value */
	gt_pmu_stop(idx, 1, 0);
	v = gt_pmu_read_csr(idx);
	GT_CHECK_EQ("user-stopped-value", gt_run_user(user_read, idx), v);
	csr_write(scounteren, 0);
	gt_expect_trap(EXC_ILLEGAL_INSN);
	gt_run_user(user_read, idx);
	GT_CHECK_EQ("user-stopped-no-scounteren-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	gt_pmu_release(idx);
	/* an unconfigured counter is illegal from U-mode even with scounteren */
	if (!gt_native()) {
		csr_write(scounteren, ~0UL);
		gt_expect_trap(EXC_ILLEGAL_INSN);
		gt_run_user(user_read, idx);
		GT_CHECK_EQ("user-unconfigured-illegal", gt_trapped(), EXC_ILLEGAL_INSN);
	}
	csr_write(scounteren, saved);
}

/* -------------------------------------------------------- EVENT_GET_INFO */

static struct gt_pmu_event_info ev_info[8] __attribute__((aligned(16)));

static void check_event_info(void)
{
	static const struct {
		unsigned long ev;
		uint32_t supported;
	} want[8] = {
		{EV_CYCLES, 1},
		{EV_INSTRET, 1},
		{EV_DTLB_RD, 1},
		{EV_DTLB_WR, 1},
		{EV_ITLB_RD, 1},
		{0x1234, 0},
		{SBI_PMU_HW_BRANCH_MISSES, 0},
		{GT_PMU_EV_FW(SBI_PMU_FW_IPI_SENT), 1},
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
	r = gt_pmu_cfg(0, prog_mask, 0, EV_DTLB_RD, 0);
	GT_CHECK_SBI("event-info-left-counters-free", r, SBI_SUCCESS);
	if (!r.error)
		gt_pmu_release(r.value);

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
	/* event_data counts for types 2, 3 and 15 only: a general or cache event ignores it */
	ev_info[0].event_idx = (uint32_t)EV_INSTRET;
	ev_info[0].event_data = 0x77;
	ev_info[1].event_idx = (uint32_t)EV_DTLB_RD;
	ev_info[1].event_data = ~0ULL;
	ev_info[2].event_idx = (uint32_t)GT_PMU_EV_FW(SBI_PMU_FW_MISALIGNED_LOAD);
	ev_info[2].event_data = 0;
	r = gt_pmu_event_get_info(base, 0, 3, 0);
	GT_CHECK_SBI("event-info-data-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("event-info-general-data-ignored", ev_info[0].output, 1);
	GT_CHECK_EQ("event-info-cache-data-ignored", ev_info[1].output, 1);
	/* a misaligned load goes straight to the guest: offered all the same, it counts 0 */
	GT_CHECK_EQ("event-info-fw-misaligned-load-offered", ev_info[2].output, 1);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	(void)hartid;
	(void)fdt;
	check_layout();
	if (!prog_mask || !nfw)
		gt_exit();
	check_unconfigured_csrs();
	check_cfg_errors();
	check_cfg_raw();
	check_cfg_events();
	check_start_stop();
	check_csrs();
	check_user();
	check_event_info();
	/* unknown FID */
	GT_CHECK_SBI("fid-9-not-supported", gt_pmu_call(9, 0, 0, 0, 0, 0), SBI_ERR_NOT_SUPPORTED);
	gt_exit();
}
