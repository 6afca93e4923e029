// SPDX-License-Identifier: BSD-2-Clause
/* A minimal vsnprintf: %d %i %u %x %X %p %s %c %%, with l/ll/z, width and 0-pad. */
#include "lib.h"

struct out {
	char *buf;
	size_t size;
	size_t len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_num(struct out *o, unsigned long long v, unsigned int base, bool neg, int width,
		    char pad, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	if (neg && pad == '0') { /* "-0042": the sign goes before zero padding */
		put(o, '-');
		width--;
	} else if (neg) {
		tmp[n++] = '-';
	}
	while (width-- > n)
		put(o, pad);
	while (n)
		put(o, tmp[--n]);
}

int hv_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = {buf, size, 0};

	for (; *fmt; fmt++) {
		int width = 0, lng = 0;
		char pad = ' ';

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0')
			pad = '0';
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l' || *fmt == 'z') {
			lng++;
			fmt++;
		}
		switch (*fmt) {
		case 'd':
		case 'i': {
			long long v = lng ? va_arg(ap, long) : va_arg(ap, int);

			put_num(&o, v < 0 ? -(unsigned long long)v : (unsigned long long)v, 10,
				v < 0, width, pad, false);
			break;
		}
		case 'u':
			put_num(&o, lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int), 10,
				false, width, pad, false);
			break;
		case 'x':
		case 'X':
			put_num(&o, lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int), 16,
				false, width, pad, *fmt == 'X');
			break;
		case 'p':
			put(&o, '0');
			put(&o, 'x');
			put_num(&o, (uintptr_t)va_arg(ap, void *), 16, false, width, pad, false);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);

			if (!s)
				s = "(null)";
			while (*s)
				put(&o, *s++);
			break;
		}
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case '%':
			put(&o, '%');
			break;
		case '\0':
			fmt--;
			break;
		default:
			put(&o, '%');
			put(&o, *fmt);
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int hv_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = hv_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
