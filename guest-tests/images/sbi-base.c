// SPDX-License-Identifier: BSD-2-Clause
/*
 * sbi-base: the SBI BASE extension, extension probing, error codes of
 * unknown extensions/functions, DBCN console and SRST parameter checks.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("sbi-base");

struct ext {
	const char *name;
	unsigned long eid;
};

static const struct ext required[] = {
	{"probe-base", SBI_EXT_BASE}, {"probe-time", SBI_EXT_TIME},
	{"probe-ipi", SBI_EXT_IPI},   {"probe-rfence", SBI_EXT_RFENCE},
	{"probe-hsm", SBI_EXT_HSM},   {"probe-srst", SBI_EXT_SRST},
	{"probe-dbcn", SBI_EXT_DBCN}, {"probe-pmu", SBI_EXT_PMU},
};

void gt_main(unsigned long hartid, const void *fdt)
{
	struct sbi_ret r;
	unsigned long i;
	static const char line[] = "sbi-base: DBCN console_write of a whole line\n";
	char name[48];
	long errs[3];

	(void)fdt;
	/* spec version: 2.0 or newer, reserved bit 31 clear */
	r = gt_sbi0(SBI_EXT_BASE, SBI_EXT_BASE_GET_SPEC_VERSION);
	GT_CHECK_SBI("spec-version-ok", r, SBI_SUCCESS);
	gt_printf("sbi-base: spec version %lu.%lu\n", (r.value >> 24) & 0x7f, r.value & 0xffffff);
	GT_CHECK_GE("spec-version-major", (r.value >> 24) & 0x7f, 2);
	GT_CHECK_BITS("spec-version-reserved", r.value, 1UL << 31, 0);

	r = gt_sbi0(SBI_EXT_BASE, SBI_EXT_BASE_GET_IMP_ID);
	GT_CHECK_SBI("impl-id-ok", r, SBI_SUCCESS);
	gt_printf("sbi-base: implementation id 0x%lx\n", r.value);
	GT_CHECK_NE("impl-id-nonzero", r.value, 0);
	r = gt_sbi0(SBI_EXT_BASE, SBI_EXT_BASE_GET_IMP_VERSION);
	GT_CHECK_SBI("impl-version-ok", r, SBI_SUCCESS);
	gt_printf("sbi-base: implementation version 0x%lx\n", r.value);

	r = gt_sbi0(SBI_EXT_BASE, SBI_EXT_BASE_GET_MVENDORID);
	GT_CHECK_SBI("mvendorid-ok", r, SBI_SUCCESS);
	gt_printf("sbi-base: mvendorid 0x%lx\n", r.value);
	r = gt_sbi0(SBI_EXT_BASE, SBI_EXT_BASE_GET_MARCHID);
	GT_CHECK_SBI("marchid-ok", r, SBI_SUCCESS);
	gt_printf("sbi-base: marchid 0x%lx\n", r.value);
	r = gt_sbi0(SBI_EXT_BASE, SBI_EXT_BASE_GET_MIMPID);
	GT_CHECK_SBI("mimpid-ok", r, SBI_SUCCESS);
	gt_printf("sbi-base: mimpid 0x%lx\n", r.value);

	/* every extension the hypervisor implements is advertised */
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		r = gt_sbi1(SBI_EXT_BASE, SBI_EXT_BASE_PROBE_EXT, required[i].eid);
		gt_snprintf(name, sizeof(name), "%s-ok", required[i].name);
		GT_CHECK_SBI(name, r, SBI_SUCCESS);
		GT_CHECK_NE(required[i].name, r.value, 0);
	}
	/* unknown extensions: probe says 0, calls say NOT_SUPPORTED */
	r = gt_sbi1(SBI_EXT_BASE, SBI_EXT_BASE_PROBE_EXT, 0x12345678);
	GT_CHECK_SBI("probe-unknown-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("probe-unknown", r.value, 0);
	r = gt_sbi1(SBI_EXT_BASE, SBI_EXT_BASE_PROBE_EXT, 0x0A000000); /* vendor range */
	GT_CHECK_SBI("probe-unknown-vendor-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("probe-unknown-vendor", r.value, 0);
	r = gt_sbi0(0x12345678, 0);
	GT_CHECK_SBI("unknown-eid-call", r, SBI_ERR_NOT_SUPPORTED);
	r = gt_sbi0(0x0A000000, 0);
	GT_CHECK_SBI("unknown-vendor-eid-call", r, SBI_ERR_NOT_SUPPORTED);
	r = gt_sbi0(SBI_EXT_BASE, 100);
	GT_CHECK_SBI("base-unknown-fid", r, SBI_ERR_NOT_SUPPORTED);
	r = gt_sbi0(SBI_EXT_TIME, 1);
	GT_CHECK_SBI("time-unknown-fid", r, SBI_ERR_NOT_SUPPORTED);
	r = gt_sbi0(SBI_EXT_HSM, 100);
	GT_CHECK_SBI("hsm-unknown-fid", r, SBI_ERR_NOT_SUPPORTED);
	/*
	 * Legacy extensions: pmuvisor offers 0x00-0x03 and 0x08 and documents
	 * that 0x04-0x07 (hart masks in guest virtual memory) are not offered.
	 */
	for (i = 0; i < 9; i++) {
		bool offered = i <= 3 || i == 8;

		r = gt_sbi1(SBI_EXT_BASE, SBI_EXT_BASE_PROBE_EXT, i);
		gt_printf("sbi-base: probe legacy 0x%lx: error %ld value %lu\n", i, r.error,
			  r.value);
		if (gt_native())
			continue;
		gt_snprintf(name, sizeof(name), "probe-legacy-%lu", i);
		if (offered)
			GT_CHECK_NE(name, r.value, 0);
		else
			GT_CHECK_EQ(name, r.value, 0);
	}
	if (!gt_native()) {
		/* a legacy call returns in a0 only: a1 is preserved */
		r = gt_sbi_call(SBI_EXT_0_1_SET_TIMER, 0, -1UL, 0x1234abcd, 0, 0, 0, 0);
		GT_CHECK_EQ("legacy-set-timer-a0", r.error, 0);
		GT_CHECK_EQ("legacy-set-timer-a1-kept", r.value, 0x1234abcd);
		r = gt_sbi_call(SBI_EXT_0_1_CLEAR_IPI, 0, 0, 0x5678, 0, 0, 0, 0);
		GT_CHECK_EQ("legacy-clear-ipi-a0", r.error, 0);
		GT_CHECK_EQ("legacy-clear-ipi-a1-kept", r.value, 0x5678);
		r = gt_sbi_call(SBI_EXT_0_1_SEND_IPI, 0, 0, 0x9abc, 0, 0, 0, 0);
		GT_CHECK_SBI("legacy-send-ipi-unsupported", r, SBI_ERR_NOT_SUPPORTED);
		GT_CHECK_EQ("legacy-send-ipi-a1-kept", r.value, 0x9abc);
	}

	/* DBCN: a whole line in one write, bytes written = length */
	r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, sizeof(line) - 1, (unsigned long)line,
		    0);
	GT_CHECK_SBI("dbcn-write-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("dbcn-write-len", r.value, sizeof(line) - 1);
	/* zero bytes: success, nothing written */
	r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, 0, (unsigned long)line, 0);
	GT_CHECK_SBI("dbcn-write-empty-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("dbcn-write-empty-len", r.value, 0);
	/* a long line (more than any small line buffer), written completely */
	{
		static char longline[601];
		unsigned long done = 0, calls = 0;

		for (i = 0; i < 599; i++)
			longline[i] = "0123456789abcdefghijklmnopqrstuvwxyz"[i % 36];
		longline[599] = '\n';
		while (done < 600 && calls++ < 100) {
			r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, 600 - done,
				    (unsigned long)longline + done, 0);
			if (r.error || r.value == 0)
				break;
			done += r.value;
		}
		GT_CHECK_SBI("dbcn-write-long-ok", r, SBI_SUCCESS);
		GT_CHECK_EQ("dbcn-write-long-len", done, 600);
	}
	/* write_byte a whole line, then check (a check line must not split it) */
	for (i = 0; i < 3; i++)
		errs[i] = gt_sbi1(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE_BYTE, "ok\n"[i]).error;
	for (i = 0; i < 3; i++) {
		gt_snprintf(name, sizeof(name), "dbcn-write-byte-%lu", i);
		GT_CHECK_EQ(name, errs[i], SBI_SUCCESS);
	}

	/* DBCN: memory outside guest RAM is rejected, nothing is printed */
	if (!gt_native()) {
		r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, 16, 0x4000000000UL, 0);
		GT_CHECK_SBI("dbcn-write-outside-ram", r, SBI_ERR_INVALID_PARAM);
		r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, 16, 0x1000, 0);
		GT_CHECK_SBI("dbcn-write-below-ram", r, SBI_ERR_INVALID_PARAM);
		/* a buffer that starts in RAM and runs past its end */
		r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, 0x2000,
			    gt_ram_base() + gt_ram_size() - 0x1000, 0);
		GT_CHECK_SBI("dbcn-write-past-ram-end", r, SBI_ERR_INVALID_PARAM);
		r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE, 16, (unsigned long)line, 1);
		GT_CHECK_SBI("dbcn-write-base-hi", r, SBI_ERR_INVALID_PARAM);
		r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_READ, 16, 0x4000000000UL, 0);
		GT_CHECK_SBI("dbcn-read-outside-ram", r, SBI_ERR_INVALID_PARAM);
	}
	/* DBCN read with no input pending: success, at most num_bytes */
	{
		static char in[16];

		r = gt_sbi3(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_READ, sizeof(in), (unsigned long)in,
			    0);
		GT_CHECK_SBI("dbcn-read-ok", r, SBI_SUCCESS);
		GT_CHECK_LE("dbcn-read-len", r.value, sizeof(in));
	}

	/* SRST: a reserved reset type is rejected (and does not reset) */
	r = gt_sbi2(SBI_EXT_SRST, SBI_EXT_SRST_RESET, 0x12345678, SBI_SRST_RESET_REASON_NONE);
	GT_CHECK_SBI("srst-bad-type", r, SBI_ERR_INVALID_PARAM);
	if (!gt_native()) {
		/* a reserved reason (natively OpenSBI might just shut down) */
		r = gt_sbi2(SBI_EXT_SRST, SBI_EXT_SRST_RESET, SBI_SRST_RESET_TYPE_SHUTDOWN, 0x1000);
		GT_CHECK_SBI("srst-bad-reason", r, SBI_ERR_INVALID_PARAM);
		/* a vendor-specific reset type pmuvisor does not implement: as a reserved one */
		r = gt_sbi2(SBI_EXT_SRST, SBI_EXT_SRST_RESET, 0xf0000000UL, 0);
		GT_CHECK_SBI("srst-vendor-type", r, SBI_ERR_INVALID_PARAM);
		r = gt_sbi2(SBI_EXT_SRST, SBI_EXT_SRST_RESET, 0xffffffffUL, 0);
		GT_CHECK_SBI("srst-vendor-type-last", r, SBI_ERR_INVALID_PARAM);
		/* SBI-implementation- and platform-specific reasons: pmuvisor implements none */
		r = gt_sbi2(SBI_EXT_SRST, SBI_EXT_SRST_RESET, SBI_SRST_RESET_TYPE_SHUTDOWN,
			    0xe0000000UL);
		GT_CHECK_SBI("srst-impl-reason", r, SBI_ERR_INVALID_PARAM);
		r = gt_sbi2(SBI_EXT_SRST, SBI_EXT_SRST_RESET, SBI_SRST_RESET_TYPE_SHUTDOWN,
			    0xf0000000UL);
		GT_CHECK_SBI("srst-vendor-reason", r, SBI_ERR_INVALID_PARAM);
		r = gt_sbi2(SBI_EXT_SRST, SBI_EXT_SRST_RESET, SBI_SRST_RESET_TYPE_COLD_REBOOT,
			    0xffffffffUL);
		GT_CHECK_SBI("srst-vendor-reason-last", r, SBI_ERR_INVALID_PARAM);
	}

	/* HSM on ourselves and on a hart that does not exist */
	r = gt_sbi_hart_status(hartid);
	GT_CHECK_SBI("hsm-self-status-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("hsm-self-status", r.value, SBI_HSM_STATE_STARTED);
	r = gt_sbi_hart_status(1000);
	GT_CHECK_SBI("hsm-bad-hart-status", r, SBI_ERR_INVALID_PARAM);
}
