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
 *   " smp"     suffix (e.g. "a smp"): 2 harts busy at once. QEMU's icount
 *              mode filter charges a hart's current mode with the instructions
 *              the OTHER hart executes meanwhile (natively on OpenSBI too:
 *              this image without bootargs on -smp 2 reads 4x too much).
 *              pmuvisor runs a vCPU whose counters run while the other harts
 *              are parked (docs/vpmu.md, exclusive counting), so every count
 *              is still exact. Natively (no hypervisor) running counts are
 *              checked as 2n + 4 <= count <= virtual ns elapsed instead.
 * With no bootargs (natively on OpenSBI) it runs mode "a" without the
 * isolation checks (S-mode reads any counter natively).
 *
 * QEMU 10 counts one event on only one programmable counter per hart
 * (its event -> counter map): a vCPU here never has two programmable counters
 * with the same event live; the fixed counters 0 and 2 are separate. So
 * leaving one guest's programmable counter mapped while the other guest runs
 * silently stops the other guest's counter of the same event: checked too.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("pmu-mux");

#define EV_CYCLES	SBI_PMU_HW_CPU_CYCLES
#define EV_INSTRUCTIONS SBI_PMU_HW_INSTRUCTIONS
#define SINH		SBI_PMU_CFG_FLAG_SET_SINH
#define CLEAR		SBI_PMU_CFG_FLAG_CLEAR_VALUE
#define TIMEOUT_TICKS	(gt_timebase() * 100) /* virtual seconds: the run is long */

static struct gt_pmu_layout pl;
static char mode = 'a';
static bool isolation = true;

/* ---- helpers ---- */
#define VU(n) GT_PMU_USER_LOOP_COUNT(n)

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
	unsigned long c;    /* vCPU index */
	long lctr;	    /* long-lived cycles counter (SINH), started at vCPU start */
	unsigned long lexp; /* its expected value: every VU instruction of this vCPU */
	long fctr;	    /* own firmware counter */
	unsigned long foreign_ok, foreign_runs;
};

static void vu(struct vstate *s, unsigned long n)
{
	gt_run_user(gt_pmu_user_loop, n);
	s->lexp += VU(n);
}

/* Counters this guest never configures (the other guest's); see the roles above */
static void foreign_checks(struct vstate *s)
{
	unsigned long fixed = mode == 'a' ? 2 : 0;
	unsigned long other_l = mode == 'a' ? pl.hw_top - 1 : pl.hw_top - 2;
	unsigned long other_f = pl.fw_first + (mode == 'a' ? 1 : 0);
	bool ok = true;

	if (!isolation)
		return;
	ok &= gt_pmu_csr_traps(fixed);
	ok &= gt_pmu_csr_traps(other_l);
	ok &= gt_pmu_fw_read(other_f).error == SBI_ERR_INVALID_PARAM;
	s->foreign_runs++;
	s->foreign_ok += ok;
}

/* a programmable counter for instructions, away from the long-lived ones */
static long cfg_prog_instret(void)
{
	return gt_pmu_cfg_idx(0, pl.prog_mask & ~(3UL << (pl.hw_top - 2)), CLEAR | SINH,
			      EV_INSTRUCTIONS);
}

/* base loop length of this guest and vCPU: different everywhere */
static unsigned long nbase(unsigned long c)
{
	unsigned long n = mode == 'b' ? 22000000 : 30000000;

	return n + c * 1234567 + (mode == 'b' ? 777 : 0);
}

static void run_vcpu(unsigned long c)
{
	struct vstate st = {.c = c}, *s = &st;
	unsigned long n, v, duo_fixed = mode == 'a' ? 0 : 2;
	unsigned long duo_ev = mode == 'a' ? EV_CYCLES : EV_INSTRUCTIONS;
	unsigned long lidx = pl.hw_top - (mode == 'a' ? 2 : 1);
	uint64_t tl, t0;
	long p, q;

	/* the long-lived counter and the firmware counter */
	tl = gt_rdtime();
	s->lctr = gt_pmu_cfg_idx(lidx, 1, CLEAR | SINH, EV_CYCLES);
	CHECK("long-cycles-cfg", c, s->lctr, lidx);
	CHECK("long-cycles-start", c, gt_pmu_start(lidx, 1, 0, 0).error, 0);
	s->fctr = gt_pmu_cfg_idx(pl.fw_first + (mode == 'a' ? 0 : 1), 1, CLEAR,
				 GT_PMU_EV_FW(SBI_PMU_FW_SET_TIMER));
	CHECK("fw-cfg", c, s->fctr, pl.fw_first + (mode == 'a' ? 0 : 1));
	CHECK("fw-start", c, gt_pmu_start((unsigned long)s->fctr, 1, 0, 0).error, 0);
	foreign_checks(s);

	/* 1. one instret counter, one long loop across many slices */
	n = nbase(c);
	p = cfg_prog_instret();
	CHECK("solo-cfg-programmable", c, p >= 3 && p < (long)pl.hw_top - 2, 1);
	t0 = gt_rdtime();
	gt_pmu_start((unsigned long)p, 1, 0, 0);
	vu(s, n);
	gt_pmu_stop((unsigned long)p, 1, 0);
	CHECK_COUNT("solo-instret-exact", c, gt_pmu_read_csr((unsigned long)p), VU(n), t0);
	gt_pmu_release((unsigned long)p);
	foreign_checks(s);

	/* 2. two more counters live at once, started and stopped by one call each */
	n = nbase(c) / 2 + 4321;
	q = gt_pmu_cfg_idx(duo_fixed, 1, CLEAR | SINH, duo_ev);
	CHECK("duo-cfg-fixed", c, q, duo_fixed);
	p = cfg_prog_instret();
	CHECK("duo-cfg-programmable", c, p >= 3 && p < (long)pl.hw_top - 2, 1);
	t0 = gt_rdtime();
	CHECK("duo-start", c, gt_pmu_start(0, (1UL << q) | (1UL << p), 0, 0).error, 0);
	vu(s, n);
	CHECK("duo-stop", c, gt_pmu_stop(0, (1UL << q) | (1UL << p), 0).error, 0);
	CHECK_COUNT("duo-fixed-exact", c, gt_pmu_read_csr((unsigned long)q), VU(n), t0);
	CHECK_COUNT("duo-programmable-exact", c, gt_pmu_read_csr((unsigned long)p), VU(n), t0);
	gt_pmu_stop(0, (1UL << q) | (1UL << p), SBI_PMU_STOP_FLAG_RESET);
	foreign_checks(s);

	/* 3. a running counter across chunks, isolation checks in between */
	n = 1000000 + c * 1000 + (mode == 'b' ? 500 : 0);
	p = cfg_prog_instret();
	t0 = gt_rdtime();
	gt_pmu_start((unsigned long)p, 1, 0, 0);
	for (int k = 0; k < 16; k++) {
		vu(s, n);
		foreign_checks(s);
	}
	gt_pmu_stop((unsigned long)p, 1, 0);
	CHECK_COUNT("chunks-instret-exact", c, gt_pmu_read_csr((unsigned long)p), 16 * VU(n), t0);
	gt_pmu_release((unsigned long)p);

	/* 4. stopped counters do not advance while others run, and continue on start */
	n = 2000000 + c * 3 + (mode == 'b' ? 11 : 0);
	p = cfg_prog_instret();
	q = gt_pmu_cfg_idx(duo_fixed, 1, CLEAR | SINH, duo_ev);
	t0 = gt_rdtime();
	gt_pmu_start(0, (1UL << q) | (1UL << p), 0, 0);
	vu(s, n);
	gt_pmu_stop(0, (1UL << q) | (1UL << p), 0);
	v = gt_pmu_read_csr((unsigned long)p);
	CHECK_COUNT("stopped-value", c, v, VU(n), t0);
	CHECK("stopped-fixed-equals-programmable", c, gt_pmu_read_csr((unsigned long)q), v);
	gt_delay_ticks(gt_us_to_ticks(35000)); /* 35 ms in VS: the other guest runs */
	vu(s, 3000000);			       /* 3 slices in VU, counters stopped */
	foreign_checks(s);
	CHECK("stopped-programmable-not-advancing", c, gt_pmu_read_csr((unsigned long)p), v);
	CHECK("stopped-fixed-not-advancing", c, gt_pmu_read_csr((unsigned long)q), v);
	t0 = gt_rdtime();
	CHECK("restart", c, gt_pmu_start(0, (1UL << q) | (1UL << p), 0, 0).error, 0);
	vu(s, n + 5);
	gt_pmu_stop(0, (1UL << q) | (1UL << p), 0);
	CHECK_COUNT("restart-programmable-continues", c, gt_pmu_read_csr((unsigned long)p) - v,
		    VU(n + 5), t0);
	CHECK_COUNT("restart-fixed-continues", c, gt_pmu_read_csr((unsigned long)q) - v, VU(n + 5),
		    t0);
	gt_pmu_stop(0, (1UL << q) | (1UL << p), SBI_PMU_STOP_FLAG_RESET);
	/* released: unconfigured again */
	if (isolation)
		CHECK("released-programmable-traps", c, gt_pmu_csr_traps((unsigned long)p), 1);

	/* the long-lived counter saw every VU instruction of this vCPU, nothing else */
	gt_pmu_stop(lidx, 1, 0);
	CHECK_COUNT("long-cycles-exact", c, gt_pmu_read_csr(lidx), s->lexp, tl);
	CHECK("fw-own-read", c, gt_pmu_fw_read((unsigned long)s->fctr).error, 0);
	if (isolation) {
		CHECK("foreign-unconfigured", c, s->foreign_ok, s->foreign_runs);
		gt_printf("vcpu%lu: %lu isolation rounds, %lu VU instructions in %lu us\n", c,
			  s->foreign_runs, s->lexp, (unsigned long)(ns_since(tl) / 1000));
	}
	gt_pmu_release(lidx);
	gt_pmu_release((unsigned long)s->fctr);
}

/* ---- migrate mode ---- */
static void run_migrate(unsigned long c)
{
	struct vstate st = {.c = c}, *s = &st;
	/* vCPU 1 (alone on its hart by round robin) is short; 0 and 2 share a hart */
	unsigned long n = c == 1 ? 3000000 : 5000000 + c * 1111;
	unsigned long chunks = c == 1 ? 2 : 24, bad = 0, stopped_bad = 0;
	uint64_t t0 = gt_rdtime();
	long p, q;

	/* cycles on counter 0, instret on a programmable counter: live through it all */
	q = gt_pmu_cfg_idx(0, 1, CLEAR | SINH, EV_CYCLES);
	CHECK("migrate-cfg-cycles", c, q, 0);
	p = gt_pmu_cfg_idx(0, pl.prog_mask, CLEAR | SINH, EV_INSTRUCTIONS);
	CHECK("migrate-cfg-programmable", c, p >= 3, 1);
	gt_pmu_start(0, 1UL | (1UL << p), 0, 0);
	for (unsigned long k = 0; k < chunks; k++) {
		unsigned long vp, vq;

		vu(s, n + k);
		/* read while running (VS is not counted): the value so far */
		vp = gt_pmu_read_csr((unsigned long)p);
		vq = gt_pmu_read_csr(0);
		if (vp != vq || vp < s->lexp || (!exact && vp > ns_since(t0)) ||
		    (exact && vp != s->lexp))
			bad++;
		/* every other chunk: stopped across a 15 ms VS pause (slices, maybe a move) */
		if (k & 1) {
			gt_pmu_stop(0, 1UL | (1UL << p), 0);
			vp = gt_pmu_read_csr((unsigned long)p);
			gt_delay_ticks(gt_us_to_ticks(15000));
			if (gt_pmu_read_csr((unsigned long)p) != vp || gt_pmu_read_csr(0) != vp)
				stopped_bad++;
			gt_pmu_start(0, 1UL | (1UL << p), 0, 0);
		}
	}
	gt_pmu_stop(0, 1UL | (1UL << p), 0);
	CHECK("migrate-running-reads", c, bad, 0);
	CHECK("migrate-stopped-not-advancing", c, stopped_bad, 0);
	CHECK_COUNT("migrate-instret-exact", c, gt_pmu_read_csr((unsigned long)p), s->lexp, t0);
	CHECK("migrate-cycles-equals-instret", c, gt_pmu_read_csr(0),
	      gt_pmu_read_csr((unsigned long)p));
	gt_pmu_stop(0, 1UL | (1UL << p), SBI_PMU_STOP_FLAG_RESET);
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
			exact = !gt_native();
	isolation = !gt_native();

	r = gt_pmu_layout(&pl);
	GT_CHECK_SBI("num-counters", r, SBI_SUCCESS);
	GT_CHECK_EQ("counters-0-2-present", pl.hw_mask & 5, 5);
	GT_CHECK_GE("programmable-counters", __builtin_popcountl(pl.prog_mask), 4);
	GT_CHECK_NE("fw-counters", pl.fw_first, ~0UL);
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
		GT_CHECK_EQ(
			name,
			gt_wait_hart_state(gt_hart_id_at(i), SBI_HSM_STATE_STOPPED, TIMEOUT_TICKS),
			SBI_HSM_STATE_STOPPED);
	}
	(void)hartid;
	gt_exit();
}
