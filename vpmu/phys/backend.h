/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the physical layer (vpmu/phys/) only: what a backend provides.
 * phys.c implements vpmu/phys.h, the logic's view of the hardware, on one
 * backend chosen at boot, with the platform's quirks (qemu.c) wrapped
 * around it. A backend knows its own mechanism and nothing of the quirks.
 */
#ifndef VPMU_PHYS_BACKEND_H
#define VPMU_PHYS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/riscv/sbi_spec.h"
#include "vpmu/phys.h"

#define PHYS_FIRST_PROG	  3
#define PHYS_MAX_HW	  32
#define PHYS_HOST_FILTERS 0xf8UL /* config flags SET_VUINH..SET_MINH */

/* A host SBI PMU call */
struct sbi_ret phys_sbi_call(unsigned long fid, unsigned long a0, unsigned long a1,
			     unsigned long a2, unsigned long a3, unsigned long a4);

/*
 * A backend. Every counter index it is given is a hardware counter below
 * PHYS_MAX_HW and not 1 (the time CSR): phys.c checks those that come from
 * outside the layer. "Stopped" and "started" are the counter's inhibit
 * state on this hart; a counter's value is its CSR.
 */
struct phys_ops {
	const char *name; /* for the boot line */
	/* Boot hart, once: can it drive this host's counters? NULL: always */
	bool (*usable)(void);
	/*
	 * Optional: configure ev on idx without the host SBI if the backend
	 * can (it has seen the host configure ev there, the filters it needs
	 * are in place): true if it did. The counter is left stopped with its
	 * value. False changes nothing: the host is asked (config_host).
	 */
	bool (*config_direct)(unsigned int idx, unsigned long host_flags, unsigned long ev,
			      uint64_t data);
	/*
	 * Configure ev on idx through the host SBI (M-mode writes mhpmevent),
	 * stopped, value unchanged. .value is the counter the host chose:
	 * normally idx, but OpenSBI falls back to a fixed counter (0 or 2) for
	 * cycles and instret, which the caller undoes.
	 */
	struct sbi_ret (*config_host)(unsigned int idx, unsigned long host_flags, unsigned long ev,
				      uint64_t data);
	/*
	 * Start a configured, stopped counter from value; its overflow flag
	 * is cleared (but see keeps_of). An SBI error code.
	 */
	long (*start)(unsigned int idx, uint64_t value);
	/*
	 * Optional: the same, but with the counter's overflow flag set, so that
	 * the platform raises no interrupt for it (Sscofpmf: a set OF bit masks
	 * the counter's LCOFI); the caller finds a wrap by the value instead.
	 * With keeps_of it can only keep a flag that is set: the host's
	 * configuration sets it, a plain start clears it.
	 */
	long (*start_held)(unsigned int idx, uint64_t value);
	/* Stop it: SUCCESS, or ALREADY_STOPPED if it was */
	long (*stop)(unsigned int idx);
	/* Stop it and drop its event and overflow flag: the counter is free */
	long (*release)(unsigned int idx);
	/*
	 * Optional: release through the host SBI, where release does not go
	 * there (M-mode's mhpmevent keeps what it had). NULL: release does.
	 */
	long (*release_host)(unsigned int idx);
	/* Stop a started counter and read its CSR */
	uint64_t (*stop_read_one)(unsigned int idx);
	/* Stop every counter of mask at once */
	long (*stop_mask)(uint32_t mask);
	/* Start every counter of mask (configured, stopped) from its value */
	long (*start_mask)(uint32_t mask);
	/* Optional: write values[i * stride] into each counter i of mask, then start them all */
	void (*start_values)(uint32_t mask, const uint64_t *values, size_t stride);
	/* Optional: stop every counter of mask, then read each into values[i] */
	void (*stop_read)(uint32_t mask, uint64_t *values);
	/*
	 * Its start leaves a counter's overflow flag set while the hart's
	 * LCOFI is pending (OpenSBI re-arms a counter only while sip.LCOFIP
	 * is clear): the logic takes the interrupt before every start.
	 */
	bool keeps_of;
};

extern const struct phys_ops phys_cdeleg_ops, phys_sbi_ops;

/* The counter's CSR (hpmcounter idx) as it is */
uint64_t phys_read_csr(unsigned int idx);

#endif
