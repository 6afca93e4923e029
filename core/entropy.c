// SPDX-License-Identifier: BSD-2-Clause
/*
 * Guest entropy. Linux credits /chosen/rng-seed and has its CRNG ready at
 * boot; without it every exec pays for the unseeded path (measured: a
 * process's kernel-mode instructions tripled, natively too when QEMU's seed
 * is removed). QEMU gives the host a seed; each guest gets its own, derived
 * with SipHash-2-4 (Aumasson and Bernstein) keyed by the host's seed.
 */
#include <string.h>
#include "core/entropy.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static uint64_t load_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void sip_rounds(uint64_t v[4], int n)
{
	while (n--) {
		v[0] += v[1];
		v[1] = ROTL(v[1], 13) ^ v[0];
		v[0] = ROTL(v[0], 32);
		v[2] += v[3];
		v[3] = ROTL(v[3], 16) ^ v[2];
		v[0] += v[3];
		v[3] = ROTL(v[3], 21) ^ v[0];
		v[2] += v[1];
		v[1] = ROTL(v[1], 17) ^ v[2];
		v[2] = ROTL(v[2], 32);
	}
}

static void sip_block(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sip_rounds(v, 2);
	v[0] ^= m;
}

uint64_t siphash24(const uint8_t key[16], const void *msg, size_t len)
{
	const uint8_t *p = msg;
	uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
	uint64_t v[4] = {k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
			 k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL};
	uint8_t last[8] = {0};
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		sip_block(v, load_le64(p + i));
	memcpy(last, p + i, len - i);
	last[7] = (uint8_t)len;
	sip_block(v, load_le64(last));
	v[2] ^= 0xff;
	sip_rounds(v, 4);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

bool entropy_guest_seed(const uint8_t *host_seed, size_t host_len, unsigned int vm_id,
			uint64_t boot, uint8_t *seed, size_t len)
{
	uint8_t key[16] = {0};
	uint64_t msg[3] = {vm_id, boot, 0};

	if (host_len < sizeof(key))
		return false;
	/* the key: all of the host's seed, folded into 128 bits */
	for (size_t i = 0; i < host_len; i++)
		key[i % sizeof(key)] ^= host_seed[i];
	for (size_t off = 0; off < len; off += 8) {
		uint64_t w;

		msg[2] = off / 8;
		w = siphash24(key, msg, sizeof(msg));
		memcpy(seed + off, &w, len - off < 8 ? len - off : 8);
	}
	return true;
}
