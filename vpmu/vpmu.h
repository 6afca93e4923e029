/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Virtual PMU: the SBI PMU extension (EID 0x504D55) for guests, backed by
 * the hart's real counters. Hypervisor-independent: it reaches the machine
 * only through vpmu/phys.h (physical counters) and vpmu/vpmu_host.h (what
 * the core provides). This header is what the core calls for a vCPU's and a
 * hart's life; the nine SBI functions are in vpmu/vpmu_sbi.h. Design,
 * invariants and conformance table: docs/vpmu.md.
 */
#ifndef VPMU_VPMU_H
#define VPMU_VPMU_H

#include <stdbool.h>
#include <stdint.h>
#include "vpmu/vpmu_policy.h"
#include "vpmu/vpmu_types.h"

/* ---- called by the core ---- */

/* Boot hart, once, before any vCPU runs: probe the host PMU */
void vpmu_global_init(void);
/* Every other hart, once, when it starts (the boot hart's is part of global_init) */
void vpmu_hart_init(void);
/* Whether guests are offered the PMU extension (host has SBI PMU); inline: every call asks */
extern bool vpmu_offered;
static inline bool vpmu_available(void)
{
	return vpmu_offered;
}
void vpmu_vcpu_init(struct vpmu *v);
/* The guest v belongs to (any number the core gives each guest; 0 until it says) */
void vpmu_vcpu_set_guest(struct vpmu *v, unsigned int guest);
/*
 * The guest's policy (kept by reference; NULL: no restriction), with the
 * hypervisor's profile of it: its sampling counter is armed here
 */
void vpmu_vcpu_set_policy(struct vpmu *v, const struct vpmu_policy *p);
/* Guest reboot, HSM stop: every counter unconfigured, snapshot area forgotten */
void vpmu_vcpu_reset(struct vpmu *v);
/*
 * At the vCPU switch point on its hart: put stops and saves the running
 * counters (they stay configured there: lazy), load continues or restores
 */
void vpmu_vcpu_load(struct vpmu *v);
void vpmu_vcpu_put(struct vpmu *v);
/*
 * hcounteren bits for the PMU counters (never bit 1, TM: the core owns it).
 * vpmu itself writes them through vpmu_phys_set_counteren() after load, put
 * and every PMU call; this is the value it writes (the physical layer
 * leaves the hypervisor's sampling counter out: vpmu_phys_hide).
 */
static inline unsigned long vpmu_hcounteren(const struct vpmu *v)
{
	/* only a loaded vCPU's counters are in the hardware */
	if (!v->loaded)
		return 0;
	return v->configured_hw & v->placed & v->synced;
}
/*
 * Emulated read of CSR 0xC00..0xC1F (a counter) or of scountovf (the
 * guest's own overflow bits): 0 with *val, -1 if the guest may not read it
 */
#define VPMU_CSR_SCOUNTOVF 0xda0
int vpmu_csr_read(struct vpmu *v, unsigned int csr, unsigned long *val);
/*
 * Counter overflow (Sscofpmf) is decided here, from the counters' values:
 * a started counter whose value fell below the value it was started from
 * has wrapped. Each wrap is recorded once (until the guest starts that
 * counter again) and raises the guest's LCOFI through
 * vpmu_host_raise_lcofi(). The platform's own interrupt is only a hint:
 * the core calls vpmu_overflow_irq() when the hart takes a physical LCOFI
 * (v: the loaded vCPU, or NULL), and vpmu_timer() when the hart's timer
 * fires while v runs (v->deadline may have passed). Loads, puts and every
 * PMU call check too, so a wrap is never lost and never reported twice.
 */
void vpmu_overflow_irq(struct vpmu *v);
void vpmu_timer(struct vpmu *v);
/* When the core must arm the hart's timer for v at the latest (vpmu_timer), UINT64_MAX: never */
static inline uint64_t vpmu_deadline(const struct vpmu *v)
{
	return v->deadline;
}
/* Whether the hypervisor samples v (vpmu/profile.c) */
static inline bool vpmu_sampled(const struct vpmu *v)
{
	return v->prof_mask != 0;
}
/*
 * Whether v has hardware counters of the guest running (they count whatever
 * runs in guest mode). Not the hypervisor's sampling counter: exclusive
 * counting would run a profiled guest's vCPUs one at a time, and its
 * spinlocks would spin where they never do (docs/profiling.md).
 */
static inline bool vpmu_counting(const struct vpmu *v)
{
	return (v->started_hw & ~v->prof_mask) != 0;
}
/*
 * Whether the platform charges a hart's mode-filtered counters with the
 * instructions other harts execute (QEMU -icount: docs/vpmu.md). Then a
 * vCPU with running counters must run while the other harts are stopped.
 */
bool vpmu_counts_other_harts(void);
/*
 * Whether a hart can get no time at all while another runs (QEMU -icount's
 * round robin, docs/quirks.md near-top): then the core's harts look out for
 * each other (core/unstarve.c). Known after vpmu_probe_other_harts.
 */
bool vpmu_harts_may_starve(void);
/*
 * The core runs vCPUs with running counters alone (exclusive counting, set
 * once at boot): vpmu then calls vpmu_host_counting_starts() before it
 * starts hardware counters.
 */
void vpmu_set_exclusive(bool on);
/* Whether guests may be offered Sscofpmf (the host has it and its PMU) */
bool vpmu_overflow_available(void);
/*
 * Count n SBI_PMU_FW_* events of one kind (only counters that are started
 * count them): one walk over the firmware counters, whatever n
 */
void vpmu_fw_event(struct vpmu *v, unsigned int fw_event, uint64_t n);

/*
 * The hardware counter the hypervisor samples the guest with (the policy's
 * profile, docs/profiling.md), which the guest is not offered; 0: none
 */
unsigned int vpmu_profile_counter(const struct vpmu *v);

/* How many hardware counters the guest is offered: its policy's, less the profiler's */
static inline unsigned int vpmu_hw_offered(const struct vpmu *v)
{
	return (unsigned int)__builtin_popcount(v->allowed_hw);
}

/* ---- introspection (tests, debugging) ---- */
unsigned int vpmu_num_hw(void);	    /* H: first firmware counter index */
unsigned int vpmu_num_total(void);  /* H + 22, what NUM_COUNTERS returns */
uint32_t vpmu_hw_valid_mask(void);  /* usable hardware counters */
bool vpmu_prog_counts(int instret); /* boot probe: programmable counters count cycles/instret */
/* Boot hart, after vpmu_global_init, with the other harts idle: see vpmu_counts_other_harts */
void vpmu_probe_other_harts(void);
uint64_t vpmu_ctr_value(struct vpmu *v, unsigned int idx); /* current virtual value */
/*
 * The invariants of vpmu_types.h, as code: NULL if they hold, else the one
 * broken. The unit tests and the fuzzer check them; a debug build after
 * every PMU call and vCPU switch.
 */
const char *vpmu_check(struct vpmu *v);
const char *vpmu_check_hart(const struct vpmu_hart *h);
/* A debug build's check: the hypervisor panics, naming the invariant, if one is broken */
void vpmu_debug_check(struct vpmu *v, const char *after);

#endif
