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
 *    (`sbi_pmu_error_allowed`, arch/riscv/sbi_spec.h), but never NOT_SUPPORTED or
 *    FAILED from SNAPSHOT_SET_SHMEM or EVENT_GET_INFO; unknown FIDs give NOT_SUPPORTED;
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
#include "guest-tests/images/fuzz-pmu/fuzz.h"

GT_IMAGE("fuzz-pmu");

struct arena arenas[GT_MAX_HARTS] __attribute__((aligned(4096)));
struct ei_entry ei_copy[GT_MAX_HARTS][EI_N];

unsigned long ram_base, ram_end, canary_lo, canary_hi, nr_vcpus, total_calls, seed0;
unsigned long num; /* NUM_COUNTERS */
unsigned long info[64];
long info_err[64];
unsigned long valid_mask, hw_mask, prog_mask, fw_mask;
volatile unsigned long done_harts, reports;
unsigned long directed_only, directed_every = 4096, long_every, dbcn_every, turns_ms;

struct stats st[GT_MAX_HARTS];

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
	/* a feature this run does not use would only compare 0 with 0: no check */
	if (long_every)
		C("long-event-info-answers", S->long_bad);
	if (dbcn_every)
		C("console-writes-complete", S->dbcn_bad);
	if (turns_ms)
		C("turns-counted", S->turns_bad);
	/*
	 * Without -icount QEMU raises an overflow from a timer in virtual time
	 * while counting host ticks: the LCOFI comes about 12 ms late and about
	 * 1 in 100 never comes, natively on OpenSBI too (measured with
	 * "directed-only=1 directed-every=1"); on a hart shared with another
	 * vCPU, a wrap while switched out is lost (docs/security.md, known
	 * gaps). Those wrapped-but-silent ones are printed, not failed; a counter
	 * that did not even wrap within 50 ms fails, and at most 1 in 10 LCOFIs
	 * (at least 2) may stay away.
	 */
	gt_snprintf(nm, sizeof(nm), "hart%lu-directed-overflow-counts", hart);
	GT_CHECK_EQ(nm, S->ovf_stuck, 0);
	gt_snprintf(nm, sizeof(nm), "hart%lu-directed-overflow-lcofi", hart);
	if (gt_hart_has_ext(0, "sscofpmf"))
		GT_CHECK_LE(nm, S->ovf_tried - S->ovf_got,
			    S->ovf_tried / 10 > 2 ? S->ovf_tried / 10 : 2);
	else /* a host without Sscofpmf: the guest is offered no overflow at all */
		GT_CHECK_EQ(nm, S->ovf_got, 0);
#undef C
	if (long_every) {
		gt_snprintf(nm, sizeof(nm), "hart%lu-long-event-info-calls", hart);
		GT_CHECK_GE(nm, S->long_calls, 1);
	}
	if (dbcn_every) {
		gt_snprintf(nm, sizeof(nm), "hart%lu-console-writes", hart);
		GT_CHECK_GE(nm, S->dbcn_writes, 1);
	}
	if (turns_ms) {
		gt_snprintf(nm, sizeof(nm), "hart%lu-turns", hart);
		GT_CHECK_GE(nm, S->turns, turns_ms / 20);
	}
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
