// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-overflow: what the image's files share. main.c says what the image
 * checks and runs the groups in order. The files: lcofi-handler.c (the LCOFI
 * handler and its statistics), overflow.c (a counter armed near the top and
 * re-armed from the handler, sampling, no interrupt where none is due, the
 * snapshot's overflow bit), lcofi-delivery.c (when LCOFI is taken: before a
 * timer, stale, gated by sie.LCOFIE, sip.LCOFIP pending), lower-half.c
 * (counters below 2^63, QEMU's quirk 5), cost.c (SBI calls after an overflow).
 */
#ifndef GUEST_TESTS_PMU_OVERFLOW_H
#define GUEST_TESTS_PMU_OVERFLOW_H
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

#define IRQ_LCOF	 13
#define SIP_LCOFIP	 (1UL << IRQ_LCOF)
#define EV_INSTRUCTIONS	 SBI_PMU_HW_INSTRUCTIONS
#define EV_DTLB_RD_MISS	 0x10019UL
#define NEAR_TOP	 10000UL
#define CSR_STIMECMP_NUM 0x14d

/* main.c: the snapshot area, the counters and what the handler counts */
extern uint64_t shmem[512];
/* programmable counters: 0 (cycle) and 2 (instret) have no overflow interrupt */
extern unsigned long prog_mask;
extern volatile unsigned long nirq, bad_scause, ovf_missing, not_wrapped, stop_errors;
extern volatile unsigned long rearms_left, rearm_value;
extern volatile long ctr;
extern volatile unsigned long lcofi_from_s, timer_irqs;
/* handler entries that found sip.LCOFIP set; entries still to return leaving it set */
extern volatile unsigned long lcofip_seen, leave_pending;
extern bool sstc, lcofi_software;

/* lcofi-handler.c */
void lcofi_handler(unsigned long irq, struct gt_frame *f);
long configure(unsigned long event, unsigned long flags);
void reset_stats(void);

/* overflow.c */
unsigned long vs_touch(unsigned long passes);
void counted_first(const char *what, unsigned long event);
void overflow_run(const char *what, unsigned long event, bool via_snapshot, unsigned long rearms,
		  unsigned long (*work)(unsigned long), unsigned long arg, bool in_vs);
void sampling(unsigned long period, unsigned long loop_n);
void no_spurious(void);
void no_overflow(unsigned long hw_mask);
void wrap_once(unsigned long idx, const char *prefix);
void reset_forgets_overflow(void);

/* lcofi-delivery.c */
void lcofi_before_timer(void);
void stale_lcofi(void);
void lcofie_gates(void);
void lcofip_stays_pending(void);

/* lower-half.c */
void lower_half_pair(void);
void lower_half_restart(void);
void lower_half_beside_sampler(void);

/* cost.c: what a null call and a PMU call cost, in instructions (measure_calls) */
struct call_cost {
	uint64_t base, pmu;
};
void measure_calls(struct call_cost *c);
void cost_after_overflow(const struct call_cost *fresh);

#endif
