// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench: the SBI call and counter CSR figures (bench_sbi), on the fresh
 * vCPU and again in the steady state (steady.c).
 */
#include "guest-tests/images/bench/bench.h"

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
unsigned long ev_prog = EV_INSTR;
char ev_note[16];

static struct sbi_ret call1(const struct call *c)
{
	return gt_sbi_call(c->eid, c->fid, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]);
}

/*
 * Cost of one iteration of the sequence, as seen by the guest. The sequence
 * is made once first (its SBI errors are reported, joined by '/'), and must
 * leave the PMU as it found it.
 */
void bench_seq(const char *name, const struct call *c, unsigned long m, unsigned long n)
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

/* Configure `event` on exactly counter idx; returns the SBI error */
long cfg_on(unsigned long idx, unsigned long event)
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
void bench_sbi(bool steady)
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
