// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-mux: the virtual PMU multiplexed across vCPUs that share physical
 * harts. Run under QEMU -icount shift=0, where a counter filtered to VU-mode
 * (SET_SINH) counts exactly the U-mode instructions of a loop: 2n + 4 (the
 * sret into U, 2 per iteration, ret, li, ecall; see pmu-exact.c). Every count
 * below is derived, never measured.
 *
 * Modes (/chosen/bootargs):
 *   "a", "b"   two guests x 2 vCPUs time-slicing the same 2 harts (10 ms
 *              slices): each vCPU runs long VU loops (many slices each) with
 *              its own counters, different loop lengths per guest and vCPU,
 *              so a value leaked from the other guest shows. Roles:
 *              guest a: long-lived cycles counter on programmable counter
 *                       H-2, firmware counter FW+0, duo = cycles@0 + instret@prog;
 *                       never touches counter 2, H-1 or FW+1;
 *              guest b: long-lived cycles counter on H-1, firmware counter
 *                       FW+1, duo = instret@2 + instret@prog; never touches
 *                       counter 0, H-2 or FW+0.
 *              (H = highest hardware counter + 1, FW = first firmware counter.)
 *              Each guest checks, again and again while the other guest runs
 *              on the same hart, that the counters it never configured read as
 *              unconfigured (CSR read -> illegal instruction, FW_READ ->
 *              INVALID_PARAM), and that its stopped counters do not advance.
 *   "migrate"  3 vCPUs with no cpu-affinity on 2 harts: vCPU 1 finishes
 *              early, so its hart idles and may take over vCPU 0 or 2 from
 *              the busy hart. Each vCPU's counters must count exactly across
 *              the move (the hypervisor's log line is the evidence of a move,
 *              checked by tools/run-tests.py `expect-log`).
 *   " smp"     suffix (e.g. "a smp"): 2 harts execute at once. QEMU's icount
 *              mode filter charges a hart's current mode with the instructions
 *              the OTHER hart executes meanwhile (natively on OpenSBI too:
 *              this image without bootargs on -smp 2 reads 4x too much), so
 *              running counts are then checked as 2n + 4 <= count <= virtual
 *              ns elapsed; stopped values, isolation and indices stay exact.
 *              Without it every count is exact: only one hart may execute
 *              (-smp 1, or an idle second hart that stays idle).
 * With no bootargs (natively on OpenSBI) it runs mode "a" without the
 * isolation checks (S-mode reads any counter natively).
 *
 * QEMU 10 counts one event on only one programmable counter per hart
 * (its event -> counter map): a vCPU here never has two programmable counters
 * with the same event live; the fixed counters 0 and 2 are separate. So
 * leaving one guest's programmable counter mapped while the other guest runs
 * silently stops the other guest's counter of the same event: checked too.
 */
#include "gt.h"

GT_IMAGE("pmu-mux");

#define EV_CYCLES	SBI_PMU_HW_CPU_CYCLES
#define EV_INSTRUCTIONS SBI_PMU_HW_INSTRUCTIONS
#define EV_FW(code)	((0xfUL << 16) | (code))
#define SINH		SBI_PMU_CFG_FLAG_SET_SINH
#define CLEAR		SBI_PMU_CFG_FLAG_CLEAR_VALUE
#define TIMEOUT_TICKS	(gt_timebase() * 100) /* virtual seconds: the run is long */

static unsigned long hw_mask, prog_mask, fw_first, num_counters, hw_top;
static char mode = 'a';
static bool isolation = true;

/* ---- helpers ---- */
static unsigned long read_counter(unsigned long idx)
{
#define RD(n)                                                                                      \
	case n:                                                                                    \
		return csr_read(0xc00 + n)
	switch (idx) {
		RD(0); RD(1); RD(2); RD(3); RD(4); RD(5); RD(6); RD(7); RD(8); RD(9); RD(10); RD(11);
		RD(12); RD(13); RD(14); RD(15); RD(16); RD(17); RD(18); RD(19); RD(20); RD(21);
		RD(22); RD(23); RD(24); RD(25); RD(26); RD(27); RD(28); RD(29); RD(30); RD(31);
	}
#undef RD
	return ~0UL;
}

/* true when reading the counter's CSR raised an illegal instruction exception */
static bool csr_read_traps(unsigned long idx)
{
	gt_expect_trap(EXC_ILLEGAL_INSN);
	(void)read_counter(idx);
	return gt_trapped() == EXC_ILLEGAL_INSN;
}

static long cfg(unsigned long base, unsigned long mask, unsigned long flags, unsigned long event)
{
	struct sbi_ret r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_CFG_MATCH, base, mask,
				       flags, event, 0, 0);

	return r.error ? r.error : (long)r.value;
}

static long start(unsigned long base, unsigned long mask)
{
	return gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_START, base, mask, 0, 0, 0, 0).error;
}

static long stop(unsigned long base, unsigned long mask, unsigned long flags)
{
	return gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_STOP, base, mask, flags, 0, 0, 0)
		.error;
}

static struct sbi_ret fw_read(unsigned long idx)
{
	return gt_sbi1(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_FW_READ, idx);
}

unsigned long mux_user_loop(unsigned long n);
asm(".text\n.globl mux_user_loop\nmux_user_loop:\n"
    "1:	addi a0, a0, -1\n"
    "	bnez a0, 1b\n"
    "	ret\n");
#define VU(n) (2 * (n) + 4)

#define CHECK(fmt_name, c, got, exp)                                                               \
	({                                                                                         \
		char __n[80];                                                                      \
		gt_snprintf(__n, sizeof(__n), fmt_name "-vcpu%lu", (unsigned long)(c));            \
		GT_CHECK_EQ(__n, got, exp);                                                        \
	})

static uint64_t ns_since(uint64_t t0)
{
	return (gt_rdtime() - t0 + 1) * (1000000000UL / gt_timebase());
}

/*
 * A running counter's value. Exact when one hart executes ("exact" mode).
 * With 2 busy harts QEMU's icount-based mode filtering charges this hart's
 * current mode with the instructions the other hart executes meanwhile (seen
 * natively on OpenSBI too), so then the check is exp <= got <= the virtual
 * nanoseconds since t0 (1 ns = 1 instruction of any hart at shift=0).
 */
static bool exact = true;
#define CHECK_COUNT(fmt_name, c, got, exp, t0)                                                     \
	({                                                                                         \
		char __n[80];                                                                      \
		unsigned long __got = (got), __ns = ns_since(t0);                                  \
		bool __ok;                                                                         \
		gt_snprintf(__n, sizeof(__n), fmt_name "-vcpu%lu", (unsigned long)(c));            \
		if (exact) {                                                                       \
			__ok = GT_CHECK_EQ(__n, __got, exp);                                       \
		} else {                                                                           \
			__ok = GT_CHECK_GE(__n, __got, exp);                                       \
			gt_snprintf(__n, sizeof(__n), fmt_name "-bound-vcpu%lu",                   \
				    (unsigned long)(c));                                           \
			__ok &= GT_CHECK_LE(__n, __got, __ns);                                     \
		}                                                                                  \
		__ok;                                                                              \
	})

/* ---- per-vCPU state ---- */
struct vstate {
	unsigned long c;	/* vCPU index */
	long lctr;		/* long-lived cycles counter (SINH), started at vCPU start */
	unsigned long lexp;	/* its expected value: every VU instruction of this vCPU */
	long fctr;		/* own firmware counter */
	unsigned long foreign_ok, foreign_runs;
};

static void vu(struct vstate *s, unsigned long n)
{
	gt_run_user(mux_user_loop, n);
	s->lexp += VU(n);
}

/* Counters this guest never configures (the other guest's); see the roles above */
static void foreign_checks(struct vstate *s)
{
	unsigned long fixed = mode == 'a' ? 2 : 0;
	unsigned long other_l = mode == 'a' ? hw_top - 1 : hw_top - 2;
	unsigned long other_f = fw_first + (mode == 'a' ? 1 : 0);
	bool ok = true;

	if (!isolation)
		return;
	ok &= csr_read_traps(fixed);
	ok &= csr_read_traps(other_l);
	ok &= fw_read(other_f).error == SBI_ERR_INVALID_PARAM;
	s->foreign_runs++;
	s->foreign_ok += ok;
}

/* a programmable counter for instructions, away from the long-lived ones */
static long cfg_prog_instret(void)
{
	return cfg(0, prog_mask & ~(3UL << (hw_top - 2)), CLEAR | SINH, EV_INSTRUCTIONS);
}

/* base loop length of this guest and vCPU: different everywhere */
static unsigned long nbase(unsigned long c)
{
	unsigned long n = mode == 'b' ? 22000000 : 30000000;

	return n + c * 1234567 + (mode == 'b' ? 777 : 0);
}

static void run_vcpu(unsigned long c)
{
	struct vstate st = { .c = c }, *s = &st;
	unsigned long n, v, duo_fixed = mode == 'a' ? 0 : 2;
	unsigned long duo_ev = mode == 'a' ? EV_CYCLES : EV_INSTRUCTIONS;
	unsigned long lidx = hw_top - (mode == 'a' ? 2 : 1);
	uint64_t tl, t0;
	long p, q;

	/* the long-lived counter and the firmware counter */
	tl = gt_rdtime();
	s->lctr = cfg(lidx, 1, CLEAR | SINH, EV_CYCLES);
	CHECK("long-cycles-cfg", c, s->lctr, lidx);
	CHECK("long-cycles-start", c, start(lidx, 1), 0);
	s->fctr = cfg(fw_first + (mode == 'a' ? 0 : 1), 1, CLEAR, EV_FW(SBI_PMU_FW_SET_TIMER));
	CHECK("fw-cfg", c, s->fctr, fw_first + (mode == 'a' ? 0 : 1));
	CHECK("fw-start", c, start((unsigned long)s->fctr, 1), 0);
	foreign_checks(s);

	/* 1. one instret counter, one long loop across many slices */
	n = nbase(c);
	p = cfg_prog_instret();
	CHECK("solo-cfg-programmable", c, p >= 3 && p < (long)hw_top - 2, 1);
	t0 = gt_rdtime();
	start((unsigned long)p, 1);
	vu(s, n);
	stop((unsigned long)p, 1, 0);
	CHECK_COUNT("solo-instret-exact", c, read_counter((unsigned long)p), VU(n), t0);
	stop((unsigned long)p, 1, SBI_PMU_STOP_FLAG_RESET);
	foreign_checks(s);

	/* 2. two more counters live at once, started and stopped by one call each */
	n = nbase(c) / 2 + 4321;
	q = cfg(duo_fixed, 1, CLEAR | SINH, duo_ev);
	CHECK("duo-cfg-fixed", c, q, duo_fixed);
	p = cfg_prog_instret();
	CHECK("duo-cfg-programmable", c, p >= 3 && p < (long)hw_top - 2, 1);
	t0 = gt_rdtime();
	CHECK("duo-start", c, start(0, (1UL << q) | (1UL << p)), 0);
	vu(s, n);
	CHECK("duo-stop", c, stop(0, (1UL << q) | (1UL << p), 0), 0);
	CHECK_COUNT("duo-fixed-exact", c, read_counter((unsigned long)q), VU(n), t0);
	CHECK_COUNT("duo-programmable-exact", c, read_counter((unsigned long)p), VU(n), t0);
	stop(0, (1UL << q) | (1UL << p), SBI_PMU_STOP_FLAG_RESET);
	foreign_checks(s);

	/* 3. a running counter across chunks, isolation checks in between */
	n = 1000000 + c * 1000 + (mode == 'b' ? 500 : 0);
	p = cfg_prog_instret();
	t0 = gt_rdtime();
	start((unsigned long)p, 1);
	for (int k = 0; k < 16; k++) {
		vu(s, n);
		foreign_checks(s);
	}
	stop((unsigned long)p, 1, 0);
	CHECK_COUNT("chunks-instret-exact", c, read_counter((unsigned long)p), 16 * VU(n), t0);
	stop((unsigned long)p, 1, SBI_PMU_STOP_FLAG_RESET);

	/* 4. stopped counters do not advance while others run, and continue on start */
	n = 2000000 + c * 3 + (mode == 'b' ? 11 : 0);
	p = cfg_prog_instret();
	q = cfg(duo_fixed, 1, CLEAR | SINH, duo_ev);
	t0 = gt_rdtime();
	start(0, (1UL << q) | (1UL << p));
	vu(s, n);
	stop(0, (1UL << q) | (1UL << p), 0);
	v = read_counter((unsigned long)p);
	CHECK_COUNT("stopped-value", c, v, VU(n), t0);
	CHECK("stopped-fixed-equals-programmable", c, read_counter((unsigned long)q), v);
	gt_delay_ticks(gt_us_to_ticks(35000)); /* 35 ms in VS: the other guest runs */
	vu(s, 3000000);			       /* 3 slices in VU, counters stopped */
	foreign_checks(s);
	CHECK("stopped-programmable-not-advancing", c, read_counter((unsigned long)p), v);
	CHECK("stopped-fixed-not-advancing", c, read_counter((unsigned long)q), v);
	t0 = gt_rdtime();
	CHECK("restart", c, start(0, (1UL << q) | (1UL << p)), 0);
	vu(s, n + 5);
	stop(0, (1UL << q) | (1UL << p), 0);
	CHECK_COUNT("restart-programmable-continues", c, read_counter((unsigned long)p) - v,
		    VU(n + 5), t0);
	CHECK_COUNT("restart-fixed-continues", c, read_counter((unsigned long)q) - v, VU(n + 5),
		    t0);
	stop(0, (1UL << q) | (1UL << p), SBI_PMU_STOP_FLAG_RESET);
	/* released: unconfigured again */
	if (isolation)
		CHECK("released-programmable-traps", c, csr_read_traps((unsigned long)p), 1);

	/* the long-lived counter saw every VU instruction of this vCPU, nothing else */
	stop(lidx, 1, 0);
	CHECK_COUNT("long-cycles-exact", c, read_counter(lidx), s->lexp, tl);
	CHECK("fw-own-read", c, fw_read((unsigned long)s->fctr).error, 0);
	if (isolation) {
		CHECK("foreign-unconfigured", c, s->foreign_ok, s->foreign_runs);
		gt_printf("vcpu%lu: %lu isolation rounds, %lu VU instructions in %lu us\n", c,
			  s->foreign_runs, s->lexp, (unsigned long)(ns_since(tl) / 1000));
	}
	stop(lidx, 1, SBI_PMU_STOP_FLAG_RESET);
	stop((unsigned long)s->fctr, 1, SBI_PMU_STOP_FLAG_RESET);
}

/* ---- migrate mode ---- */
static void run_migrate(unsigned long c)
{
	struct vstate st = { .c = c }, *s = &st;
	/* vCPU 1 (alone on its hart by round robin) is short; 0 and 2 share a hart */
	unsigned long n = c == 1 ? 3000000 : 5000000 + c * 1111;
	unsigned long chunks = c == 1 ? 2 : 24, bad = 0, stopped_bad = 0;
	uint64_t t0 = gt_rdtime();
	long p, q;

	/* cycles on counter 0, instret on a programmable counter: live through it all */
	q = cfg(0, 1, CLEAR | SINH, EV_CYCLES);
	CHECK("migrate-cfg-cycles", c, q, 0);
	p = cfg(0, prog_mask, CLEAR | SINH, EV_INSTRUCTIONS);
	CHECK("migrate-cfg-programmable", c, p >= 3, 1);
	start(0, 1UL | (1UL << p));
	for (unsigned long k = 0; k < chunks; k++) {
		unsigned long vp, vq;

		vu(s, n + k);
		/* read while running (VS is not counted): the value so far */
		vp = read_counter((unsigned long)p);
		vq = read_counter(0);
		if (vp != vq || vp < s->lexp || (!exact && vp > ns_since(t0)) ||
		    (exact && vp != s->lexp))
			bad++;
		/* every other chunk: stopped across a 15 ms VS pause (slices, maybe a move) */
		if (k & 1) {
			stop(0, 1UL | (1UL << p), 0);
			vp = read_counter((unsigned long)p);
			gt_delay_ticks(gt_us_to_ticks(15000));
			if (read_counter((unsigned long)p) != vp || read_counter(0) != vp)
				stopped_bad++;
			start(0, 1UL | (1UL << p));
		}
	}
	stop(0, 1UL | (1UL << p), 0);
	CHECK("migrate-running-reads", c, bad, 0);
	CHECK("migrate-stopped-not-advancing", c, stopped_bad, 0);
	CHECK_COUNT("migrate-instret-exact", c, read_counter((unsigned long)p), s->lexp, t0);
	CHECK("migrate-cycles-equals-instret", c, read_counter(0), read_counter((unsigned long)p));
	stop(0, 1UL | (1UL << p), SBI_PMU_STOP_FLAG_RESET);
	gt_printf("vcpu%lu: %lu VU instructions in %lu us\n", c, s->lexp,
		  (unsigned long)(ns_since(t0) / 1000));
}

/* ---- vCPU start ---- */
static volatile unsigned long done[GT_MAX_HARTS];

static void secondary(unsigned long hartid, unsigned long c)
{
	(void)hartid;
	if (mode == 'm')
		run_migrate(c);
	else
		run_vcpu(c);
	gt_atomic_store(&done[c], 1);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	unsigned long nv = gt_nr_harts();
	struct sbi_ret r;

	(void)fdt;
	/* "<a|b|migrate>[ smp]": "smp" = 2 busy harts, running counts bounded, not exact */
	if (args && args[0] == 'b')
		mode = 'b';
	else if (args && args[0] == 'm')
		mode = 'm';
	for (const char *a = args; a && *a; a++)
		if (a[0] == ' ' && a[1] == 's' && a[2] == 'm' && a[3] == 'p')
			exact = false;
	isolation = !gt_native();

	r = gt_sbi0(SBI_EXT_PMU, SBI_EXT_PMU_NUM_COUNTERS);
	GT_CHECK_SBI("num-counters", r, SBI_SUCCESS);
	num_counters = r.value;
	fw_first = ~0UL;
	for (unsigned long i = 0; i < num_counters && i < 64; i++) {
		struct sbi_ret info = gt_sbi1(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_GET_INFO, i);

		if (info.error)
			continue;
		if (info.value & SBI_PMU_CTR_INFO_FW) {
			if (fw_first == ~0UL)
				fw_first = i;
		} else {
			hw_mask |= 1UL << i;
			hw_top = i + 1;
		}
	}
	prog_mask = hw_mask & ~7UL;
	GT_CHECK_EQ("counters-0-2-present", hw_mask & 5, 5);
	GT_CHECK_GE("programmable-counters", __builtin_popcountl(prog_mask), 4);
	GT_CHECK_NE("fw-counters", fw_first, ~0UL);
	if (gt_failed())
		gt_exit();
	if (mode == 'm')
		GT_CHECK_EQ("migrate-vcpus", nv, 3);

	for (unsigned long i = 1; i < nv; i++) {
		r = gt_hart_start(gt_hart_id_at(i), secondary, i);
		GT_CHECK_SBI("hart-start", r, SBI_SUCCESS);
	}
	if (mode == 'm')
		run_migrate(0);
	else
		run_vcpu(0);
	for (unsigned long i = 1; i < nv; i++) {
		char name[40];

		gt_snprintf(name, sizeof(name), "vcpu%lu-finished", i);
		GT_CHECK_EQ(name,
			    gt_wait_hart_state(gt_hart_id_at(i), SBI_HSM_STATE_STOPPED,
					       TIMEOUT_TICKS),
			    SBI_HSM_STATE_STOPPED);
	}
	(void)hartid;
	gt_exit();
}
