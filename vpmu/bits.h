/* SPDX-License-Identifier: BSD-2-Clause */
/* Bit helpers for counter masks: one instruction with Zbb, cheap without (the host tests). */
#ifndef VPMU_BITS_H
#define VPMU_BITS_H

#include <stdint.h>

/* Branch hints, for the rare side of a hot path's test */
#ifndef likely
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
/* A function for a rare case (a quirk's workaround, an error): kept out of the hot paths */
#ifndef __cold
#define __cold __attribute__((cold))
#endif

/*
 * Index of the lowest set bit of m (m != 0): Zbb's ctz in the hypervisor.
 * Without Zbb (the host's unit tests and fuzzer) RV64IMAC has no such
 * instruction and libgcc's __ctzdi2 loops over the bits: multiplying the
 * isolated bit by a de Bruijn sequence puts a unique 6-bit pattern in the
 * top bits, which a table maps back.
 */
static inline unsigned int lowest_bit(unsigned long m)
{
#ifdef __riscv_zbb
	return (unsigned int)__builtin_ctzl(m);
#else
	static const uint8_t index[64] = {
		0,  1,	48, 2,	57, 49, 28, 3,	61, 58, 50, 42, 38, 29, 17, 4,
		62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30, 24, 18, 12, 5,
		63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
		46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,	13, 8,	7,  6,
	};

	return index[((m & -m) * 0x03f79d71b4cb0a89UL) >> 58];
#endif
}

/* Shift d right past its low zero bits, counting them in *i */
static inline uint32_t skip_zero_bits(uint32_t d, unsigned int *i)
{
	while (d && !(d & 1)) {
		d >>= 1;
		(*i)++;
	}
	return d;
}

/*
 * Visit the set bits of a 32-bit counter mask that is usually contiguous
 * (the counters a vCPU runs: Linux takes them from the lowest): one
 * lowest_bit, then a shift per position; for such masks about half the
 * cost of a lowest_bit per bit (a vCPU switch's loops). i must be an
 * unsigned int variable; m is evaluated more than once.
 */
#define for_each_bit_dense(i, m)                                                                   \
	for (uint32_t __d = ((i) = (m) ? lowest_bit(m) : 0, (uint32_t)(m) >> (i));                 \
	     (__d = skip_zero_bits(__d, &(i))) != 0; __d >>= 1, (i)++)

#endif
