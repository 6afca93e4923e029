// SPDX-License-Identifier: BSD-2-Clause
#include "guest-tests/images/bench/bench.h"

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
asm(".text\n.globl switch_worker_loop\n.align 2\nswitch_worker_loop:\n" WORKER_HEAD
    "	ld t3, 0(a0)\n" /* 6 */
    "	beqz t3, 1b\n"	/* 7 */
    "	rdtime t1\n"
    "	sub t2, t1, t0\n"
    "	bltu t2, a3, 4f\n"
    "	bgeu t5, a2, 4f\n"
    "	sd t1, 0(a1)\n"
    "	sd t6, 8(a1)\n"
    "	addi t5, t5, 1\n"
    "4:	mv a0, t5\n"
    "	ret\n" WORKER_RECORD);
#define WORKER_ITER 7
#define WORKER_REC  6

/* counter i of the set of n live counters: 0 = cycles, 2 = instret, 3.. programmable */
static unsigned long live_idx[32], live_ev[32];
unsigned long live_max;

static const unsigned long all_ev[] = {EV_INSTR, 0x10019, 0x1001b, 0x10021};

void live_setup(const unsigned long *prog_ev, unsigned long nev)
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

long live_start(unsigned long n)
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

void live_stop(unsigned long n)
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

uint64_t __attribute__((noinline)) time_spin(uint64_t *s, uint64_t *e)
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

void bench_switch(void)
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
