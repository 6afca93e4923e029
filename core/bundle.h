/* SPDX-License-Identifier: BSD-2-Clause */
/* The boot bundle QEMU loads as an initrd: config DTB + guest images. */
#ifndef CORE_BUNDLE_H
#define CORE_BUNDLE_H

#include <stdint.h>

extern const uint8_t *bundle_base;

static inline const void *bundle_at(uint64_t off)
{
	return bundle_base + off;
}

#endif
