// SPDX-License-Identifier: BSD-2-Clause
/*
 * soak: long-running counters with overflow sampling on every vCPU
 * (tools/soak.py, `make soak`; not part of `make test`).
 *
 * Every vCPU samples instret on a programmable counter: started at -PERIOD,
 * each LCOFI stops it with TAKE_SNAPSHOT (its overflow bit must be set),
 * counts the interrupt and restarts it at -PERIOD. Meanwhile it checks that
 * the cycle counter never goes backwards, that a counter started with every
 * inhibit flag holds its initial value, and that a SET_TIMER firmware
 * counter equals its own set_timer calls exactly. At the end it releases
 * everything (STOP with RESET of every counter), waits for late interrupts,
 * checks that each hardware counter can be configured again on its own
 * (nothing left configured) and prints one line per vCPU for tools/soak.py:
 *   soak: vcpu <n>: <k> LCOFI, <r> rearms, <s> snapshot-ovf-missing, ...
 *
 * bootargs: "seconds=<n>" (default 60), "period=<n>" (default 10000000);
 * "probe seconds=<n>": a single-vCPU guest that sleeps n seconds (while the
 * soak guests run and stop) and then checks every hardware counter of a fresh
 * vCPU: configurable alone, an inhibited counter holds its value, an
 * instret counter counts (nothing left behind by the stopped guests).
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("soak");

#define IRQ_LCOF 13
#define EV_FW(c) ((0xfUL << 16) | (c))
#define NO_COUNT                                                                                   \
	(SBI_PMU_CFG_FLAG_SET_VUINH | SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_UINH |     \
	 SBI_PMU_CFG_FLAG_SET_SINH | SBI_PMU_CFG_FLAG_SET_MINH)
#define HOLD 0x5a5a5a5aUL

struct vstate {
	uint64_t shmem[512] __attribute__((aligned(4096)));
	volatile unsigned long lcofi, rearms, ovf_missing, bad_irq, stop_err, start_err;
	unsigned long loops, timers, back_cycles, bad_hold, bad_fw, silent_wraps;
	long ctr;
};

static struct vstate vs[GT_MAX_HARTS] __attribute__((aligned(4096)));
static unsigned long num, hw_mask, prog_mask, fw_mask, seconds, period, nr_vcpus;
static volatile unsigned long done;

static struct sbi_ret pmu(unsigned long fid, unsigned long a0, unsigned long a1, unsigned long a2,
			  unsigned long a3)
{
	return gt_sbi_call(SBI_EXT_PMU, fid, a0, a1, a2, a3, 0, 0);
}

static unsigned long read_counter(unsigned long idx)
{
	return gt_pmu_read_csr(idx);
}

static void lcofi(unsigned long irq, struct gt_frame *f)
{
	struct vstate *s = &vs[gt_hartid()];
	struct sbi_ret r;

	if (irq != IRQ_LCOF || f->scause != (SCAUSE_IRQ | IRQ_LCOF))
		s->bad_irq++;
	s->lcofi++;
	csr_clear(sip, 1UL << IRQ_LCOF);
	if (s->ctr < 0)
		return;
	r = pmu(SBI_EXT_PMU_COUNTER_STOP, (unsigned long)s->ctr, 1, SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT,
		0);
	if (r.error == SBI_ERR_ALREADY_STOPPED)
		return; /* a late LCOFI while the main loop re-arms by hand: it restarts it */
	if (r.error)
		s->stop_err++;
	else if (!(s->shmem[0] & 1))
		s->ovf_missing++;
	r = pmu(SBI_EXT_PMU_COUNTER_START, (unsigned long)s->ctr, 1,
		SBI_PMU_START_FLAG_SET_INIT_VALUE, -period);
	if (r.error)
		s->start_err++;
	else
		s->rearms++;
}

static unsigned long parse_num(const char *s, const char *key, unsigned long def)
{
	unsigned long klen = __builtin_strlen(key), v = 0;

	for (const char *p = s; p && *p; p++)
		if ((p == s || p[-1] == ' ') && !__builtin_strncmp(p, key, klen)) {
			for (p += klen; *p >= '0' && *p <= '9'; p++)
				v = v * 10 + (unsigned long)(*p - '0');
			return v;
		}
	return def;
}

static void spin(unsigned long n)
{
	asm volatile("1: addi %0, %0, -1\n bnez %0, 1b" : "+r"(n)::"memory");
}

/* Each hardware counter, alone: configurable, holds an inhibited value; instret counts */
static void check_all_free(const char *who)
{
	char nm[64];
	unsigned long bad_cfg = 0, bad_hold = 0, counts = 0;

	for (unsigned long i = 0; i < num && i < 32; i++) {
		unsigned long ev = i == 0 ? SBI_PMU_HW_CPU_CYCLES : SBI_PMU_HW_INSTRUCTIONS;
		struct sbi_ret r;

		if (!((hw_mask >> i) & 1))
			continue;
		r = pmu(SBI_EXT_PMU_COUNTER_CFG_MATCH, i, 1, NO_COUNT, ev);
		if (r.error || r.value != i) {
			bad_cfg++;
			gt_printf("soak: %s: counter %lu not free: error %ld value %lu\n", who, i,
				  r.error, r.value);
			continue;
		}
		pmu(SBI_EXT_PMU_COUNTER_START, i, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, HOLD);
		spin(10000);
		if (read_counter(i) != HOLD)
			bad_hold++;
		pmu(SBI_EXT_PMU_COUNTER_STOP, i, 1, SBI_PMU_STOP_FLAG_RESET, 0);
		if (i < 3)
			continue;
		r = pmu(SBI_EXT_PMU_COUNTER_CFG_MATCH, i, 1,
			SBI_PMU_CFG_FLAG_CLEAR_VALUE | SBI_PMU_CFG_FLAG_AUTO_START, ev);
		spin(10000);
		if (!r.error && read_counter(i) > 0)
			counts++;
		pmu(SBI_EXT_PMU_COUNTER_STOP, i, 1, SBI_PMU_STOP_FLAG_RESET, 0);
	}
	gt_snprintf(nm, sizeof(nm), "%s-counters-free", who);
	GT_CHECK_EQ(nm, bad_cfg, 0);
	gt_snprintf(nm, sizeof(nm), "%s-inhibited-holds", who);
	GT_CHECK_EQ(nm, bad_hold, 0);
	gt_snprintf(nm, sizeof(nm), "%s-programmable-count", who);
	GT_CHECK_EQ(nm, counts, (unsigned long)__builtin_popcountl(prog_mask));
}

static void soak(unsigned long hart)
{
	struct vstate *s = &vs[hart];
	long hold, fw;
	unsigned long last = 0;
	uint64_t end;
	struct sbi_ret r;

	s->ctr = -1;
	r = pmu(SBI_EXT_PMU_SNAPSHOT_SET_SHMEM, (unsigned long)s->shmem, 0, 0, 0);
	GT_CHECK_SBI("shmem-set", r, SBI_SUCCESS);
	r = pmu(SBI_EXT_PMU_COUNTER_CFG_MATCH, 0, fw_mask,
		SBI_PMU_CFG_FLAG_CLEAR_VALUE | SBI_PMU_CFG_FLAG_AUTO_START,
		EV_FW(SBI_PMU_FW_SET_TIMER));
	fw = r.error ? -1 : (long)r.value;
	r = pmu(SBI_EXT_PMU_COUNTER_CFG_MATCH, 0, prog_mask, NO_COUNT, 0x10019UL);
	hold = r.error ? -1 : (long)r.value;
	if (hold >= 0)
		pmu(SBI_EXT_PMU_COUNTER_START, (unsigned long)hold, 1,
		    SBI_PMU_START_FLAG_SET_INIT_VALUE, HOLD);
	r = pmu(SBI_EXT_PMU_COUNTER_CFG_MATCH, 0, prog_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		SBI_PMU_HW_INSTRUCTIONS);
	GT_CHECK_SBI("cfg-sampling", r, SBI_SUCCESS);
	if (r.error)
		return;
	s->ctr = (long)r.value;
	/* a second, running counter: best effort, the soak does not depend on it */
	(void)pmu(SBI_EXT_PMU_COUNTER_CFG_MATCH, 0, 1,
		  SBI_PMU_CFG_FLAG_CLEAR_VALUE | SBI_PMU_CFG_FLAG_AUTO_START,
		  SBI_PMU_HW_CPU_CYCLES);
	gt_irq_register(IRQ_LCOF, lcofi);
	csr_set(sie, 1UL << IRQ_LCOF);
	gt_irq_enable();
	pmu(SBI_EXT_PMU_COUNTER_START, (unsigned long)s->ctr, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE,
	    -period);

	end = gt_rdtime() + seconds * gt_timebase();
	while (gt_rdtime() < end) {
		unsigned long c = read_counter(0);

		s->loops++;
		if (c < last)
			s->back_cycles++;
		last = c;
		if (hold >= 0 && read_counter((unsigned long)hold) != HOLD)
			s->bad_hold++;
		if (fw >= 0 && (s->loops & 7) == 0) {
			gt_sbi_set_timer(~0UL);
			s->timers++;
			r = pmu(SBI_EXT_PMU_COUNTER_FW_READ, (unsigned long)fw, 0, 0, 0);
			if (r.error || r.value != s->timers) {
				if (s->bad_fw++ < 3)
					gt_printf("soak: hart %lu: SET_TIMER counter %lu, expected "
						  "%lu\n",
						  hart, r.value, s->timers);
				s->timers = r.value;
			}
		}
		/*
		 * The sampling counter wrapped (reads below 2^63) and no LCOFI came
		 * within 50 ms: an overflow nobody raised. Count it and re-arm by hand.
		 */
		if (read_counter((unsigned long)s->ctr) < (1UL << 63)) {
			unsigned long before = s->lcofi;
			uint64_t t = gt_rdtime() + gt_timebase() / 20;

			while (s->lcofi == before && gt_rdtime() < t)
				gt_cpu_relax();
			if (s->lcofi == before &&
			    read_counter((unsigned long)s->ctr) < (1UL << 63)) {
				s->silent_wraps++;
				pmu(SBI_EXT_PMU_COUNTER_STOP, (unsigned long)s->ctr, 1, 0, 0);
				pmu(SBI_EXT_PMU_COUNTER_START, (unsigned long)s->ctr, 1,
				    SBI_PMU_START_FLAG_SET_INIT_VALUE, -period);
			}
		}
		spin(20000);
	}
	/* release everything, then let late interrupts arrive */
	pmu(SBI_EXT_PMU_COUNTER_STOP, 0, hw_mask | fw_mask, SBI_PMU_STOP_FLAG_RESET, 0);
	s->ctr = -1;
	gt_delay_ticks(gt_timebase() / 5);
	gt_irq_disable();
	pmu(SBI_EXT_PMU_SNAPSHOT_SET_SHMEM, ~0UL, ~0UL, 0, 0);
}

static void report(unsigned long hart)
{
	struct vstate *s = &vs[hart];
	char nm[64];

	gt_printf(
		"soak: vcpu %lu: %lu LCOFI, %lu rearms, %lu snapshot-ovf-missing, %lu bad-irq, "
		"%lu stop-errors, %lu start-errors, %lu loops, %lu set_timer, %lu cycle-backwards, "
		"%lu hold-changed, %lu fw-mismatch, %lu silent-wraps\n",
		hart, s->lcofi, s->rearms, s->ovf_missing, s->bad_irq, s->stop_err, s->start_err,
		s->loops, s->timers, s->back_cycles, s->bad_hold, s->bad_fw, s->silent_wraps);
#define C(what, v, e)                                                                              \
	do {                                                                                       \
		gt_snprintf(nm, sizeof(nm), "vcpu%lu-" what, hart);                                \
		GT_CHECK_EQ(nm, v, e);                                                             \
	} while (0)
	C("lcofi-received", s->lcofi > 0, 1);
	C("rearm-each-lcofi", s->rearms + s->stop_err + s->start_err + 4 >= s->lcofi, 1);
	C("snapshot-ovf-bit", s->ovf_missing, 0);
	C("scause-13", s->bad_irq, 0);
	C("stop-start-ok", s->stop_err + s->start_err, 0);
	C("cycles-monotonic", s->back_cycles, 0);
	C("inhibited-holds", s->bad_hold, 0);
	C("fw-set-timer-exact", s->bad_fw, 0);
	C("no-silent-wrap", s->silent_wraps, 0);
#undef C
}

static void secondary(unsigned long hartid, unsigned long opaque)
{
	(void)opaque;
	soak(hartid);
	gt_atomic_add(&done, 1);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	struct gt_pmu_layout layout;

	(void)fdt;
	seconds = parse_num(args, "seconds=", 60);
	period = parse_num(args, "period=", 10000000);
	gt_pmu_layout(&layout);
	num = layout.num < 64 ? layout.num : 63;
	hw_mask = layout.hw_mask;
	fw_mask = layout.fw_mask;
	prog_mask = layout.prog_mask;

	if (args && !__builtin_strncmp(args, "probe", 5)) {
		gt_printf("soak: probe: waiting %lu s for the soak guests to stop\n", seconds);
		while (seconds--) /* an SBI call now and then: watchdog-friendly */
			for (int i = 0; i < 10; i++) {
				gt_delay_ticks(gt_timebase() / 10);
				gt_sbi_set_timer(~0UL);
			}
		check_all_free("probe");
		gt_exit();
	}

	nr_vcpus = gt_nr_harts();
	if (nr_vcpus > GT_MAX_HARTS)
		nr_vcpus = GT_MAX_HARTS;
	gt_printf("soak: %lu vCPU(s), %lu s, period %lu\n", nr_vcpus, seconds, period);
	for (unsigned long i = 0; i < nr_vcpus; i++) {
		unsigned long h = gt_hart_id_at(i);

		if (h != hartid)
			GT_CHECK_SBI("hart-start", gt_hart_start(h, secondary, 0), SBI_SUCCESS);
	}
	soak(hartid);
	gt_atomic_add(&done, 1);
	GT_CHECK_EQ("all-vcpus-done", gt_wait_ge(&done, nr_vcpus, 120 * gt_timebase()), 1);
	for (unsigned long i = 0; i < nr_vcpus; i++)
		report(gt_hart_id_at(i));
	check_all_free("end");
	gt_exit();
}
