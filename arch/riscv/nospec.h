/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Guest-chosen array indices, clamped after their bounds check without a
 * branch, so that a mispredicted check cannot steer a speculative access
 * past the array (Linux's array_index_nospec). Plain C: RISC-V has no
 * speculation barrier for this, the data dependency is the guard.
 */
#ifndef ARCH_RISCV_NOSPEC_H
#define ARCH_RISCV_NOSPEC_H

/*
 * idx if idx < size, else 0; size must be non-zero and below 2^63. The
 * empty asm hides idx from the optimizer: after the bounds check the
 * compiler knows idx < size and would fold the mask away (GCC 12 did,
 * everywhere), leaving the speculative access unguarded. Linux's
 * OPTIMIZER_HIDE_VAR does the same.
 */
static inline unsigned long array_index_nospec(unsigned long idx, unsigned long size)
{
	unsigned long mask;

	__asm__("" : "+r"(idx));
	mask = ~(idx | (size - 1 - idx));

	/* bit 63 of mask is set iff idx < size: spread it to all bits */
	mask = 0UL - (mask >> (sizeof(long) * 8 - 1));
	return idx & mask;
}

/*
 * For an array whose size is a power of two: idx (checked before to be
 * below a bound no larger) masked to that size, one instruction. No value
 * of idx, speculative or not, reaches past the array.
 */
static inline unsigned long array_index_pow2(unsigned long idx, unsigned long size)
{
	__asm__("" : "+r"(idx));
	return idx & (size - 1);
}

#endif
