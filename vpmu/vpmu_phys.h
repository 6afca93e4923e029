/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Physical PMU backend of vpmu: one hart's counters. phys_common.c is the
 * real one: it forwards to counter delegation (phys_cdeleg.c: CSRs in
 * HS-mode) or to the host SBI PMU (phys_sbi.c: OpenSBI below HS-mode),
 * chosen at boot; vpmu/test/fake_host.c simulates it for unit tests and
 * fuzzing.
 *
 * Every function acts on exactly one physical counter of the calling hart.
 */
#ifndef VPMU_VPMU_PHYS_H
#define VPMU_VPMU_PHYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/riscv/sbi_spec.h"
#include "vpmu/vpmu.h" /* struct vpmu_hart */

/*
 * Boot hart, once, after vpmu_phys_available(): choose the backend (counter
 * delegation if it works, else the host SBI PMU); what it is, for the log.
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
 * host config flags (filter bits only; never SKIP_MATCH, CLEAR_VALUE or
 * AUTO_START). On success .value is the counter the host chose: normally
 * idx, but a host may fall back to a fixed counter (0 or 2) for cycles or
 * instret, which the caller must then undo. The chosen counter is left
 * stopped and its value is not changed.
 */
struct sbi_ret vpmu_phys_config(unsigned int idx, unsigned long host_flags, unsigned long event_idx,
				uint64_t event_data);
/* Start a configured counter with this initial value: an SBI error code */
long vpmu_phys_start(unsigned int idx, uint64_t value);
/* The same, h being this hart's table (a loaded vCPU's resident hart): no lookup */
long vpmu_phys_start_on(struct vpmu_hart *h, unsigned int idx, uint64_t value);
/* Stop it (error ALREADY_STOPPED is fine); reset != 0 also releases it */
long vpmu_phys_stop(unsigned int idx, int reset);
/* Start several stopped counters at once, continuing from their values */
long vpmu_phys_start_mask(uint32_t mask);
/*
 * Start each counter i of mask (configured, stopped) from values[i * stride],
 * as vpmu_phys_start would one by one; returns the counters started.
 */
uint32_t vpmu_phys_start_values(uint32_t mask, const uint64_t *values, size_t stride);
/* Current value of the counter: its CSR, less any bias the start added */
uint64_t vpmu_phys_read(unsigned int idx);
/* Stop a started counter and read it, as vpmu_phys_stop(idx, 0) and vpmu_phys_read would */
uint64_t vpmu_phys_stop_read_one(unsigned int idx);
/*
 * Stop every counter of mask at once, keeping their configuration and
 * values, and read each stopped counter i into values[i] (as
 * vpmu_phys_read would): a vCPU switch's put.
 */
void vpmu_phys_stop_read(uint32_t mask, uint64_t values[32]);
/*
 * Boot hart, once, before the first start: the programmable counters that
 * are 64 bits wide. QEMU needs their values kept at or above 2^63 (quirk 5
 * in phys_common.c): starts below add a bias, reads take it off.
 */
void vpmu_phys_set_wide(uint32_t mask);
/* hcounteren := (hcounteren & TM) | (bits & ~TM) */
void vpmu_phys_set_counteren(unsigned long bits);
/*
 * The same on h, this hart's table, which remembers the bits last asked
 * for (phys_counteren; 0 at boot, as the core leaves hcounteren): the CSR
 * is written only when they change, or when a start changed which counters
 * run biased (the backend then forgets them: hcounteren hides those).
 */
void vpmu_phys_write_counteren(struct vpmu_hart *h, unsigned long bits);
static inline void vpmu_phys_set_counteren_on(struct vpmu_hart *h, unsigned long bits)
{
	if (bits != h->phys_counteren)
		vpmu_phys_write_counteren(h, bits);
}
/*
 * Sscofpmf: physical counters whose overflow flag (mhpmevent.OF) is set, as
 * scountovf shows them. The flag stays set until the counter is configured
 * or started again, which also re-arms its interrupt.
 * Only called when the host has Sscofpmf (reading scountovf traps otherwise).
 */
uint32_t vpmu_phys_overflowed(void);
/*
 * The hart's LCOFI pending bit (sip.LCOFIP). OpenSBI's start re-arms a
 * counter (clears mhpmevent.OF) only while it is clear, so it must be taken
 * care of before every start. vpmu_phys_irq_clear is the only writer of
 * sip.LCOFIP in the hypervisor.
 */
bool vpmu_phys_irq_pending(void);
void vpmu_phys_irq_clear(void);
/*
 * The backend's start leaves a counter's OF bit set while sip.LCOFIP is
 * pending, as OpenSBI's does (the SBI backend): vpmu must take the
 * interrupt before every start. The delegation backend clears OF itself.
 */
bool vpmu_phys_start_keeps_of(void);
/*
 * Boot probe: configure event_idx on idx with no filter, run a short loop,
 * release. 1 if the counter advanced, 0 if it stayed still, -1 if the host
 * refused the event on idx.
 */
int vpmu_phys_event_counts(unsigned int idx, unsigned long event_idx);
/*
 * Counter idx of this hart configured with event_idx: the counter that
 * counts it by the platform's one-counter-per-event map (QEMU quirk 2).
 * idx itself (always for a fixed counter), another programmable counter
 * configured with the event before, or -1 if the map gives it to none.
 */
int vpmu_phys_event_counter(unsigned int idx, unsigned long event_idx);
/* The same, h being this hart: its most common answer, idx itself, inline */
static inline int vpmu_phys_event_counter_on(const struct vpmu_hart *h, unsigned int idx,
					     unsigned long event_idx)
{
	if (idx < VPMU_MAX_HW && h->phys_ev[idx] == event_idx)
		return (int)idx;
	return vpmu_phys_event_counter(idx, event_idx);
}
/*
 * Boot probe: configure event_idx on counter idx with every privilege mode
 * inhibited, run a short loop, release. 1 if the counter stayed still (the
 * host filters it by mode), 0 if it advanced anyway (it would count the
 * hypervisor and the firmware too), -1 if the host refused the event there.
 */
int vpmu_phys_event_filtered(unsigned int idx, unsigned long event_idx);
/* Boot probe: the fastest a counter can advance per timer tick (counting in HS) */
unsigned long vpmu_phys_counts_per_tick(void);
/* Boot probe: run a loop of exactly iters iterations of 2 instructions each */
void vpmu_phys_spin(unsigned long iters);
/*
 * Boot probe: does the event count on counter b while counter a holds it
 * too? 1 yes, 0 no (QEMU counts an event on one counter per hart), -1 n/a.
 */
int vpmu_phys_event_shared(unsigned int a, unsigned int b, unsigned long event_idx);

#endif
