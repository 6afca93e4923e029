/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What vpmu needs from the hypervisor core (implemented by the core, and by
 * fakes in vpmu/test/).
 */
#ifndef VPMU_VPMU_HOST_H
#define VPMU_VPMU_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/riscv/percpu.h"
#include "vpmu/host_offsets.h" /* generated from core/offsets.c */

struct vpmu;

/*
 * Copy between guest-physical memory of the vCPU owning v and the
 * hypervisor. Return 0, or -1 (nothing need be copied) if any byte of
 * [gpa, gpa + len) is outside the guest's RAM. The core walks the G-stage
 * mapping.
 */
int vpmu_host_read_guest(struct vpmu *v, uint64_t gpa, void *dst, size_t len);
int vpmu_host_write_guest(struct vpmu *v, uint64_t gpa, const void *src, size_t len);
/*
 * [gpa, gpa + len) of that guest's RAM where the hypervisor reaches it, or
 * NULL if any byte is outside it. A guest's RAM stays where it is for the
 * guest's life, so the pointer does too.
 */
void *vpmu_host_guest_ram(struct vpmu *v, uint64_t gpa, size_t len);

/* The table of the physical hart we are running on (the core keeps it at a constant offset) */
static inline struct vpmu_hart *vpmu_host_hart(void)
{
	return (struct vpmu_hart *)(void *)(percpu_base() + VPMU_HOST_HART_OFFSET);
}

/*
 * Where the guest's SBI call being answered is (its sepc): an unfinished
 * call (VPMU_RET_RESTART) resumes only when the same ecall comes again
 */
unsigned long vpmu_host_ecall_pc(struct vpmu *v);

/* Host time in timer ticks (the `time` CSR) */
uint64_t vpmu_host_now(void);

/*
 * Raise the guest's local counter-overflow interrupt (LCOFI, 13) on the
 * vCPU owning v. Called on that vCPU's hart, once per recorded overflow.
 */
void vpmu_host_raise_lcofi(struct vpmu *v);

/*
 * The vCPU owning v has no recorded overflow left (the guest restarted,
 * reconfigured or reset every counter that had one): an LCOFI raised for it
 * that only the hypervisor holds, not yet delivered, is dropped. Called on
 * that vCPU's hart.
 */
void vpmu_host_cancel_lcofi(struct vpmu *v);

/*
 * The hypervisor's sampling counter of the loaded vCPU owning v wrapped
 * (its policy's profile, docs/profiling.md): take a sample of where the
 * guest is. Called on that vCPU's hart, from an overflow interrupt, the
 * timer, a PMU call or the put that found the wrap; the vCPU's trap state
 * holds the guest's pc and registers.
 */
void vpmu_host_sample(struct vpmu *v);

/* The hypervisor's bootargs hold this word (e.g. "pmu-backend=sbi") */
bool vpmu_host_option(const char *word);
/* The value of key=value in the bootargs (up to the next space), or NULL */
const char *vpmu_host_option_value(const char *key);
/* The machine is QEMU's virt (the host DT's root compatible says "riscv-virtio") */
bool vpmu_host_is_qemu(void);

/* Whether the host harts have Sscofpmf (scountovf, OF bits, LCOFI) */
bool vpmu_host_has_sscofpmf(void);

/*
 * The loaded vCPU owning v is about to start hardware counters (SBI START,
 * AUTO_START): the core may first have to stop the other harts. Only after
 * the core asked for it (vpmu_set_exclusive): otherwise vpmu makes no call.
 */
void vpmu_host_counting_starts(struct vpmu *v);

/*
 * Boot probe: another hart executes a loop of iters iterations (2
 * instructions each) while this hart sleeps; false if there is no other hart.
 */
bool vpmu_host_busy_other_hart(unsigned long iters);

/* Console output of the core (%d %u %x %lx %s) */
extern void hv_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A hypervisor bug: say so and stop the machine (a debug build's broken invariant) */
extern __attribute__((noreturn)) void hv_panic(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif
