/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of vpmu/event.c: which events pmuvisor counts (classification,
 * the host's answer, CONFIG_MATCHING's acceptance cache and the policy), the
 * order in which hardware counters are tried for an event, EVENT_GET_INFO.
 */

#include "helpers.h"

/* ------------------------------------------------------- classification */

static void test_cfg_event_0x1234_not_supported(void **state)
{
	(void)state;
	/* OpenSBI says INVALID_PARAM here; the spec says NOT_SUPPORTED */
	assert_int_equal(CFG(0, ALLMASK, 0, 0x1234, 0).error, SBI_ERR_NOT_SUPPORTED);
}

static void test_cfg_unsupported_events(void **state)
{
	static const struct {
		unsigned long ev;
		uint64_t data;
	} bad[] = {
		{0x0, 0},			 /* NO_EVENT */
		{0xb, 0},			 /* general code 11 */
		{EV_INSTR, 1},			 /* reserved event_data */
		{0x10000 | (7 << 3), 0},	 /* cache id 7 */
		{0x10000 | (3 << 1), 0},	 /* cache op 3 */
		{0x10000, 5},			 /* cache, reserved data */
		{EV_RAW | 1, FAKE_RAW_OK},	 /* raw with code */
		{EV_RAW, 1ULL << 48},		 /* raw: beyond 48 bits */
		{EV_RAW2, 1ULL << 58},		 /* raw v2: beyond 58 bits */
		{EV_RAW, 0x777},		 /* raw the host does not know */
		{0x40000, 0},			 /* type 4 */
		{EV_FW(22), 0},			 /* reserved fw */
		{EV_FW(256), 0},		 /* implementation fw */
		{EV_FW(SBI_PMU_FW_PLATFORM), 7}, /* platform fw */
		{EV_FW(5), 1},			 /* fw reserved data */
		{0x100002, 0},			 /* beyond 20 bits */
		{EV_DTLB_RD | 0x300000, 0},
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(CFG(0, ALLMASK, 0, bad[i].ev, bad[i].data).error,
				 SBI_ERR_NOT_SUPPORTED);
}

static void test_cfg_hw_events_mirror_host(void **state)
{
	(void)state;
	assert_int_equal(CFG(0, ALLMASK, 0, EV_DTLB_RD, 0).value, 3);
	assert_int_equal(CFG(0, ALLMASK, 0, 0x1001b, 0).value, 4);
	assert_int_equal(CFG(0, ALLMASK, 0, 0x10021, 0).value, 5);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW, FAKE_RAW_OK).value, 6);
	assert_int_equal(fake.c[6].event_data, FAKE_RAW_OK);
	/* raw v2: all 56 data bits reach the host untouched; bits 56.. are reserved */
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW2, 1UL << 56).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW2, FAKE_RAW2_OK).value, 7);
	assert_int_equal(fake.c[7].event_data, FAKE_RAW2_OK);
	assert_int_equal(fake.c[7].event_idx, EV_RAW2);
	/* cache events the host does not count */
	assert_int_equal(CFG(0, ALLMASK, 0, 0x10000, 0).error, SBI_ERR_NOT_SUPPORTED);
}

/*
 * CONFIG_MATCHING remembers the last event it accepted: the same event with
 * other data is classified again, and a new policy forgets what it accepted
 */
static void test_cfg_remembers_only_what_holds(void **state)
{
	static const struct vpmu_policy deny = {.nr_deny = 1, .deny = {{EV_INSTR, EV_INSTR, 0}}};
	static const struct vpmu_policy on4 = {.nr_allow = 1,
					       .allow = {{EV_INSTR, EV_INSTR, 1U << 4}}};

	(void)state;
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW, FAKE_RAW_OK).value, 3);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW, 1ULL << 48).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_RAW, FAKE_RAW_OK).value, 4);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 5);
	/* event_data must be 0 for hardware events: the host is not asked */
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 1).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(STOP(5, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_ERR_ALREADY_STOPPED);
	vpmu_vcpu_set_policy(v, &deny);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).error, SBI_ERR_NOT_SUPPORTED);
	vpmu_vcpu_set_policy(v, &on4); /* counter 4 only, stopped: configured again */
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 4);
	assert_int_equal(v->ctr[4].event_idx, EV_INSTR);
	vpmu_vcpu_set_policy(v, NULL); /* every counter again: instret's own, as 4 has it */
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 2);
}

/* -------------------------------------- the order counters are tried in */

/*
 * Cycles go to a programmable counter first (it has an overflow interrupt:
 * cycles can be sampled), like OpenSBI natively. A second cycles counter
 * would read 0 there on QEMU (one counter per event per hart): it gets
 * counter 0 instead, which counts as well.
 */
static void test_cfg_cycles_programmable_first(void **state)
{
	struct sbi_ret r;

	(void)state;
	r = CFG(0, ALLMASK, 0, EV_CYCLES, 0);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(r.value, 3);
	assert_int_equal(fake.c[3].event_idx, EV_CYCLES);
	assert_false(fake.c[3].running);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_CYCLES, 0).value, 0);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_CYCLES, 0).value, 4);
	assert_int_equal(START(0, 0x19, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0).error, SBI_SUCCESS);
	fake_advance(100);
	assert_int_equal(vpmu_ctr_value(v, 3), 100);
	assert_int_equal(vpmu_ctr_value(v, 0), 100);
	assert_int_equal(vpmu_ctr_value(v, 4), 0); /* as natively on QEMU */
}

/* A host whose programmable counters do not count cycles: counter 0 only */
static void test_cfg_cycles_fixed_only(void **state)
{
	(void)state;
	fake_reset();
	fake.prog_cycles_count = false;
	reboot_host();
	assert_int_equal(CFG(0, ALLMASK, SBI_PMU_CFG_FLAG_AUTO_START, EV_CYCLES, 0).value, 0);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_CYCLES, 0).error, SBI_ERR_NOT_SUPPORTED);
}

/* A host that maps cycles to counter 0 only refuses it elsewhere, also with SKIP_MATCH */
static void test_cfg_cycles_programmable_refused(void **state)
{
	(void)state;
	fake_reset();
	fake.cycles_map = 0;
	reboot_host();
	assert_int_equal(CFG(0, HWMASK & ~1UL, 0, EV_CYCLES, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(5, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_CYCLES, 0).error,
			 SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_CYCLES, 0).value, 0);
}

/* instret: programmable first; a second one on counter 2, which counts on QEMU */
static void test_cfg_instret_prefers_programmable(void **state)
{
	(void)state;
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 2);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 4);
}

/* Where every event counts on as many counters as asked, fixed counters stay last */
static void test_cfg_instret_shared_host(void **state)
{
	(void)state;
	fake_reset();
	fake.event_exclusive = false;
	reboot_host();
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(CFG(0, ALLMASK, 0, EV_INSTR, 0).value, 4);
}

static void test_cfg_instret_fixed(void **state)
{
	(void)state;
	assert_int_equal(CFG(2, 1, 0, EV_INSTR, 0).value, 2);
	assert_int_equal(fake.c[2].event_idx, EV_INSTR);
}

static void test_cfg_no_other_event_on_fixed(void **state)
{
	(void)state;
	assert_int_equal(CFG(0, 5, 0, EV_DTLB_RD, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(CFG(2, 1, 0, EV_CYCLES, 0).error, SBI_ERR_NOT_SUPPORTED);
}

/* ------------------------------------------------------- EVENT_GET_INFO */

struct einfo {
	uint32_t event_idx;
	uint32_t output;
	uint64_t event_data;
};

#define EI (FAKE_RAM_BASE + 0x4000)

static void put_entries(const struct einfo *e, unsigned int n)
{
	memcpy(ram(EI), e, n * sizeof(*e));
}

static uint32_t output_of(unsigned int i)
{
	struct einfo e;
	memcpy(&e, ram(EI + i * sizeof(e)), sizeof(e));
	return e.output;
}

static void test_event_info_outputs(void **state)
{
	static const struct einfo e[] = {
		{EV_CYCLES, 7, 0},
		{EV_INSTR, 7, 0},
		{EV_DTLB_RD, 7, 0},
		{0x1234, 7, 0},
		{0x10000, 7, 0},
		{EV_FW(SBI_PMU_FW_SET_TIMER), 7, 0},
		{EV_FW(SBI_PMU_FW_PLATFORM), 7, 0},
		{EV_FW(30), 7, 0},
		{EV_RAW, 7, FAKE_RAW_OK},
		{EV_RAW, 7, 0x777},
		{EV_RAW2, 7, FAKE_RAW2_OK},
		{EV_INSTR, 7, 1},  /* event_data is meaningless for types 0/1: ignored */
		{0x40000, 7, 0},   /* type 4: reserved, nothing counts it */
		{EV_FW(0), 7, 0},  /* misaligned loads never reach the hypervisor: count 0 */
		{EV_FW(14), 7, 0}, /* HFENCE: a guest has none: count 0 */
	};
	static const uint32_t want[] = {1, 1, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1};
	unsigned int i, n = sizeof(e) / sizeof(e[0]);

	(void)state;
	put_entries(e, n);
	assert_int_equal(EVINFO(EI, 0, n, 0).error, SBI_SUCCESS);
	for (i = 0; i < n; i++)
		assert_int_equal(output_of(i), want[i]);
	/* probing left no physical counter behind */
	for (i = 3; i < NHW; i++)
		assert_false(fake_busy(i));
	/* the entries' other words are untouched */
	assert_int_equal(((struct einfo *)ram(EI))[8].event_data, FAKE_RAW_OK);
}

/*
 * A configuration, with or without a probe, starts and stops nothing, so
 * the next wrap of a running counter is where its start put it: the
 * deadline stays (moving it would re-arm the hart's timer on every call
 * of a guest that samples). Counters advance at most counts_per_tick, so
 * a recomputed deadline is later when they advanced less: here not at all.
 */
static void test_config_keeps_deadline(void **state)
{
	static const struct einfo e[] = {{EV_CYCLES, 0, 0}, {EV_RAW2, 0, FAKE_RAW2_OK}};
	uint64_t d;

	(void)state;
	cfg_start(4, 1, EV_DTLB_RD, -5000UL);
	d = v->deadline;
	assert_int_equal(d, fake.now + 4999 / 100 + 32);
	fake.now += 10;
	assert_int_equal(CFG(3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(v->deadline, d);
	assert_int_equal(CFG(5, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_INSTR, 0).error, SBI_SUCCESS);
	assert_int_equal(v->deadline, d);
	assert_int_equal(CFG(6, 1, 0, 0x40000, 0).error, SBI_ERR_NOT_SUPPORTED);
	assert_int_equal(v->deadline, d);
	put_entries(e, 2);
	assert_int_equal(EVINFO(EI, 0, 2, 0).error, SBI_SUCCESS);
	assert_int_equal(output_of(1), 1); /* probed on a free counter */
	assert_int_equal(v->deadline, d);
}

static void test_event_info_busy_counters(void **state)
{
	static const struct einfo e[] = {{EV_CYCLES, 0, 0}, {EV_DTLB_RD, 0, 0}};
	unsigned int i;

	(void)state;
	cfg_start(0, 1, EV_CYCLES, 0);
	for (i = 3; i < NHW; i++)
		CFG(i, 1, 0, EV_DTLB_RD, 0);
	put_entries(e, 2);
	assert_int_equal(EVINFO(EI, 0, 2, 0).error, SBI_SUCCESS);
	assert_int_equal(output_of(0), 1);
	assert_int_equal(output_of(1), 1);
}

static void test_event_info_errors(void **state)
{
	struct einfo e[3] = {{EV_INSTR, 0, 0}, {EV_INSTR, 0, 0}, {EV_INSTR, 0, 0}};

	(void)state;
	put_entries(e, 2);
	assert_int_equal(EVINFO(EI, 0, 2, 1).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(EVINFO(EI + 8, 0, 2, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(EVINFO(EI, 0, 0, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(EVINFO(EI, 1, 2, 0).error, SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(EVINFO(0x1000, 0, 2, 0).error, SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(EVINFO(FAKE_RAM_BASE + FAKE_RAM_SIZE - 16, 0, 2, 0).error,
			 SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(EVINFO(EI, 0, ~0UL / 8, 0).error, SBI_ERR_INVALID_ADDRESS);
	assert_int_equal(EVINFO(~0xfUL, 0, 1, 0).error, SBI_ERR_INVALID_ADDRESS);
	/* malformed event_idx: nothing written */
	e[0].output = 5;
	e[1].event_idx = 1u << 20;
	put_entries(e, 2);
	assert_int_equal(EVINFO(EI, 0, 2, 0).error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(output_of(0), 5);
	e[1].event_idx = 0x50000; /* type 5: a reserved value, not a reserved bit: output 0 */
	put_entries(e, 2);
	assert_int_equal(EVINFO(EI, 0, 2, 0).error, SBI_SUCCESS);
	assert_int_equal(output_of(1), 0);
	/*
	 * raw with a code: a reserved value too (SBI v3.0 names only the
	 * reserved bits of the event_idx word for INVALID_PARAM)
	 */
	e[0] = (struct einfo){EV_RAW, 7, FAKE_RAW_OK};
	e[1] = (struct einfo){EV_RAW | 3, 7, FAKE_RAW_OK};
	e[2] = (struct einfo){EV_RAW2 | 1, 7, FAKE_RAW_OK};
	put_entries(e, 3);
	assert_int_equal(EVINFO(EI, 0, 3, 0).error, SBI_SUCCESS);
	assert_int_equal(output_of(0), 1);
	assert_int_equal(output_of(1), 0);
	assert_int_equal(output_of(2), 0);
}

/*
 * A long EVENT_GET_INFO is answered in slices of 2048 work units: the guest
 * sees VPMU_RET_RESTART (its ecall is re-executed) until it is done. 4000
 * entries (all of the fake's 64 KiB of RAM): check 0..2047 | check the
 * rest, answer 96 | answer 2048 | done.
 */
static void test_event_info_in_slices(void **state)
{
	struct einfo *e = ram(FAKE_RAM_BASE);
	unsigned int i, restarts = 0;
	struct sbi_ret r;

	(void)state;
	for (i = 0; i < 4000; i++)
		e[i] = (struct einfo){EV_INSTR, 7, 0};
	while ((r = EVINFO(FAKE_RAM_BASE, 0, 4000, 0)).error == VPMU_RET_RESTART)
		restarts++;
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(restarts, 3);
	for (i = 0; i < 4000; i++)
		assert_int_equal(e[i].output, 1);
	/* another call in between starts over; the interrupted one then too */
	for (i = 0; i < 4000; i++)
		e[i].output = 7;
	assert_int_equal(EVINFO(FAKE_RAM_BASE, 0, 4000, 0).error, VPMU_RET_RESTART);
	assert_int_equal(EVINFO(FAKE_RAM_BASE, 0, 2, 0).error, SBI_SUCCESS);
	for (restarts = 0; (r = EVINFO(FAKE_RAM_BASE, 0, 4000, 0)).error == VPMU_RET_RESTART;)
		restarts++;
	assert_int_equal(restarts, 3);
	assert_int_equal(e[3999].output, 1);
	/* a malformed entry found in a later slice: INVALID_PARAM, nothing written */
	for (i = 0; i < 4000; i++)
		e[i].output = 7;
	e[3000].event_idx = 1u << 20;
	while ((r = EVINFO(FAKE_RAM_BASE, 0, 4000, 0)).error == VPMU_RET_RESTART)
		;
	assert_int_equal(r.error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(e[0].output, 7);
}

/*
 * A call abandoned after a slice (the guest never re-executed its ecall)
 * and a new one with the same arguments from another instruction: the new
 * one checks every entry again, so an entry made malformed meanwhile is
 * found (resuming skipped it and answered SUCCESS).
 */
static void test_event_info_new_call_starts_over(void **state)
{
	struct einfo *e = ram(FAKE_RAM_BASE);
	struct sbi_ret r;
	unsigned int i;

	(void)state;
	for (i = 0; i < 4000; i++)
		e[i] = (struct einfo){EV_INSTR, 7, 0};
	fake.ecall_pc = 0x80201000;
	assert_int_equal(EVINFO(FAKE_RAM_BASE, 0, 4000, 0).error, VPMU_RET_RESTART);
	e[5].event_idx = 1u << 20; /* checked by that first slice */
	fake.ecall_pc = 0x80202000;
	while ((r = EVINFO(FAKE_RAM_BASE, 0, 4000, 0)).error == VPMU_RET_RESTART)
		;
	assert_int_equal(r.error, SBI_ERR_INVALID_PARAM);
	assert_int_equal(e[0].output, 7);
}

/*
 * A raw event the host refuses is tried on every free programmable counter
 * (16 here): each try is charged, and a slice stops mid-entry when its work
 * is spent, so no slice makes more than 2048 / 32 = 64 host configurations
 * (it made 1,024: one probe charged per entry). Two refused raw events
 * alternating cost their probes once per call.
 */
static void test_event_info_slice_bound(void **state)
{
	struct einfo *e = ram(FAKE_RAM_BASE);
	unsigned int i, slices = 0, most = 0, first = fake.n_config;
	struct sbi_ret r;

	(void)state;
	for (i = 0; i < 200; i++)
		e[i] = (struct einfo){EV_RAW, 7, 0x100 + i}; /* all refused, all different */
	do {
		unsigned int before = fake.n_config;

		r = EVINFO(FAKE_RAM_BASE, 0, 200, 0);
		slices++;
		if (fake.n_config - before > most)
			most = fake.n_config - before;
	} while (r.error == VPMU_RET_RESTART);
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_in_range(most, 60, 64);
	assert_int_equal(fake.n_config - first, 200 * 16);
	assert_in_range(slices, 200 * 16 / 64, 200 * 16 / 60 + 2);
	for (i = 0; i < 200; i++)
		assert_int_equal(e[i].output, 0);
	/* two refused raw events alternating: 16 host configurations each, once */
	for (i = 0; i < 200; i++)
		e[i] = (struct einfo){EV_RAW, 7, 0x100 + (i & 1)};
	fake.n_config = 0;
	while ((r = EVINFO(FAKE_RAM_BASE, 0, 200, 0)).error == VPMU_RET_RESTART)
		;
	assert_int_equal(r.error, SBI_SUCCESS);
	assert_int_equal(fake.n_config, 2 * 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_cfg_event_0x1234_not_supported),
		T(test_cfg_unsupported_events),
		T(test_cfg_hw_events_mirror_host),
		T(test_cfg_remembers_only_what_holds),
		T(test_cfg_cycles_programmable_first),
		T(test_cfg_cycles_fixed_only),
		T(test_cfg_cycles_programmable_refused),
		T(test_cfg_instret_prefers_programmable),
		T(test_cfg_instret_shared_host),
		T(test_cfg_instret_fixed),
		T(test_cfg_no_other_event_on_fixed),
		T(test_event_info_outputs),
		T(test_config_keeps_deadline),
		T(test_event_info_busy_counters),
		T(test_event_info_errors),
		T(test_event_info_in_slices),
		T(test_event_info_new_call_starts_over),
		T(test_event_info_slice_bound),
	};

	return cmocka_run_group_tests_name("vpmu_event", tests, NULL, NULL);
}
