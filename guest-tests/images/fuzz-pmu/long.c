// SPDX-License-Identifier: BSD-2-Clause
/* fuzz-pmu: the directed overflow, the long calls and the turns among the random calls */
#include "guest-tests/images/fuzz-pmu/fuzz.h"

/*
 * Among the random calls, a counter that must overflow: instret counting
 * VS-mode from -300 on a programmable counter; its LCOFI must arrive.
 * Every counter of this vCPU is released first: QEMU counts an event on one
 * counter per hart only, so instret left on another of our own counters
 * would (natively too) keep this one at its initial value.
 */
void directed_overflow(unsigned long hart)
{
	struct stats *S = &st[hart];
	unsigned long before = S->lcofi, idx;
	struct sbi_ret r;
	uint64_t end;

	gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_STOP, 0, valid_mask, SBI_PMU_STOP_FLAG_RESET,
		    0, 0, 0);
	r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_CFG_MATCH, 0, prog_mask,
			SBI_PMU_CFG_FLAG_CLEAR_VALUE, SBI_PMU_HW_INSTRUCTIONS, 0, 0);
	if (r.error) {
		if (gt_atomic_add(&reports, 1) < MAX_REPORTS)
			gt_printf("fuzz-pmu: hart %lu: instret refused after releasing all: %ld\n",
				  hart, r.error);
		S->ovf_tried++;
		return;
	}
	idx = r.value;
	S->ovf_tried++;
	r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_START, idx, 1,
			SBI_PMU_START_FLAG_SET_INIT_VALUE, -300UL, 0, 0);
	end = gt_rdtime() + gt_timebase() / 20; /* 50 ms */
	while (!r.error && S->lcofi == before && gt_rdtime() < end)
		gt_cpu_relax();
	if (S->lcofi != before) {
		S->ovf_got++;
	} else {
		unsigned long now = read_counter(idx);

		/* wrapped without an interrupt (a known gap), or never got there */
		if (now < (1UL << 63))
			S->ovf_silent++;
		else
			S->ovf_stuck++;
		if (gt_atomic_add(&reports, 1) < 5)
			gt_printf("fuzz-pmu: hart %lu: no LCOFI from counter %lu started at -300 "
				  "(start error %ld, now 0x%lx, sip 0x%lx sie 0x%lx)\n",
				  hart, idx, r.error, now, csr_read(sip), csr_read(sie));
	}
	gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_STOP, idx, 1, SBI_PMU_STOP_FLAG_RESET, 0, 0,
		    0);
}

/*
 * A long EVENT_GET_INFO call (up to LONG_N well-formed entries, many of them
 * raw events with distinct data, each a host probe): the hypervisor answers
 * it in slices and re-executes the ecall, so it must come back SUCCESS with
 * the entries' event_idx and event_data untouched, every output 0 or 1, and
 * the same answers as one-entry calls. A neighbour guest with a watchdog
 * runs beside (fuzz-pmu.dts): one call must not hold a hart for long.
 */
#define LONG_N 8192UL
static struct ei_entry long_ei[GT_MAX_HARTS][LONG_N] __attribute__((aligned(16)));
static struct ei_entry long_copy[GT_MAX_HARTS][LONG_N];
static struct ei_entry one_ei[GT_MAX_HARTS] __attribute__((aligned(16)));

void long_event_info(unsigned long *rs, unsigned long hart)
{
	struct ei_entry *e = long_ei[hart], *c = long_copy[hart];
	unsigned long n = 1 + RN(LONG_N), bad = 0;
	struct sbi_ret r;

	bool alt = PCT(25); /* two raw events by turns, both refused on QEMU */
	uint64_t alt_data[2] = {R(), R()};

	for (unsigned long i = 0; i < n; i++) {
		unsigned long ev;

		do /* well formed: no reserved bit (20 and up), else the whole call fails */
			ev = alt ? (unsigned long)SBI_PMU_EVENT_TYPE_RAW << 16
				 : events[RN(nevents)];
		while (ev >> 20);
		e[i].event_idx = (uint32_t)ev;
		e[i].output = (uint32_t)R();
		e[i].event_data = alt				       ? alt_data[i & 1]
				  : (ev >> 16) == 2 || (ev >> 16) == 3 ? R() >> RN(64)
								       : 0;
		c[i] = e[i];
	}
	r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_EVENT_GET_INFO, (unsigned long)e, 0, n, 0, 0, 0);
	if (r.error)
		bad++;
	for (unsigned long i = 0; i < n && !r.error; i++)
		if (e[i].event_idx != c[i].event_idx || e[i].event_data != c[i].event_data ||
		    e[i].output > 1)
			bad++;
	for (unsigned long k = 0; k < 8 && !r.error; k++) {
		unsigned long i = RN(n);

		one_ei[hart] = c[i];
		r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_EVENT_GET_INFO,
				(unsigned long)&one_ei[hart], 0, 1, 0, 0, 0);
		if (r.error || one_ei[hart].output != e[i].output)
			bad++;
	}
	st[hart].long_calls++;
	st[hart].long_entries += n;
	st[hart].long_bad += bad;
	if (bad && gt_atomic_add(&reports, 1) < MAX_REPORTS)
		gt_printf("fuzz-pmu: hart %lu: long EVENT_GET_INFO of %lu entries: error %ld, %lu "
			  "wrong\n",
			  hart, n, r.error, bad);
}

/*
 * One long console write of whole 64-byte lines, as a careless guest makes
 * it, the rest written again until it is out; then a buffer that runs past
 * the end of RAM, refused. The console is ours meanwhile: lines of the other
 * vCPUs (the runner reads them) wait.
 */
#define DBCN_MAX (32 * 1024UL)
static char dbcn_buf[GT_MAX_HARTS][DBCN_MAX];

void long_console_write(unsigned long *rs, unsigned long hart)
{
	struct stats *S = &st[hart];
	char *b = dbcn_buf[hart];
	unsigned long lines = 1 + RN(DBCN_MAX / 64), len = lines * 64, done = 0, flags;
	struct sbi_ret r = {0, 0}, past;

	for (unsigned long i = 0; i < lines; i++) {
		char *l = b + i * 64;

		gt_snprintf(l, 25, "fuzz-pmu: dbcn h%lu %05lu ", hart % 10, i);
		for (unsigned long k = 24; k < 63; k++)
			l[k] = (char)('a' + (i + k) % 26);
		l[63] = '\n';
	}
	flags = gt_console_lock();
	while (done < len) {
		r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, len - done,
			    (unsigned long)b + done, 0);
		S->dbcn_calls++;
		if (r.error || !r.value || r.value > len - done)
			break;
		if (r.value > S->dbcn_most)
			S->dbcn_most = r.value;
		done += r.value;
	}
	past = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, 64 + RN(PAGE),
		       ram_end - 1 - RN(63), 0);
	gt_console_unlock(flags);
	S->dbcn_writes++;
	S->dbcn_bytes += done;
	if (done != len || past.error != SBI_ERR_INVALID_PARAM) {
		S->dbcn_bad++;
		if (gt_atomic_add(&reports, 1) < MAX_REPORTS)
			gt_printf("fuzz-pmu: hart %lu: console write of %lu bytes: %lu written, "
				  "error %ld, value %lu; past RAM's end: error %ld\n",
				  hart, len, done, r.error, r.value, past.error);
	}
}

/*
 * turns-ms: a counter started, stopped 9.5 to 9.98 ms later (just before
 * the exclusive-counting turn that started with it ends), started again
 * 50 to 150 us after that, for ms of guest time. Each stop must find it
 * counted.
 */
void turns(unsigned long *rs, unsigned long hart, unsigned long ms)
{
	struct stats *S = &st[hart];
	unsigned long us = gt_timebase() / 1000000;
	uint64_t end = gt_rdtime() + ms * (gt_timebase() / 1000);
	long idx = gt_pmu_cfg_idx(0, hw_mask, SBI_PMU_CFG_FLAG_SET_UINH, SBI_PMU_HW_INSTRUCTIONS);

	if (idx < 0) {
		S->turns_bad++;
		return;
	}
	while (gt_rdtime() < end) {
		uint64_t t0 = gt_rdtime(), work = (9500 + RN(480)) * us,
			 pause = (50 + RN(100)) * us;
		struct sbi_ret start, stop;

		start = gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0);
		while (gt_rdtime() - t0 < work)
			;
		stop = gt_pmu_stop((unsigned long)idx, 1, 0);
		if (start.error || stop.error || !gt_pmu_read_csr((unsigned long)idx))
			S->turns_bad++;
		S->turns++;
		for (t0 = gt_rdtime(); gt_rdtime() - t0 < pause;)
			;
	}
	gt_pmu_release((unsigned long)idx);
}
