/* SPDX-License-Identifier: BSD-2-Clause */
/* Seeds for the guests' random number generators, from the host's. */
#ifndef CORE_ENTROPY_H
#define CORE_ENTROPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SipHash-2-4 of msg under a 128-bit key (a keyed PRF: outputs do not reveal the key) */
uint64_t siphash24(const uint8_t key[16], const void *msg, size_t len);

/*
 * Fill seed with len bytes for boot number `boot` of guest `vm_id`, keyed
 * by the host's /chosen/rng-seed: different for every guest and boot, and
 * no guest learns the host's seed or another guest's. False if the host
 * gave no seed (then the guest gets none either, as natively).
 */
bool entropy_guest_seed(const uint8_t *host_seed, size_t host_len, unsigned int vm_id,
			uint64_t boot, uint8_t *seed, size_t len);

#endif
