/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Counter delegation (Smcdeleg/Ssccfg, riscv-isa-manual src/smcdeleg.adoc):
 * HS-mode reaches counter i's value through siselect = 0x40 + i and sireg,
 * its event selector (mhpmevent, or cyclecfg / instretcfg for i = 0 / 2)
 * through sireg2, and starts and stops counters through scountinhibit, an
 * alias of mcountinhibit. Mechanisms only: which value to write is the
 * physical PMU backend's business (vpmu/phys/cdeleg.c).
 */
#ifndef ARCH_RISCV_PMU_CSR_H
#define ARCH_RISCV_PMU_CSR_H

#include <stdint.h>
#include "arch/riscv/csr.h"

#define CSR_SCOUNTINHIBIT 0x120
#define CSR_SISELECT	  0x150
#define CSR_SIREG	  0x151
#define CSR_SIREG2	  0x152

#define SISELECT_COUNTER(i) (0x40UL + (i))

/* mhpmevent bits 63..56 (Sscofpmf): the rest is the event selector */
#define MHPMEVENT_OF	   (1UL << 63)
#define MHPMEVENT_MINH	   (1UL << 62)
#define MHPMEVENT_SINH	   (1UL << 61)
#define MHPMEVENT_UINH	   (1UL << 60)
#define MHPMEVENT_VSINH	   (1UL << 59)
#define MHPMEVENT_VUINH	   (1UL << 58)
#define MHPMEVENT_SEL_MASK ((1UL << 56) - 1)

static inline void cdeleg_select(unsigned int i)
{
	csr_write(CSR_SISELECT, SISELECT_COUNTER(i));
}

/* Counter i's value and event selector; cdeleg_select(i) first */
static inline uint64_t cdeleg_ctr_read(void)
{
	return csr_read(CSR_SIREG);
}

static inline void cdeleg_ctr_write(uint64_t v)
{
	csr_write(CSR_SIREG, v);
}

static inline unsigned long cdeleg_cfg_read(void)
{
	return csr_read(CSR_SIREG2);
}

static inline void cdeleg_cfg_write(unsigned long v)
{
	csr_write(CSR_SIREG2, v);
}

/* Inhibit (stop) / release (start) counters; the bits inhibited before */
static inline unsigned long scountinhibit_set(unsigned long mask)
{
	unsigned long old;

	asm volatile("csrrs %0, 0x120, %1" : "=r"(old) : "r"(mask) : "memory");
	return old;
}

static inline unsigned long scountinhibit_clear(unsigned long mask)
{
	unsigned long old;

	asm volatile("csrrc %0, 0x120, %1" : "=r"(old) : "r"(mask) : "memory");
	return old;
}

/*
 * Whether siselect, sireg, sireg2 and scountinhibit can be accessed from
 * HS-mode at all: 0, or -1 if one of them raised an exception (caught:
 * the probe runs with its own trap vector). csr_probe.S.
 */
long cdeleg_probe_access(void);

#endif
