/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the QEMU quirks' workarounds (vpmu/phys/qemu.c) against a
 * fake backend that records what it is asked to do and fake counter CSRs:
 * the bias arithmetic (bias), the far marks and consuming starts (stale-deadline),
 * masked starts and starts with values, the event map (event-map), and the boot
 * switch (pmu-quirks=). qemu.c and qemu_tlb.c are included whole, so their statics are here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "vpmu/phys/qemu.c"
#include "vpmu/phys/qemu_tlb.c"

/* ---- the fake hart and backend ---- */

static struct fake_percpu percpu;
char *fake_percpu = (char *)&percpu;

static uint64_t csr[PHYS_MAX_HW]; /* the counters' CSRs (values as the backend left them) */
/*
 * The counters' OF bits as the SBI backend leaves them: a configuration
 * sets one, a plain start clears it, a held start keeps it as it is
 */
static uint32_t of;

/* What the backend was asked, in order: "S3=v" start, "P3" stop, "R3" release, ... */
static char log_buf[1024];

static void note(const char *fmt, ...)
{
	size_t n = strlen(log_buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(log_buf + n, sizeof(log_buf) - n, fmt, ap);
	va_end(ap);
}

uint64_t phys_read_csr(unsigned int idx)
{
	return csr[idx];
}

static long fake_start(unsigned int idx, uint64_t value)
{
	csr[idx] = value;
	of &= ~(1U << idx);
	note("S%u=%llx ", idx, (unsigned long long)value);
	return SBI_SUCCESS;
}

static long fake_start_held(unsigned int idx, uint64_t value)
{
	csr[idx] = value;
	note("T%u=%llx ", idx, (unsigned long long)value);
	return SBI_SUCCESS;
}

static long fake_stop(unsigned int idx)
{
	note("P%u ", idx);
	return SBI_SUCCESS;
}

static long fake_release(unsigned int idx)
{
	note("R%u ", idx);
	of &= ~(1U << idx); /* the host's reset writes mhpmevent 0 */
	return SBI_SUCCESS;
}

static long fake_release_host(unsigned int idx)
{
	note("H%u ", idx);
	return SBI_SUCCESS;
}

static long fake_start_mask(uint32_t mask)
{
	note("M%x ", mask);
	of &= ~mask;
	return SBI_SUCCESS;
}

static void fake_start_values(uint32_t mask, const uint64_t *values, size_t stride)
{
	note("V%x", mask);
	of &= ~mask;
	for (unsigned int i = 0; i < PHYS_MAX_HW; i++)
		if ((mask >> i) & 1) {
			csr[i] = values[i * stride];
			note(":%u=%llx", i, (unsigned long long)csr[i]);
		}
	note(" ");
}

static bool direct_ok = true;

static bool fake_config_direct(unsigned int idx, unsigned long flags, unsigned long ev,
			       uint64_t data)
{
	(void)flags;
	(void)data;
	if (!direct_ok)
		return false;
	note("D%u=%lx ", idx, ev);
	of |= 1U << idx;
	return true;
}

static struct sbi_ret fake_config_host(unsigned int idx, unsigned long flags, unsigned long ev,
				       uint64_t data)
{
	(void)flags;
	(void)data;
	note("C%u=%lx ", idx, ev);
	of |= 1U << idx;
	return (struct sbi_ret){SBI_SUCCESS, idx};
}

static const struct phys_ops fake_backend = {
	.name = "fake",
	.config_direct = fake_config_direct,
	.config_host = fake_config_host,
	.start = fake_start,
	.start_held = fake_start_held,
	.stop = fake_stop,
	.release = fake_release,
	.release_host = fake_release_host,
	.start_mask = fake_start_mask,
	.start_values = fake_start_values,
	.keeps_of = true, /* as the SBI backend: its held start cannot set OF */
};

uint32_t vpmu_phys_overflowed(void)
{
	return of;
}

/* ---- what qemu.c needs from the host ---- */

static const char *bootargs_quirks; /* the value of pmu-quirks=, or NULL */
static bool on_qemu = true;

const char *vpmu_host_option_value(const char *key)
{
	assert_string_equal(key, "pmu-quirks");
	return bootargs_quirks;
}

bool vpmu_host_is_qemu(void)
{
	return on_qemu;
}

void hv_printf(const char *fmt, ...)
{
	(void)fmt;
}

static struct phys_ops ops;

/* Boot with these quirks wanted, counters 3..18 64 bits wide */
static void boot(const char *quirks)
{
	memset(&percpu, 0, sizeof(percpu));
	memset(csr, 0, sizeof(csr));
	of = 0;
	log_buf[0] = '\0';
	qemu_ever_biased = 0;
	bootargs_quirks = quirks;
	direct_ok = true;
	ops = fake_backend;
	qemu_quirks_init(&ops);
	qemu_set_wide(0x7fff8);
	qemu_note_icount(false);
}

static int setup(void **state)
{
	(void)state;
	on_qemu = true;
	boot(NULL);
	return 0;
}

static struct qemu_hart *q(void)
{
	return &percpu.phys.qemu;
}

/* ---- bias: the bias ---- */

/* The assertions' original form: cycles and instret masks, counters running low */
#define phys_upper_half_bias upper_half_bias
static bool phys_needs_bias(uint32_t cyc, uint32_t ins, uint32_t low, unsigned int idx,
			    uint64_t value)
{
	struct qemu_hart h = {.cyc = cyc, .ins = ins, .low = low};

	return needs_bias(&h, idx, value);
}

/*
 * A value below 2^63 runs on the host in [2^63, 2^63 + 2^62), so that it
 * cannot wrap there before 2^62 counts; the bias comes off exactly.
 */
static void test_upper_half_bias(void **state)
{
	static const uint64_t below[] = {
		0, 1, 1000, (1ULL << 62) - 1, 1ULL << 62, (1ULL << 62) + 1, (1ULL << 63) - 1};
	static const uint64_t above[] = {1ULL << 63, (1ULL << 63) + 1, ~0ULL, -10000ULL};

	(void)state;
	for (unsigned int k = 0; k < sizeof(below) / sizeof(below[0]); k++) {
		uint64_t b = phys_upper_half_bias(below[k]), run = below[k] + b;

		assert_true(run >= 1ULL << 63);
		assert_true(run - (1ULL << 63) < 1ULL << 62);
		assert_int_equal(run - b, below[k]);
	}
	assert_int_equal(phys_upper_half_bias(1000), 1ULL << 63);
	assert_int_equal(phys_upper_half_bias(1ULL << 62), 1ULL << 62);
	for (unsigned int k = 0; k < sizeof(above) / sizeof(above[0]); k++)
		assert_int_equal(phys_upper_half_bias(above[k]), 0);
}

/* ... but only where QEMU could loop: one counter of each timed event below 2^63 */
static void test_bias_only_for_the_second_event(void **state)
{
	const uint32_t cyc = 1U << 3 | 1U << 5 | 1U << 6, ins = 1U << 4 | 1U << 6; /* 6: raw */

	(void)state;
	assert_false(phys_needs_bias(cyc, ins, 0, 3, 0));	  /* alone: direct reads */
	assert_true(phys_needs_bias(cyc, ins, 1U << 3, 4, 0));	  /* instret beside cycles */
	assert_true(phys_needs_bias(cyc, ins, 1U << 4, 3, 1000)); /* and the other way */
	assert_false(phys_needs_bias(cyc, ins, 1U << 3, 4, (1ULL << 63) + 1)); /* Linux's value */
	assert_false(phys_needs_bias(cyc, ins, 1U << 3, 5, 0));		       /* cycles again */
	assert_true(phys_needs_bias(cyc, ins, 1U << 3, 6, 0)); /* raw: either event */
	assert_true(phys_needs_bias(cyc, ins, 1U << 6, 3, 0));
	assert_false(phys_needs_bias(cyc, ins, 1U << 3, 3, 0)); /* itself, restarted */
	assert_false(phys_needs_bias(cyc, ins, 1U << 3, 7, 0)); /* not a timed event */
}

/*
 * Cycles on 3 from 0 runs low and unbiased (direct reads); instret on 4
 * from 1000 then runs biased by 2^63: the backend gets 2^63 + 1000, a read
 * takes the bias off, hcounteren hides 4 (and is forgotten, to be written
 * again), 3 stays readable.
 */
static void test_start_biases_the_second_event(void **state)
{
	(void)state;
	assert_int_equal(qemu_config(3, 0, SBI_PMU_HW_CPU_CYCLES, 0).value, 3);
	assert_int_equal(qemu_config(4, 0, SBI_PMU_HW_INSTRUCTIONS, 0).value, 4);
	log_buf[0] = '\0';
	percpu.phys.counteren = 0x18;
	assert_int_equal(qemu_start(3, 0), SBI_SUCCESS);
	assert_int_equal(percpu.phys.counteren, 0x18);
	assert_int_equal(qemu_start(4, 1000), SBI_SUCCESS);
	assert_string_equal(log_buf, "S3=0 S4=80000000000003e8 ");
	assert_int_equal(q()->low, 1U << 3);
	assert_int_equal(q()->bias63, 1U << 4);
	assert_int_equal(qemu_ever_biased, 1U << 4);
	assert_int_equal(percpu.phys.counteren, ~0UL);
	assert_int_equal(csr[4] - qemu_bias_of(4), 1000);
	assert_int_equal(qemu_bias_of(3), 0);
	assert_int_equal(qemu_hide_biased(0x18), 0x08);
	/* from 2^62 on, the bias is 2^62: still at least 2^62 counts from a wrap */
	assert_int_equal(qemu_start(4, 1ULL << 62), SBI_SUCCESS);
	assert_int_equal(csr[4], 1ULL << 63);
	assert_int_equal(q()->bias62, 1U << 4);
	assert_int_equal(q()->bias63, 0);
	/* started again from Linux's value: no bias, and reads see it as it is */
	assert_int_equal(qemu_start(4, (1ULL << 63) + 1), SBI_SUCCESS);
	assert_int_equal(csr[4], (1ULL << 63) + 1);
	assert_int_equal(qemu_bias_of(4), 0);
	assert_int_equal(qemu_hide_biased(0x18), 0x18);
}

/* A counter configured for another event (TLB) never pairs */
static void test_other_events_never_biased(void **state)
{
	(void)state;
	qemu_config(3, 0, SBI_PMU_HW_CPU_CYCLES, 0);
	qemu_config(4, 0, 0x10019, 0);
	qemu_start(3, 0);
	qemu_start(4, 0);
	assert_int_equal(csr[4], 0);
	assert_int_equal(qemu_ever_biased, 0);
}

/*
 * A vCPU switch's masked start: instret on 4 stopped at 50 (below 2^63,
 * not checked when it started) while cycles on 3 runs low: 4 starts alone,
 * biased, the rest in one masked start.
 */
static void test_start_mask_pairs_start_alone(void **state)
{
	(void)state;
	qemu_config(3, 0, SBI_PMU_HW_CPU_CYCLES, 0);
	qemu_config(4, 0, SBI_PMU_HW_INSTRUCTIONS, 0);
	qemu_config(5, 0, 0x10019, 0);
	qemu_start(3, 0);
	csr[4] = 50;
	csr[5] = 7;
	log_buf[0] = '\0';
	assert_int_equal(qemu_start_mask(0x38), SBI_SUCCESS);
	assert_string_equal(log_buf, "M28 S4=8000000000000032 ");
	assert_int_equal(csr[4] - qemu_bias_of(4), 50);
}

/* ---- stale-deadline: the stale deadline ---- */

/*
 * A counter started far from its top (Linux's counting value), then near
 * it (a sampler): the backend first runs it 256 below its top and stops
 * it, then starts it properly; only once. One never started far needs none.
 */
static void test_near_start_after_far_consumes(void **state)
{
	(void)state;
	qemu_start(5, (1ULL << 63) + 1);
	assert_true((q()->far >> 5) & 1);
	log_buf[0] = '\0';
	qemu_start(5, -10000ULL);
	assert_string_equal(log_buf, "S5=ffffffffffffff00 P5 S5=ffffffffffffd8f0 ");
	assert_false((q()->far >> 5) & 1);
	log_buf[0] = '\0';
	qemu_start(5, -10000ULL);
	assert_string_equal(log_buf, "S5=ffffffffffffd8f0 ");
	/* the fixed counters have no overflow: never consumed */
	log_buf[0] = '\0';
	qemu_start(2, (1ULL << 63) + 1);
	qemu_start(2, -10000ULL);
	assert_string_equal(log_buf, "S2=8000000000000001 S2=ffffffffffffd8f0 ");
}

/* From 0, below 2^63 (a guest's own count), is far from the top as well */
static void test_low_start_is_far(void **state)
{
	(void)state;
	q()->init = true;
	q()->far = 0;
	qemu_start(6, 0);
	log_buf[0] = '\0';
	qemu_start(6, -100ULL);
	assert_string_equal(log_buf, "S6=ffffffffffffff00 P6 S6=ffffffffffffff9c ");
}

/* At boot every counter counts as started far (the firmware and the probes did) */
static void test_first_near_start_consumes(void **state)
{
	(void)state;
	qemu_start(7, -100ULL);
	assert_string_equal(log_buf, "S7=ffffffffffffff00 P7 S7=ffffffffffffff9c ");
}

/*
 * Starts with values (a load's taken-over counters): one near its top and
 * marked far starts alone after consuming; the others start together, far
 * ones marked.
 */
static void test_start_values_near_and_far(void **state)
{
	uint64_t values[32] = {0};

	(void)state;
	q()->init = true;
	q()->far = 1U << 3; /* 3 ran far before, 4 did not */
	values[3] = -500ULL;
	values[4] = -600ULL;
	values[5] = (1ULL << 63) + 1;
	qemu_start_values(0x38, values, 1);
	assert_string_equal(log_buf, "V30:4=fffffffffffffda8:5=8000000000000001 "
				     "S3=ffffffffffffff00 P3 S3=fffffffffffffe0c ");
	assert_int_equal(q()->far, 1U << 5);
}

/* A masked start reads only counters not marked far, and marks those that are far now */
static void test_start_mask_marks_far(void **state)
{
	(void)state;
	q()->init = true;
	q()->far = 0;
	csr[3] = 12;	   /* far from its top (a counter started from 0) */
	csr[4] = -2000ULL; /* near */
	qemu_start_mask(0x18);
	assert_int_equal(q()->far, 1U << 3);
	assert_string_equal(log_buf, "M18 ");
}

/* ---- event-map: the event map ---- */

/*
 * Instret configured on 3 (through the host: the map changes) is QEMU's;
 * configured again on 3 it stays direct. Released on 3 (the map keeps it)
 * and configured on 4, the host first releases 3 in M-mode, so that QEMU
 * maps instret to 4.
 */
static void test_event_map(void **state)
{
	(void)state;
	direct_ok = true;
	qemu_config(3, 0, SBI_PMU_HW_INSTRUCTIONS, 0);
	assert_string_equal(log_buf, "C3=2 ");
	assert_int_equal(q()->ev[3], SBI_PMU_HW_INSTRUCTIONS);
	assert_int_equal(qemu_holder_of(q(), SBI_PMU_HW_INSTRUCTIONS), 3);
	log_buf[0] = '\0';
	qemu_config(3, 0, SBI_PMU_HW_INSTRUCTIONS, 0);
	assert_string_equal(log_buf, "D3=2 ");
	log_buf[0] = '\0';
	qemu_release(3);
	qemu_config(4, 0, SBI_PMU_HW_INSTRUCTIONS, 0);
	assert_string_equal(log_buf, "R3 H3 C4=2 ");
	assert_int_equal(q()->ev[3], 0);
	assert_int_equal(q()->ev[4], SBI_PMU_HW_INSTRUCTIONS);
	/* a second live counter of the event: the map stays, 5 counts nothing */
	log_buf[0] = '\0';
	qemu_config(5, 0, SBI_PMU_HW_INSTRUCTIONS, 0);
	assert_string_equal(log_buf, "D5=2 ");
	assert_int_equal(q()->ev[5], 0);
}

/* ---- tlb-overflow ---- */

/*
 * Under -icount a TLB-event counter near its top starts with OF held set
 * (QEMU would abort raising its interrupt from a TLB fill): alone, by value,
 * in a masked start and among starts with values. One far from its top
 * (counting) needs 2^62 events to wrap and starts as any other, as do other
 * events' counters and everything without -icount. The fake's `of` is the
 * SBI backend's: a held start keeps OF but cannot set it, so a counter a
 * plain start ran (perf stat) is configured by the host again before it
 * runs held (perf record's counter taken over without the host).
 */
static void test_tlb_counters_start_held(void **state)
{
	uint64_t values[32] = {0};

	(void)state;
	qemu_config(3, 0, 0x10019, 0);
	qemu_config(4, 0, SBI_PMU_HW_INSTRUCTIONS, 0);
	log_buf[0] = '\0';
	qemu_start(3, -10ULL);
	assert_string_equal(log_buf, "S3=ffffffffffffff00 P3 S3=fffffffffffffff6 ");
	qemu_note_icount(true); /* at boot, before guests configure counters */
	qemu_config(3, SBI_PMU_CFG_FLAG_SET_UINH, 0x10019, 0);
	log_buf[0] = '\0';
	qemu_start(4, (1ULL << 63) + 1);
	qemu_start(3, -10ULL);
	assert_string_equal(log_buf, "S4=8000000000000001 T3=fffffffffffffff6 ");
	assert_true((of >> 3) & 1);
	assert_false((q()->far >> 3) & 1); /* it runs near its top now */
	/* counted from 0, then near its top: the host configures it first */
	log_buf[0] = '\0';
	qemu_start(3, 0);
	qemu_start(3, -10ULL);
	assert_string_equal(log_buf, "S3=0 R3 D3=10019 T3=fffffffffffffff6 ");
	assert_true((of >> 3) & 1);
	assert_int_equal(q()->tlb_flags[3], SBI_PMU_CFG_FLAG_SET_UINH);
	log_buf[0] = '\0';
	csr[3] = -77ULL;
	qemu_start_mask(0x18);
	assert_string_equal(log_buf, "M10 T3=ffffffffffffffb3 ");
	log_buf[0] = '\0';
	csr[3] = 77;
	q()->far |= 1U << 3; /* started far (from 0) */
	qemu_start_mask(0x18);
	assert_string_equal(log_buf, "M18 ");
	log_buf[0] = '\0';
	values[3] = -5ULL;
	values[4] = (1ULL << 63) + 2;
	qemu_start_values(0x18, values, 1);
	assert_string_equal(log_buf, "V10:4=8000000000000002 R3 D3=10019 T3=fffffffffffffffb ");
	assert_true((of >> 3) & 1);
	/* configured for another event, counter 3 starts plainly again */
	qemu_config(3, 0, SBI_PMU_HW_CPU_CYCLES, 0);
	log_buf[0] = '\0';
	qemu_start(3, -10ULL); /* it last ran near its top: nothing stale to consume */
	assert_string_equal(log_buf, "S3=fffffffffffffff6 ");
}

/* ---- the switch ---- */

static void test_quirks_switch(void **state)
{
	(void)state;
	assert_int_equal(qemu_quirks, QEMU_QUIRKS_ALL); /* QEMU's virt: all of them */
	boot("none");
	assert_int_equal(qemu_quirks, 0);
	assert_ptr_equal(ops.start, fake_start); /* the backend unwrapped */
	boot("bias,event-map");
	assert_int_equal(qemu_quirks, QEMU_BIAS | QEMU_EVENT_MAP);
	assert_ptr_equal(ops.start, qemu_start);
	boot("all");
	assert_int_equal(qemu_quirks, QEMU_QUIRKS_ALL);
	on_qemu = false;
	boot(NULL);
	assert_int_equal(qemu_quirks, 0);
	boot("stale-deadline");
	assert_int_equal(qemu_quirks, QEMU_STALE_DEADLINE);
}

/* stale-deadline off: no far marks, no consuming start; bias off: nothing ever biased */
static void test_quirks_off_do_nothing(void **state)
{
	(void)state;
	boot("event-map");
	qemu_config(3, 0, SBI_PMU_HW_CPU_CYCLES, 0);
	qemu_config(4, 0, SBI_PMU_HW_INSTRUCTIONS, 0);
	log_buf[0] = '\0';
	qemu_start(3, 0);
	qemu_start(4, 1000);
	qemu_start(5, -100ULL);
	assert_string_equal(log_buf, "S3=0 S4=3e8 S5=ffffffffffffff9c ");
	assert_int_equal(qemu_ever_biased, 0);
	assert_int_equal(q()->far, 0);
}

#define T(f) cmocka_unit_test_setup(f, setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_upper_half_bias),
		T(test_bias_only_for_the_second_event),
		T(test_start_biases_the_second_event),
		T(test_other_events_never_biased),
		T(test_start_mask_pairs_start_alone),
		T(test_near_start_after_far_consumes),
		T(test_low_start_is_far),
		T(test_first_near_start_consumes),
		T(test_start_values_near_and_far),
		T(test_start_mask_marks_far),
		T(test_event_map),
		T(test_tlb_counters_start_held),
		T(test_quirks_switch),
		T(test_quirks_off_do_nothing),
	};

	return cmocka_run_group_tests_name("qemu-quirks", tests, NULL, NULL);
}
