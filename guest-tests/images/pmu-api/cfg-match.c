// SPDX-License-Identifier: BSD-2-Clause
/* pmu-api: CFG_MATCH granted: the counter each event type gets, and every flag */
#include "guest-tests/images/pmu-api/pmu-api.h"

/* ------------------------------------------------------------ CFG_MATCH */
/* The raw event types: whatever the host says, never INVALID_PARAM; a raw v2 event with
 * all 56 data bits reaches the host untouched (pmuvisor mirrors the host's answer). */
void check_cfg_raw(void)
{
	struct sbi_ret r1, r2, r3;
	unsigned long set = hw_mask | fw_set;

	/* one at a time: each may have every counter to choose from */
	r1 = gt_pmu_cfg(0, set, 0, 0x20000, 0x12);
	if (!r1.error)
		gt_pmu_release(r1.value);
	r2 = gt_pmu_cfg(0, set, 0, 0x30000, (1UL << 55) | (1UL << 54) | 0x12);
	if (!r2.error)
		gt_pmu_release(r2.value);
	r3 = gt_pmu_cfg(0, set, 0, 0x30000, 0x12);
	if (!r3.error)
		gt_pmu_release(r3.value);
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
	/* only a programmable counter counts a raw event */
	if (!prog_mask && !gt_native()) {
		GT_CHECK_SBI("cfg-raw-no-programmable", r1, SBI_ERR_NOT_SUPPORTED);
		GT_CHECK_SBI("cfg-raw-v2-no-programmable", r3, SBI_ERR_NOT_SUPPORTED);
	}
	/* the same raw v2 event with and without bits 54/55 gets the same answer only if the
	 * bits are passed on; just require both answers be SUCCESS or NOT_SUPPORTED */
	if (!gt_native())
		GT_CHECK_EQ("cfg-raw-v2-answer-kind",
			    r3.error == SBI_SUCCESS || r3.error == SBI_ERR_NOT_SUPPORTED, 1);
	/* bootargs "raw=0": the machine counts no raw event (QEMU 10 knows none) */
	if (gt_arg_has("raw=") && !gt_arg_ul("raw=", 1)) {
		GT_CHECK_SBI("cfg-raw-unknown-to-machine", r1, SBI_ERR_NOT_SUPPORTED);
		GT_CHECK_SBI("cfg-raw-v2-56bit-unknown-to-machine", r2, SBI_ERR_NOT_SUPPORTED);
		GT_CHECK_SBI("cfg-raw-v2-unknown-to-machine", r3, SBI_ERR_NOT_SUPPORTED);
	}
	/* EVENT_GET_INFO answers as CFG_MATCH did: supported exactly when a counter was given */
	if (!gt_native()) {
		static struct gt_pmu_event_info raw[2] __attribute__((aligned(16)));

		raw[0] = (struct gt_pmu_event_info){.event_idx = 0x20000, .event_data = 0x12};
		raw[1] = (struct gt_pmu_event_info){.event_idx = 0x30000, .event_data = 0x12};
		raw[0].output = raw[1].output = 0xdeadbeef;
		GT_CHECK_SBI("cfg-raw-event-info-ok",
			     gt_pmu_event_get_info((unsigned long)raw, 0, 2, 0), SBI_SUCCESS);
		GT_CHECK_EQ("cfg-raw-event-info-as-cfg", raw[0].output, r1.error == SBI_SUCCESS);
		GT_CHECK_EQ("cfg-raw-v2-event-info-as-cfg", raw[1].output, r3.error == SBI_SUCCESS);
	}
}

/*
 * The flags on hardware counters: instructions on ins_set, and for a counter
 * reconfigured two events it can count (two TLB events on a programmable one)
 */
static void check_cfg_flags_hw(void)
{
	struct sbi_ret r;
	unsigned long idx, n, v0, v1, i;
	unsigned long ev1 = prog_mask ? EV_DTLB_RD : EV_INSTRET;
	unsigned long ev2 = prog_mask ? EV_DTLB_WR : EV_INSTRET;

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
			r = gt_pmu_cfg(0, ins_set, inh[i].flag | SBI_PMU_CFG_FLAG_CLEAR_VALUE,
				       EV_INSTRET, 0);
			GT_CHECK_SBI(NAME("cfg-flag-%s-accepted", inh[i].name), r, SBI_SUCCESS);
			if (!r.error)
				gt_pmu_release(r.value);
		}
	}

	/*
	 * no free counter: configure instructions until the counters of ins_set
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
			r = gt_pmu_cfg(0, ins_set, GT_PMU_NO_COUNT | SBI_PMU_CFG_FLAG_AUTO_START,
				       EV_INSTRET, 0);
			if (r.error)
				break;
			used |= 1UL << r.value;
		}
		GT_CHECK_SBI("cfg-hw-no-free-counter", r, SBI_ERR_NOT_SUPPORTED);
		GT_CHECK_EQ("cfg-hw-all-counters-used", used, ins_set);
		for (i = 0; i < 64; i++)
			if ((used >> i) & 1)
				gt_pmu_release(i);
	}
	/* one counter busy: a set of only that counter has nothing free */
	idx = lowest(ins_set);
	r = gt_pmu_cfg(idx, 1, 0, ev1, 0);
	GT_CHECK_SBI("cfg-single-counter-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("cfg-single-counter-idx", r.value, idx);
	/*
	 * stopped: reconfigured (the spec asks only for a counter not started;
	 * OpenSBI 1.5 takes only unconfigured ones); started: busy
	 */
	r = gt_pmu_cfg(idx, 1, 0, ev2, 0);
	if (gt_native()) {
		gt_printf("pmu-api: native: cfg of a configured, stopped counter -> %ld\n",
			  r.error);
		gt_pmu_cfg(idx, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, ev2, 0);
	} else {
		GT_CHECK_SBI("cfg-single-counter-stopped-reused", r, SBI_SUCCESS);
		GT_CHECK_EQ("cfg-single-counter-reused-idx", r.value, idx);
	}
	GT_CHECK_SBI("cfg-single-counter-start", gt_pmu_start(idx, 1, 0, 0), SBI_SUCCESS);
	r = gt_pmu_cfg(idx, 1, 0, ev1, 0);
	GT_CHECK_SBI("cfg-single-counter-busy", r, SBI_ERR_NOT_SUPPORTED);
	gt_pmu_release(idx);

	/*
	 * SKIP_MATCH and CLEAR_VALUE on a configured, stopped counter (as Linux
	 * reuses one). Every inhibit flag set: the value is exact.
	 */
	r = gt_pmu_cfg(0, ins_set, GT_PMU_NO_COUNT, EV_INSTRET, 0);
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
	r = gt_pmu_cfg(0, ins_set, SBI_PMU_CFG_FLAG_AUTO_START | SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		       EV_INSTRET, 0);
	GT_CHECK_SBI("cfg-auto-start-ok", r, SBI_SUCCESS);
	idx = r.value;
	v0 = gt_pmu_read_csr(idx);
	spin(1000);
	v1 = gt_pmu_read_csr(idx);
	GT_CHECK_GE("cfg-auto-start-counts", v1 - v0, 2000);
	if (!gt_native()) /* see SANE in pmu-api.h */
		GT_CHECK_LE("cfg-auto-start-counts-sane", v1 - v0, 2100);
	GT_CHECK_SBI("cfg-auto-start-already-started", gt_pmu_start(idx, 1, 0, 0),
		     SBI_ERR_ALREADY_STARTED);
	gt_pmu_release(idx);
}

/* The flags on firmware counters */
static void check_cfg_flags_fw(void)
{
	struct sbi_ret r;
	unsigned long n;

	if (!gt_native()) {
		unsigned long used = 0, fwm = (1UL << nfw) - 1;

		for (n = 0; n < 64; n++) {
			r = gt_pmu_cfg(0, fw_set, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
			if (r.error)
				break;
			used |= 1UL << (r.value - fw_first);
		}
		/* all configured, none started: config_matching takes a stopped one again */
		GT_CHECK_SBI("cfg-fw-stopped-counter-reused", r, SBI_SUCCESS);
		GT_CHECK_EQ("cfg-fw-all-counters-used", used, fwm);
		r = gt_pmu_start(fw_first, fwm, 0, 0);
		GT_CHECK_SBI("start-all-fw-counters", r, SBI_SUCCESS);
		r = gt_pmu_cfg(0, fw_set, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
		GT_CHECK_SBI("cfg-fw-no-free-counter", r, SBI_ERR_NOT_SUPPORTED);
		r = gt_pmu_stop(fw_first, fwm, SBI_PMU_STOP_FLAG_RESET);
		GT_CHECK_SBI("stop-reset-started-fw-set", r, SBI_SUCCESS);
		r = gt_pmu_cfg(0, fw_set, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
		GT_CHECK_SBI("cfg-fw-free-after-reset", r, SBI_SUCCESS);
		if (!r.error)
			gt_pmu_release(r.value);
	}

	/* AUTO_START of a firmware counter */
	r = gt_pmu_cfg(0, fw_set, SBI_PMU_CFG_FLAG_AUTO_START | SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		       GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	GT_CHECK_SBI("cfg-fw-auto-start-ok", r, SBI_SUCCESS);
	gt_sbi_set_timer(~0UL);
	gt_sbi_set_timer(~0UL);
	GT_CHECK_EQ("cfg-fw-auto-start-counts", gt_pmu_fw_read(r.value).value, 2);
	gt_pmu_release(r.value);
}

void check_cfg_events(void)
{
	struct sbi_ret r;
	unsigned long i;

	if (hw_mask) {
		/*
		 * type 0: cycles go to a programmable counter (it can overflow:
		 * cycles can be sampled), like OpenSBI natively (which picks the
		 * last one); without one, to counter 0
		 */
		r = gt_pmu_cfg(0, hw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_CYCLES, 0);
		GT_CHECK_SBI("cfg-cycles-ok", r, SBI_SUCCESS);
		if (gt_native())
			gt_printf("pmu-api: native: cycles -> counter %lu\n", r.value);
		if (prog_mask)
			GT_CHECK_BITS("cfg-cycles-programmable", 1UL << r.value, prog_mask,
				      1UL << r.value);
		else
			GT_CHECK_EQ("cfg-cycles-counter-0", r.value, 0);
		if (!r.error)
			gt_pmu_release(r.value);
		/* type 0: instructions, a programmable counter when one is in the set */
		r = gt_pmu_cfg(0, ins_set, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET, 0);
		GT_CHECK_SBI("cfg-instret-ok", r, SBI_SUCCESS);
		GT_CHECK_BITS("cfg-instret-in-set", 1UL << r.value, ins_set, 1UL << r.value);
		if (!r.error)
			gt_pmu_release(r.value);
		r = gt_pmu_cfg(2, 1, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTRET, 0);
		GT_CHECK_SBI("cfg-instret-fixed-ok", r, SBI_SUCCESS);
		GT_CHECK_EQ("cfg-instret-fixed-counter-2", r.value, 2);
		if (!r.error)
			gt_pmu_release(r.value);
	} else if (!gt_native()) {
		/* no hardware counter: cycles and instructions are not supported */
		r = gt_pmu_cfg(0, fw_set, 0, EV_CYCLES, 0);
		GT_CHECK_SBI("cfg-cycles-no-hw-counter", r, SBI_ERR_NOT_SUPPORTED);
		r = gt_pmu_cfg(0, fw_set, 0, EV_INSTRET, 0);
		GT_CHECK_SBI("cfg-instret-no-hw-counter", r, SBI_ERR_NOT_SUPPORTED);
		r = gt_pmu_cfg(2, 1, 0, EV_INSTRET, 0);
		GT_CHECK_SBI("cfg-instret-counter-2-not-offered", r, SBI_ERR_INVALID_PARAM);
	}
	/* type 1: the three TLB events QEMU counts, on programmable counters only */
	{
		static const unsigned long ev[] = {EV_DTLB_RD, EV_DTLB_WR, EV_ITLB_RD};

		for (i = 0; i < 3; i++) {
			r = gt_pmu_cfg(0, hw_mask | fw_set, 0, ev[i], 0);
			if (!prog_mask) {
				GT_CHECK_SBI(NAME("cfg-cache-0x%lx-no-programmable", ev[i]), r,
					     SBI_ERR_NOT_SUPPORTED);
				continue;
			}
			GT_CHECK_SBI(NAME("cfg-cache-0x%lx-ok", ev[i]), r, SBI_SUCCESS);
			GT_CHECK_BITS(NAME("cfg-cache-0x%lx-programmable", ev[i]), 1UL << r.value,
				      prog_mask, 1UL << r.value);
			if (!r.error)
				gt_pmu_release(r.value);
		}
	}
	/* type 15: a firmware event on a firmware counter */
	r = gt_pmu_cfg(0, hw_mask | fw_set, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
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
	if (hw_mask) {
		r = gt_pmu_cfg(0, hw_mask, 0, GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
		GT_CHECK_SBI("cfg-fw-hw-only-set", r, SBI_ERR_NOT_SUPPORTED);
	}

	if (ins_set)
		check_cfg_flags_hw();
	check_cfg_flags_fw();
}
