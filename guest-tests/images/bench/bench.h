// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench: what the image's files share. main.c times and prints (its head
 * says how a figure is taken), calls.c has the SBI and CSR figures,
 * steady.c the steady state, switch.c the vCPU switch and its live
 * counters, partition.c the switch between two guests.
 */
#ifndef GUEST_TESTS_BENCH_H
#define GUEST_TESTS_BENCH_H
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

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
#define SIE_LCOFIE (1UL << IRQ_PMU_OVF)

extern unsigned long ipt;	/* instructions per tick: 1e9 / timebase */
extern struct gt_pmu_layout pl; /* NUM_COUNTERS and COUNTER_GET_INFO */

/* main.c: intervals between tick edges, exact to 3 instructions */
uint64_t edge_begin(void);
uint64_t edge_end(uint64_t start, uint64_t *end_tick);
extern int inexact;

/* main.c: a BENCH line; fig_prefix before the name, fig_note after the figure */
void print_figure(const char *name, int64_t ins, unsigned long n, long err, const char *extra);
extern const char *fig_prefix;
extern const char *fig_note;

/* calls.c: a sequence of up to MAX_SEQ SBI calls, timed as one iteration */
struct call {
	unsigned long a[6];
	unsigned long fid, eid;
};

#define CALL(e, f, x0, x1, x2, x3, x4)                                                             \
	(struct call)                                                                              \
	{                                                                                          \
		.a = {(x0), (x1), (x2), (x3), (x4), 0}, .fid = (f), .eid = (e)                     \
	}
#define PMU(f, x0, x1, x2, x3, x4) CALL(SBI_EXT_PMU, f, x0, x1, x2, x3, x4)

void bench_seq(const char *name, const struct call *c, unsigned long m, unsigned long n);
long cfg_on(unsigned long idx, unsigned long event);
extern unsigned long ev_prog; /* the event of the figures on counters 3..10 */
extern char ev_note[16];      /* fig_note when ev_prog is not instructions */
void bench_sbi(bool steady);

/* switch.c: vCPU 0's timed loop and vCPU 1's run-period records (switch.c's head) */
#define N0	  100000000UL
#define GAP_TICKS 10000UL
#define MAX_REC	  512

struct rec {
	uint64_t t;    /* first time read after the gap */
	uint64_t ncum; /* iterations before that read's iteration */
};

uint64_t time_spin(uint64_t *s, uint64_t *e);

/*
 * The worker loops' shared parts (switch.c, partition.c): a1 = records,
 * a2 = max records, a3 = gap ticks; t5 counts records, t6 iterations. The
 * head reads the time and records a gap longer than a3 (WORKER_RECORD, at
 * label 3); the loop's own exit check follows it, back to label 1.
 */
#define WORKER_HEAD                                                                                \
	"	li t5, 0\n"                                                                              \
	"	li t6, 0\n"                                                                              \
	"	rdtime t0\n"                                                                             \
	"1:	rdtime t1\n"	   /* 1 */                                                         \
	"	sub t2, t1, t0\n"  /* 2 */                                                         \
	"	mv t0, t1\n"	   /* 3 */                                                         \
	"	bgeu t2, a3, 3f\n" /* 4 */                                                         \
	"2:	addi t6, t6, 1\n"  /* 5 */
#define WORKER_RECORD                                                                              \
	"3:	bgeu t5, a2, 2b\n" /* +1 */                                                        \
	"	sd t1, 0(a1)\n"	   /* +2 */                                                        \
	"	sd t6, 8(a1)\n"	   /* +3 */                                                        \
	"	addi a1, a1, 16\n" /* +4 */                                                        \
	"	addi t5, t5, 1\n"  /* +5 */                                                        \
	"	j 2b\n"		   /* +6 */

/* switch.c: the live counters, the same set on every vCPU and guest */
extern unsigned long live_max;
void live_setup(const unsigned long *prog_ev, unsigned long nev);
long live_start(unsigned long n);
void live_stop(unsigned long n);

void bench_steady(void);
void bench_switch(void);
void bench_partition(bool timer, bool shared);

#endif
