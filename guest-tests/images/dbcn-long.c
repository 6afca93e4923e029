// SPDX-License-Identifier: BSD-2-Clause
/*
 * dbcn-long: a guest that writes a lot to the console in one SBI DBCN
 * console_write (1 MiB by default), as a hostile or careless guest
 * may. The SBI spec lets the call write part of the buffer and return the
 * count (Linux's hvc driver loops on it): the hypervisor takes a bounded
 * amount per call, so the hart and the console lock are never held for
 * long, and this image loops like Linux until everything is out. Checks:
 * every call succeeds and makes progress, none takes more than the bound,
 * the counts add up to the length; the runner checks that every line came
 * out (16,384 lines of 64 bytes, `dbcn-long NNNNN` + 47 letters). Run
 * beside a guest with a short watchdog-ms on the same hart: one unbounded
 * call of 262,144 bytes took 0.7 to 2 s of host time without -icount, and
 * a neighbour with a 250 ms watchdog was stopped (issue 28, item 2); 1 MiB
 * takes several seconds, past a 1 s watchdog whatever the host's load.
 * bootargs: "kib=<n>" (default 1024): how many KiB in the one buffer.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("dbcn-long");

#define LINE	   64
#define MAX_KIB	   1024
#define CALL_BOUND 256 /* docs/security.md: the most one call takes */

static char buf[MAX_KIB * 1024];

static unsigned long parse_kib(const char *args)
{
	const char *p = args ? __builtin_strstr(args, "kib=") : NULL;
	unsigned long n = 0;

	if (!p)
		return MAX_KIB;
	for (p += 4; *p >= '0' && *p <= '9'; p++)
		n = n * 10 + (unsigned long)(*p - '0');
	return n && n <= MAX_KIB ? n : MAX_KIB;
}

/* Line i: "dbcn-long NNNNN " and 47 letters that depend on i, then a newline */
static void fill(unsigned long len)
{
	for (unsigned long i = 0; i < len / LINE; i++) {
		char *l = buf + i * LINE;

		gt_snprintf(l, 17, "dbcn-long %05lu ", i);
		for (unsigned long k = 16; k < LINE - 1; k++)
			l[k] = (char)('a' + (i + k) % 26);
		l[LINE - 1] = '\n';
	}
}

void gt_main(unsigned long hartid, const void *fdt)
{
	unsigned long len = parse_kib(gt_fdt_getprop("/chosen", "bootargs", NULL)) * 1024;
	unsigned long done = 0, calls = 0, most = 0, no_progress = 0, t0, t1;
	struct sbi_ret r = {0, 0};

	(void)hartid;
	(void)fdt;
	fill(len);
	t0 = gt_rdtime();
	/* one call for the whole buffer, then for what is left, as Linux's hvc driver does */
	while (done < len && calls < len) {
		r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, len - done,
			    (unsigned long)buf + done, 0);
		calls++;
		if (r.error || r.value > len - done)
			break;
		if (!r.value)
			no_progress++;
		if (r.value > most)
			most = r.value;
		done += r.value;
	}
	t1 = gt_rdtime();
	GT_CHECK_SBI("dbcn-long-write-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("dbcn-long-all-written", done, len);
	GT_CHECK_EQ("dbcn-long-every-call-progresses", no_progress, 0);
	GT_CHECK_LE("dbcn-long-call-bounded", most, CALL_BOUND);
	gt_printf("dbcn-long: %lu bytes in %lu calls (at most %lu each), %lu ticks\n", done, calls,
		  most, t1 - t0);
	gt_exit();
}
