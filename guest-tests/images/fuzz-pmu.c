// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz-pmu: a hostile guest. Every vCPU sends a seeded pseudo-random stream
 * of SBI PMU calls (FIDs 0-8 and invalid FIDs; any register values; huge,
 * overlapping and empty counter masks; reserved flag bits; initial values
 * near the top so that counters overflow; shared-memory addresses inside
 * its RAM, unaligned, in MMIO, below and above its RAM, at the host
 * physical addresses where the hypervisor and the other guests live, with
 * a non-zero upper half) mixed with counter CSR reads (that may trap).
 *
 * Invariants, checked after every call:
 *  - the error is one the SBI v3.0 PMU chapter lists for that function
 *    (table `allowed` below), unknown FIDs give NOT_SUPPORTED;
 *  - NUM_COUNTERS never changes, COUNTER_GET_INFO of an index never changes,
 *    CFG_MATCH returns a counter of the requested set, FW_READ_HI is 0 (RV64);
 *  - a snapshot or EVENT_GET_INFO address that is not wholly guest RAM is
 *    refused (INVALID_ADDRESS, or INVALID_PARAM for flags/alignment), never
 *    SUCCESS; SNAPSHOT_SET_SHMEM of a valid page succeeds and zeroes it;
 *  - the hypervisor writes only where the guest asked: the guest's whole free
 *    RAM (all but image, stacks, arena and FDT) is a canary filled with an
 *    address pattern and verified periodically and at the end; inside the
 *    arena, pages no longer used as snapshot area and the bytes around an
 *    EVENT_GET_INFO array are canaries too; an EVENT_GET_INFO success only
 *    changes the output words, to 0 or 1;
 *  - with long-every=<n>, every n-th call one EVENT_GET_INFO of up to 8192 well-formed
 *    entries (raw ones with distinct data: a host probe each) succeeds with
 *    the answers of one-entry calls, while a watchdog-protected neighbour
 *    guest keeps running (the hypervisor answers such a call in slices);
 *    A quarter of them alternate between two raw events with different data
 *    (the host refuses both on QEMU: one-entry caches of refusals are no help);
 *  - with dbcn-every=<n>, every n-th call one SBI DBCN console_write of up to
 *    32 KiB of lines: every call SUCCESS, taking at least one byte and at most
 *    what is left, the rest written again as Linux's hvc driver does; a buffer
 *    that runs past the end of RAM refused with INVALID_PARAM;
 *  - the hypervisor never stops this guest (the runner checks the shutdown).
 * Valid in-RAM addresses are only ever inside this vCPU's arena, so a
 * conforming hypervisor never has a reason to touch the canaries.
 * These three are the patterns that found issue 28's items 1-3; with
 * turns-ms=<t> the guest runs the first instead of random calls: for t ms,
 * a counter started, stopped just before the 10 ms turn of exclusive
 * counting (-icount) would end, started again about 100 us later; a
 * neighbour on another hart with a short watchdog must keep running.
 *
 * bootargs: "seed=<n> calls=<n> long-every=<n> dbcn-every=<n> turns-ms=<t>" (defaults
 * below); every vCPU fuzzes with seed + its hart id and calls / nr_vcpus
 * calls. The seed is printed, and every violation is printed with its call
 * number and registers.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("fuzz-pmu");

#define DEFAULT_SEED  0x5eed0001UL
#define DEFAULT_CALLS 1000000UL
#define PAGE	      4096UL
#define SNAP_PAGES    6 /* snapshot candidates */
#define EI_PAGES      2 /* EVENT_GET_INFO entries */
/* per vCPU: guard | SNAP_PAGES | guard | EI_PAGES | guard */
#define ARENA_PAGES (SNAP_PAGES + EI_PAGES + 3)
#define CHECK_EVERY (1UL << 17) /* calls between full canary scans */
#define MAX_REPORTS 20

struct ei_entry {
	uint32_t event_idx;
	uint32_t output;
	uint64_t event_data;
};

struct arena {
	uint8_t guard0[PAGE];
	uint8_t snap[SNAP_PAGES][PAGE];
	uint8_t guard1[PAGE];
	struct ei_entry ei[EI_PAGES * PAGE / sizeof(struct ei_entry)];
	uint8_t guard2[PAGE];
};
#define EI_N (EI_PAGES * PAGE / sizeof(struct ei_entry))

static struct arena arenas[GT_MAX_HARTS] __attribute__((aligned(4096)));
static struct ei_entry ei_copy[GT_MAX_HARTS][EI_N];

extern char _end[];
static unsigned long ram_base, ram_end, canary_lo, canary_hi, nr_vcpus, total_calls, seed0;
static unsigned long num; /* NUM_COUNTERS */
static unsigned long info[64];
static long info_err[64];
static unsigned long valid_mask, hw_mask, prog_mask, fw_mask;
static volatile unsigned long done_harts, reports;
static unsigned long directed_only, directed_every = 4096, long_every, dbcn_every, turns_ms;

/* per-vCPU statistics and violations */
struct stats {
	unsigned long calls, per_fid[10], success, csr_reads, csr_traps;
	unsigned long bad_err, bad_value, bad_addr_accepted, bad_addr_err, shmem_not_zeroed;
	unsigned long shmem_valid_refused, ei_corrupt, arena_canary, lcofi;
	unsigned long ovf_tried, ovf_got, ovf_silent, ovf_stuck;
	unsigned long long_calls, long_entries, long_bad;
	unsigned long dbcn_writes, dbcn_calls, dbcn_bytes, dbcn_most, dbcn_bad;
	unsigned long turns, turns_bad;
	unsigned long ns;
};
static struct stats st[GT_MAX_HARTS];

/* ---- PRNG: xorshift64* ---- */
static unsigned long rnd_next(unsigned long *s)
{
	unsigned long x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dUL;
}
#define R()    (rnd_next(rs))
#define RN(n)  (R() % (n))
#define PCT(p) (RN(100) < (p))

static uint64_t pattern(unsigned long addr)
{
	return (addr * 0x9e3779b97f4a7c15UL) ^ 0xc0ffee0000c0ffeeUL;
}

static void fill_pattern(unsigned long lo, unsigned long hi)
{
	for (unsigned long a = lo; a < hi; a += 8)
		*(volatile uint64_t *)a = pattern(a);
}

/* Returns the first address in [lo, hi) not holding its pattern, or 0 */
static unsigned long check_pattern(unsigned long lo, unsigned long hi)
{
	for (unsigned long a = lo; a < hi; a += 8)
		if (*(volatile uint64_t *)a != pattern(a))
			return a;
	return 0;
}

static bool in_arena(unsigned long hart, unsigned long a, unsigned long len)
{
	unsigned long lo = (unsigned long)&arenas[hart];

	return a >= lo && a - lo <= sizeof(struct arena) && len <= sizeof(struct arena) - (a - lo);
}

static bool in_ram(unsigned long a, unsigned long len)
{
	return a >= ram_base && a < ram_end && len <= ram_end - a;
}

static void report(unsigned long hart, unsigned long n, const char *what, unsigned long fid,
		   const unsigned long *a, long err, unsigned long val)
{
	if (gt_atomic_add(&reports, 1) >= MAX_REPORTS)
		return;
	gt_printf("fuzz-pmu: hart %lu call %lu: %s: fid %lu a0=0x%lx a1=0x%lx a2=0x%lx a3=0x%lx "
		  "a4=0x%lx a5=0x%lx -> err %ld value 0x%lx\n",
		  hart, n, what, fid, a[0], a[1], a[2], a[3], a[4], a[5], err, val);
}

/* SBI v3.0, chapter "Performance Monitoring Unit Extension": errors per function */
static bool allowed(unsigned long fid, long err)
{
	return sbi_pmu_error_allowed(fid, err);
}

/* ---- argument generators ---- */
static const unsigned long events[] = {
	SBI_PMU_HW_CPU_CYCLES,
	SBI_PMU_HW_INSTRUCTIONS,
	SBI_PMU_HW_CACHE_REFERENCES,
	SBI_PMU_HW_BRANCH_MISSES,
	SBI_PMU_HW_REF_CPU_CYCLES,
	0x0,
	0xb,
	0x10019,
	0x1001b,
	0x10021,
	0x10000,
	0x1ffff,
	0x20000,
	0x30000,
	0xf0000,
	0xf0004,
	0xf0005,
	0xf0006,
	0xf0015,
	0xf0016,
	0xfffff,
	0xf00ff,
	0x1234,
	0x40000,
	0x100001,
	0xe0000,
};
#define NEVENTS (sizeof(events) / sizeof(events[0]))

static unsigned long gen_event(unsigned long *rs)
{
	if (PCT(90))
		return events[RN(NEVENTS)];
	if (PCT(50))
		return R() & 0xfffff;
	return R();
}

static unsigned long gen_base(unsigned long *rs)
{
	switch (RN(12)) {
	case 0:
		return R();
	case 1:
		return num + RN(3);
	case 2:
		return 1UL << RN(64);
	case 3:
		return ~0UL - RN(64);
	default:
		return RN(num);
	}
}

static unsigned long gen_mask(unsigned long *rs)
{
	switch (RN(14)) {
	case 0:
		return R();
	case 1:
		return ~0UL;
	case 2:
		return 0;
	case 3:
		return valid_mask;
	case 4:
		return hw_mask;
	case 5:
		return fw_mask;
	case 6:
		return prog_mask;
	case 7:
		return R() & valid_mask;
	case 8:
		return (R() & valid_mask) | (1UL << RN(64)); /* overlapping with an invalid bit */
	default:
		return 1UL << RN(num + 2);
	}
}

/* A (base, mask) pair that mostly names valid counters */
static void gen_set(unsigned long *rs, unsigned long *base, unsigned long *mask)
{
	if (PCT(70)) {
		unsigned long m = gen_mask(rs), b = RN(8);

		*base = b <= num ? b : 0;
		*mask = m >> *base;
		if (PCT(80))
			*mask &= valid_mask >> *base;
		if (!*mask && PCT(90))
			*mask = 1;
	} else {
		*base = gen_base(rs);
		*mask = gen_mask(rs);
	}
}

static unsigned long gen_flags(unsigned long *rs, unsigned long valid)
{
	unsigned long f = R() & valid;

	if (PCT(8))
		f |= 1UL << (8 + RN(56));
	if (PCT(3))
		f = R();
	return f;
}

static unsigned long gen_value(unsigned long *rs)
{
	switch (RN(6)) {
	case 0:
		return -(RN(20000) + 1); /* near the top: overflows soon */
	case 1:
		return R();
	case 2:
		return ~0UL;
	case 3:
		return 1UL << RN(64);
	default:
		return RN(1000000);
	}
}

/*
 * A guest-physical address: inside this vCPU's arena (valid), or anywhere
 * that is not this guest's RAM. Never another in-RAM address: those are
 * this guest's own canaries. *valid says whether it is wholly in the arena.
 */
static unsigned long gen_addr(unsigned long *rs, unsigned long hart, unsigned long align, bool ei)
{
	struct arena *ar = &arenas[hart];
	unsigned long a;

	switch (RN(24)) {
	case 0:
		return 0x10000000UL + RN(0x100) * 8; /* UART */
	case 1:
		return 0x0c000000UL + RN(0x400000) * 16; /* PLIC */
	case 2:
		return 0x02000000UL + RN(0x10000) * 16; /* CLINT/ACLINT */
	case 3:
		return 0x80000000UL + 0x1000000UL * (1 + RN(64)); /* other guests' host PAs */
	case 4:
		return 0x80200000UL + 0x100000000UL;
	case 5:
		return ram_end; /* first byte after RAM */
	case 6:
		return ram_end - PAGE + 8 * (1 + RN(PAGE / 8 - 1)); /* straddles the end */
	case 7:
		return ram_base - PAGE * (1 + RN(16)); /* just below */
	case 8:
		return 0;
	case 9:
		return ~0UL & ~(align - 1);
	case 10:
		return (1UL << 41) + (R() & 0xfff000); /* past the Sv39x4 reach */
	case 11:
		return 1UL << (32 + RN(32));
	case 12:
		a = R();
		if (in_ram(a, 1)) /* never another place of our own RAM */
			a = ram_end + (a & 0xfff0000);
		return a;
	default:
		break;
	}
	/* inside the arena */
	if (!ei) {
		a = (unsigned long)ar->snap[RN(SNAP_PAGES)];
		if (PCT(10))
			a += 8 * RN(PAGE / 8); /* unaligned for a 4 KiB area */
		return a;
	}
	a = (unsigned long)&ar->ei[RN(EI_N)];
	if (PCT(8))
		a += 1 + RN(15); /* not 16-byte aligned */
	return a;
}

static unsigned long gen_hi(unsigned long *rs)
{
	if (PCT(92))
		return 0;
	switch (RN(4)) {
	case 0:
		return 1;
	case 1:
		return ~0UL;
	default:
		return R();
	}
}

/* ---- counter CSR read, may trap ---- */
static unsigned long read_counter(unsigned long idx)
{
	return gt_pmu_read_csr(idx);
}

static void lcofi_handler(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	(void)f;
	st[gt_hartid()].lcofi++;
	csr_clear(sip, 1UL << 13);
}

static void randomize_ei(unsigned long *rs, struct arena *ar, unsigned long hart)
{
	for (unsigned long i = 0; i < EI_N; i++) {
		ar->ei[i].event_idx = PCT(85) ? (uint32_t)events[RN(NEVENTS)] : (uint32_t)R();
		ar->ei[i].output = (uint32_t)R();
		ar->ei[i].event_data = PCT(85) ? 0 : R();
	}
	for (unsigned long i = 0; i < EI_N; i++)
		ei_copy[hart][i] = ar->ei[i];
}

/* Pages of the arena that are not the live snapshot area hold their pattern */
static void check_arena(unsigned long hart, unsigned long n, long live_snap)
{
	struct arena *ar = &arenas[hart];
	unsigned long bad = check_pattern((unsigned long)ar->guard0, (unsigned long)ar->snap);

	for (long p = 0; !bad && p < SNAP_PAGES; p++)
		if (p != live_snap)
			bad = check_pattern((unsigned long)ar->snap[p],
					    (unsigned long)ar->snap[p] + PAGE);
	if (!bad)
		bad = check_pattern((unsigned long)ar->guard1, (unsigned long)ar->guard1 + PAGE);
	if (!bad)
		bad = check_pattern((unsigned long)ar->guard2, (unsigned long)ar->guard2 + PAGE);
	if (bad) {
		st[hart].arena_canary++;
		if (gt_atomic_add(&reports, 1) < MAX_REPORTS)
			gt_printf("fuzz-pmu: hart %lu call %lu: arena canary changed at 0x%lx: "
				  "0x%lx\n",
				  hart, n, bad, *(volatile unsigned long *)bad);
		fill_pattern((unsigned long)ar, (unsigned long)ar + sizeof(*ar));
	}
}

static unsigned long canary_bad, fdt_sum0;

static unsigned long fdt_sum(const void *fdt)
{
	const volatile uint8_t *p = fdt;
	unsigned long n = gt_fdt32((const uint8_t *)fdt + 4), sum = 0;

	for (unsigned long i = 0; i < n && i < 0x10000; i++)
		sum = sum * 31 + p[i];
	return sum;
}

static void check_canary(const char *when)
{
	unsigned long bad = check_pattern(canary_lo, canary_hi);

	if (bad) {
		canary_bad++;
		gt_printf("fuzz-pmu: %s: RAM canary changed at 0x%lx: 0x%lx (expected 0x%lx)\n",
			  when, bad, *(volatile unsigned long *)bad, pattern(bad));
		fill_pattern(canary_lo, canary_hi);
	}
}

/*
 * Among the random calls, a counter that must overflow: instret counting
 * VS-mode from -300 on a programmable counter; its LCOFI must arrive.
 * Every counter of this vCPU is released first: QEMU counts an event on one
 * counter per hart only, so instret left on another of our own counters
 * would (natively too) keep this one at its initial value.
 */
static void directed_overflow(unsigned long hart)
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

static void long_event_info(unsigned long *rs, unsigned long hart)
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
				 : events[RN(NEVENTS)];
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

static void long_console_write(unsigned long *rs, unsigned long hart)
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
static void turns(unsigned long *rs, unsigned long hart, unsigned long ms)
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

static void fuzz(unsigned long hart, unsigned long seed, unsigned long calls)
{
	unsigned long s = seed ? seed : 1, *rs = &s;
	struct arena *ar = &arenas[hart];
	struct stats *S = &st[hart];
	long live_snap = -1; /* arena snapshot page the hypervisor may write */
	uint64_t t0 = gt_rdtime();

	fill_pattern((unsigned long)ar, (unsigned long)ar + sizeof(*ar));
	randomize_ei(rs, ar, hart);
	gt_irq_register(13, lcofi_handler);
	csr_set(sie, 1UL << 13);
	gt_irq_enable();
	if (turns_ms) {
		turns(rs, hart, turns_ms);
		calls = 0;
	}

	for (unsigned long n = 0; n < calls; n++) {
		unsigned long fid, a[6] = {0}, ei_lo = 0, ei_num = 0;
		bool addr_bad = false, addr_check = false, snap_valid = false;
		long snap_page = -1;
		struct sbi_ret r;

		if ((n & (CHECK_EVERY - 1)) == CHECK_EVERY - 1) {
			check_arena(hart, n, live_snap);
			if (hart == 0)
				check_canary("periodic");
		}
		if (n % directed_every == 100 % directed_every)
			directed_overflow(hart);
		if (directed_only) {
			S->calls++;
			continue;
		}
		if (long_every && n % long_every == 200 % long_every)
			long_event_info(rs, hart);
		if (dbcn_every && n % dbcn_every == 300 % dbcn_every)
			long_console_write(rs, hart);
		if (PCT(3)) { /* a counter CSR read: value or illegal instruction */
			unsigned long idx = RN(32);

			gt_expect_trap(EXC_ILLEGAL_INSN);
			(void)read_counter(idx);
			if (gt_trapped() >= 0)
				S->csr_traps++;
			S->csr_reads++; /* and an SBI call too */
		}

		fid = RN(100);
		if (fid < 3)
			fid = PCT(50) ? 9 + RN(32) : R();
		else
			fid = (fid - 3) % 9;
		if (fid == SBI_EXT_PMU_COUNTER_CFG_MATCH && PCT(50))
			fid = PCT(50) ? SBI_EXT_PMU_COUNTER_START : SBI_EXT_PMU_COUNTER_STOP;

		switch (fid) {
		case SBI_EXT_PMU_NUM_COUNTERS:
			break;
		case SBI_EXT_PMU_COUNTER_GET_INFO:
		case SBI_EXT_PMU_COUNTER_FW_READ:
		case SBI_EXT_PMU_COUNTER_FW_READ_HI:
			a[0] = PCT(80) ? RN(num + 2) : gen_base(rs);
			break;
		case SBI_EXT_PMU_COUNTER_CFG_MATCH:
			gen_set(rs, &a[0], &a[1]);
			a[2] = gen_flags(rs, SBI_PMU_CFG_FLAG_MASK);
			a[3] = gen_event(rs);
			a[4] = PCT(85) ? 0 : R();
			break;
		case SBI_EXT_PMU_COUNTER_START:
			gen_set(rs, &a[0], &a[1]);
			a[2] = gen_flags(rs, SBI_PMU_START_FLAG_MASK);
			a[3] = gen_value(rs);
			if (live_snap >= 0 && PCT(20)) /* initial values for INIT_SNAPSHOT */
				for (int i = 0; i < 8; i++)
					((volatile uint64_t *)ar->snap[live_snap])[1 + RN(64)] =
						gen_value(rs);
			break;
		case SBI_EXT_PMU_COUNTER_STOP:
			gen_set(rs, &a[0], &a[1]);
			a[2] = gen_flags(rs, SBI_PMU_STOP_FLAG_MASK);
			break;
		case SBI_EXT_PMU_SNAPSHOT_SET_SHMEM:
			if (PCT(5)) {
				a[0] = a[1] = ~0UL; /* disable */
			} else {
				a[0] = gen_addr(rs, hart, PAGE, false);
				a[1] = gen_hi(rs);
			}
			a[2] = PCT(95) ? 0 : (PCT(50) ? 1 : R());
			if (a[0] == ~0UL && a[1] == ~0UL)
				break;
			addr_check = true;
			addr_bad = a[1] || !in_arena(hart, a[0], PAGE);
			if (!addr_bad && !(a[0] & (PAGE - 1)) && !a[2]) {
				snap_valid = true;
				snap_page = (long)((a[0] - (unsigned long)ar->snap) / PAGE);
			}
			break;
		case SBI_EXT_PMU_EVENT_GET_INFO:
			a[0] = gen_addr(rs, hart, 16, true);
			a[1] = gen_hi(rs);
			if (in_arena(hart, a[0], 16)) {
				unsigned long room = ((unsigned long)ar->guard2 - a[0]) / 16;

				/* fits the arena, or rarely extends past RAM's end (refused
				 * after the hypervisor read every entry up to the end) */
				if (!PCT(1) && room)
					a[2] = 1 + RN(PCT(80) ? (room < 8 ? room : 8) : room);
				else
					a[2] = (ram_end - a[0]) / 16 + 1 + RN(1000);
				if (PCT(3))
					a[2] = 0;
				if (a[2] > room || a[1])
					addr_bad = true;
				ei_lo = a[0];
				ei_num = a[2] ? a[2] : 1;
			} else if (in_ram(a[0], 1)) {
				/* straddles the end of RAM: never wholly inside */
				a[2] = (ram_end - a[0]) / 16 + 1 + RN(64);
				addr_bad = true;
			} else {
				a[2] = PCT(50) ? 1 + RN(64) : R();
				addr_bad = true;
			}
			a[3] = PCT(95) ? 0 : R();
			addr_check = true;
			break;
		default:
			break;
		}
		/* any register values, where no guest address is involved */
		if (PCT(2) && fid != SBI_EXT_PMU_SNAPSHOT_SET_SHMEM &&
		    fid != SBI_EXT_PMU_EVENT_GET_INFO)
			for (int i = 0; i < 6; i++)
				a[i] = R();

		r = gt_sbi_call(SBI_EXT_PMU, fid, a[0], a[1], a[2], a[3], a[4], a[5]);
		S->calls++;
		S->per_fid[fid < 9 ? fid : 9]++;
		if (!r.error)
			S->success++;

		if (!allowed(fid, r.error)) {
			S->bad_err++;
			report(hart, n, "error not allowed", fid, a, r.error, r.value);
		}
		switch (fid) {
		case SBI_EXT_PMU_NUM_COUNTERS:
			if (r.value != num) {
				S->bad_value++;
				report(hart, n, "NUM_COUNTERS changed", fid, a, r.error, r.value);
			}
			break;
		case SBI_EXT_PMU_COUNTER_GET_INFO:
			if (a[0] < 64 &&
			    (r.error != info_err[a[0]] || (!r.error && r.value != info[a[0]]))) {
				S->bad_value++;
				report(hart, n, "COUNTER_GET_INFO changed", fid, a, r.error,
				       r.value);
			}
			if (a[0] >= num && !r.error) {
				S->bad_value++;
				report(hart, n, "COUNTER_GET_INFO past the end", fid, a, r.error,
				       r.value);
			}
			break;
		case SBI_EXT_PMU_COUNTER_FW_READ_HI:
			if (!r.error && r.value) {
				S->bad_value++;
				report(hart, n, "FW_READ_HI not 0", fid, a, r.error, r.value);
			}
			break;
		case SBI_EXT_PMU_COUNTER_CFG_MATCH:
			if (!r.error && (r.value < a[0] || r.value - a[0] >= 64 ||
					 !((a[1] >> (r.value - a[0])) & 1) || r.value >= num ||
					 !((valid_mask >> r.value) & 1))) {
				S->bad_value++;
				report(hart, n, "CFG_MATCH counter outside the set", fid, a,
				       r.error, r.value);
			}
			break;
		case SBI_EXT_PMU_SNAPSHOT_SET_SHMEM:
			if (a[0] == ~0UL && a[1] == ~0UL && !r.error) {
				if (live_snap >= 0)
					fill_pattern((unsigned long)ar->snap[live_snap],
						     (unsigned long)ar->snap[live_snap] + PAGE);
				live_snap = -1;
				break;
			}
			if (snap_valid) {
				if (r.error) {
					S->shmem_valid_refused++;
					report(hart, n, "valid snapshot page refused", fid, a,
					       r.error, r.value);
					break;
				}
				for (unsigned long w = 0; w < 512; w++)
					if (((volatile uint64_t *)a[0])[w]) {
						S->shmem_not_zeroed++;
						report(hart, n, "snapshot not zeroed", fid, a,
						       r.error, w);
						break;
					}
				if (live_snap >= 0 && live_snap != snap_page)
					fill_pattern((unsigned long)ar->snap[live_snap],
						     (unsigned long)ar->snap[live_snap] + PAGE);
				live_snap = snap_page;
			}
			break;
		default:
			break;
		}
		if (addr_check && addr_bad) {
			if (!r.error) {
				S->bad_addr_accepted++;
				report(hart, n, "address outside guest RAM accepted", fid, a,
				       r.error, r.value);
			} else if (r.error != SBI_ERR_INVALID_ADDRESS &&
				   r.error != SBI_ERR_INVALID_PARAM) {
				S->bad_addr_err++;
				report(hart, n, "bad address: wrong error", fid, a, r.error,
				       r.value);
			}
		}
		if (fid == SBI_EXT_PMU_EVENT_GET_INFO && ei_num) {
			/* only output words inside [lo, lo + 16 num) may change, to 0/1 */
			unsigned long first = (ei_lo - (unsigned long)ar->ei) / 16;
			bool aligned = !(ei_lo & 15), ok = !r.error && aligned;
			unsigned long changed = 0;

			for (unsigned long i = 0; i < EI_N; i++) {
				struct ei_entry *e = &ar->ei[i], *c = &ei_copy[hart][i];
				bool inside = ok && i >= first && i - first < ei_num;

				if (e->event_idx != c->event_idx ||
				    e->event_data != c->event_data ||
				    (!inside && e->output != c->output) ||
				    (inside && e->output > 1))
					changed++;
				c->output = e->output;
			}
			if (changed) {
				S->ei_corrupt++;
				report(hart, n, "EVENT_GET_INFO wrote outside its outputs", fid, a,
				       r.error, changed);
				randomize_ei(rs, ar, hart);
			} else if (PCT(5)) {
				randomize_ei(rs, ar, hart);
			}
		}
		/* a guest area the hypervisor must write only on request */
		if (fid == SBI_EXT_PMU_EVENT_GET_INFO && !ei_num && PCT(1))
			randomize_ei(rs, ar, hart);
	}
	/* leave nothing running: stop and release every counter */
	gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_STOP, 0, valid_mask, SBI_PMU_STOP_FLAG_RESET,
		    0, 0, 0);
	gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_SNAPSHOT_SET_SHMEM, ~0UL, ~0UL, 0, 0, 0, 0);
	check_arena(hart, calls, live_snap);
	S->ns = (gt_rdtime() - t0) * 1000 / (gt_timebase() / 1000000);
}

static void report_stats(unsigned long hart)
{
	struct stats *S = &st[hart];
	char nm[64];

	gt_printf("fuzz-pmu: hart %lu: %lu PMU calls (%lu ok) in %lu ms (%lu ns/call), fid "
		  "0-8+: %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu; %lu CSR reads (%lu trapped), "
		  "%lu LCOFI (directed overflows %lu/%lu, %lu wrapped silently)\n",
		  hart, S->calls, S->success, S->ns / 1000000, S->calls ? S->ns / S->calls : 0,
		  S->per_fid[0], S->per_fid[1], S->per_fid[2], S->per_fid[3], S->per_fid[4],
		  S->per_fid[5], S->per_fid[6], S->per_fid[7], S->per_fid[8], S->per_fid[9],
		  S->csr_reads, S->csr_traps, S->lcofi, S->ovf_got, S->ovf_tried, S->ovf_silent);
	gt_printf("fuzz-pmu: hart %lu: %lu long EVENT_GET_INFO calls of %lu entries in all; %lu "
		  "console writes of %lu bytes in %lu calls (at most %lu a call); %lu turns\n",
		  hart, S->long_calls, S->long_entries, S->dbcn_writes, S->dbcn_bytes,
		  S->dbcn_calls, S->dbcn_most, S->turns);
#define C(name, v)                                                                                 \
	do {                                                                                       \
		gt_snprintf(nm, sizeof(nm), "hart%lu-" name, hart);                                \
		GT_CHECK_EQ(nm, v, 0);                                                             \
	} while (0)
	C("errors-in-spec-table", S->bad_err);
	C("values-consistent", S->bad_value);
	C("bad-address-refused", S->bad_addr_accepted);
	C("bad-address-error-code", S->bad_addr_err);
	C("valid-snapshot-accepted", S->shmem_valid_refused);
	C("snapshot-zeroed", S->shmem_not_zeroed);
	C("event-info-writes-outputs-only", S->ei_corrupt);
	C("arena-canaries-intact", S->arena_canary);
	C("long-event-info-answers", S->long_bad);
	C("console-writes-complete", S->dbcn_bad);
	C("turns-counted", S->turns_bad);
	/*
	 * Without -icount QEMU raises an overflow from a timer in virtual time
	 * while counting host ticks: the LCOFI comes about 12 ms late and about
	 * 1 in 100 never comes, natively on OpenSBI too (measured with
	 * "directed-only=1 directed-every=1"); on a hart shared with another
	 * vCPU, a wrap while switched out is lost (docs/security.md, known
	 * gaps). Those wrapped-but-silent ones are printed, not failed; a counter
	 * that did not even wrap within 50 ms fails, and some LCOFI must come.
	 */
	gt_snprintf(nm, sizeof(nm), "hart%lu-directed-overflow-counts", hart);
	GT_CHECK_EQ(nm, S->ovf_stuck, 0);
	gt_snprintf(nm, sizeof(nm), "hart%lu-directed-overflow-lcofi", hart);
	if (gt_hart_has_ext(0, "sscofpmf"))
		GT_CHECK_GE(nm, S->ovf_got, S->ovf_tried ? 1 : 0);
	else /* a host without Sscofpmf: the guest is offered no overflow at all */
		GT_CHECK_EQ(nm, S->ovf_got, 0);
#undef C
	gt_snprintf(nm, sizeof(nm), "hart%lu-long-event-info-calls", hart);
	GT_CHECK_GE(nm, S->long_calls, long_every ? 1 : 0);
	gt_snprintf(nm, sizeof(nm), "hart%lu-console-writes", hart);
	GT_CHECK_GE(nm, S->dbcn_writes, dbcn_every ? 1 : 0);
	gt_snprintf(nm, sizeof(nm), "hart%lu-turns", hart);
	GT_CHECK_GE(nm, S->turns, turns_ms / 20);
	gt_snprintf(nm, sizeof(nm), "hart%lu-calls-made", hart);
	GT_CHECK_EQ(nm, S->calls, turns_ms ? 0 : total_calls / nr_vcpus);
}

static void secondary(unsigned long hartid, unsigned long opaque)
{
	(void)opaque;
	fuzz(hartid, seed0 + hartid, total_calls / nr_vcpus);
	gt_atomic_add(&done_harts, 1);
}

static unsigned long parse_num(const char *s, const char *key, unsigned long def)
{
	unsigned long klen = __builtin_strlen(key), v = 0;

	for (const char *p = s; p && *p; p++) {
		if ((p == s || p[-1] == ' ') && !__builtin_strncmp(p, key, klen)) {
			p += klen;
			if (p[0] == '0' && p[1] == 'x')
				for (p += 2; *p && *p != ' '; p++)
					v = v * 16 +
					    (*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
			else
				for (; *p >= '0' && *p <= '9'; p++)
					v = v * 10 + (unsigned long)(*p - '0');
			return v;
		}
	}
	return def;
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	struct sbi_ret r;
	unsigned long i;

	ram_base = gt_ram_base();
	ram_end = ram_base + gt_ram_size();
	seed0 = parse_num(args, "seed=", DEFAULT_SEED);
	total_calls = parse_num(args, "calls=", DEFAULT_CALLS);
	/* diagnostics: only the directed overflow, every n-th call */
	directed_only = parse_num(args, "directed-only=", 0);
	directed_every = parse_num(args, "directed-every=", 4096);
	/*
	 * a long EVENT_GET_INFO call every n-th call (default 0: none; the
	 * make test configurations ask for every 65,536th)
	 */
	long_every = parse_num(args, "long-every=", 0);
	/* a long console write every n-th call; start/stop by turns instead of calls (ms) */
	dbcn_every = parse_num(args, "dbcn-every=", 0);
	turns_ms = parse_num(args, "turns-ms=", 0);
	nr_vcpus = gt_nr_harts();
	if (nr_vcpus > GT_MAX_HARTS)
		nr_vcpus = GT_MAX_HARTS;
	total_calls -= total_calls % nr_vcpus;

	/* the canary: every byte of RAM between our image and the FDT */
	canary_lo = ((unsigned long)_end + PAGE - 1) & ~(PAGE - 1);
	canary_hi = (unsigned long)fdt & ~(PAGE - 1);
	fill_pattern(canary_lo, canary_hi);
	fdt_sum0 = fdt_sum(fdt);
	gt_printf("fuzz-pmu: seed 0x%lx, %lu calls on %lu vCPU(s); RAM 0x%lx-0x%lx, canary "
		  "0x%lx-0x%lx\n",
		  seed0, total_calls, nr_vcpus, ram_base, ram_end, canary_lo, canary_hi);

	GT_CHECK_NE("probe-pmu", gt_sbi_probe(SBI_EXT_PMU), 0);
	r = gt_sbi0(SBI_EXT_PMU, SBI_EXT_PMU_NUM_COUNTERS);
	num = r.value < 64 ? r.value : 63;
	GT_CHECK_LE("num-counters-lt-64", r.value, 63);
	for (i = 0; i < 64; i++) {
		r = gt_sbi1(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_GET_INFO, i);
		info[i] = r.value;
		info_err[i] = r.error;
		if (r.error || i >= num)
			continue;
		valid_mask |= 1UL << i;
		if (r.value & SBI_PMU_CTR_INFO_FW) {
			fw_mask |= 1UL << i;
		} else {
			hw_mask |= 1UL << i;
			if (i >= 3)
				prog_mask |= 1UL << i;
		}
	}
	gt_printf("fuzz-pmu: %lu counters, valid 0x%lx hw 0x%lx fw 0x%lx\n", num, valid_mask,
		  hw_mask, fw_mask);

	/* the longest single call a guest can ask for: EVENT_GET_INFO over all of RAM */
	{
		unsigned long lo = (unsigned long)arenas[hartid].ei, t = gt_rdtime();

		r = gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_EVENT_GET_INFO, lo, 0,
				(ram_end - lo) / 16 + 1, 0, 0, 0);
		t = gt_rdtime() - t;
		/* INVALID_PARAM when an entry (our canary pattern) is malformed first */
		GT_CHECK_EQ("event-info-past-ram-refused",
			    r.error == SBI_ERR_INVALID_ADDRESS || r.error == SBI_ERR_INVALID_PARAM,
			    1);
		gt_printf("fuzz-pmu: EVENT_GET_INFO of %lu entries up to past the end of RAM took "
			  "%lu us (error %ld)\n",
			  (ram_end - lo) / 16 + 1, t * 1000000 / gt_timebase(), r.error);
	}

	for (i = 0; i < nr_vcpus; i++) {
		unsigned long h = gt_hart_id_at(i);

		if (h != hartid && h < GT_MAX_HARTS)
			GT_CHECK_SBI("hart-start", gt_hart_start(h, secondary, 0), SBI_SUCCESS);
	}
	fuzz(hartid, seed0 + hartid, total_calls / nr_vcpus);
	gt_atomic_add(&done_harts, 1);
	GT_CHECK_EQ("all-vcpus-done",
		    gt_wait_ge(&done_harts, nr_vcpus, 600 * gt_timebase()) ? 1 : 0, 1);
	for (i = 0; i < nr_vcpus; i++)
		report_stats(gt_hart_id_at(i));
	check_canary("final");
	GT_CHECK_EQ("ram-canary-intact", canary_bad, 0);
	GT_CHECK_EQ("fdt-intact", fdt_sum(fdt), fdt_sum0);
	gt_exit();
}
