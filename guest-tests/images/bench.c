// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench: guest-visible cost of SBI calls, PMU functions, counter CSR reads
 * and vCPU switches, in instructions, for `make bench` (tools/bench.py,
 * docs/performance.md). Runs on pmuvisor and directly on OpenSBI.
 *
 * Under QEMU -icount shift=0 one instruction is one ns of virtual time, so
 * the 10 MHz `time` CSR ticks once per 100 instructions executed on the
 * hart, whatever the mode: guest, hypervisor and firmware alike. A figure
 * is the time of n repetitions minus the time of the same loop without the
 * measured instruction, divided by n. Each interval is taken between tick
 * edges: it starts right after the tick changes, and at its end the number
 * of 3-instruction spins until the next edge is subtracted, so an interval
 * is exact to 3 instructions, not to one tick.
 *
 * The SBI and CSR figures are taken on the fresh vCPU, then again (named
 * ovf_<name>, busy_<name>) in the state a Linux guest running `perf record`
 * lives in: after a counter overflow, with counters running (bench_steady).
 *
 * Output, one line per figure (parsed by tools/bench.py):
 *   BENCH <name> <instructions, 3 decimals> err=<SBI error of the call> n=<n> ...
 *   BENCH-INFO ..., BENCH-SKIP ..., BENCH-DONE
 *
 * Modes, by /chosen/bootargs (natively: none):
 *   (none)          SBI/CSR costs; with a second vCPU, the vCPU switch between
 *                   two vCPUs of this guest using the same counters;
 *   switch-timer    guest A of dts/bench/bench-partition.dts: the vCPU switch
 *   switch-worker   guest B: two guests on one hart with disjoint counters-mask;
 *   switch-timer-shared, switch-worker-shared: the same two guests counting the
 *                   same events on the same counters (dts/bench/bench-shared.dts).
 * The two partition guests share no memory: A prints its intervals
 * (BENCH-SWA), B its run-period records (BENCH-SWB, BENCH-REC) and
 * tools/bench.py computes the switch cost from both, as bench_switch() does.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("bench");

#ifndef N_CALLS
#define N_CALLS 20000UL
#endif
#ifndef N_CSR
#define N_CSR 200000UL
#endif
#define MAX_SEQ	   2
#define EV_INSTR   SBI_PMU_HW_INSTRUCTIONS
#define EV_CYCLES  SBI_PMU_HW_CPU_CYCLES
#define EV_DTLB_RD 0x10019UL

static unsigned long ipt;	/* instructions per tick: 1e9 / timebase */
static struct gt_pmu_layout pl; /* NUM_COUNTERS and COUNTER_GET_INFO */

/* ---------------------------------------------------------- exact timing */

/* Wait for a tick edge; returns the new tick (read at most 3 instructions after the edge) */
static uint64_t edge_begin(void)
{
	unsigned long t0, t1;

	for (;;) {
		asm volatile("rdtime %0\n"
			     "1:	rdtime %1\n"
			     "	beq %1, %0, 1b\n"
			     : "=&r"(t0), "=&r"(t1)::"memory");
		if (t1 == t0 + 1)
			return t1;
		/* a vCPU switch inside the spin: try again */
	}
}

static int inexact; /* an end spin was interrupted by a vCPU switch */

/* Instructions since edge_begin() returned `start` (plus a constant), exact to 3 */
static uint64_t edge_end(uint64_t start, uint64_t *end_tick)
{
	unsigned long t0, t1, spins;

	asm volatile("rdtime %0\n"
		     "	li %2, 0\n"
		     "1:	rdtime %1\n"
		     "	addi %2, %2, 1\n"
		     "	beq %1, %0, 1b\n"
		     : "=&r"(t0), "=&r"(t1), "=&r"(spins)::"memory");
	if (t1 != t0 + 1)
		inexact = 1;
	if (end_tick)
		*end_tick = t1;
	return (t1 - start) * ipt - 3 * spins;
}

/* ------------------------------------------------------------ call loops */

struct call {
	unsigned long a[6];
	unsigned long fid, eid;
};

/*
 * bench_calls_{ecall,none}(calls, m, n): n times, make the m calls of the
 * array. The two functions are the same instructions but for the ecall.
 * An SBI call preserves every register but a0 and a1.
 */
#define CALL_LOOP(name, insn)                                                                      \
	asm(".text\n.globl " #name "\n.align 2\n" #name ":\n"                                      \
	    "	mv t0, a0\n"                                                                         \
	    "	mv t1, a1\n"                                                                         \
	    "	mv t2, a2\n"                                                                         \
	    "1:	mv t3, t0\n"                                                                       \
	    "	mv t4, t1\n"                                                                         \
	    "2:	ld a0, 0(t3)\n"                                                                    \
	    "	ld a1, 8(t3)\n"                                                                      \
	    "	ld a2, 16(t3)\n"                                                                     \
	    "	ld a3, 24(t3)\n"                                                                     \
	    "	ld a4, 32(t3)\n"                                                                     \
	    "	ld a5, 40(t3)\n"                                                                     \
	    "	ld a6, 48(t3)\n"                                                                     \
	    "	ld a7, 56(t3)\n"                                                                     \
	    "	" insn "\n"                                                                        \
	    "	addi t3, t3, 64\n"                                                                   \
	    "	addi t4, t4, -1\n"                                                                   \
	    "	bnez t4, 2b\n"                                                                       \
	    "	addi t2, t2, -1\n"                                                                   \
	    "	bnez t2, 1b\n"                                                                       \
	    "	ret\n")
void bench_calls_ecall(const struct call *c, unsigned long m, unsigned long n);
void bench_calls_none(const struct call *c, unsigned long m, unsigned long n);
CALL_LOOP(bench_calls_ecall, "ecall");
CALL_LOOP(bench_calls_none, "");

/* CSR read loops: n reads; the _none variant has no read */
#define CSR_LOOP(name, insn)                                                                       \
	asm(".text\n.globl " #name "\n.align 2\n" #name ":\n"                                      \
	    "1:	" insn "\n"                                                                        \
	    "	addi a0, a0, -1\n"                                                                   \
	    "	bnez a0, 1b\n"                                                                       \
	    "	ret\n")
void bench_csr_none(unsigned long n);
void bench_csr_hpm3(unsigned long n);
void bench_csr_cycle(unsigned long n);
void bench_csr_instret(unsigned long n);
void bench_csr_time(unsigned long n);
CSR_LOOP(bench_csr_none, "");
CSR_LOOP(bench_csr_hpm3, "csrr t0, hpmcounter3");
CSR_LOOP(bench_csr_cycle, "csrr t0, cycle");
CSR_LOOP(bench_csr_instret, "csrr t0, instret");
CSR_LOOP(bench_csr_time, "csrr t0, time");

typedef void (*calls_fn)(const struct call *, unsigned long, unsigned long);
typedef void (*csr_fn)(unsigned long);

static uint64_t __attribute__((noinline))
time_calls(calls_fn fn, const struct call *c, unsigned long m, unsigned long n)
{
	uint64_t s = edge_begin();

	fn(c, m, n);
	return edge_end(s, NULL);
}

static uint64_t __attribute__((noinline)) time_csr(csr_fn fn, unsigned long n)
{
	uint64_t s = edge_begin();

	fn(n);
	return edge_end(s, NULL);
}

/*
 * The event of the figures on programmable counters (3, and 3..10):
 * instructions, unless the platform puts instructions on another counter
 * whatever the mask (Linux KVM 6.12 always maps it to counter 2): then DTLB
 * read misses, an event only programmable counters count. Figures taken
 * with another event than instructions carry ev=<event> (fig_note).
 */
static unsigned long ev_prog = EV_INSTR;
static char ev_note[16];
static const char *fig_note;
/* before every figure's name: "ovf_", "busy_" in the steady state (bench_steady) */
static const char *fig_prefix = "";

static void print_figure(const char *name, int64_t ins, unsigned long n, long err,
			 const char *extra)
{
	int64_t milli = (ins * 1000 + (int64_t)n / 2) / (int64_t)n;
	const char *sign = milli < 0 ? "-" : "";

	if (milli < 0)
		milli = -milli;
	gt_printf("BENCH %s%s %s%lu.%03lu err=%ld n=%lu%s%s%s%s\n", fig_prefix, name, sign,
		  (unsigned long)(milli / 1000), (unsigned long)(milli % 1000), err, n,
		  extra ? " " : "", extra ? extra : "", fig_note ? " " : "",
		  fig_note ? fig_note : "");
}

static struct sbi_ret call1(const struct call *c)
{
	return gt_sbi_call(c->eid, c->fid, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]);
}

/*
 * Cost of one iteration of the sequence, as seen by the guest. The sequence
 * is made once first (its SBI errors are reported, joined by '/'), and must
 * leave the PMU as it found it.
 */
static void bench_seq(const char *name, const struct call *c, unsigned long m, unsigned long n)
{
	char errs[64], extra[96];
	long first_err = 0;
	int pos = 0;
	uint64_t full, none;

	for (unsigned long i = 0; i < m; i++) {
		struct sbi_ret r = call1(&c[i]);

		if (i == 0)
			first_err = r.error;
		pos += gt_snprintf(errs + pos, sizeof(errs) - (size_t)pos, "%s%ld", i ? "/" : "",
				   r.error);
	}
	none = time_calls(bench_calls_none, c, m, n);
	full = time_calls(bench_calls_ecall, c, m, n);
	gt_snprintf(extra, sizeof(extra), "errs=%s", errs);
	print_figure(name, (int64_t)(full - none), n, first_err, extra);
}

static void bench_csr(const char *name, csr_fn fn, unsigned long n)
{
	uint64_t none = time_csr(bench_csr_none, n);
	uint64_t full = time_csr(fn, n);

	print_figure(name, (int64_t)(full - none), n, 0, NULL);
}

#define CALL(e, f, x0, x1, x2, x3, x4)                                                             \
	(struct call)                                                                              \
	{                                                                                          \
		.a = {(x0), (x1), (x2), (x3), (x4), 0}, .fid = (f), .eid = (e)                     \
	}
#define PMU(f, x0, x1, x2, x3, x4) CALL(SBI_EXT_PMU, f, x0, x1, x2, x3, x4)

/* Configure `event` on exactly counter idx; returns the SBI error */
static long cfg_on(unsigned long idx, unsigned long event)
{
	struct sbi_ret r = gt_pmu_cfg(idx, 1, 0, event, 0);

	if (!r.error && r.value != idx)
		return -100;
	return r.error;
}

/* Choose ev_prog: instructions if config_matching puts them on counter 3 when asked to */
static void pick_ev_prog(void)
{
	struct sbi_ret r = gt_pmu_cfg(3, 1, 0, EV_INSTR, 0);

	if (!r.error)
		gt_pmu_release(r.value);
	if (!r.error && r.value == 3)
		return;
	ev_prog = EV_DTLB_RD;
	gt_snprintf(ev_note, sizeof(ev_note), "ev=0x%lx", ev_prog);
	fig_note = ev_note;
	gt_printf("BENCH-INFO counter 3: config_matching(3, mask 1, instructions) gave error %ld "
		  "counter %lu: the counter-3 figures count event 0x%lx\n",
		  r.error, r.value, ev_prog);
}

static uint8_t snapshot_page[4096] __attribute__((aligned(4096)));
static struct gt_pmu_event_info event_info[4] __attribute__((aligned(16)));

/*
 * The SBI and CSR figures. steady: again in the steady state, where the
 * snapshot area must stay (its own row is left out) and the 8-counter row
 * takes a tenth of the repetitions (KVM's run: 4 G instructions for N_CALLS).
 */
static void bench_sbi(bool steady)
{
	struct call c[MAX_SEQ];
	struct sbi_ret r;
	long fw;

	c[0] = CALL(SBI_EXT_BASE, SBI_EXT_BASE_GET_SPEC_VERSION, 0, 0, 0, 0, 0);
	bench_seq("base_get_spec_version", c, 1, N_CALLS);

	c[0] = PMU(SBI_EXT_PMU_NUM_COUNTERS, 0, 0, 0, 0, 0);
	bench_seq("pmu_num_counters", c, 1, N_CALLS);

	c[0] = PMU(SBI_EXT_PMU_COUNTER_GET_INFO, 3, 0, 0, 0, 0);
	bench_seq("pmu_counter_get_info", c, 1, N_CALLS);

	/* Linux's way: any hardware counter for instructions, then stop with RESET */
	r = gt_pmu_cfg(0, pl.hw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTR, 0);
	if (!r.error)
		gt_pmu_release(r.value);
	c[0] = PMU(SBI_EXT_PMU_COUNTER_CFG_MATCH, 0, pl.hw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		   EV_INSTR, 0);
	c[1] = PMU(SBI_EXT_PMU_COUNTER_STOP, r.error ? 3 : r.value, 1, SBI_PMU_STOP_FLAG_RESET, 0,
		   0);
	bench_seq("pmu_cfg_match_stop_reset", c, 2, N_CALLS);
	/* the same on one given programmable counter */
	if (!steady)
		pick_ev_prog();
	else if (ev_prog != EV_INSTR)
		fig_note = ev_note;
	c[0] = PMU(SBI_EXT_PMU_COUNTER_CFG_MATCH, 3, 1, SBI_PMU_CFG_FLAG_CLEAR_VALUE, ev_prog, 0);
	c[1] = PMU(SBI_EXT_PMU_COUNTER_STOP, 3, 1, SBI_PMU_STOP_FLAG_RESET, 0, 0);
	bench_seq("pmu_cfg_match_stop_reset_ctr3", c, 2, N_CALLS);

	/* start + stop of a configured programmable counter */
	cfg_on(3, ev_prog);
	c[0] = PMU(SBI_EXT_PMU_COUNTER_START, 3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0, 0);
	c[1] = PMU(SBI_EXT_PMU_COUNTER_STOP, 3, 1, 0, 0, 0);
	bench_seq("pmu_start_stop", c, 2, N_CALLS);

	/*
	 * start + stop of 8 counters (3..10), one masked call each, no initial
	 * value: what the lazy vCPU switch asks of the host for 8 resident
	 * counters (vpmu_vcpu_put: masked stop; vpmu_vcpu_load: masked start)
	 */
	gt_pmu_release(3);
	{
		unsigned long mask = 0, nm = 0, err = 0;

		for (unsigned long i = 3; i <= 10; i++)
			if ((pl.hw_mask >> i) & 1) {
				if (cfg_on(i, ev_prog))
					err = 1;
				mask |= 1UL << (i - 3);
				nm++;
			}
		if (nm == 8 && !err) {
			c[0] = PMU(SBI_EXT_PMU_COUNTER_START, 3, mask, 0, 0, 0);
			c[1] = PMU(SBI_EXT_PMU_COUNTER_STOP, 3, mask, 0, 0, 0);
			bench_seq("pmu_start_stop_mask8", c, 2, steady ? N_CALLS / 10 : N_CALLS);
		} else {
			gt_printf(
				"BENCH-SKIP pmu_start_stop_mask8: counters 3..10 (%lu, err %lu)\n",
				nm, err);
		}
		for (unsigned long i = 3; i <= 10; i++)
			gt_pmu_release(i);
		/* and the same for the one counter 3 */
		cfg_on(3, ev_prog);
		c[0] = PMU(SBI_EXT_PMU_COUNTER_START, 3, 1, 0, 0, 0);
		c[1] = PMU(SBI_EXT_PMU_COUNTER_STOP, 3, 1, 0, 0, 0);
		bench_seq("pmu_start_stop_mask1", c, 2, N_CALLS);
	}

	/* counter CSR reads: started counter (direct on pmuvisor) */
	gt_pmu_start(3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0);
	bench_csr("csr_read_hpmcounter_started", bench_csr_hpm3, N_CSR);
	gt_pmu_stop(3, 1, 0);
	bench_csr("csr_read_hpmcounter_stopped", bench_csr_hpm3, N_CSR);
	/* configured, never started since: pmuvisor traps and emulates the read */
	gt_pmu_release(3);
	cfg_on(3, ev_prog);
	bench_csr("csr_read_hpmcounter_configured", bench_csr_hpm3, N_CALLS);
	gt_pmu_release(3);
	fig_note = NULL;
	/* fixed counters, started */
	if (!cfg_on(0, EV_CYCLES)) {
		gt_pmu_start(0, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0);
		bench_csr("csr_read_cycle_started", bench_csr_cycle, N_CSR);
		gt_pmu_release(0);
	}
	if (!cfg_on(2, EV_INSTR)) {
		gt_pmu_start(2, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0);
		bench_csr("csr_read_instret_started", bench_csr_instret, N_CSR);
		gt_pmu_release(2);
	}
	bench_csr("csr_read_time", bench_csr_time, N_CSR);

	/* firmware counter read */
	r = gt_pmu_cfg(0, pl.fw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE,
		       GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER), 0);
	fw = r.error ? -1 : (long)r.value;
	if (fw >= 0)
		gt_pmu_start((unsigned long)fw, 1, 0, 0);
	c[0] = PMU(SBI_EXT_PMU_COUNTER_FW_READ, (unsigned long)fw, 0, 0, 0, 0);
	bench_seq("pmu_fw_read", c, 1, N_CALLS);
	if (fw >= 0)
		gt_pmu_release((unsigned long)fw);

	/* snapshot area: set (pmuvisor zeroes the 4 KiB), then disable */
	if (!steady) {
		c[0] = PMU(SBI_EXT_PMU_SNAPSHOT_SET_SHMEM, (unsigned long)snapshot_page, 0, 0, 0,
			   0);
		bench_seq("pmu_snapshot_set_shmem", c, 1, N_CALLS);
		gt_pmu_snapshot_set(~0UL, ~0UL, 0);
	}

	/* event_get_info: one entry (instructions), and four */
	event_info[0].event_idx = EV_INSTR;
	event_info[1].event_idx = EV_CYCLES;
	event_info[2].event_idx = 0x10019; /* DTLB read miss */
	event_info[3].event_idx = GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER);
	c[0] = PMU(SBI_EXT_PMU_EVENT_GET_INFO, (unsigned long)event_info, 0, 1, 0, 0);
	bench_seq("pmu_event_get_info_1", c, 1, N_CALLS);
	c[0] = PMU(SBI_EXT_PMU_EVENT_GET_INFO, (unsigned long)event_info, 0, 4, 0, 0);
	bench_seq("pmu_event_get_info_4", c, 1, N_CALLS);
}

/* ----------------------------------------------------------- steady state */

/*
 * The state a Linux guest running `perf record` lives in (issue 30), in two
 * steps, each followed by every SBI and CSR figure again (bench_sbi(true)):
 *   ovf_<name>:  the vCPU has a snapshot area, LCOFIE/STIE/SSIE enabled in
 *                sie, and has taken one counter overflow in VS-mode (a
 *                counter started STEADY_NEAR_TOP below its top, stopped with
 *                RESET in the handler and sip.LCOFIP cleared there, as Linux
 *                does); no counter runs. Every figure should be its fresh
 *                one: an overflow handled and cleared leaves the hypervisor
 *                nothing to do. The calls are made with sstatus.SIE clear,
 *                as Linux makes its PMU calls (perf's callbacks and its
 *                overflow handler run with interrupts off); ovf_sie_<name>:
 *                two with SIE set.
 *   busy_<name>: the same with STEADY_BUSY counters configured and running
 *                (counters 11 and up, above the rows' 3..10), started as
 *                Linux starts them: a sampler of cycles STEADY_PERIOD below
 *                its top (it does not wrap here: only guest cycles count),
 *                counting events from 2^63 + 1.
 */
#define STEADY_NEAR_TOP 10000UL
#define STEADY_PERIOD	1000000000UL
#define STEADY_BUSY	3
#define SIE_LCOFIE	(1UL << IRQ_PMU_OVF)

static uint64_t steady_area[512] __attribute__((aligned(4096)));
static volatile unsigned long steady_lcofi, steady_stray;
static volatile long steady_ctr = -1;

static void steady_lcofi_handler(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	(void)f;
	steady_lcofi++;
	if (steady_ctr >= 0)
		gt_pmu_release((unsigned long)steady_ctr);
	steady_ctr = -1;
	csr_clear(sip, SIE_LCOFIE);
}

/* No timer is armed and no IPI sent: counted, and quietened */
static void steady_stray_handler(unsigned long irq, struct gt_frame *f)
{
	(void)f;
	steady_stray++;
	if (irq == IRQ_S_TIMER)
		gt_sbi_set_timer(-1ULL);
	csr_clear(sip, SIP_SSIP);
}

/* One overflow of instructions, taken in VS-mode; the counter used, or the SBI error */
static long steady_overflow(void)
{
	long idx = gt_pmu_cfg_idx(0, pl.prog_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, EV_INSTR);
	uint64_t t0;

	if (idx < 0)
		return idx;
	steady_ctr = idx;
	gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -STEADY_NEAR_TOP);
	t0 = gt_rdtime();
	gt_irq_enable();
	/* 100 periods at most: KVM puts instructions on counter 2, which never interrupts */
	while (!steady_lcofi && gt_rdtime() - t0 < 100 * STEADY_NEAR_TOP / ipt)
		;
	gt_irq_disable();
	if (steady_ctr >= 0)
		gt_pmu_release((unsigned long)idx);
	steady_ctr = -1;
	return idx;
}

/* Configure ev on exactly counter i and start it from value: the SBI error, or -100 */
static long busy_start(unsigned long i, unsigned long ev, uint64_t value)
{
	long got = gt_pmu_cfg_idx(i, 1, SBI_PMU_CFG_FLAG_CLEAR_VALUE, ev);
	long e;

	if (got < 0)
		return got;
	if (got != (long)i) {
		gt_pmu_release((unsigned long)got);
		return -100;
	}
	e = gt_pmu_start(i, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, value).error;
	if (e)
		gt_pmu_release(i);
	return e;
}

static void bench_steady(void)
{
	static const unsigned long busy_ev[STEADY_BUSY] = {EV_CYCLES, 0x1001b, 0x10021};
	unsigned long busy[STEADY_BUSY], nbusy = 0;
	long snap, idx, busy_err = 0;
	struct call c[MAX_SEQ];

	snap = gt_pmu_snapshot_set((unsigned long)steady_area, 0, 0).error;
	gt_irq_register(IRQ_PMU_OVF, steady_lcofi_handler);
	gt_irq_register(IRQ_S_TIMER, steady_stray_handler);
	gt_irq_register(IRQ_S_SOFT, steady_stray_handler);
	gt_sbi_set_timer(-1ULL);
	csr_set(sie, SIE_LCOFIE | SIE_STIE | SIE_SSIE);
	idx = steady_overflow();
	gt_printf("BENCH-INFO steady snapshot_err=%ld overflow_counter=%ld lcofi=%lu\n", snap, idx,
		  steady_lcofi);

	fig_prefix = "ovf_";
	bench_sbi(true);
	fig_prefix = "ovf_sie_";
	gt_irq_enable();
	c[0] = CALL(SBI_EXT_BASE, SBI_EXT_BASE_GET_SPEC_VERSION, 0, 0, 0, 0, 0);
	bench_seq("base_get_spec_version", c, 1, N_CALLS);
	if (!cfg_on(3, ev_prog)) {
		fig_note = ev_prog != EV_INSTR ? ev_note : NULL;
		c[0] = PMU(SBI_EXT_PMU_COUNTER_START, 3, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0,
			   0);
		c[1] = PMU(SBI_EXT_PMU_COUNTER_STOP, 3, 1, 0, 0, 0);
		bench_seq("pmu_start_stop", c, 2, N_CALLS);
		fig_note = NULL;
		gt_pmu_release(3);
	}
	gt_irq_disable();

	/* an event that cannot go on its counter is left out (KVM: cycles on counter 0 only) */
	for (unsigned long i = pl.hw_top, k = 0; i-- > 11 && k < STEADY_BUSY;) {
		long e;

		if (!((pl.prog_mask >> i) & 1))
			continue;
		e = busy_start(i, busy_ev[k], k ? (1UL << 63) + 1 : -STEADY_PERIOD);
		k++;
		if (e)
			busy_err = e;
		else
			busy[nbusy++] = i;
	}
	gt_printf("BENCH-INFO steady busy_counters=%lu err=%ld\n", nbusy, busy_err);
	fig_prefix = "busy_";
	bench_sbi(true);
	fig_prefix = "";
	for (unsigned long i = 0; i < nbusy; i++)
		gt_pmu_release(busy[i]);
	csr_clear(sie, SIE_LCOFIE | SIE_STIE | SIE_SSIE);
	gt_pmu_snapshot_set(~0UL, ~0UL, 0);
	gt_printf("BENCH-INFO steady stray_interrupts=%lu lcofi=%lu\n", steady_stray, steady_lcofi);
}

/* ------------------------------------------------------------ vCPU switch */

/*
 * Two vCPUs time-sliced on one physical hart (10 ms slices). vCPU 0 runs a
 * 2-instruction loop N0 times between two tick edges (interval I); vCPU 1
 * runs a 7-instruction loop that reads `time` on every iteration and, when
 * it sees a gap longer than GAP_TICKS (it was descheduled), records the
 * time and its iteration count so far. Then
 *   I = I_alone + J + 2 P c
 * where I_alone is the same interval measured while vCPU 1 is stopped (no
 * switch at all), P the number of vCPU 1 run periods inside I (each costs
 * two switches, 1 -> 0 -> 1 framing it), J the instructions vCPU 1 ran in
 * them (7 per iteration plus 5 per period for the recording path, exact to
 * one iteration) and c the cost of one switch as the guests see it: the
 * timer interrupt, the scheduler, saving one vCPU and loading the other.
 */
#define N0	  100000000UL
#define GAP_TICKS 10000UL
#define MAX_REC	  512

struct rec {
	uint64_t t;    /* first time read after the gap */
	uint64_t ncum; /* iterations before that read's iteration */
};

static struct {
	volatile unsigned long nctr;
	volatile unsigned long ready;
	volatile unsigned long stop;
	volatile unsigned long nrec;
	volatile unsigned long cfg_err;
	struct rec rec[MAX_REC + 1];
} sw;

void switch_spin(unsigned long n);
asm(".text\n.globl switch_spin\n.align 2\nswitch_spin:\n"
    "1:	addi a0, a0, -1\n"
    "	bnez a0, 1b\n"
    "	ret\n");

/*
 * a0 = &sw.stop, a1 = records, a2 = max records, a3 = gap ticks; returns the
 * record count. A switch can fall between the last time read and the read
 * of `stop`: the exit path reads the time once more to record that gap too.
 */
unsigned long switch_worker_loop(volatile unsigned long *stop, struct rec *rec, unsigned long max,
				 unsigned long gap);
asm(".text\n.globl switch_worker_loop\n.align 2\nswitch_worker_loop:\n"
    "	li t5, 0\n" /* records */
    "	li t6, 0\n" /* iterations */
    "	rdtime t0\n"
    "1:	rdtime t1\n"	   /* 1 */
    "	sub t2, t1, t0\n"  /* 2 */
    "	mv t0, t1\n"	   /* 3 */
    "	bgeu t2, a3, 3f\n" /* 4 */
    "2:	addi t6, t6, 1\n"  /* 5 */
    "	ld t3, 0(a0)\n"	   /* 6 */
    "	beqz t3, 1b\n"	   /* 7 */
    "	rdtime t1\n"
    "	sub t2, t1, t0\n"
    "	bltu t2, a3, 4f\n"
    "	bgeu t5, a2, 4f\n"
    "	sd t1, 0(a1)\n"
    "	sd t6, 8(a1)\n"
    "	addi t5, t5, 1\n"
    "4:	mv a0, t5\n"
    "	ret\n"
    "3:	bgeu t5, a2, 2b\n" /* +1 */
    "	sd t1, 0(a1)\n"	   /* +2 */
    "	sd t6, 8(a1)\n"	   /* +3 */
    "	addi a1, a1, 16\n" /* +4 */
    "	addi t5, t5, 1\n"  /* +5 */
    "	j 2b\n");	   /* +6 */
#define WORKER_ITER 7
#define WORKER_REC  6

/* counter i of the set of n live counters: 0 = cycles, 2 = instret, 3.. programmable */
static unsigned long live_idx[32], live_ev[32], live_max;

static const unsigned long all_ev[] = {EV_INSTR, 0x10019, 0x1001b, 0x10021};

static void live_setup(const unsigned long *prog_ev, unsigned long nev)
{
	unsigned long k = 0, j = 0;

	/* the programmable ones first, so that 1 and 4 are programmable counters */
	for (unsigned long i = 3; i < 32; i++)
		if ((pl.hw_mask >> i) & 1) {
			live_idx[k] = i;
			live_ev[k++] = prog_ev[j++ % nev];
		}
	if ((pl.hw_mask >> 0) & 1) {
		live_idx[k] = 0;
		live_ev[k++] = EV_CYCLES;
	}
	if ((pl.hw_mask >> 2) & 1) {
		live_idx[k] = 2;
		live_ev[k++] = EV_INSTR;
	}
	live_max = k;
}

/*
 * The switch with counters running and overflowing (switch_ovf_live_n): the
 * first live counter of each vCPU (instret, programmable) samples every
 * OVF_PERIOD of the vCPU's own instructions, about once a slice; the LCOFI
 * handler stops it, notes the time and starts it again, as Linux's does.
 * Each overflow costs the vCPU c_ovf (the handler and the hypervisor's
 * work for it): measured alone with the same counters, n_as overflows in
 * I_as, c_ovf = (I_as - I_alone) / n_as. With n0 + n1 overflows inside the
 * interval (n1 those of vCPU 1 in its measured periods),
 *   I = I_alone + J + (n0 + n1) c_ovf + 2 P c.
 */
#define OVF_PERIOD 9999991UL
#define MAX_OVF	   256

static struct {
	volatile unsigned long on; /* live_start makes the first counter sample */
	unsigned long hart0;	   /* vCPU 0's hart id: t[0] is its */
	volatile unsigned long n[2];
	uint64_t t[2][MAX_OVF];
} so;

static void switch_lcofi_handler(unsigned long irq, struct gt_frame *f)
{
	unsigned int k = gt_hartid() == so.hart0 ? 0 : 1;

	(void)irq;
	(void)f;
	gt_pmu_stop(live_idx[0], 1, 0);
	csr_clear(sip, SIE_LCOFIE);
	if (so.n[k] < MAX_OVF)
		so.t[k][so.n[k]] = gt_rdtime();
	so.n[k]++;
	gt_pmu_start(live_idx[0], 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, -OVF_PERIOD);
}

/* Overflows of vCPU k noted in [from, to) */
static unsigned long ovf_between(unsigned int k, uint64_t from, uint64_t to)
{
	unsigned long n = 0;

	for (unsigned long i = 0; i < so.n[k] && i < MAX_OVF; i++)
		if (so.t[k][i] >= from && so.t[k][i] < to)
			n++;
	return n;
}

static long live_start(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		uint64_t from = so.on && !i ? -OVF_PERIOD : 0;
		long e = cfg_on(live_idx[i], live_ev[i]);

		if (e)
			return e;
		e = gt_pmu_start(live_idx[i], 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, from).error;
		if (e)
			return e;
	}
	if (so.on) {
		csr_set(sie, SIE_LCOFIE);
		gt_irq_enable();
	}
	return 0;
}

static void live_stop(unsigned long n)
{
	gt_irq_disable();
	csr_clear(sie, SIE_LCOFIE);
	for (unsigned long i = 0; i < n; i++)
		gt_pmu_release(live_idx[i]);
	csr_clear(sip, SIE_LCOFIE);
}

static void switch_worker(unsigned long hartid, unsigned long opaque)
{
	(void)hartid;
	(void)opaque;
	sw.cfg_err = (unsigned long)live_start(sw.nctr);
	__atomic_store_n(&sw.ready, 1, __ATOMIC_SEQ_CST);
	sw.nrec = switch_worker_loop(&sw.stop, sw.rec, MAX_REC, GAP_TICKS);
	live_stop(sw.nctr);
}

static uint64_t __attribute__((noinline)) time_spin(uint64_t *s, uint64_t *e)
{
	*s = edge_begin();
	switch_spin(N0);
	return edge_end(*s, e);
}

/*
 * One interval of vCPU 0 with vCPU 1 running beside it, both with n live
 * counters: I (*with), its edges, and vCPU 1's measured periods
 * (rec[*i1] .. rec[*i2], rec[*i2 + 1] the first read after the last); 0, or
 * the skip reason printed
 */
static int switch_interval(unsigned long other, unsigned long n, uint64_t *with, uint64_t *s,
			   uint64_t *e, unsigned long *i1, unsigned long *i2)
{
	struct sbi_ret r;
	unsigned long nrec;
	long err;

	sw.nctr = n;
	sw.ready = 0;
	sw.stop = 0;
	sw.nrec = 0;
	err = live_start(n);
	r = gt_hart_start(other, switch_worker, 0);
	if (r.error || err) {
		gt_printf("BENCH-SKIP switch %lu: start %ld, counters %ld\n", n, r.error, err);
		live_stop(n);
		return -1;
	}
	while (!__atomic_load_n(&sw.ready, __ATOMIC_SEQ_CST))
		;
	inexact = 0;
	*with = time_spin(s, e);
	__atomic_store_n(&sw.stop, 1, __ATOMIC_SEQ_CST);
	gt_wait_hart_state(other, SBI_HSM_STATE_STOPPED, 100 * gt_timebase());
	live_stop(n);
	nrec = sw.nrec;
	*i1 = ~0UL;
	*i2 = 0;
	for (unsigned long i = 0; i < nrec; i++)
		if (sw.rec[i].t > *s && sw.rec[i].t < *e) {
			if (*i1 == ~0UL)
				*i1 = i;
			*i2 = i;
		}
	if (*i1 == ~0UL || *i2 + 1 >= nrec || sw.cfg_err) {
		gt_printf("BENCH-SKIP switch %lu: records %lu, worker counters %ld\n", n, nrec,
			  (long)sw.cfg_err);
		return -1;
	}
	return 0;
}

/* vCPU 1's instructions in its measured periods, but for its overflows */
static int64_t worker_insns(unsigned long i1, unsigned long i2)
{
	return (int64_t)(WORKER_ITER * (sw.rec[i2 + 1].ncum - sw.rec[i1].ncum) +
			 WORKER_REC * (i2 - i1 + 1));
}

/* switch_ovf_live_n: the same with the first counter of each vCPU sampling */
static void switch_ovf(unsigned long other, unsigned long n, uint64_t alone)
{
	uint64_t s, e, as, with;
	unsigned long i1, i2, p, n_as, n0, n1;
	int64_t j, c_ovf_num;
	char name[32], extra[160];
	long err;

	so.on = 1;
	so.hart0 = gt_hartid();
	so.n[0] = so.n[1] = 0;
	gt_irq_register(IRQ_PMU_OVF, switch_lcofi_handler);
	err = live_start(n);
	as = time_spin(&s, &e);
	live_stop(n);
	n_as = ovf_between(0, s, e);
	if (err || !n_as || so.n[0] > MAX_OVF) {
		gt_printf("BENCH-SKIP switch_ovf %lu: counters %ld, overflows %lu\n", n, err, n_as);
		so.on = 0;
		return;
	}
	so.n[0] = so.n[1] = 0;
	if (switch_interval(other, n, &with, &s, &e, &i1, &i2)) {
		so.on = 0;
		return;
	}
	so.on = 0;
	if (so.n[0] > MAX_OVF || so.n[1] > MAX_OVF) {
		gt_printf("BENCH-SKIP switch_ovf %lu: %lu and %lu overflows\n", n, so.n[0],
			  so.n[1]);
		return;
	}
	p = i2 - i1 + 1;
	j = worker_insns(i1, i2);
	n0 = ovf_between(0, s, e);
	n1 = ovf_between(1, sw.rec[i1].t, sw.rec[i2 + 1].t);
	/* in units of 1 / n_as instruction: c_ovf = c_ovf_num / n_as */
	c_ovf_num = (int64_t)as - (int64_t)alone;
	gt_snprintf(name, sizeof(name), "switch_ovf_live_%lu", n);
	gt_snprintf(
		extra, sizeof(extra),
		"switches=%lu interval=%lu worker=%ld overflows=%lu+%lu alone_sampling=%lu/%lu%s",
		2 * p, (unsigned long)with, (long)j, n0, n1, (unsigned long)as, n_as,
		inexact ? " inexact=1" : "");
	print_figure(name,
		     ((int64_t)with - (int64_t)alone - j) * (int64_t)n_as -
			     (int64_t)(n0 + n1) * c_ovf_num,
		     2 * p * n_as, 0, extra);
}

static void bench_switch(void)
{
	unsigned long other = ~0UL, me = gt_hartid();
	uint64_t alone, s, e, with;
	unsigned long sets[4], nsets = 0;

	for (unsigned long i = 0; i < gt_nr_harts(); i++)
		if (gt_hart_id_at(i) != me) {
			other = gt_hart_id_at(i);
			break;
		}
	if (other == ~0UL) {
		gt_printf("BENCH-SKIP switch: one hart only\n");
		return;
	}
	live_setup(all_ev, 4);
	sets[nsets++] = 0;
	sets[nsets++] = 1;
	if (live_max > 4)
		sets[nsets++] = 4;
	sets[nsets++] = live_max;

	alone = time_spin(&s, &e);
	gt_printf("BENCH-INFO switch alone=%lu n0=%lu\n", (unsigned long)alone, N0);
	for (unsigned long k = 0; k < nsets; k++) {
		unsigned long n = sets[k], i1, i2, p;
		int64_t j, over;

		if (switch_interval(other, n, &with, &s, &e, &i1, &i2))
			continue;
		p = i2 - i1 + 1;
		j = worker_insns(i1, i2);
		over = (int64_t)with - (int64_t)alone - j;
		{
			char name[32], extra[128];

			gt_snprintf(name, sizeof(name), "switch_live_%lu", n);
			gt_snprintf(extra, sizeof(extra), "switches=%lu interval=%lu worker=%ld%s",
				    2 * p, (unsigned long)with, (long)j,
				    inexact ? " inexact=1" : "");
			print_figure(name, over, 2 * p, 0, extra);
		}
	}
	for (unsigned long k = 0; k < nsets; k++)
		if (sets[k])
			switch_ovf(other, sets[k], alone);
}

/* --------------------------------------------- vCPU switch, partitioned */

/*
 * Two guests, one vCPU each, on the same hart (dts/bench/bench-partition.dts),
 * with disjoint counters-mask (A: 3..10, B: 11..18) and disjoint events (A:
 * instructions and DTLB read miss, B: DTLB write miss and ITLB miss, each
 * repeated over its counters), so that neither ever evicts the other's
 * configuration: every switch is a masked stop and a masked start.
 *
 * With no shared memory the guests follow a common timetable on the `time`
 * CSR: phase k lasts PART_PHASE from PART_T0 + k * PART_PHASE. Phase 0: B
 * sleeps and A times the N0 loop alone. Phase k >= 1 (n = 0, 1, 4, all live
 * counters): both configure and start n counters at the phase start; B runs
 * the worker loop until PART_RUN into the phase, A times the N0 loop from
 * PART_SETUP into the phase (it ends about 0.44 s in) and spins on until B's
 * loop has ended. Then both stop their counters, print, and sleep until the
 * next phase.
 */
#define PART_T0_MS    300
#define PART_PHASE_MS 520
#define PART_SETUP_MS 30
#define PART_RUN_MS   480

static const unsigned long part_ev_a[] = {EV_INSTR, 0x10019};
static const unsigned long part_ev_b[] = {0x1001b, 0x10021};

/*
 * The worker loop of partition guest B: like switch_worker_loop, but it
 * ends when the time reaches a0 (6 instructions per iteration, 6 more per
 * record). a0 = end tick, a1 = records, a2 = max records, a3 = gap ticks.
 */
unsigned long switch_worker_until(unsigned long end, struct rec *rec, unsigned long max,
				  unsigned long gap);
asm(".text\n.globl switch_worker_until\n.align 2\nswitch_worker_until:\n"
    "	li t5, 0\n"
    "	li t6, 0\n"
    "	rdtime t0\n"
    "1:	rdtime t1\n"	   /* 1 */
    "	sub t2, t1, t0\n"  /* 2 */
    "	mv t0, t1\n"	   /* 3 */
    "	bgeu t2, a3, 3f\n" /* 4 */
    "2:	addi t6, t6, 1\n"  /* 5 */
    "	bltu t1, a0, 1b\n" /* 6 */
    "	mv a0, t5\n"
    "	ret\n"
    "3:	bgeu t5, a2, 2b\n" /* +1 */
    "	sd t1, 0(a1)\n"	   /* +2 */
    "	sd t6, 8(a1)\n"	   /* +3 */
    "	addi a1, a1, 16\n" /* +4 */
    "	addi t5, t5, 1\n"  /* +5 */
    "	j 2b\n");	   /* +6 */

static uint64_t ms_ticks(unsigned long ms)
{
	return (uint64_t)ms * gt_timebase() / 1000;
}

static uint64_t part_phase(unsigned long k)
{
	return ms_ticks(PART_T0_MS) + k * ms_ticks(PART_PHASE_MS);
}

/* Sleep (WFI, the hart idles if the other guest sleeps too) until `until` */
static void sleep_until(uint64_t until)
{
	if (gt_rdtime() >= until)
		return;
	csr_set(sie, SIE_STIE);
	gt_sbi_set_timer(until);
	while (gt_rdtime() < until)
		gt_wfi();
	gt_sbi_set_timer(-1ULL);
	csr_clear(sie, SIE_STIE);
}

/*
 * shared: both guests count guest A's events on every counter
 * (dts/bench/bench-shared.dts, no counters-mask): a configuration is never
 * taken over from the other guest, so every switch configures anew
 */
static void bench_partition(bool timer, bool shared)
{
	unsigned long sets[4], nsets = 0;
	uint64_t now = gt_rdtime(), s, e, alone = 0;

	if (timer || shared)
		live_setup(part_ev_a, 2);
	else
		live_setup(part_ev_b, 2);
	sets[nsets++] = 0;
	sets[nsets++] = 1;
	if (live_max > 4)
		sets[nsets++] = 4;
	sets[nsets++] = live_max;
	gt_printf("BENCH-INFO partition %s boot_tick=%lu t0=%lu phase=%lu live_max=%lu\n",
		  timer ? "timer" : "worker", (unsigned long)now, (unsigned long)part_phase(0),
		  (unsigned long)ms_ticks(PART_PHASE_MS), live_max);
	if (now + ms_ticks(50) > part_phase(0)) {
		gt_printf("BENCH-SKIP partition: booted too late for the timetable\n");
		return;
	}
	if (timer) {
		sleep_until(part_phase(0) + ms_ticks(PART_SETUP_MS));
		alone = time_spin(&s, &e);
		gt_printf("BENCH-INFO switch alone=%lu n0=%lu\n", (unsigned long)alone, N0);
	}
	for (unsigned long k = 0; k < nsets; k++) {
		unsigned long n = sets[k];
		uint64_t t = part_phase(k + 1);
		long err;

		sleep_until(t);
		err = live_start(n);
		if (timer) {
			uint64_t with;

			sleep_until(t + ms_ticks(PART_SETUP_MS));
			inexact = 0;
			with = time_spin(&s, &e);
			live_stop(n);
			/*
			 * Keep the hart busy until B's loop ends: B must see one more
			 * switch gap after the interval (its record closes the last
			 * period inside it); were A asleep, B would run on unrecorded.
			 */
			while (gt_rdtime() < t + ms_ticks(PART_RUN_MS + 5))
				;
			gt_printf(
				"BENCH-SWA %lu s=%lu e=%lu with=%lu alone=%lu err=%ld late=%d%s\n",
				n, (unsigned long)s, (unsigned long)e, (unsigned long)with,
				(unsigned long)alone, err, e >= t + ms_ticks(PART_RUN_MS) ? 1 : 0,
				inexact ? " inexact=1" : "");
		} else {
			unsigned long nrec = err ? 0
						 : switch_worker_until(t + ms_ticks(PART_RUN_MS),
								       sw.rec, MAX_REC, GAP_TICKS);

			live_stop(n);
			gt_printf("BENCH-SWB %lu nrec=%lu err=%ld iter=%d rec=%d\n", n, nrec, err,
				  6, 6);
			for (unsigned long i = 0; i < nrec; i++)
				gt_printf("BENCH-REC %lu %lu %lu\n", n, (unsigned long)sw.rec[i].t,
					  (unsigned long)sw.rec[i].ncum);
		}
	}
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_native() ? NULL : gt_fdt_getprop("/chosen", "bootargs", NULL);

	(void)hartid;
	(void)fdt;
	ipt = 1000000000UL / gt_timebase();
	gt_pmu_layout(&pl);
	gt_printf("BENCH-INFO native=%d timebase=%lu insn_per_tick=%lu harts=%lu counters=%lu "
		  "hw_mask=0x%lx fw_mask=0x%lx\n",
		  gt_native() ? 1 : 0, (unsigned long)gt_timebase(), ipt, gt_nr_harts(), pl.num,
		  pl.hw_mask, pl.fw_mask);
	if (args && !__builtin_strncmp(args, "switch-timer", 12)) {
		bench_partition(true, args[12] == '-');
	} else if (args && !__builtin_strncmp(args, "switch-worker", 13)) {
		bench_partition(false, args[13] == '-');
	} else {
		bench_sbi(false);
		bench_steady();
		bench_switch();
	}
	gt_printf("BENCH-DONE\n");
}
