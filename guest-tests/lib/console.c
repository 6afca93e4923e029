// SPDX-License-Identifier: BSD-2-Clause
/* Console output through SBI DBCN (legacy putchar as a fallback) and printf. */
#include "gt.h"

static volatile unsigned long console_lock;
static bool have_dbcn;

void gt_console_init(void)
{
	have_dbcn = gt_sbi_probe(SBI_EXT_DBCN) > 0;
}

static unsigned long lock_console(void)
{
	unsigned long flags = csr_read(sstatus) & SSTATUS_SIE;

	gt_irq_disable();
	while (__atomic_exchange_n(&console_lock, 1, __ATOMIC_ACQUIRE))
		gt_cpu_relax();
	return flags;
}

static void unlock_console(unsigned long flags)
{
	__atomic_store_n(&console_lock, 0, __ATOMIC_RELEASE);
	if (flags)
		gt_irq_enable();
}

static void console_write(const char *s, size_t len)
{
	if (have_dbcn) {
		int tries = 0;

		while (len > 0 && tries++ < 1000) {
			/* satp is off: the physical address is the guest address */
			struct sbi_ret r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, len,
						   (unsigned long)s, 0);
			if (r.error)
				break;
			if (r.value > len)
				break;
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
	unsigned long flags = lock_console();
	size_t len = 0;

	while (s[len])
		len++;
	console_write(s, len);
	unlock_console(flags);
}

struct outbuf {
	char *buf;
	size_t size;
	size_t pos;
};

static void out_c(struct outbuf *o, char c)
{
	if (o->pos + 1 < o->size)
		o->buf[o->pos] = c;
	o->pos++;
}

static void out_num(struct outbuf *o, unsigned long v, unsigned int base, bool neg, int width,
		    char pad, bool left)
{
	char tmp[24];
	int n = 0, len;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	len = n + (neg ? 1 : 0);
	if (neg && pad == '0')
		out_c(o, '-');
	if (!left)
		for (; width > len; width--)
			out_c(o, pad);
	if (neg && pad != '0')
		out_c(o, '-');
	while (n)
		out_c(o, tmp[--n]);
	if (left)
		for (; width > len; width--)
			out_c(o, ' ');
}

int gt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct outbuf o = {buf, size, 0};

	for (; *fmt; fmt++) {
		int width = 0, lng = 0;
		char pad = ' ';
		bool left = false;

		if (*fmt != '%') {
			out_c(&o, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == '-') {
			left = true;
			fmt++;
		}
		if (*fmt == '0') {
			pad = '0';
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l') {
			lng++;
			fmt++;
		}
		if (*fmt == 'z') {
			lng = 1;
			fmt++;
		}
		switch (*fmt) {
		case 'd':
		case 'i': {
			long v = lng ? va_arg(ap, long) : va_arg(ap, int);

			out_num(&o, v < 0 ? -(unsigned long)v : (unsigned long)v, 10, v < 0, width,
				pad, left);
			break;
		}
		case 'u':
		case 'x':
		case 'X': {
			unsigned long v =
				lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int);

			out_num(&o, v, *fmt == 'u' ? 10 : 16, false, width, pad, left);
			break;
		}
		case 'p':
			out_c(&o, '0');
			out_c(&o, 'x');
			out_num(&o, (unsigned long)va_arg(ap, void *), 16, false, width, pad, left);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			int len = 0;

			if (!s)
				s = "(null)";
			while (s[len])
				len++;
			if (!left)
				for (; width > len; width--)
					out_c(&o, ' ');
			while (*s)
				out_c(&o, *s++);
			if (left)
				for (; width > len; width--)
					out_c(&o, ' ');
			break;
		}
		case 'c':
			out_c(&o, (char)va_arg(ap, int));
			break;
		case '%':
			out_c(&o, '%');
			break;
		case '\0':
			fmt--;
			break;
		default:
			out_c(&o, '%');
			out_c(&o, *fmt);
			break;
		}
	}
	if (size)
		buf[o.pos < size ? o.pos : size - 1] = '\0';
	return (int)o.pos;
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
