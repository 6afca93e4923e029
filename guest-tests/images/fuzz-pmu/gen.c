// SPDX-License-Identifier: BSD-2-Clause
/* fuzz-pmu: the calls' arguments, drawn from the vCPU's PRNG */
#include "guest-tests/images/fuzz-pmu/fuzz.h"

/* ---- argument generators ---- */
const unsigned long events[] = {
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
const unsigned long nevents = sizeof(events) / sizeof(events[0]);

unsigned long gen_event(unsigned long *rs)
{
	if (PCT(90))
		return events[RN(nevents)];
	if (PCT(50))
		return R() & 0xfffff;
	return R();
}

unsigned long gen_base(unsigned long *rs)
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
void gen_set(unsigned long *rs, unsigned long *base, unsigned long *mask)
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

unsigned long gen_flags(unsigned long *rs, unsigned long valid)
{
	unsigned long f = R() & valid;

	if (PCT(8))
		f |= 1UL << (8 + RN(56));
	if (PCT(3))
		f = R();
	return f;
}

unsigned long gen_value(unsigned long *rs)
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
unsigned long gen_addr(unsigned long *rs, unsigned long hart, unsigned long align, bool ei)
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

unsigned long gen_hi(unsigned long *rs)
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
