// SPDX-License-Identifier: BSD-2-Clause
/* Console output through SBI DBCN (legacy putchar as a fallback) and printf. */
#include <stdio.h>
#include "guest-tests/lib/gt.h"

static volatile unsigned long console_lock;
static bool have_dbcn;

void gt_console_init(void)
{
	have_dbcn = gt_sbi_probe(SBI_EXT_DBCN) > 0;
}

unsigned long gt_console_lock(void)
{
	unsigned long flags = csr_read(sstatus) & SSTATUS_SIE;

	gt_irq_disable();
	while (__atomic_exchange_n(&console_lock, 1, __ATOMIC_ACQUIRE))
		gt_cpu_relax();
	return flags;
}

void gt_console_unlock(unsigned long flags)
{
	__atomic_store_n(&console_lock, 0, __ATOMIC_RELEASE);
	if (flags)
		gt_irq_enable();
}

static void console_write(const char *s, size_t len)
{
	if (have_dbcn) {
		/*
		 * Part of it may be taken, or none while the console drains (the
		 * spec; pmuvisor takes at most 256 bytes a call): again, with
		 * the rest, until all of it is, like Linux's hvc driver
		 */
		while (len > 0) {
			/* satp is off: the physical address is the guest address */
			struct sbi_ret r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, len,
						   (unsigned long)s, 0);
			if (r.error || r.value > len)
				break;
			if (!r.value)
				gt_cpu_relax();
			s += r.value;
			len -= r.value;
		}
		return;
	}
	while (len--)
		gt_sbi1(SBI_EXT_0_1_CONSOLE_PUTCHAR, 0, (unsigned char)*s++);
}

void gt_puts(const char *s)
{
	unsigned long flags = gt_console_lock();
	size_t len = 0;

	while (s[len])
		len++;
	console_write(s, len);
	gt_console_unlock(flags);
}

/* Formatting is picolibc's (tinystdio), linked into every image anyway */
int gt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	return vsnprintf(buf, size, fmt, ap);
}

int gt_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = gt_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int gt_printf(const char *fmt, ...)
{
	char buf[320];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = gt_vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	gt_puts(buf);
	return n;
}
