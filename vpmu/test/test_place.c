/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of vpmu/place.c: which physical counter of a hart holds which
 * vCPU's configuration. Configuring (and undoing the host's fixed-counter
 * fallback), release and eviction, QEMU's event map, taking a configuration
 * over and back without a host call, and starts that wait for the core.
 */

#include "helpers.h"

/* ---------------------------------------------------------- configuring */

static void test_cfg_host_fallback_undone(void **state)
{
	unsigned long i;

	(void)state;
	/* cycles counting on programmable 3..10 only; the host falls back to 0 elsewhere */
	fake_reset();
	fake.prog_cycles_count = true;
	fake.cycles_map = 0x7f8;
	reboot_host();
	i = CFG(0, 1, SBI_PMU_CFG_FLAG_SET_SINH, EV_CYCLES, 0).value;
	assert_int_equal(i, 0);
	assert_int_equal(START(0, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 1000).error, SBI_SUCCESS);
	fake_advance(10);
	assert_int_equal(CFG(11, 1, 0, EV_CYCLES, 0).error, SBI_ERR_NOT_SUPPORTED);
	/* counter 0 kept its filters, value and run state */
	assert_int_equal(fake.c[0].flags, BASE_INH | SBI_PMU_CFG_FLAG_SET_VSINH);
	assert_true(fake.c[0].running);
	fake_advance(5);
	assert_int_equal(vpmu_ctr_value(v, 0), 1015);
	assert_int_equal(vpmu_hcounteren(v) & 1, 1);
}

/* ------------------------------------------------- release and eviction */

/*
 * RESET: the counter leaves the guest, and its physical counter stops with
 * its configuration kept (as a put leaves it): the same event configured
 * there again is taken over without the host, another evicts it.
 */
static void test_stop_reset_keeps_config_stopped(void **state)
{
	unsigned long i, val;
	unsigned int n;

	(void)state;
	i = cfg_start(0, ALLMASK, EV_INSTR, 0);
	fake_advance(7);
	assert_int_equal(STOP(i, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_false(fake.c[i].running);
	assert_true(fake_busy(i));
	assert_int_equal(fake.c[i].event_idx, EV_INSTR);
	assert_int_equal(v->ctr[i].state, VPMU_CTR_UNCONFIGURED);
	assert_int_equal(vpmu_hcounteren(v), 0);
	assert_int_equal(vpmu_csr_read(v, 0xc00 + i, &val), -1);
	assert_int_equal(START(i, 1, 0, 0).error, SBI_ERR_INVALID_PARAM);
	fake_advance(5); /* stopped: counts nothing */
	assert_int_equal(fake.c[i].value, 7);
	/* the same event again: taken over, no host configuration */
	n = fake.n_config;
	assert_int_equal(CFG(0, ALLMASK, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTR, 0).value, i);
	assert_int_equal(fake.n_config, n);
	assert_int_equal(START(i, 1, 0, 0).error, SBI_SUCCESS);
	assert_int_equal(fake.c[i].value, 0);
	fake_advance(3);
	assert_int_equal(vpmu_ctr_value(v, i), 3);
	assert_int_equal(STOP(i, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	/* another event: the host configures the counter anew */
	assert_int_equal(CFG(0, ALLMASK, 0, EV_DTLB_RD, 0).value, i);
	assert_int_equal(fake.n_config, n + 1);
	assert_int_equal(fake.c[i].event_idx, EV_DTLB_RD);
	/* RESET of a stopped counter reports ALREADY_STOPPED; it stays stopped */
	assert_int_equal(STOP(i, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_ERR_ALREADY_STOPPED);
	assert_false(fake.c[i].running);
	assert_int_equal(v->ctr[i].state, VPMU_CTR_UNCONFIGURED);
}

/*
 * A configuration made while the vCPU is put (SKIP_MATCH of another event
 * on a stopped counter) is not on its resident hart: the load places it,
 * and the physical counter counts the new event (V9)
 */
static void test_config_while_put_placed_at_load(void **state)
{
	unsigned long i;

	(void)state;
	i = cfg_start(0, ALLMASK, EV_INSTR, 0);
	assert_int_equal(STOP(i, 1, 0).error, SBI_SUCCESS);
	vpmu_vcpu_put(v);
	assert_int_equal(CFG(i, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH, EV_DTLB_RD, 0).error, SBI_SUCCESS);
	vpmu_vcpu_load(v);
	assert_int_equal(START(i, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0).error, SBI_SUCCESS);
	assert_int_equal(v->ctr[i].event_idx, EV_DTLB_RD);
	assert_int_equal(fake.c[i].event_idx, EV_DTLB_RD);
	assert_true(fake.c[i].running);
}

/*
 * ... and the old configuration it leaves there carries no overflow flag:
 * the counter overflowed and was stopped, the vCPU put, then configured
 * again (the fuzzer's find). Its physical counter is released at once, as
 * at a loaded configuration (place_unload_ctr), and the load configures it
 * anew: the new event has not overflowed, in scountovf either.
 */
static void test_config_while_put_drops_overflow_flag(void **state)
{
	unsigned long i, val;

	(void)state;
	i = CFG(0, ALLMASK, 0, EV_INSTR, 0).value;
	assert_int_equal(START(i, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, ~0UL).error, SBI_SUCCESS);
	fake_advance(3);
	assert_true(fake.c[i].of);
	assert_int_equal(STOP(i, 1, 0).error, SBI_SUCCESS);
	vpmu_vcpu_put(v);
	assert_true(fake.c[i].configured && fake.c[i].of);
	assert_int_equal(
		CFG(i, 1, SBI_PMU_CFG_FLAG_SKIP_MATCH | SBI_PMU_CFG_FLAG_SET_SINH, EV_INSTR, 0)
			.error,
		SBI_SUCCESS);
	assert_false(fake.c[i].configured);
	vpmu_vcpu_load(v);
	assert_true(fake.c[i].configured);
	assert_false(fake.c[i].of);
	assert_int_equal(vpmu_csr_read(v, VPMU_CSR_SCOUNTOVF, &val), 0);
	assert_int_equal(val & (1UL << i), 0);
}

/* A counter v left configured at RESET never counts for another vCPU's event */
static void test_stop_reset_config_evicted(void **state)
{
	struct vpmu *w = &other_vc.vpmu;

	(void)state;
	fake.event_exclusive = true;
	cfg_start(5, 1, EV_INSTR, 0);
	assert_int_equal(STOP(5, 1, SBI_PMU_STOP_FLAG_RESET).error, SBI_SUCCESS);
	assert_true(fake_busy(5));
	vpmu_vcpu_put(v);
	vpmu_vcpu_init(w);
	vpmu_vcpu_load(w);
	/* the same event on another counter: QEMU would count it on one only */
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_INSTR, 0).value, 4);
	assert_false(fake_busy(5));
	assert_int_equal(vpmu_counter_start(w, 4, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 10),
			 SBI_SUCCESS);
	fake_advance(6);
	assert_int_equal(vpmu_ctr_value(w, 4), 16);
}

/* Hosts that count an event on one counter only: another vCPU's stopped copy is evicted */
static void test_exclusive_event_evicts_other(void **state)
{
	struct vpmu *w;

	(void)state;
	fake.event_exclusive = true;
	vpmu_global_init();
	cfg_start(3, 1, EV_INSTR, 0);
	w = switch_to_other();
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_INSTR, 0).value, 4);
	assert_false(fake_busy(3)); /* v's stopped instret is gone from the hart */
	vpmu_vcpu_put(w);
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 1); /* reconfigured from its saved value */
}

/* ---------------------------------------------- take-over and take-back */

/*
 * A counter configured as needed is taken over only where the platform
 * counts its event: v asked for instructions twice, so the map (first come)
 * gives them to counter 5, and w's counter 3 taken over as it was would
 * stand still (the fuzz victim's instret did, 1 run in 3).
 */
static void test_takeover_needs_the_event_map(void **state)
{
	struct vpmu *w;

	(void)state;
	assert_int_equal(vpmu_counter_config_matching(v, 5, 1, 0, EV_INSTR, 0).value, 5);
	assert_int_equal(vpmu_counter_config_matching(v, 3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(fake.map[EV_INSTR], 5);
	w = switch_to_other();
	assert_int_equal(vpmu_counter_config_matching(w, 3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(vpmu_counter_start(w, 3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0),
			 SBI_SUCCESS);
	fake_advance(10);
	assert_int_equal(vpmu_ctr_value(w, 3), 10);
	assert_int_equal(fake.map[EV_INSTR], 3);
}

/*
 * A load starts the counters it takes over after it has configured the
 * others (load_counters). When one of those configurations lands on a
 * counter taken over but not started yet (the host's fixed-counter
 * fallback: phys_undo), the hardware still holds the other vCPU's value:
 * it is not v's to save, and v counts on from its own.
 */
static void test_undo_leaves_counter_taken_over(void **state)
{
	struct vpmu *w;

	(void)state;
	assert_int_equal(cfg_start(0, 1, EV_CYCLES, 1000), 0);
	assert_int_equal(vpmu_counter_config_matching(v, 5, 1, 0, EV_CYCLES, 0).value, 5);
	w = switch_to_other();
	assert_int_equal(vpmu_counter_config_matching(w, 0, 1, 0, EV_CYCLES, 0).value, 0);
	assert_int_equal(vpmu_counter_start(w, 0, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 50),
			 SBI_SUCCESS);
	/* counter 5 with other filters: v's must be configured again, not taken over */
	assert_int_equal(
		vpmu_counter_config_matching(w, 5, 1, SBI_PMU_CFG_FLAG_SET_UINH, EV_CYCLES, 0)
			.value,
		5);
	fake_advance(7);
	vpmu_vcpu_put(w);
	assert_int_equal(fake.c[0].value, 57);
	fake.cycles_map &= ~(1U << 5); /* now the host puts cycles asked on 5 on counter 0 */
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 2); /* 5, falling back to 0, and 0 again (phys_undo) */
	fake_advance(3);
	assert_int_equal(vpmu_ctr_value(v, 0), 1003);
	assert_int_equal(v->overflow, 0);
}

/*
 * Two vCPUs counting the same events on the same counters: the other one
 * takes v's counters over without configuring anything, so v's load takes
 * them back without a test or a host call (take_back), each started from
 * its own value; a counter the other one configured differently is not
 * taken back but configured again.
 */
static void test_take_back_after_takeover(void **state)
{
	struct vpmu *w;

	(void)state;
	cfg_start(3, 1, EV_INSTR, 100);
	cfg_start(4, 1, EV_DTLB_RD, 200);
	fake_advance(1);
	w = switch_to_other();
	fake.n_config = 0;
	assert_int_equal(vpmu_counter_config_matching(w, 3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_DTLB_RD, 0).value, 4);
	assert_int_equal(fake.n_config, 0); /* both taken over as they were */
	assert_int_equal(vpmu_counter_start(w, 3, 3, SBI_PMU_START_FLAG_SET_INIT_VALUE, 500),
			 SBI_SUCCESS);
	fake_advance(5);
	vpmu_vcpu_put(w);
	assert_int_equal(fake.c[3].value, 505);
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 0);
	fake_advance(2);
	assert_int_equal(vpmu_ctr_value(v, 3), 103);
	assert_int_equal(vpmu_ctr_value(v, 4), 203);
	vpmu_vcpu_put(v);
	vpmu_vcpu_load(w);
	assert_int_equal(vpmu_ctr_value(w, 3), 505);
	/* w gives counter 4 other filters: configured, so v's load must configure it again */
	assert_int_equal(vpmu_counter_stop(w, 4, 1, 0), SBI_SUCCESS);
	assert_int_equal(
		vpmu_counter_config_matching(w, 4, 1, SBI_PMU_CFG_FLAG_SET_UINH, EV_DTLB_RD, 0)
			.value,
		4);
	vpmu_vcpu_put(w);
	vpmu_vcpu_load(v);
	assert_int_equal(fake.c[4].flags, fake.c[3].flags); /* v's filters again, as on 3 */
	fake_advance(4);
	assert_int_equal(vpmu_ctr_value(v, 3), 107);
	assert_int_equal(vpmu_ctr_value(v, 4), 207);
}

/*
 * A release is a change of configuration too: the other vCPU's load
 * releases v's overflowed counter (its OF bit must not show), so v's load
 * configures it again instead of taking it back.
 */
static void test_no_take_back_after_release(void **state)
{
	struct vpmu *w;

	(void)state;
	cfg_start(3, 1, EV_INSTR, -5UL);
	fake_advance(10);
	assert_true(fake.c[3].of);
	w = switch_to_other();
	assert_false(fake_busy(3)); /* released by w's load */
	vpmu_vcpu_put(w);
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 1);
	assert_int_equal(fake.c[3].event_idx, EV_INSTR);
	fake_advance(2);
	assert_int_equal(vpmu_ctr_value(v, 3), 7);
}

/* Disjoint counters: switching back and forth never reconfigures */
static void test_disjoint_counters_no_reprogramming(void **state)
{
	struct vpmu *w;

	(void)state;
	cfg_start(3, 1, EV_INSTR, 0);
	w = switch_to_other();
	/* another event: on QEMU the same event on another counter evicts (above) */
	assert_int_equal(vpmu_counter_config_matching(w, 4, 1, 0, EV_DTLB_RD, 0).value, 4);
	assert_int_equal(vpmu_counter_start(w, 4, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0),
			 SBI_SUCCESS);
	for (int round = 0; round < 3; round++) {
		fake_advance(10);
		vpmu_vcpu_put(w);
		fake.n_config = 0;
		vpmu_vcpu_load(v);
		fake_advance(7);
		vpmu_vcpu_put(v);
		vpmu_vcpu_load(w);
		assert_int_equal(fake.n_config, 0);
	}
	fake_advance(1);
	assert_int_equal(vpmu_ctr_value(w, 4), 31);
	vpmu_vcpu_put(w);
	vpmu_vcpu_load(v);
	assert_int_equal(vpmu_ctr_value(v, 3), 21);
}

/*
 * A load skips the owner walk only when nobody changed an owner on the hart
 * since the put (owners_changed): here another vCPU releases counter 3 in
 * between, and the load must configure it again (one host configuration)
 * and start it from its saved value.
 */
static void test_load_sees_owner_change(void **state)
{
	struct vpmu *w;

	(void)state;
	w = other_takes_counter_3(100, 5);
	assert_int_equal(vpmu_counter_stop(w, 3, 1, SBI_PMU_STOP_FLAG_RESET),
			 SBI_ERR_ALREADY_STOPPED);
	vpmu_vcpu_put(w);
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 1);
	assert_true(fake.c[3].running);
	fake_advance(7);
	assert_int_equal(vpmu_ctr_value(v, 3), 112);
	/* and with no owner changed since, the next switch configures nothing */
	vpmu_vcpu_put(v);
	fake.n_config = 0;
	vpmu_vcpu_load(v);
	assert_int_equal(fake.n_config, 0);
	fake_advance(1);
	assert_int_equal(vpmu_ctr_value(v, 3), 113);
}

/*
 * A configuration is taken over only from a vCPU of the same guest: one of
 * another guest configures the counter anew (a host call), so the time its
 * CONFIG_MATCHING takes does not tell which events v had there.
 */
static void test_no_take_over_between_guests(void **state)
{
	struct vpmu *w;

	(void)state;
	cfg_start(3, 1, EV_INSTR, 100);
	fake_advance(1);
	w = switch_to_other();
	vpmu_vcpu_set_guest(w, 1);
	fake.n_config = 0;
	assert_int_equal(vpmu_counter_config_matching(w, 3, 1, 0, EV_INSTR, 0).value, 3);
	assert_int_equal(fake.n_config, 1);
	assert_ptr_equal(fake_hart->owner[3], w);
	/* and v, back, configures its counter again and counts on from its value */
	vpmu_vcpu_put(w);
	vpmu_vcpu_load(v);
	fake_advance(2);
	assert_int_equal(vpmu_ctr_value(v, 3), 103);
}

/*
 * The hart's owner and configuration counts never wrap: after another
 * vCPU made 2^32 changes, a load must not take them for "nothing changed"
 * and continue the other vCPU's counter as its own (32-bit counts did: v
 * read 5,014 instead of 111).
 */
static void test_generation_counts_do_not_wrap(void **state)
{
	struct vpmu *w;

	(void)state;
	w = other_takes_counter_3(100, 5);
	assert_int_equal(vpmu_counter_start(w, 3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 5000),
			 SBI_SUCCESS);
	fake_advance(8);
	vpmu_vcpu_put(w);
	/* as if the other vCPU had made exactly 2^32 changes since v's put */
	fake_hart->owners_changed = v->owners_seen + (1ULL << 32);
	fake_hart->configs_changed = v->configs_seen + (1ULL << 32);
	vpmu_vcpu_load(v);
	fake_advance(6);
	assert_int_equal(vpmu_ctr_value(v, 3), 111);
}

/* --------------------------------------------------------------- starts */

/*
 * The delegation backend's start clears OF itself (start_keeps_of false):
 * vpmu starts the counter at once and leaves a pending LCOFI to the hart,
 * and it asks the core about exclusive counting only while that is on
 */
static void test_start_direct(void **state)
{
	(void)state;
	fake.start_keeps_of = false;
	vpmu_set_exclusive(false);
	reboot_host();
	assert_int_equal(vpmu_counter_config_matching(v, 4, 1, 0, EV_INSTR, 0).value, 4);
	fake.lcofip = true; /* another counter's overflow, not taken yet */
	fake.c[4].of = true;
	fake.n_counting_starts = 0;
	assert_int_equal(vpmu_counter_start(v, 4, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 100),
			 SBI_SUCCESS);
	assert_true(fake.c[4].running);
	assert_int_equal(fake.c[4].value, 100);
	assert_false(fake.c[4].of);
	assert_true(fake.lcofip); /* the hart takes it when it next can */
	assert_int_equal(fake.n_counting_starts, 0);
	assert_int_equal(vpmu_counter_stop(v, 4, 1, 0), SBI_SUCCESS);
	vpmu_set_exclusive(true); /* the start that waits for the token: the same LCOFI rule */
	assert_int_equal(vpmu_counter_start(v, 4, 1, 0, 0), SBI_SUCCESS);
	assert_int_equal(fake.n_counting_starts, 1);
	assert_true(fake.lcofip);
	assert_int_equal(vpmu_ctr_value(v, 4), 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_cfg_host_fallback_undone),
		T(test_stop_reset_keeps_config_stopped),
		T(test_config_while_put_placed_at_load),
		T(test_stop_reset_config_evicted),
		T(test_exclusive_event_evicts_other),
		T(test_takeover_needs_the_event_map),
		T(test_undo_leaves_counter_taken_over),
		T(test_take_back_after_takeover),
		T(test_no_take_back_after_release),
		T(test_disjoint_counters_no_reprogramming),
		T(test_load_sees_owner_change),
		T(test_generation_counts_do_not_wrap),
		T(test_no_take_over_between_guests),
		T(test_start_direct),
		T(test_config_while_put_drops_overflow_flag),
	};

	return cmocka_run_group_tests_name("vpmu_place", tests, NULL, NULL);
}
