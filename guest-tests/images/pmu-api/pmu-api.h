// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-api: what the image's files share. main.c says what the image checks
 * and runs the groups in order; they are in counter-info.c (NUM_COUNTERS,
 * COUNTER_GET_INFO), cfg-match-errors.c and cfg-match.c (CFG_MATCH refused
 * and granted, with its flags), start-stop.c (START, STOP, FW_READ,
 * FW_READ_HI), csr.c (the counter CSRs from S- and U-mode), event-info.c
 * (EVENT_GET_INFO).
 */
#ifndef GUEST_TESTS_PMU_API_H
#define GUEST_TESTS_PMU_API_H
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

/*
 * SANE: the `*-sane` upper bounds hold under the hypervisor's test config,
 * which runs QEMU with -icount shift=0 (exact instret). The native command
 * (guest-tests/README.md) has no -icount, where QEMU's instret follows host
 * time, so they are skipped natively; the lower bounds hold in both.
 */

#define EV_CYCLES  SBI_PMU_HW_CPU_CYCLES
#define EV_INSTRET SBI_PMU_HW_INSTRUCTIONS
#define EV_DTLB_RD 0x10019UL /* cache: DTLB read miss */
#define EV_DTLB_WR 0x1001bUL
#define EV_ITLB_RD 0x10021UL

/* main.c: the counters, as check_layout (counter-info.c) found them */
extern unsigned long num;	/* NUM_COUNTERS */
extern unsigned long hw_mask;	/* hardware counters (COUNTER_GET_INFO, type 0) */
extern unsigned long prog_mask; /* hardware counters 3.. */
extern unsigned long ins_set;	/* programmable counters, else counter 2 if offered */
extern unsigned long fw_set;	/* the firmware counters */
extern unsigned long fw_first, nfw;
extern unsigned long info[64];
extern char nm[80];

#define NAME(...) (gt_snprintf(nm, sizeof(nm), __VA_ARGS__), nm)

static inline void spin(unsigned long n)
{
	asm volatile("1: addi %0, %0, -1\n bnez %0, 1b" : "+r"(n)::"memory");
}

static inline unsigned long lowest(unsigned long mask)
{
	return mask ? (unsigned long)__builtin_ctzl(mask) : ~0UL;
}

/* counter-info.c */
void check_layout(void);
/* csr.c */
void check_unconfigured_csrs(void);
void check_csrs(void);
void check_user(void);
/* cfg-match-errors.c */
void check_cfg_errors(void);
/* cfg-match.c */
void check_cfg_raw(void);
void check_cfg_events(void);
/* start-stop.c */
void check_start_stop(void);
/* event-info.c */
void check_event_info(void);

#endif
