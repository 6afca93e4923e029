/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the vPMU's logic needs from the hardware: one hart's physical
 * counters. vpmu/phys/phys.c implements it on a backend chosen at boot
 * (counter delegation or the host SBI PMU) with the platform's quirks
 * wrapped around it (vpmu/phys/qemu.c); vpmu/test/fake_host.c simulates it
 * for the unit tests and the fuzzer.
 *
 * Every function acts on the calling hart's counters. A counter index
 * given to start, stop, release, read and their mask forms names a
 * hardware counter the layout offers (below 32, never 1: the time CSR).
 */
#ifndef VPMU_PHYS_H
#define VPMU_PHYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/riscv/percpu.h"
#include "arch/riscv/sbi_spec.h"
#include "vpmu/host_offsets.h" /* generated from core/offsets.c */
#include "vpmu/phys/types.h"

/* This hart's state of the physical layer: tp plus a constant */
static inline struct phys_hart *phys_this_hart(void)
{
	return (struct phys_hart *)(void *)(percpu_base() + VPMU_HOST_PHYS_OFFSET);
}

/*
 * Boot hart, once, after vpmu_phys_available(): choose the backend (counter
 * delegation if it works, else the host SBI PMU) and the quirks' workarounds;
 * what the backend is, for the log.
 */
const char *vpmu_phys_init(void);
/* 1 if the host SBI implements the PMU extension */
int vpmu_phys_available(void);
/* Host NUM_COUNTERS (0 on error) */
unsigned long vpmu_phys_num_counters(void);
/* Host COUNTER_GET_INFO */
struct sbi_ret vpmu_phys_counter_info(unsigned long idx);
/*
 * Configure event_idx/event_data on physical counter idx only, with these
 * host config flags (filter bits only). On success .value is the counter
 * the host chose: normally idx, but a host may fall back to a fixed counter
 * (0 or 2) for cycles or instret, which the caller must then undo. The
 * chosen counter is left stopped and its value is not changed.
 */
struct sbi_ret vpmu_phys_config(unsigned int idx, unsigned long host_flags, unsigned long event_idx,
				uint64_t event_data);
/*
 * Start a configured, stopped counter with this initial value: an SBI error
 * code. The layer's start is chosen at boot (the backend's, or wrapped in
 * the quirks' workarounds): the logic calls it directly.
 */
extern long (*vpmu_phys_start_op)(unsigned int idx, uint64_t value);
static inline long vpmu_phys_start(unsigned int idx, uint64_t value)
{
	return vpmu_phys_start_op(idx, value);
}
/* Stop it (ALREADY_STOPPED is fine) */
long vpmu_phys_stop(unsigned int idx);
/* Stop it and free it: no event, no overflow flag */
long vpmu_phys_release(unsigned int idx);
/* Start several stopped counters at once, continuing from their values */
long vpmu_phys_start_mask(uint32_t mask);
/*
 * Start each counter i of mask (configured, stopped) from values[i * stride],
 * as vpmu_phys_start would one by one; returns the counters started.
 */
uint32_t vpmu_phys_start_values(uint32_t mask, const uint64_t *values, size_t stride);
/* Current value of the counter (what the guest's counter holds) */
uint64_t vpmu_phys_read(unsigned int idx);
/* Stop a started counter and read it, as vpmu_phys_stop and vpmu_phys_read would */
uint64_t vpmu_phys_stop_read_one(unsigned int idx);
/*
 * Stop every counter of mask at once, keeping their configuration and
 * values, and read each stopped counter i into values[i] (as
 * vpmu_phys_read would): a vCPU switch's put.
 */
void vpmu_phys_stop_read(uint32_t mask, uint64_t values[32]);
/* Boot hart, once, before the first start: the programmable counters that are 64 bits wide */
void vpmu_phys_set_wide(uint32_t mask);
/*
 * hcounteren := (hcounteren & TM) | (bits & ~TM): which counters the loaded
 * guest reads directly. The hart remembers the bits last asked for (0 at
 * boot, as the core leaves hcounteren), so the CSR is written only when they
 * change (or when the layer forgot them: phys.c).
 */
void vpmu_phys_write_counteren(unsigned long bits);
static inline void vpmu_phys_set_counteren(unsigned long bits)
{
	if (bits != phys_this_hart()->counteren)
		vpmu_phys_write_counteren(bits);
}
/*
 * Counters the loaded guest must never read directly, whatever
 * set_counteren asks: the hypervisor's own (a profile's sampling counter)
 */
void vpmu_phys_hide(uint32_t mask);
/*
 * Sscofpmf: physical counters whose overflow flag (mhpmevent.OF) is set, as
 * scountovf shows them. The flag stays set until the counter is configured
 * or started again, which also re-arms its interrupt.
 * Only called when the host has Sscofpmf (reading scountovf traps otherwise).
 */
uint32_t vpmu_phys_overflowed(void);
/*
 * The hart's LCOFI pending bit (sip.LCOFIP). vpmu_phys_irq_clear is the
 * only place that clears a pending LCOFI; the SBI backend's start_held also
 * raises sip.LCOFIP around OpenSBI's start and clears it again.
 */
bool vpmu_phys_irq_pending(void);
void vpmu_phys_irq_clear(void);
/*
 * The backend's start leaves a counter's OF bit set while sip.LCOFIP is
 * pending, as OpenSBI's does (the SBI backend): the logic must take the
 * interrupt before every start. The delegation backend clears OF itself.
 */
bool vpmu_phys_start_keeps_of(void);

/* ---- what the platform counts where (boot probes, phys/probe.c) ---- */
/*
 * Configure event_idx on idx with no filter, run a short loop, release. 1
 * if the counter advanced, 0 if it stayed still, -1 if the host refused
 * the event on idx.
 */
int vpmu_phys_event_counts(unsigned int idx, unsigned long event_idx);
/*
 * Configure event_idx on counter idx with every privilege mode inhibited,
 * run a short loop, release. 1 if the counter stayed still (the host
 * filters it by mode), 0 if it advanced anyway (it would count the
 * hypervisor and the firmware too), -1 if the host refused the event there.
 */
int vpmu_phys_event_filtered(unsigned int idx, unsigned long event_idx);
/* The fastest a counter can advance per timer tick (counting in HS) */
unsigned long vpmu_phys_counts_per_tick(void);
/*
 * Does the platform count an event on one counter per hart only (a second
 * counter configured with it reads 0, QEMU quirk `event-map`), with the layer keeping
 * that map? Probed with counters a and b. Then vpmu_phys_event_counter
 * says which counter counts an event.
 */
bool vpmu_phys_event_exclusive(unsigned int a, unsigned int b, unsigned long event_idx);
/*
 * Boot hart, with the other harts idle: are this hart's counters charged
 * with the instructions other harts execute (QEMU -icount), with the
 * workaround wanted? p: a programmable counter that counts instret.
 */
bool vpmu_phys_other_harts_charged(unsigned int p);
/*
 * Whether a counter left one count below its top can leave the other harts
 * no time at all (QEMU -icount, the near-top quirk): known once
 * vpmu_phys_other_harts_charged has probed
 */
bool vpmu_phys_harts_may_starve(void);

/*
 * Counter idx of this hart configured with event_idx: the counter that
 * counts it by the platform's one-counter-per-event map. idx itself (always
 * for a fixed counter), another programmable counter configured with the
 * event before, or -1 if the map gives it to none. The map is the event-map
 * quirk's (vpmu/phys/qemu.c); its common answer inline.
 */
int vpmu_phys_event_holder(unsigned int idx, unsigned long event_idx);
static inline int vpmu_phys_event_counter(unsigned int idx, unsigned long event_idx)
{
	if (idx < 32 && phys_this_hart()->qemu.ev[idx] == event_idx)
		return (int)idx;
	return vpmu_phys_event_holder(idx, event_idx);
}

#endif
