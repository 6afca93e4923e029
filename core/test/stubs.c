// SPDX-License-Identifier: BSD-2-Clause
/* Host stand-ins for the hypervisor services declared in core/lib.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>
#include "core/lib.h"

void hv_printf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fputs(buf, stdout);
}

void hv_panic(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fail_msg("hv_panic: %s", buf);
	abort();
}

void hv_poweroff(bool failure)
{
	fail_msg("hv_poweroff(%d)", failure);
	abort();
}
