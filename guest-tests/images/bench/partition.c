// SPDX-License-Identifier: BSD-2-Clause
#include "guest-tests/images/bench/bench.h"

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
static struct rec part_rec[MAX_REC];

/*
 * The worker loop of partition guest B: like switch_worker_loop, but it
 * ends when the time reaches a0 (6 instructions per iteration, 6 more per
 * record). a0 = end tick, a1 = records, a2 = max records, a3 = gap ticks.
 */
unsigned long switch_worker_until(unsigned long end, struct rec *rec, unsigned long max,
				  unsigned long gap);
asm(".text\n.globl switch_worker_until\n.align 2\nswitch_worker_until:\n" WORKER_HEAD
    "	bltu t1, a0, 1b\n" /* 6 */
    "	mv a0, t5\n"
    "	ret\n" WORKER_RECORD);

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
void bench_partition(bool timer, bool shared)
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
			unsigned long nrec =
				err ? 0
				    : switch_worker_until(t + ms_ticks(PART_RUN_MS), part_rec,
							  MAX_REC, GAP_TICKS);

			live_stop(n);
			gt_printf("BENCH-SWB %lu nrec=%lu err=%ld iter=%d rec=%d\n", n, nrec, err,
				  6, 6);
			for (unsigned long i = 0; i < nrec; i++)
				gt_printf("BENCH-REC %lu %lu %lu\n", n,
					  (unsigned long)part_rec[i].t,
					  (unsigned long)part_rec[i].ncum);
		}
	}
}
