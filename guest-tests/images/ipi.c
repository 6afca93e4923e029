// SPDX-License-Identifier: BSD-2-Clause
/*
 * ipi: SBI IPI between two vCPUs in both directions with exact counts, the
 * hart_mask_base forms (relative base, -1 = all harts), self IPIs through
 * sip.SSIP, RFENCE calls, and INVALID_PARAM for harts that do not exist.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("ipi");

#define NR_IPIS 16

static volatile unsigned long ipi_count[GT_MAX_HARTS];
static volatile unsigned long ssip_after_clear[GT_MAX_HARTS];
static volatile unsigned long sec_ready, sec_received, sec_send_errors, sec_done, go_send, go_stop;
static unsigned long boot;

static void ssi_irq(unsigned long irq, struct gt_frame *f)
{
	unsigned long me = gt_hartid();

	(void)irq;
	(void)f;
	csr_clear(sip, SIP_SSIP);
	if (csr_read(sip) & SIP_SSIP)
		ssip_after_clear[me]++;
	ipi_count[me]++;
}

static void secondary(unsigned long hartid, unsigned long opaque)
{
	unsigned long i;
	uint64_t sec = gt_timebase();

	(void)opaque;
	csr_set(sie, SIE_SSIE);
	gt_irq_enable();
	gt_atomic_store(&sec_ready, 1);
	/* receive NR_IPIS from the boot hart (it waits for each) */
	gt_wait_ge(&go_send, 1, 20 * sec);
	sec_received = ipi_count[hartid];
	/* send NR_IPIS back, one at a time */
	for (i = 0; i < NR_IPIS; i++) {
		if (gt_sbi_send_ipi(1UL << boot, 0).error)
			sec_send_errors++;
		gt_wait_ge(&ipi_count[boot], i + 1, 2 * sec);
	}
	gt_atomic_store(&sec_done, 1);
	/* stay around for the broadcast part */
	gt_wait_ge(&go_stop, 1, 20 * sec);
	csr_clear(sie, SIE_SSIE);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	uint64_t sec = gt_timebase(), ms = gt_us_to_ticks(1000);
	unsigned long other = ~0UL, i, errors = 0, bad = gt_max_hart_id() + 1, n_me, n_other;
	struct sbi_ret r;

	(void)fdt;
	boot = hartid;
	for (i = 0; i < gt_nr_harts(); i++) {
		if (gt_hart_id_at(i) != hartid && gt_hart_id_at(i) < other)
			other = gt_hart_id_at(i);
	}
	gt_printf("ipi: boot hart %lu, %lu harts, peer hart %lu\n", hartid, gt_nr_harts(), other);
	if (!GT_CHECK_GE("two-harts", gt_nr_harts(), 2) || other == ~0UL)
		gt_exit();
	gt_irq_register(IRQ_S_SOFT, ssi_irq);

	r = gt_hart_start(other, secondary, 0);
	GT_CHECK_SBI("start-peer", r, SBI_SUCCESS);
	GT_CHECK_EQ("peer-ready", gt_wait_ge(&sec_ready, 1, 5 * sec), 1);

	/* boot -> peer, one at a time so that none coalesce */
	for (i = 0; i < NR_IPIS; i++) {
		if (gt_sbi_send_ipi(1UL << other, 0).error)
			errors++;
		if (!gt_wait_ge(&ipi_count[other], i + 1, 2 * sec))
			break;
	}
	gt_delay_ticks(10 * ms);
	GT_CHECK_EQ("to-peer-send-errors", errors, 0);
	GT_CHECK_EQ("to-peer-count", gt_atomic_load(&ipi_count[other]), NR_IPIS);
	GT_CHECK_EQ("to-peer-ssip-cleared", gt_atomic_load(&ssip_after_clear[other]), 0);

	/* peer -> boot */
	csr_set(sie, SIE_SSIE);
	gt_irq_enable();
	gt_atomic_store(&go_send, 1);
	GT_CHECK_EQ("from-peer-done", gt_wait_ge(&sec_done, 1, 20 * sec), 1);
	gt_delay_ticks(10 * ms);
	GT_CHECK_EQ("peer-received-before-sending", sec_received, NR_IPIS);
	GT_CHECK_EQ("from-peer-send-errors", sec_send_errors, 0);
	GT_CHECK_EQ("from-peer-count", gt_atomic_load(&ipi_count[hartid]), NR_IPIS);
	GT_CHECK_EQ("from-peer-ssip-cleared", gt_atomic_load(&ssip_after_clear[hartid]), 0);

	/* hart_mask relative to hart_mask_base */
	n_other = gt_atomic_load(&ipi_count[other]);
	r = gt_sbi_send_ipi(1, other);
	GT_CHECK_SBI("mask-base-ok", r, SBI_SUCCESS);
	gt_wait_ge(&ipi_count[other], n_other + 1, 2 * sec);
	gt_delay_ticks(5 * ms);
	GT_CHECK_EQ("mask-base-count", gt_atomic_load(&ipi_count[other]), n_other + 1);

	/* hart_mask_base = -1: every hart, including the sender */
	n_me = gt_atomic_load(&ipi_count[hartid]);
	n_other = gt_atomic_load(&ipi_count[other]);
	r = gt_sbi_send_ipi(0, -1UL);
	GT_CHECK_SBI("broadcast-ok", r, SBI_SUCCESS);
	gt_wait_ge(&ipi_count[other], n_other + 1, 2 * sec);
	gt_wait_ge(&ipi_count[hartid], n_me + 1, 2 * sec);
	gt_delay_ticks(5 * ms);
	GT_CHECK_EQ("broadcast-self-count", gt_atomic_load(&ipi_count[hartid]), n_me + 1);
	GT_CHECK_EQ("broadcast-peer-count", gt_atomic_load(&ipi_count[other]), n_other + 1);

	/* a self IPI by writing sip.SSIP */
	n_me = gt_atomic_load(&ipi_count[hartid]);
	csr_set(sip, SIP_SSIP);
	gt_wait_ge(&ipi_count[hartid], n_me + 1, sec);
	GT_CHECK_EQ("self-ssip-count", gt_atomic_load(&ipi_count[hartid]), n_me + 1);

	/* harts that do not exist */
	n_me = gt_atomic_load(&ipi_count[hartid]);
	n_other = gt_atomic_load(&ipi_count[other]);
	r = gt_sbi_send_ipi(1UL << bad, 0);
	if (gt_native()) /* OpenSBI 1.5 ignores hart_mask bits of absent harts */
		gt_printf("ipi: native: invalid hart_mask bit -> error %ld (not checked)\n",
			  r.error);
	else
		GT_CHECK_SBI("invalid-hart-mask", r, SBI_ERR_INVALID_PARAM);
	r = gt_sbi_send_ipi(1, bad);
	GT_CHECK_SBI("invalid-hart-base", r, SBI_ERR_INVALID_PARAM);
	gt_delay_ticks(5 * ms);
	GT_CHECK_EQ("invalid-no-ipi-self", gt_atomic_load(&ipi_count[hartid]), n_me);
	GT_CHECK_EQ("invalid-no-ipi-peer", gt_atomic_load(&ipi_count[other]), n_other);

	/* RFENCE */
	r = gt_sbi2(SBI_EXT_RFENCE, SBI_EXT_RFENCE_REMOTE_FENCE_I, 0, -1UL);
	GT_CHECK_SBI("fence-i-all", r, SBI_SUCCESS);
	r = gt_sbi2(SBI_EXT_RFENCE, SBI_EXT_RFENCE_REMOTE_FENCE_I, 1UL << other, 0);
	GT_CHECK_SBI("fence-i-peer", r, SBI_SUCCESS);
	r = gt_sbi4(SBI_EXT_RFENCE, SBI_EXT_RFENCE_REMOTE_SFENCE_VMA, 0, -1UL, 0, -1UL);
	GT_CHECK_SBI("sfence-vma-all", r, SBI_SUCCESS);
	r = gt_sbi4(SBI_EXT_RFENCE, SBI_EXT_RFENCE_REMOTE_SFENCE_VMA,
		    (1UL << other) | (1UL << hartid), 0, 0x80200000, 0x1000);
	GT_CHECK_SBI("sfence-vma-range", r, SBI_SUCCESS);
	r = gt_sbi_call(SBI_EXT_RFENCE, SBI_EXT_RFENCE_REMOTE_SFENCE_VMA_ASID, 0, -1UL, 0, -1UL, 0,
			0);
	GT_CHECK_SBI("sfence-vma-asid-all", r, SBI_SUCCESS);
	r = gt_sbi2(SBI_EXT_RFENCE, SBI_EXT_RFENCE_REMOTE_FENCE_I, 1UL << bad, 0);
	if (gt_native())
		gt_printf("ipi: native: fence_i invalid hart -> error %ld (not checked)\n",
			  r.error);
	else
		GT_CHECK_SBI("fence-i-invalid-hart", r, SBI_ERR_INVALID_PARAM);
	r = gt_sbi2(SBI_EXT_RFENCE, SBI_EXT_RFENCE_REMOTE_FENCE_I, 1, bad);
	GT_CHECK_SBI("fence-i-invalid-base", r, SBI_ERR_INVALID_PARAM);
	/* the guest has no H extension: the hypervisor fences are not offered */
	if (!gt_native()) {
		unsigned long fid;
		char name[32];

		for (fid = SBI_EXT_RFENCE_REMOTE_HFENCE_GVMA_VMID;
		     fid <= SBI_EXT_RFENCE_REMOTE_HFENCE_VVMA; fid++) {
			r = gt_sbi4(SBI_EXT_RFENCE, fid, 0, -1UL, 0, -1UL);
			gt_snprintf(name, sizeof(name), "hfence-fid%lu-unsupported", fid);
			GT_CHECK_SBI(name, r, SBI_ERR_NOT_SUPPORTED);
		}
	}
	/* a fence is not an IPI the guest sees */
	gt_delay_ticks(5 * ms);
	GT_CHECK_EQ("fence-no-ipi-self", gt_atomic_load(&ipi_count[hartid]), n_me);
	GT_CHECK_EQ("fence-no-ipi-peer", gt_atomic_load(&ipi_count[other]), n_other);

	gt_atomic_store(&go_stop, 1);
	GT_CHECK_EQ("peer-stopped", gt_wait_hart_state(other, SBI_HSM_STATE_STOPPED, 5 * sec),
		    SBI_HSM_STATE_STOPPED);
	csr_clear(sie, SIE_SSIE);
}
