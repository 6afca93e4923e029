// SPDX-License-Identifier: BSD-2-Clause
/*
 * The hypervisor's vsnprintf (core/printf.c: freestanding, host unit-tested by
 * core/test/test_printf.c), compiled into the guest library as it is, so that
 * guests and hypervisor format alike. console.c wraps it as gt_vsnprintf.
 */
#include "../../core/printf.c" // NOLINT(bugprone-suspicious-include): on purpose
