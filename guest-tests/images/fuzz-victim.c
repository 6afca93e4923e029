// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz-victim: an ordinary guest that runs beside fuzz-pmu (or any hostile
 * guest) and checks that nothing of the other guest reaches it. It needs no
 * -icount: every check is exact by construction or only needs monotonicity,
 * except the exact instret counts bootarg "exact" asks for.
 *  - RAM canary: all its free RAM (between image and FDT) holds an address
 *    pattern, verified periodically and at the end; the FDT is unchanged;
 *  - firmware counters count exactly its own events: SET_TIMER = its own
 *    set_timer calls, ILLEGAL_INSN and IPI_RCVD stay 0 (the fuzzer takes
 *    illegal instructions on every trapping counter read);
 *  - a hardware counter started with every inhibit flag holds exactly its
 *    initial value, a stopped hardware counter too (CSR read and snapshot);
 *  - an instret counter with SINH (U-mode only) strictly increases across a
 *    U-mode loop and never goes backwards; with bootarg "exact" (-icount,
 *    where the loop's instructions are all it counts) each round adds
 *    exactly VICTIM_LOOP_COUNT and the total is rounds times that;
 *  - its snapshot area only changes in the slot it asked for.
 * bootargs: "seconds=<n>" (default 20): how long to keep checking; "exact":
 * the instret checks above are exact (only under -icount).
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("fuzz-victim");

#define PAGE	 4096UL
#define EV_FW(c) ((0xfUL << 16) | (c))
#define NO_COUNT                                                                                   \
	(SBI_PMU_CFG_FLAG_SET_VUINH | SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_UINH |     \
	 SBI_PMU_CFG_FLAG_SET_SINH | SBI_PMU_CFG_FLAG_SET_MINH)
#define HOLD_VALUE 0x123456789abcUL
#define STOP_VALUE 0xfeedf00dUL

extern char _end[];
static uint64_t shmem[512] __attribute__((aligned(4096)));
static unsigned long hw_mask, prog_mask, fw_mask, canary_lo, canary_hi;

static uint64_t pattern(unsigned long addr)
{
	return (addr * 0x9e3779b97f4a7c15UL) ^ 0x5ca1ab1e0ddba11UL;
}

static unsigned long check_canary(void)
{
	for (unsigned long a = canary_lo; a < canary_hi; a += 8)
		if (*(volatile uint64_t *)a != pattern(a)) {
			gt_printf("fuzz-victim: canary changed at 0x%lx: 0x%lx\n", a,
				  *(volatile uint64_t *)a);
			return a;
		}
	return 0;
}

static unsigned long fdt_sum(const void *fdt)
{
	const volatile uint8_t *p = fdt;
	unsigned long n = gt_fdt32((const uint8_t *)fdt + 4), sum = 0;

	for (unsigned long i = 0; i < n && i < 0x10000; i++)
		sum = sum * 31 + p[i];
	return sum;
}

static unsigned long read_counter(unsigned long idx)
{
	return gt_pmu_read_csr(idx);
}

static struct sbi_ret pmu(unsigned long fid, unsigned long a0, unsigned long a1, unsigned long a2,
			  unsigned long a3, unsigned long a4)
{
	return gt_sbi_call(SBI_EXT_PMU, fid, a0, a1, a2, a3, a4, 0);
}

static long cfg(unsigned long mask, unsigned long flags, unsigned long event)
{
	struct sbi_ret r = pmu(SBI_EXT_PMU_COUNTER_CFG_MATCH, 0, mask, flags, event, 0);

	return r.error ? r.error : (long)r.value;
}

static unsigned long fw_read(long idx)
{
	struct sbi_ret r = pmu(SBI_EXT_PMU_COUNTER_FW_READ, (unsigned long)idx, 0, 0, 0, 0);

	return r.error ? ~0UL : r.value;
}

unsigned long victim_loop(unsigned long n);
asm(".text\n.globl victim_loop\nvictim_loop:\n"
    "1:	addi a0, a0, -1\n"
    "	bnez a0, 1b\n"
    "	ret\n");
#define VICTIM_LOOP_N 20000
/* U-mode instructions of a round: the loop, ret, and the stub's (as GT_PMU_USER_LOOP_COUNT) */
#define VICTIM_LOOP_COUNT (2 * VICTIM_LOOP_N + 4)

static unsigned long parse_seconds(const char *s)
{
	unsigned long v = 0;

	for (const char *p = s; p && *p; p++)
		if ((p == s || p[-1] == ' ') && !__builtin_strncmp(p, "seconds=", 8)) {
			for (p += 8; *p >= '0' && *p <= '9'; p++)
				v = v * 10 + (unsigned long)(*p - '0');
			return v;
		}
	return 20;
}

/* bootargs has the word w */
static bool has_word(const char *s, const char *w)
{
	unsigned long n = __builtin_strlen(w);

	for (const char *p = s; p && *p; p++)
		if ((p == s || p[-1] == ' ') && !__builtin_strncmp(p, w, n) &&
		    (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

void gt_main(unsigned long hartid, const void *fdt)
{
	unsigned long sum0, rounds = 0, timers = 0, seconds, bad_exact = 0;
	struct gt_pmu_layout layout;
	unsigned long bad_hold = 0, bad_stop = 0, bad_instret = 0, bad_fw = 0, bad_snap = 0;
	unsigned long bad_canary = 0, last_d = 0, f_value = 0;
	long a, b, c, d, e, f;
	const char *args;
	uint64_t end;
	struct sbi_ret r;
	bool exact;

	(void)hartid;
	canary_lo = ((unsigned long)_end + PAGE - 1) & ~(PAGE - 1);
	canary_hi = (unsigned long)fdt & ~(PAGE - 1);
	for (unsigned long p = canary_lo; p < canary_hi; p += 8)
		*(volatile uint64_t *)p = pattern(p);
	sum0 = fdt_sum(fdt);
	args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	seconds = parse_seconds(args);
	exact = has_word(args, "exact");

	gt_pmu_layout(&layout);
	hw_mask = layout.hw_mask;
	fw_mask = layout.fw_mask;
	prog_mask = layout.prog_mask;

	GT_CHECK_SBI("shmem-set",
		     pmu(SBI_EXT_PMU_SNAPSHOT_SET_SHMEM, (unsigned long)shmem, 0, 0, 0, 0),
		     SBI_SUCCESS);
	a = cfg(fw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE | SBI_PMU_CFG_FLAG_AUTO_START,
		EV_FW(SBI_PMU_FW_SET_TIMER));
	b = cfg(fw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE | SBI_PMU_CFG_FLAG_AUTO_START,
		EV_FW(SBI_PMU_FW_ILLEGAL_INSN));
	c = cfg(fw_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE | SBI_PMU_CFG_FLAG_AUTO_START,
		EV_FW(SBI_PMU_FW_IPI_RCVD));
	/*
	 * Without programmable counters (a host without Sscofpmf cannot filter
	 * them): instret on counter 2, cycles on 0, and no DTLB counter
	 */
	d = cfg(prog_mask ? prog_mask : hw_mask,
		SBI_PMU_CFG_FLAG_CLEAR_VALUE | SBI_PMU_CFG_FLAG_SET_SINH, SBI_PMU_HW_INSTRUCTIONS);
	e = cfg(hw_mask, NO_COUNT, SBI_PMU_HW_CPU_CYCLES);
	f = prog_mask ? cfg(prog_mask, SBI_PMU_CFG_FLAG_CLEAR_VALUE, 0x10019UL) : -1;
	GT_CHECK_CTR("cfg-fw-set-timer", a, 0);
	GT_CHECK_CTR("cfg-fw-illegal", b, 0);
	GT_CHECK_CTR("cfg-fw-ipi-rcvd", c, 0);
	GT_CHECK_CTR("cfg-instret-sinh", d, prog_mask ? 3 : 2);
	GT_CHECK_CTR("cfg-cycles-no-count", e, 0);
	if (prog_mask)
		GT_CHECK_CTR("cfg-dtlb-stopped", f, 3);
	else
		gt_printf("fuzz-victim: no programmable counter: no stopped DTLB counter\n");
	if (a < 0 || b < 0 || c < 0 || d < 0 || e < 0 || (prog_mask && f < 0))
		gt_exit();
	GT_CHECK_SBI("start-instret",
		     pmu(SBI_EXT_PMU_COUNTER_START, (unsigned long)d, 1,
			 SBI_PMU_START_FLAG_SET_INIT_VALUE, 0, 0),
		     SBI_SUCCESS);
	GT_CHECK_SBI("start-hold",
		     pmu(SBI_EXT_PMU_COUNTER_START, (unsigned long)e, 1,
			 SBI_PMU_START_FLAG_SET_INIT_VALUE, HOLD_VALUE, 0),
		     SBI_SUCCESS);
	if (f >= 0) {
		GT_CHECK_SBI("start-stopped",
			     pmu(SBI_EXT_PMU_COUNTER_START, (unsigned long)f, 1,
				 SBI_PMU_START_FLAG_SET_INIT_VALUE, STOP_VALUE, 0),
			     SBI_SUCCESS);
		GT_CHECK_SBI("stop-stopped",
			     pmu(SBI_EXT_PMU_COUNTER_STOP, (unsigned long)f, 1, 0, 0, 0),
			     SBI_SUCCESS);
		/* f's value now only depends on the DTLB misses between start and stop */
		r = pmu(SBI_EXT_PMU_COUNTER_STOP, (unsigned long)f, 1,
			SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT, 0, 0);
		(void)r; /* stopped above already: only the snapshot matters */
		f_value = shmem[1];
		GT_CHECK_GE("stopped-value", f_value, STOP_VALUE);
	}
	for (unsigned long i = 2; i < 512; i++)
		shmem[i] = pattern(i);

	end = gt_rdtime() + seconds * gt_timebase();
	while (gt_rdtime() < end) {
		unsigned long v;

		rounds++;
		gt_sbi_set_timer(~0UL);
		timers++;
		gt_run_user(victim_loop, VICTIM_LOOP_N);
		v = read_counter((unsigned long)d);
		if (v <= last_d) {
			if (bad_instret++ < 5)
				gt_printf("fuzz-victim: instret (SINH) 0x%lx after 0x%lx\n", v,
					  last_d);
		}
		if (exact && v - last_d != VICTIM_LOOP_COUNT && bad_exact++ < 5)
			gt_printf("fuzz-victim: round %lu: instret (SINH) +%lu, expected +%u\n",
				  rounds, v - last_d, VICTIM_LOOP_COUNT);
		last_d = v;
		v = read_counter((unsigned long)e);
		if (v != HOLD_VALUE && bad_hold++ < 5)
			gt_printf("fuzz-victim: inhibited counter %ld reads 0x%lx\n", e, v);
		if (f >= 0 && (v = read_counter((unsigned long)f)) != f_value && bad_stop++ < 5)
			gt_printf("fuzz-victim: stopped counter %ld reads 0x%lx\n", f, v);
		if (fw_read(a) != timers || fw_read(b) != 0 || fw_read(c) != 0) {
			if (bad_fw++ < 5)
				gt_printf("fuzz-victim: firmware counters %lu %lu %lu, expected "
					  "%lu 0 0\n",
					  fw_read(a), fw_read(b), fw_read(c), timers);
			/* resynchronise */
			timers = fw_read(a);
		}
		if ((rounds & 15) == 0 && f >= 0) {
			/* the stopped counter, into slot 0 relative to base f */
			r = pmu(SBI_EXT_PMU_COUNTER_STOP, (unsigned long)f, 1,
				SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT, 0, 0);
			if (r.error != SBI_ERR_ALREADY_STOPPED || shmem[1] != f_value ||
			    shmem[0] != 0) {
				if (bad_snap++ < 5)
					gt_printf("fuzz-victim: snapshot err %ld ovf 0x%lx value "
						  "0x%lx\n",
						  r.error, (unsigned long)shmem[0],
						  (unsigned long)shmem[1]);
			}
		}
		if ((rounds & 15) == 0) {
			for (unsigned long i = 2; i < 512; i++)
				if (shmem[i] != pattern(i)) {
					if (bad_snap++ < 5)
						gt_printf(
							"fuzz-victim: snapshot word %lu changed\n",
							i);
					shmem[i] = pattern(i);
				}
		}
		if ((rounds & 255) == 0 && check_canary())
			bad_canary++;
	}
	gt_printf("fuzz-victim: %lu rounds in %lu s, %lu set_timer calls, instret(U) 0x%lx\n",
		  rounds, seconds, timers, last_d);
	GT_CHECK_GE("rounds", rounds, 1);
	GT_CHECK_EQ("instret-sinh-increases", bad_instret, 0);
	if (exact) {
		GT_CHECK_EQ("instret-sinh-exact-each-round", bad_exact, 0);
		GT_CHECK_EQ("instret-sinh-exact-total", last_d, rounds * VICTIM_LOOP_COUNT);
	}
	GT_CHECK_EQ("inhibited-counter-holds-value", bad_hold, 0);
	GT_CHECK_EQ("stopped-counter-holds-value", bad_stop, 0);
	GT_CHECK_EQ("firmware-counters-exact", bad_fw, 0);
	GT_CHECK_EQ("snapshot-only-own-slot", bad_snap, 0);
	if (check_canary())
		bad_canary++;
	GT_CHECK_EQ("ram-canary-intact", bad_canary, 0);
	GT_CHECK_EQ("fdt-intact", fdt_sum(fdt), sum0);
	GT_CHECK_SBI(
		"release-all",
		pmu(SBI_EXT_PMU_COUNTER_STOP, 0, hw_mask | fw_mask, SBI_PMU_STOP_FLAG_RESET, 0, 0),
		SBI_ERR_ALREADY_STOPPED);
	gt_exit();
}
