// SPDX-License-Identifier: BSD-2-Clause
/* fuzz-pmu: what the image's files share (main.c's head says what it checks) */
#ifndef GUEST_TESTS_FUZZ_PMU_H
#define GUEST_TESTS_FUZZ_PMU_H
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

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

extern struct arena arenas[GT_MAX_HARTS];
extern struct ei_entry ei_copy[GT_MAX_HARTS][EI_N];

extern char _end[];
extern unsigned long ram_base, ram_end, canary_lo, canary_hi, nr_vcpus, total_calls, seed0;
extern unsigned long num; /* NUM_COUNTERS */
extern unsigned long info[64];
extern long info_err[64];
extern unsigned long valid_mask, hw_mask, prog_mask, fw_mask;
extern volatile unsigned long done_harts, reports;
extern unsigned long directed_only, directed_every, long_every, dbcn_every, turns_ms;

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
extern struct stats st[GT_MAX_HARTS];

/* ---- PRNG: xorshift64* ---- */
static inline unsigned long rnd_next(unsigned long *s)
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

/* check.c */
uint64_t pattern(unsigned long addr);
void fill_pattern(unsigned long lo, unsigned long hi);
bool in_arena(unsigned long hart, unsigned long a, unsigned long len);
bool in_ram(unsigned long a, unsigned long len);
void report(unsigned long hart, unsigned long n, const char *what, unsigned long fid,
	    const unsigned long *a, long err, unsigned long val);
void check_arena(unsigned long hart, unsigned long n, long live_snap);
unsigned long fdt_sum(const void *fdt);
void check_canary(const char *when);
extern unsigned long canary_bad, fdt_sum0;

/* gen.c */
extern const unsigned long events[];
extern const unsigned long nevents; /* entries of events */
unsigned long gen_event(unsigned long *rs);
unsigned long gen_base(unsigned long *rs);
void gen_set(unsigned long *rs, unsigned long *base, unsigned long *mask);
unsigned long gen_flags(unsigned long *rs, unsigned long valid);
unsigned long gen_value(unsigned long *rs);
unsigned long gen_addr(unsigned long *rs, unsigned long hart, unsigned long align, bool ei);
unsigned long gen_hi(unsigned long *rs);

/* long.c */
void directed_overflow(unsigned long hart);
void long_event_info(unsigned long *rs, unsigned long hart);
void long_console_write(unsigned long *rs, unsigned long hart);
void turns(unsigned long *rs, unsigned long hart, unsigned long ms);

/* fuzz.c */
unsigned long read_counter(unsigned long idx);
void fuzz(unsigned long hart, unsigned long seed, unsigned long calls);

#endif
