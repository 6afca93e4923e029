// SPDX-License-Identifier: BSD-2-Clause
/*
 * imsic: AIA guest interrupt files (core/guest_imsic.c). A guest whose vCPUs
 * are pinned finds an IMSIC in its device tree, one page per vCPU, and Ssaia
 * in its ISA. Its interrupt file is a real one: eidelivery, eie and eip
 * through siselect/sireg, claims through stopei, MSIs by a store to a
 * vCPU's page, to itself and to its other vCPU, in a ping-pong where each
 * side waits in WFI. Exact counts: a second guest running this image on the
 * same harts sends the same identity, so an MSI that reached the other
 * guest would show as one too many here. Bootargs: `imsic.max-us=N` checks
 * every ping (to the MSI's handler on the other vCPU) against N us;
 * `imsic.count`: the other vCPU counts instructions meanwhile;
 * `imsic.busy` (one vCPU) is busy for 1 ms and asleep for 10 ms, for 2 s; `imsic.rogue` (one vCPU) stores to the page after
 * its own, which it does not own (the hypervisor stops it).
 */
#include "guest-tests/lib/gt.h"
#include "guest-tests/lib/pmu.h"

GT_IMAGE("imsic");

#define CSR_SISELECT 0x150
#define CSR_SIREG    0x151
#define CSR_STOPEI   0x15c

#define IMSIC_EIDELIVERY  0x70
#define IMSIC_EITHRESHOLD 0x72
#define IMSIC_EIP0	  0x80
#define IMSIC_EIE0	  0xc0

#define IMSIC_BASE 0x28000000UL
#define IMSIC_PAGE 0x1000UL
#define ID_PING	   5
#define ID_OFF	   6 /* never enabled */
#define ROUNDS	   32

static volatile unsigned long got[GT_MAX_HARTS], foreign[GT_MAX_HARTS];
static volatile unsigned long peer_ready, peer_setup_ok, peer_counts, stop;
static volatile uint64_t sent_at, peer_worst; /* the boot vCPU's last ping; the peer's slowest */
static unsigned long boot;

static void ireg_write(unsigned long reg, unsigned long val)
{
	csr_write(CSR_SISELECT, reg);
	csr_write(CSR_SIREG, val);
}

static unsigned long ireg_read(unsigned long reg)
{
	csr_write(CSR_SISELECT, reg);
	return csr_read(CSR_SIREG);
}

static void msi(unsigned long hartid, unsigned long id)
{
	*(volatile uint32_t *)(IMSIC_BASE + hartid * IMSIC_PAGE) = (uint32_t)id;
}

/* Claim every pending identity (stopei); the peer answers each ping with one */
static void ext_irq(unsigned long irq, struct gt_frame *f)
{
	unsigned long me = gt_hartid(), top;

	(void)irq;
	(void)f;
	for (;;) {
		asm volatile("csrrw %0, " gt_str(CSR_STOPEI) ", x0" : "=r"(top)::"memory");
		if (!top)
			break;
		if ((top >> 16) != ID_PING || (top & 0x7ff) != ID_PING) {
			foreign[me]++;
			continue;
		}
		gt_atomic_add(&got[me], 1);
		if (me != boot) {
			if (gt_rdtime() - sent_at > peer_worst)
				peer_worst = gt_rdtime() - sent_at;
			msi(boot, ID_PING);
		}
	}
}

/* This vCPU's file: delivery on, no threshold, only ID_PING enabled */
static bool file_setup(void)
{
	ireg_write(IMSIC_EIDELIVERY, 1);
	ireg_write(IMSIC_EITHRESHOLD, 0);
	ireg_write(IMSIC_EIE0, 1UL << ID_PING);
	csr_set(sie, SIE_SEIE);
	gt_irq_enable();
	return ireg_read(IMSIC_EIDELIVERY) == 1 && ireg_read(IMSIC_EIE0) == 1UL << ID_PING;
}

static void peer(unsigned long hartid, unsigned long opaque)
{
	struct gt_pmu_layout pl = {0};
	long ctr = -1;

	(void)hartid;
	(void)opaque;
	/* counting: its WFI traps (exclusive counting), and it waits with its hart idle */
	if (gt_arg_has("imsic.count")) {
		gt_pmu_layout(&pl);
		ctr = gt_pmu_cfg_idx(0, pl.hw_mask, SBI_PMU_CFG_FLAG_AUTO_START,
				     SBI_PMU_HW_INSTRUCTIONS);
	}
	gt_atomic_store(&peer_counts, ctr >= 0);
	gt_atomic_store(&peer_setup_ok, file_setup());
	gt_atomic_store(&peer_ready, 1);
	gt_wfi_wait_ge(&stop, 1, 30 * gt_timebase());
	csr_clear(sie, SIE_SEIE);
	if (ctr >= 0)
		gt_pmu_release((unsigned long)ctr);
}

static void rogue(void)
{
	gt_printf("imsic: one vCPU: a store to the next vCPU's page\n");
	msi(1, ID_PING);
	GT_CHECK_EQ("rogue-store-stopped", false, 1);
	gt_exit();
}

static volatile unsigned long busy_ticks;

static void busy_timer(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	(void)f;
	csr_clear(sie, SIE_STIE);
	gt_atomic_add(&busy_ticks, 1);
}

/* For 2 s: busy for 1 ms, then asleep (WFI) for 10 ms */
static void busy(void)
{
	uint64_t sec = gt_timebase(), ms = gt_us_to_ticks(1000), end = gt_rdtime() + 2 * sec;
	unsigned long n;

	gt_irq_register(IRQ_S_TIMER, busy_timer);
	for (n = 0; gt_rdtime() < end; n++) {
		gt_delay_ticks(ms);
		gt_sbi_set_timer(gt_rdtime() + 10 * ms);
		csr_set(sie, SIE_STIE);
		gt_wfi_wait_ge(&busy_ticks, n + 1, sec);
	}
	gt_printf("imsic: busy for 1 ms, then asleep for 10 ms, %lu times\n", n);
	gt_exit();
}

static void check_dt(unsigned long nr)
{
	unsigned int len = 0;
	const void *p = gt_fdt_getprop("/interrupt-controller@28000000", "compatible", &len);
	const uint32_t *reg = gt_fdt_getprop("/interrupt-controller@28000000", "reg", &len);
	const uint32_t *ids =
		gt_fdt_getprop("/interrupt-controller@28000000", "riscv,num-ids", NULL);

	GT_CHECK_EQ("dt-imsic-node", p != NULL, 1);
	GT_CHECK_EQ("dt-ssaia", gt_hart_has_ext(boot, "ssaia"), 1);
	if (GT_CHECK_EQ("dt-reg-len", len, 16)) {
		GT_CHECK_EQ("dt-reg-base",
			    ((unsigned long)gt_fdt32(&reg[0]) << 32) | gt_fdt32(&reg[1]),
			    IMSIC_BASE);
		GT_CHECK_EQ("dt-reg-size", gt_fdt32(&reg[3]), nr * IMSIC_PAGE);
	}
	GT_CHECK_GE("dt-num-ids", ids ? gt_fdt32(ids) : 0, 63);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	uint64_t sec = gt_timebase(), worst = 0, t0;
	unsigned long other = hartid ^ 1, i, base;

	(void)fdt;
	boot = hartid;
	if (gt_arg_has("imsic.busy"))
		busy();
	check_dt(gt_nr_harts());
	gt_irq_register(IRQ_S_EXT, ext_irq);
	if (gt_arg_has("imsic.rogue"))
		rogue();
	GT_CHECK_EQ("file-setup", file_setup(), 1);

	/* an MSI to itself: pending in eip while SEIE is off, taken once it is on */
	csr_clear(sie, SIE_SEIE);
	msi(hartid, ID_PING);
	msi(hartid, ID_OFF);
	GT_CHECK_EQ("eip-pending", ireg_read(IMSIC_EIP0) & (1UL << ID_PING | 1UL << ID_OFF),
		    1UL << ID_PING | 1UL << ID_OFF);
	GT_CHECK_EQ("not-taken-while-off", gt_atomic_load(&got[hartid]), 0);
	csr_set(sie, SIE_SEIE);
	gt_wait_ge(&got[hartid], 1, sec / 10);
	GT_CHECK_EQ("self-msi", gt_atomic_load(&got[hartid]), 1);
	GT_CHECK_EQ("claimed", ireg_read(IMSIC_EIP0) & (1UL << ID_PING), 0);
	GT_CHECK_EQ("disabled-id-stays-pending", ireg_read(IMSIC_EIP0) & (1UL << ID_OFF),
		    1UL << ID_OFF);
	ireg_write(IMSIC_EIP0, 0);

	GT_CHECK_SBI("start-peer", gt_hart_start(other, peer, 0), SBI_SUCCESS);
	GT_CHECK_EQ("peer-ready", gt_wait_ge(&peer_ready, 1, 5 * sec), 1);
	GT_CHECK_EQ("peer-file-setup", gt_atomic_load(&peer_setup_ok), 1);
	if (gt_arg_has("imsic.count"))
		GT_CHECK_EQ("peer-counts", gt_atomic_load(&peer_counts), 1);

	/* ping-pong: each MSI wakes a vCPU that waits in WFI */
	base = gt_atomic_load(&got[hartid]);
	for (i = 0; i < ROUNDS; i++) {
		/* spread over 54 ms: imsic-wake's busy guest is busy, then asleep, in turn */
		gt_delay_ticks(gt_us_to_ticks(1700));
		t0 = gt_rdtime();
		sent_at = t0;
		msi(other, ID_PING);
		if (!gt_wfi_wait_ge(&got[hartid], base + i + 1, sec))
			break;
		if (gt_rdtime() - t0 > worst)
			worst = gt_rdtime() - t0;
	}
	gt_printf("imsic: %lu round trips, the slowest %lu us; the slowest ping %lu us\n", i,
		  (unsigned long)(worst * 1000000 / sec),
		  (unsigned long)(peer_worst * 1000000 / sec));
	GT_CHECK_EQ("peer-got", gt_atomic_load(&got[other]), ROUNDS);
	GT_CHECK_EQ("boot-got", gt_atomic_load(&got[hartid]) - base, ROUNDS);
	if (gt_arg_has("imsic.max-us=")) {
		GT_CHECK_LE("ping-max-us", peer_worst * 1000000 / sec,
			    gt_arg_ul("imsic.max-us=", 0));
		/* while the other guest of imsic-wake was still there (it stops at 2 s) */
		GT_CHECK_LE("before-busy-ends", gt_rdtime(), 3 * sec / 2);
	}
	gt_atomic_store(&stop, 1);
	msi(other, ID_PING);
	GT_CHECK_EQ("peer-stopped", gt_wait_hart_state(other, SBI_HSM_STATE_STOPPED, sec),
		    SBI_HSM_STATE_STOPPED);
	GT_CHECK_EQ("no-foreign-ids", gt_atomic_load(&foreign[hartid]) + foreign[other], 0);
	gt_exit();
}
