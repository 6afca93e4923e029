// SPDX-License-Identifier: BSD-2-Clause
/*
 * pmu-fw: firmware counters count exactly. SET_TIMER rises by exactly one
 * per sbi set_timer call (TIME extension and legacy), not at all while
 * stopped, and on every counter of that event; other events do not move.
 * With two vCPUs: IPI_SENT/IPI_RCVD for an IPI to self, to the other vCPU,
 * from it and to all, then FENCE_I_SENT/RCVD for a remote fence.i. Each
 * hart reads its own counters (the PMU is per hart). ILLEGAL_INSN counts
 * the illegal-instruction exceptions the hypervisor injects.
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("pmu-fw");

static struct gt_pmu_layout pl;
static unsigned long boot, other;
static volatile unsigned long ipi_count[GT_MAX_HARTS];
static volatile unsigned long peer_ready, go_send, peer_sent_done, go_report, peer_reported,
	go_fence, peer_fence_done, go_stop;
static volatile unsigned long peer_cfg_err, peer_after_boot_ipis[2], peer_after_own[2],
	peer_after_bcast[2], peer_fence_rcvd, peer_fence_rcvd2, peer_fence_sent;

/*
 * Natively OpenSBI 1.5 counts a firmware event on only one counter of that
 * event, and does not count an IPI a hart sends to itself (measured): the
 * checks that depend on either are printed, not checked, under gt_native().
 */
#define HV_CHECK_EQ(name, got, expected)                                                           \
	do {                                                                                       \
		if (gt_native())                                                                   \
			gt_printf("pmu-fw: native: %s = %lu (pmuvisor: %lu, not checked)\n", name, \
				  (unsigned long)(got), (unsigned long)(expected));                \
		else                                                                               \
			GT_CHECK_EQ(name, got, expected);                                          \
	} while (0)

/* A firmware counter for fw event e, started from 0; -1 on error */
static unsigned long fw_counter(unsigned long e)
{
	long idx = gt_pmu_cfg_idx(0, pl.fw_mask, 0, GT_PMU_EV_FW(e));

	if (idx < 0)
		return ~0UL;
	gt_pmu_start((unsigned long)idx, 1, SBI_PMU_START_FLAG_SET_INIT_VALUE, 0);
	return (unsigned long)idx;
}

static unsigned long rd(unsigned long idx)
{
	struct sbi_ret r = gt_pmu_fw_read(idx);

	return r.error ? ~0UL : r.value;
}

static void ssi_irq(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	(void)f;
	csr_clear(sip, SIP_SSIP);
	ipi_count[gt_hartid()]++;
}

static void check_set_timer(void)
{
	unsigned long a, b, ipi, i;
	struct sbi_ret r;

	a = fw_counter(SBI_PMU_FW_SET_TIMER);
	GT_CHECK_NE("set-timer-cfg", a, ~0UL);
	GT_CHECK_EQ("set-timer-start-0", rd(a), 0);
	for (i = 0; i < 10; i++)
		gt_sbi_set_timer(~0UL);
	GT_CHECK_EQ("set-timer-10-calls", rd(a), 10);
	r = gt_pmu_fw_read_hi(a);
	GT_CHECK_SBI("set-timer-read-hi-ok", r, SBI_SUCCESS);
	GT_CHECK_EQ("set-timer-read-hi-zero", r.value, 0);
	/* the legacy SET_TIMER (EID 0x00) is the same event */
	gt_sbi_call(SBI_EXT_0_1_SET_TIMER, 0, ~0UL, 0, 0, 0, 0, 0);
	GT_CHECK_EQ("set-timer-legacy-call", rd(a), 11);
	/* a second counter of the same event; another event does not move */
	b = fw_counter(SBI_PMU_FW_SET_TIMER);
	ipi = fw_counter(SBI_PMU_FW_IPI_SENT);
	GT_CHECK_NE("set-timer-second-counter", b, a);
	for (i = 0; i < 3; i++)
		gt_sbi_set_timer(~0UL);
	GT_CHECK_EQ("set-timer-both-first", rd(a), 14);
	HV_CHECK_EQ("set-timer-both-second", rd(b), 3);
	GT_CHECK_EQ("set-timer-other-event-zero", rd(ipi), 0);
	/* stopped: not a single count */
	gt_pmu_stop(a, 1, 0);
	for (i = 0; i < 5; i++)
		gt_sbi_set_timer(~0UL);
	GT_CHECK_EQ("set-timer-stopped-no-count", rd(a), 14);
	HV_CHECK_EQ("set-timer-running-one-counts", rd(b), 8);
	/* restarted without an initial value: continues */
	gt_pmu_start(a, 1, 0, 0);
	gt_sbi_set_timer(~0UL);
	GT_CHECK_EQ("set-timer-restart-continues", rd(a), 15);
	/* a timer that fires still counts only the call */
	gt_sbi_set_timer(gt_rdtime() + gt_us_to_ticks(100));
	gt_delay_ticks(gt_us_to_ticks(2000));
	gt_sbi_set_timer(~0UL);
	GT_CHECK_EQ("set-timer-after-expiry", rd(a), 17);
	gt_pmu_release(a);
	gt_pmu_release(b);
	gt_pmu_release(ipi);
	GT_CHECK_SBI("set-timer-reset-released", gt_pmu_fw_read(a), SBI_ERR_INVALID_PARAM);
}

static void check_illegal_insn(void)
{
	unsigned long c, i;

	if (gt_native()) /* natively an unconfigured counter read does not trap */
		return;
	c = fw_counter(SBI_PMU_FW_ILLEGAL_INSN);
	for (i = 0; i < 3; i++) {
		gt_expect_trap(EXC_ILLEGAL_INSN);
		(void)csr_read(0xc05);
		gt_trapped();
	}
	GT_CHECK_EQ("illegal-insn-3-injected", rd(c), 3);
	gt_pmu_release(c);
}

static void peer(unsigned long hartid, unsigned long opaque)
{
	unsigned long sent, rcvd, frcvd, fsent, i;
	uint64_t sec = gt_timebase();

	(void)opaque;
	(void)hartid;
	sent = fw_counter(SBI_PMU_FW_IPI_SENT);
	rcvd = fw_counter(SBI_PMU_FW_IPI_RCVD);
	frcvd = fw_counter(SBI_PMU_FW_FENCE_I_RCVD);
	fsent = fw_counter(SBI_PMU_FW_FENCE_I_SENT);
	if (sent == ~0UL || rcvd == ~0UL || frcvd == ~0UL || fsent == ~0UL)
		peer_cfg_err = 1;
	csr_set(sie, SIE_SSIE);
	gt_irq_enable();
	gt_atomic_store(&peer_ready, 1);

	gt_wait_ge(&go_send, 1, 20 * sec);
	peer_after_boot_ipis[0] = rd(sent);
	peer_after_boot_ipis[1] = rd(rcvd);
	for (i = 0; i < 2; i++) {
		gt_sbi_send_ipi(1UL << boot, 0);
		gt_wait_ge(&ipi_count[boot], 1 + i + 1, 2 * sec);
	}
	peer_after_own[0] = rd(sent);
	peer_after_own[1] = rd(rcvd);
	gt_atomic_store(&peer_sent_done, 1);

	gt_wait_ge(&go_report, 1, 20 * sec);
	peer_after_bcast[0] = rd(sent);
	peer_after_bcast[1] = rd(rcvd);
	gt_pmu_stop(sent, 1, 0);
	gt_pmu_stop(rcvd, 1, 0);
	gt_atomic_store(&peer_reported, 1);

	gt_wait_ge(&go_fence, 1, 20 * sec);
	peer_fence_rcvd = rd(frcvd);
	peer_fence_rcvd2 = rd(frcvd); /* after one more exit/entry of this vCPU */
	peer_fence_sent = rd(fsent);
	gt_atomic_store(&peer_fence_done, 1);
	gt_wait_ge(&go_stop, 1, 20 * sec);
	csr_clear(sie, SIE_SSIE);
}

static void check_ipis(void)
{
	uint64_t sec = gt_timebase(), ms = gt_us_to_ticks(1000);
	unsigned long sent, rcvd, fsent, frcvd, i;
	struct sbi_ret r;

	other = ~0UL;
	for (i = 0; i < gt_nr_harts(); i++)
		if (gt_hart_id_at(i) != boot && gt_hart_id_at(i) < other)
			other = gt_hart_id_at(i);
	if (!GT_CHECK_GE("two-harts", gt_nr_harts(), 2))
		return;
	gt_irq_register(IRQ_S_SOFT, ssi_irq);
	csr_set(sie, SIE_SSIE);
	gt_irq_enable();
	sent = fw_counter(SBI_PMU_FW_IPI_SENT);
	rcvd = fw_counter(SBI_PMU_FW_IPI_RCVD);
	fsent = fw_counter(SBI_PMU_FW_FENCE_I_SENT);
	frcvd = fw_counter(SBI_PMU_FW_FENCE_I_RCVD);
	GT_CHECK_EQ("ipi-counters-cfg",
		    sent != ~0UL && rcvd != ~0UL && fsent != ~0UL && frcvd != ~0UL, 1);
	r = gt_hart_start(other, peer, 0);
	GT_CHECK_SBI("peer-start", r, SBI_SUCCESS);
	GT_CHECK_EQ("peer-ready", gt_wait_ge(&peer_ready, 1, 5 * sec), 1);
	GT_CHECK_EQ("peer-counters-cfg", peer_cfg_err, 0);

	/* to self */
	gt_sbi_send_ipi(1UL << boot, 0);
	gt_wait_ge(&ipi_count[boot], 1, 2 * sec);
	GT_CHECK_EQ("self-ipi-delivered", ipi_count[boot], 1);
	HV_CHECK_EQ("self-ipi-sent", rd(sent), 1);
	HV_CHECK_EQ("self-ipi-rcvd", rd(rcvd), 1);
	/* to the peer */
	gt_sbi_send_ipi(1UL << other, 0);
	gt_wait_ge(&ipi_count[other], 1, 2 * sec);
	gt_sbi_send_ipi(1, other); /* hart_mask relative to hart_mask_base */
	gt_wait_ge(&ipi_count[other], 2, 2 * sec);
	GT_CHECK_EQ("peer-ipi-delivered", ipi_count[other], 2);
	HV_CHECK_EQ("to-peer-sent", rd(sent), 3);
	HV_CHECK_EQ("to-peer-rcvd-unchanged", rd(rcvd), 1);
	/* from the peer: 2 IPIs */
	gt_atomic_store(&go_send, 1);
	GT_CHECK_EQ("peer-sent-done", gt_wait_ge(&peer_sent_done, 1, 20 * sec), 1);
	GT_CHECK_EQ("peer-saw-sent-0", peer_after_boot_ipis[0], 0);
	GT_CHECK_EQ("peer-saw-rcvd-2", peer_after_boot_ipis[1], 2);
	GT_CHECK_EQ("peer-sent-2", peer_after_own[0], 2);
	GT_CHECK_EQ("peer-rcvd-still-2", peer_after_own[1], 2);
	HV_CHECK_EQ("from-peer-rcvd", rd(rcvd), 3);
	HV_CHECK_EQ("from-peer-sent-unchanged", rd(sent), 3);
	/* to all harts (hart_mask_base = -1): one sent per target */
	gt_sbi_send_ipi(0, -1UL);
	gt_wait_ge(&ipi_count[boot], 4, 2 * sec);
	gt_wait_ge(&ipi_count[other], 3, 2 * sec);
	gt_delay_ticks(5 * ms);
	HV_CHECK_EQ("bcast-sent", rd(sent), 5);
	HV_CHECK_EQ("bcast-rcvd", rd(rcvd), 4);
	gt_atomic_store(&go_report, 1);
	GT_CHECK_EQ("peer-reported", gt_wait_ge(&peer_reported, 1, 20 * sec), 1);
	GT_CHECK_EQ("bcast-peer-rcvd", peer_after_bcast[1], 3);
	GT_CHECK_EQ("bcast-peer-sent", peer_after_bcast[0], 2);
	/* an invalid target counts nothing */
	gt_sbi_send_ipi(1, gt_max_hart_id() + 1);
	HV_CHECK_EQ("invalid-target-sent", rd(sent), 5);
	gt_pmu_release(sent);
	gt_pmu_release(rcvd);

	/* remote fence.i to the peer */
	r = gt_sbi2(SBI_EXT_RFENCE, SBI_EXT_RFENCE_REMOTE_FENCE_I, 1UL << other, 0);
	GT_CHECK_SBI("fence-i-ok", r, SBI_SUCCESS);
	gt_delay_ticks(5 * ms);
	gt_atomic_store(&go_fence, 1);
	GT_CHECK_EQ("peer-fence-done", gt_wait_ge(&peer_fence_done, 1, 20 * sec), 1);
	GT_CHECK_EQ("fence-i-sent", rd(fsent), 1);
	GT_CHECK_EQ("fence-i-self-rcvd", rd(frcvd), 0);
	GT_CHECK_EQ("fence-i-peer-rcvd", peer_fence_rcvd, 1);
	GT_CHECK_EQ("fence-i-peer-rcvd-reread", peer_fence_rcvd2, 1);
	GT_CHECK_EQ("fence-i-peer-sent", peer_fence_sent, 0);
	gt_atomic_store(&go_stop, 1);
	gt_pmu_release(fsent);
	gt_pmu_release(frcvd);
	gt_wait_hart_state(other, SBI_HSM_STATE_STOPPED, 5 * sec);
	csr_clear(sie, SIE_SSIE);
}

/*
 * storm: three vCPUs on two harts send IPIs around a ring (each to the next),
 * napping every few sends: a napping vCPU's hart goes idle and takes over a
 * waiting one, so vCPUs move between harts while events for them are posted
 * from both. Every IPI is counted once: each vCPU's IPI_RCVD and IPI_SENT are
 * exactly STORM_IPIS (issue 11 S6).
 */
#define STORM_VCPUS 3UL
#define STORM_IPIS  1200UL /* per vCPU */
#define STORM_BURST 40UL
static volatile unsigned long storm_ready, go_storm, storm_done, storm_read, storm_cfg_err;
static volatile unsigned long storm_sent[GT_MAX_HARTS], storm_rcvd[GT_MAX_HARTS];

static void storm_timer(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	(void)f;
	gt_sbi_set_timer(~0UL);
}

/* Halt until the timer, `ticks` from now, or (with ipis) an IPI; both taken here */
static void storm_nap(uint64_t ticks, bool ipis)
{
	gt_irq_disable();
	if (!ipis)
		csr_clear(sie, SIE_SSIE);
	gt_sbi_set_timer(gt_rdtime() + ticks);
	gt_wfi();
	csr_set(sie, SIE_SSIE);
	gt_irq_enable();
}

static void storm_vcpu(unsigned long hartid, unsigned long opaque)
{
	unsigned long sent = fw_counter(SBI_PMU_FW_IPI_SENT);
	unsigned long rcvd = fw_counter(SBI_PMU_FW_IPI_RCVD);
	uint64_t sec = gt_timebase(), end;

	if (sent == ~0UL || rcvd == ~0UL)
		gt_atomic_add(&storm_cfg_err, 1);
	csr_set(sie, SIE_SSIE | SIE_STIE);
	gt_irq_enable();
	gt_atomic_add(&storm_ready, 1);
	gt_wait_ge(&go_storm, 1, 20 * sec);
	for (unsigned long i = 0; i < STORM_IPIS; i++) {
		gt_sbi_send_ipi(1UL << opaque, 0);
		if (i % STORM_BURST == STORM_BURST - 1)
			storm_nap(gt_us_to_ticks(300), false);
	}
	/* the others' last IPIs come before their store */
	gt_atomic_add(&storm_done, 1);
	for (end = gt_rdtime() + 60 * sec;
	     gt_atomic_load(&storm_done) < STORM_VCPUS && gt_rdtime() < end;)
		storm_nap(gt_us_to_ticks(1000), true);
	storm_sent[hartid] = rd(sent);
	storm_rcvd[hartid] = rd(rcvd);
	csr_clear(sie, SIE_SSIE | SIE_STIE);
	gt_pmu_release(sent);
	gt_pmu_release(rcvd);
	gt_atomic_add(&storm_read, 1);
}

static void check_storm(void)
{
	uint64_t sec = gt_timebase();
	unsigned long id[STORM_VCPUS];

	if (!GT_CHECK_EQ("storm-three-harts", gt_nr_harts(), STORM_VCPUS))
		return;
	gt_irq_register(IRQ_S_SOFT, ssi_irq);
	gt_irq_register(IRQ_S_TIMER, storm_timer);
	for (unsigned long i = 0; i < STORM_VCPUS; i++)
		id[i] = gt_hart_id_at(i);
	for (unsigned long i = 0; i < STORM_VCPUS; i++)
		if (id[i] != boot)
			GT_CHECK_SBI("storm-vcpu-start",
				     gt_hart_start(id[i], storm_vcpu, id[(i + 1) % STORM_VCPUS]),
				     SBI_SUCCESS);
	GT_CHECK_EQ("storm-vcpus-ready", gt_wait_ge(&storm_ready, STORM_VCPUS - 1, 5 * sec), 1);
	gt_atomic_store(&go_storm, 1);
	for (unsigned long i = 0; i < STORM_VCPUS; i++)
		if (id[i] == boot)
			storm_vcpu(boot, id[(i + 1) % STORM_VCPUS]);
	GT_CHECK_EQ("storm-vcpus-done", gt_wait_ge(&storm_read, STORM_VCPUS, 20 * sec), 1);
	GT_CHECK_EQ("storm-counters-cfg", storm_cfg_err, 0);
	for (unsigned long i = 0; i < STORM_VCPUS; i++) {
		GT_CHECK_EQ("storm-sent-exact", storm_sent[id[i]], STORM_IPIS);
		GT_CHECK_EQ("storm-rcvd-exact", storm_rcvd[id[i]], STORM_IPIS);
		GT_CHECK_GE("storm-ipis-taken", ipi_count[id[i]], 1);
	}
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);

	(void)fdt;
	boot = hartid;
	gt_pmu_layout(&pl);
	if (!GT_CHECK_GE("fw-counters", pl.nfw, 4))
		gt_exit();
	if (args && !__builtin_strcmp(args, "storm")) {
		check_storm();
		gt_exit();
	}
	check_set_timer();
	check_illegal_insn();
	check_ipis();
	gt_exit();
}
