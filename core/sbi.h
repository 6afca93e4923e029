/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Guest SBI dispatch: a table of extensions, each with an extension-ID
 * range, a handler and an optional probe. probe_extension walks the same
 * table, so an extension is advertised exactly when it is dispatched.
 */
#ifndef CORE_SBI_H
#define CORE_SBI_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/riscv/sbi_spec.h"

struct vcpu;

/*
 * Internal marker: the handler already set up the guest's registers (or the
 * vCPU does not resume here), so a0/a1 must not be written.
 */
#define SBI_RET_NO_REPLY (-1000L)
/*
 * Internal marker: the call is not finished (it was answered in part); the
 * guest re-executes its ecall, after whatever else the hart has to do.
 */
#define SBI_RET_RESTART (-1001L)

struct sbi_ext {
	unsigned long eid_min;
	unsigned long eid_max;
	const char *name;
	struct sbi_ret (*handler)(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
				  const unsigned long args[6]);
	/* NULL: always available; else the value probe_extension returns */
	long (*probe)(struct vcpu *vcpu);
};

/* At boot, before any guest: the index sbi_find_ext and dispatch use, and sbi_base_init */
void sbi_init(void);
/* At boot (sbi_init): the host's machine IDs, which BASE gives every guest */
void sbi_base_init(void);
/* Look up the extension for eid, NULL if none */
const struct sbi_ext *sbi_find_ext(unsigned long eid);
/* BASE probe_extension: 0 if eid is not offered to this vCPU, else its probe's value (1) */
struct sbi_ret sbi_probe_ext(struct vcpu *vcpu, unsigned long eid);
/* Dispatch one guest ecall: a7 = eid, a6 = fid, a0..a5 = args */
struct sbi_ret sbi_dispatch(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
			    const unsigned long args[6]);

#endif
