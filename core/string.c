// SPDX-License-Identifier: BSD-2-Clause
/*
 * memcpy/memset with a word-at-a-time path for aligned buffers: picolibc's
 * size-optimised versions copy a byte at a time, and a guest's PMU calls
 * copy and zero whole snapshot areas (4 KiB).
 */
#include <stddef.h>
#include <stdint.h>

/* the optimisation would turn these loops into calls to themselves */
#define NO_LOOP_TO_CALL __attribute__((optimize("no-tree-loop-distribute-patterns")))

NO_LOOP_TO_CALL void *memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if ((((uintptr_t)d | (uintptr_t)s) & 7) == 0) {
		for (; n >= 8; n -= 8, d += 8, s += 8)
			*(uint64_t *)d = *(const uint64_t *)s;
	}
	while (n--)
		*d++ = *s++;
	return dst;
}

NO_LOOP_TO_CALL void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	uint64_t w = (unsigned char)c * 0x0101010101010101ULL;

	for (; n && ((uintptr_t)d & 7); n--)
		*d++ = (unsigned char)c;
	for (; n >= 8; n -= 8, d += 8)
		*(uint64_t *)d = w;
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}
