// SPDX-License-Identifier: BSD-2-Clause
/* fuzz-pmu: the canaries, and what a call may answer (main.c says which) */
#include "guest-tests/images/fuzz-pmu/fuzz.h"

uint64_t pattern(unsigned long addr)
{
	return (addr * 0x9e3779b97f4a7c15UL) ^ 0xc0ffee0000c0ffeeUL;
}

void fill_pattern(unsigned long lo, unsigned long hi)
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

bool in_arena(unsigned long hart, unsigned long a, unsigned long len)
{
	unsigned long lo = (unsigned long)&arenas[hart];

	return a >= lo && a - lo <= sizeof(struct arena) && len <= sizeof(struct arena) - (a - lo);
}

bool in_ram(unsigned long a, unsigned long len)
{
	return a >= ram_base && a < ram_end && len <= ram_end - a;
}

void report(unsigned long hart, unsigned long n, const char *what, unsigned long fid,
	    const unsigned long *a, long err, unsigned long val)
{
	if (gt_atomic_add(&reports, 1) >= MAX_REPORTS)
		return;
	gt_printf("fuzz-pmu: hart %lu call %lu: %s: fid %lu a0=0x%lx a1=0x%lx a2=0x%lx a3=0x%lx "
		  "a4=0x%lx a5=0x%lx -> err %ld value 0x%lx\n",
		  hart, n, what, fid, a[0], a[1], a[2], a[3], a[4], a[5], err, val);
}

/* Pages of the arena that are not the live snapshot area hold their pattern */
void check_arena(unsigned long hart, unsigned long n, long live_snap)
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

unsigned long canary_bad, fdt_sum0;

unsigned long fdt_sum(const void *fdt)
{
	const volatile uint8_t *p = fdt;
	unsigned long n = gt_fdt32((const uint8_t *)fdt + 4), sum = 0;

	for (unsigned long i = 0; i < n && i < 0x10000; i++)
		sum = sum * 31 + p[i];
	return sum;
}

void check_canary(const char *when)
{
	unsigned long bad = check_pattern(canary_lo, canary_hi);

	if (bad) {
		canary_bad++;
		gt_printf("fuzz-pmu: %s: RAM canary changed at 0x%lx: 0x%lx (expected 0x%lx)\n",
			  when, bad, *(volatile unsigned long *)bad, pattern(bad));
		fill_pattern(canary_lo, canary_hi);
	}
}
