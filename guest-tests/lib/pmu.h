/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gt_pmu: SBI PMU extension helpers for guest test images (#include "guest-tests/lib/pmu.h"
 * after "gt.h"). Thin wrappers of one SBI call each, the counter layout as
 * Linux builds it from COUNTER_GET_INFO, and counter CSR reads by index.
 * See guest-tests/README.md.
 *
 * The wrappers are out-of-line functions with a fixed instruction path, so a
 * counter that counts VS-mode sees the same number of wrapper instructions
 * on every call (pmu-exact relies on that).
 */
#ifndef GT_PMU_H
#define GT_PMU_H

#include "guest-tests/lib/gt.h"

/* event_idx of firmware event `code` (type 15) */
#define GT_PMU_EV_FW(code) (((unsigned long)SBI_PMU_EVENT_TYPE_FW << 16) | (code))
/* every inhibit flag of COUNTER_CFG_MATCH: a counter that cannot count */
#define GT_PMU_NO_COUNT                                                                            \
	(SBI_PMU_CFG_FLAG_SET_VUINH | SBI_PMU_CFG_FLAG_SET_VSINH | SBI_PMU_CFG_FLAG_SET_UINH |     \
	 SBI_PMU_CFG_FLAG_SET_SINH | SBI_PMU_CFG_FLAG_SET_MINH)

/* ---- one SBI call each ---- */
struct sbi_ret gt_pmu_call(unsigned long fid, unsigned long a0, unsigned long a1, unsigned long a2,
			   unsigned long a3, unsigned long a4);
struct sbi_ret gt_pmu_num_counters(void);
struct sbi_ret gt_pmu_counter_info(unsigned long idx);
struct sbi_ret gt_pmu_cfg(unsigned long base, unsigned long mask, unsigned long flags,
			  unsigned long event, unsigned long data);
struct sbi_ret gt_pmu_start(unsigned long base, unsigned long mask, unsigned long flags,
			    unsigned long ival);
struct sbi_ret gt_pmu_stop(unsigned long base, unsigned long mask, unsigned long flags);
struct sbi_ret gt_pmu_fw_read(unsigned long idx);
struct sbi_ret gt_pmu_fw_read_hi(unsigned long idx);
struct sbi_ret gt_pmu_snapshot_set(unsigned long lo, unsigned long hi, unsigned long flags);
struct sbi_ret gt_pmu_event_get_info(unsigned long lo, unsigned long hi, unsigned long n,
				     unsigned long flags);

/* An EVENT_GET_INFO entry: an array of them must be 16-byte aligned */
struct gt_pmu_event_info {
	uint32_t event_idx;
	uint32_t output; /* bit 0: supported */
	uint64_t event_data;
};

/* CFG_MATCH (event_data 0): the counter index, or the (negative) SBI error */
long gt_pmu_cfg_idx(unsigned long base, unsigned long mask, unsigned long flags,
		    unsigned long event);
/* STOP with RESET of the single counter idx: releases it */
void gt_pmu_release(unsigned long idx);

/* ---- counter layout (NUM_COUNTERS, COUNTER_GET_INFO of each index) ---- */
struct gt_pmu_layout {
	unsigned long num;	 /* NUM_COUNTERS (0 when it failed) */
	unsigned long hw_mask;	 /* hardware counters */
	unsigned long prog_mask; /* hardware counters 3.. (programmable) */
	unsigned long fw_mask;	 /* firmware counters */
	unsigned long fw_first;	 /* first firmware counter, ~0UL if none */
	unsigned long nfw;	 /* number of firmware counters */
	unsigned long hw_top;	 /* highest hardware counter + 1 (0 if none) */
};
/*
 * Fill *l from COUNTER_GET_INFO of indices 0 .. min(NUM_COUNTERS, 64) - 1
 * (indices whose GET_INFO fails are skipped); returns the NUM_COUNTERS answer.
 */
struct sbi_ret gt_pmu_layout(struct gt_pmu_layout *l);

/* ---- counter CSRs ---- */
/* csr_read(0xc00 + idx) for idx 0..31 (1 is `time`), ~0UL for any other idx */
unsigned long gt_pmu_read_csr(unsigned long idx);
/* Whether reading counter CSR idx raises an illegal instruction exception */
bool gt_pmu_csr_traps(unsigned long idx);

/* ---- a U-mode workload of exactly known length ---- */
/*
 * gt_run_user(gt_pmu_user_loop, n) with n >= 1: under QEMU -icount shift=0 a
 * counter filtered to VU-mode counts exactly GT_PMU_USER_LOOP_COUNT(n) = 2n + 4
 * instructions: the sret that enters U, 2 per iteration, `ret`, then the
 * library's exit stub: `li a7` and the `ecall` that traps back.
 */
unsigned long gt_pmu_user_loop(unsigned long n);
#define GT_PMU_USER_LOOP_COUNT(n) (2 * (n) + 4)

/* ---- snapshot shared memory (SBI_PMU_SNAPSHOT_*): 4 KiB, 512 words ---- */
#define GT_PMU_SNAPSHOT_WORDS	512
#define GT_PMU_SNAPSHOT_OVF	0	  /* word 0: overflow bitmap */
#define GT_PMU_SNAPSHOT_SLOT(i) (1 + (i)) /* counter_values[i]: word 1 + i (offset 8 + 8i) */
/* Set every word of a snapshot area to v */
void gt_pmu_snapshot_fill(volatile uint64_t *area, uint64_t v);
/* Words of a snapshot area that differ from v, except words skip1 and skip2 */
unsigned long gt_pmu_snapshot_differing(volatile uint64_t *area, uint64_t v, unsigned int skip1,
					unsigned int skip2);

#endif
