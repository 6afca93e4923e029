// SPDX-License-Identifier: BSD-2-Clause
/*
 * Writes a profile stream (core/profile_format.h) from a text description, with the
 * structs the hypervisor's sampler uses, so that the host test of tools/profile.py
 * (tools/test_profile.py) reads bytes laid out by the C compiler, not by Python.
 *
 *   profile-synth OUT < DESCRIPTION
 *
 * One record a line, numbers in C syntax (0x... allowed), `#` starts a comment:
 *   header HARTS EVENT_IDX EVENT_DATA PERIOD          (first, once)
 *   guest ID VCPUS NAME
 *   sample TIME GUEST VCPU HART MODE FLAGS PID TID PC VSATP COMM|- [CHAIN...]
 *   lost HART GUEST TIME COUNT
 * Exit status 1, with the line number, on a malformed line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/profile_format.h"

#define MAX_WORDS (16 + PROFILE_CHAIN_MAX)

static FILE *out;
static unsigned int lineno;

static void fail(const char *why)
{
	fprintf(stderr, "profile-synth: line %u: %s\n", lineno, why);
	exit(1);
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	if (*s == '\0' || *end != '\0')
		fail("not a number");
	return v;
}

static void put(const void *p, size_t n)
{
	if (fwrite(p, 1, n, out) != n)
		fail("write error");
}

/* NUL-terminated, zero-padded to a multiple of 8 */
static void put_padded(const char *s)
{
	static const char zero[8];
	size_t n = strlen(s) + 1;

	put(s, n);
	put(zero, (8 - n % 8) % 8);
}

static void header(char **w, int n)
{
	struct profile_file_header h = {
		.magic = PROFILE_MAGIC,
		.version = PROFILE_VERSION,
		.header_size = sizeof(h),
	};

	if (n != 5)
		fail("header HARTS EVENT_IDX EVENT_DATA PERIOD");
	h.harts = (uint16_t)num(w[1]);
	h.event_idx = (uint32_t)num(w[2]);
	h.event_data = num(w[3]);
	h.period = num(w[4]);
	put(&h, sizeof(h));
}

static void guest(char **w, int n)
{
	struct profile_guest g = {.hdr.type = PROFILE_REC_GUEST};

	if (n != 4)
		fail("guest ID VCPUS NAME");
	g.hdr.size = (uint16_t)(sizeof(g) + (strlen(w[3]) + 1 + 7) / 8 * 8);
	g.guest = (uint16_t)num(w[1]);
	g.vcpus = (uint16_t)num(w[2]);
	put(&g, sizeof(g));
	put_padded(w[3]);
}

static void sample(char **w, int n)
{
	struct profile_sample s = {.hdr.type = PROFILE_REC_SAMPLE};
	int i;

	if (n < 12 || n - 12 > PROFILE_CHAIN_MAX)
		fail("sample TIME GUEST VCPU HART MODE FLAGS PID TID PC VSATP COMM [CHAIN...]");
	s.time = num(w[1]);
	s.guest = (uint16_t)num(w[2]);
	s.vcpu = (uint16_t)num(w[3]);
	s.hart = (uint16_t)num(w[4]);
	s.mode = (uint8_t)num(w[5]);
	s.flags = (uint32_t)num(w[6]);
	s.pid = (uint32_t)num(w[7]);
	s.tid = (uint32_t)num(w[8]);
	s.pc = num(w[9]);
	s.vsatp = num(w[10]);
	if (strcmp(w[11], "-") != 0) /* 16 characters fill comm with no NUL */
		memcpy(s.comm, w[11], strnlen(w[11], sizeof(s.comm)));
	s.nr = (uint8_t)(n - 12);
	s.hdr.size = (uint16_t)(sizeof(s) + s.nr * sizeof(s.chain[0]));
	put(&s, sizeof(s));
	for (i = 12; i < n; i++) {
		uint64_t ret = num(w[i]);

		put(&ret, sizeof(ret));
	}
}

static void lost(char **w, int n)
{
	struct profile_lost l = {.hdr.type = PROFILE_REC_LOST, .hdr.size = sizeof(l)};

	if (n != 5)
		fail("lost HART GUEST TIME COUNT");
	l.hart = (uint16_t)num(w[1]);
	l.guest = (uint16_t)num(w[2]);
	l.time = num(w[3]);
	l.count = num(w[4]);
	put(&l, sizeof(l));
}

int main(int argc, char **argv)
{
	char line[8192];
	int have_header = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: profile-synth OUT < DESCRIPTION\n");
		return 2;
	}
	out = fopen(argv[1], "wb");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		char *w[MAX_WORDS], *save = NULL, *tok;
		int n = 0;

		lineno++;
		line[strcspn(line, "#\n")] = '\0';
		for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
			if (n == MAX_WORDS)
				fail("too many words");
			w[n++] = tok;
		}
		if (n == 0)
			continue;
		if (strcmp(w[0], "header") == 0 && !have_header) {
			header(w, n);
			have_header = 1;
		} else if (!have_header) {
			fail("the header line must come first");
		} else if (strcmp(w[0], "guest") == 0) {
			guest(w, n);
		} else if (strcmp(w[0], "sample") == 0) {
			sample(w, n);
		} else if (strcmp(w[0], "lost") == 0) {
			lost(w, n);
		} else {
			fail("unknown record");
		}
	}
	if (fclose(out) != 0) {
		perror(argv[1]);
		return 1;
	}
	return have_header ? 0 : 1;
}
