/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to exclusive counting (core/excl.c, core/excl_sleep.c) */
#ifndef CORE_EXCL_INTERNAL_H
#define CORE_EXCL_INTERNAL_H

#include <stdint.h>
#include "core/hart.h"

/* The earliest wake-up of another hart that h must stand in for (excl_sleep) */
uint64_t excl_sleepers_next(const struct hart *h);

#endif
