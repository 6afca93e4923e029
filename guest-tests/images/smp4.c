// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp4: every hart of the guest (4 vCPUs, shared by 2 physical harts in
 * dts/tests/smp4.dts; bootargs "vcpus=N" expects N instead) starts, adds to shared counters with amoadd, with an
 * LR/SC compare-and-swap loop and under an amoswap spinlock, while taking
 * its own periodic timer interrupts. The totals must be exact.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("smp4");

#define N_AMO  20000
#define N_CAS  5000
#define N_LOCK 2000
#define TICKS  3

static volatile unsigned long amo_counter, cas_counter, lock_counter, lock_word;
static volatile unsigned long done, ran[GT_MAX_HARTS], ticks[GT_MAX_HARTS];
static volatile unsigned long late_ticks[GT_MAX_HARTS];

static void timer_irq(unsigned long irq, struct gt_frame *f)
{
	unsigned long me = gt_hartid();

	(void)irq;
	(void)f;
	if (ticks[me] + 1 < TICKS)
		gt_sbi_set_timer(gt_rdtime() + gt_us_to_ticks(1000));
	else
		gt_sbi_set_timer(-1ULL);
	if (ticks[me] >= TICKS)
		late_ticks[me]++;
	ticks[me]++;
}

static void work(unsigned long hartid)
{
	unsigned long i, v;

	ran[hartid] = 1;
	csr_set(sie, SIE_STIE);
	gt_irq_enable();
	gt_sbi_set_timer(gt_rdtime() + gt_us_to_ticks(1000));
	for (i = 0; i < N_AMO; i++)
		gt_atomic_add(&amo_counter, 1);
	for (i = 0; i < N_CAS; i++) {
		v = gt_atomic_load(&cas_counter);
		while (!__atomic_compare_exchange_n(&cas_counter, &v, v + 1, true, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST))
			;
	}
	for (i = 0; i < N_LOCK; i++) {
		while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE))
			gt_cpu_relax();
		lock_counter = lock_counter + 1;
		__atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
	}
	gt_wfi_wait_ge(&ticks[hartid], TICKS, 10 * gt_timebase());
	gt_delay_ticks(gt_us_to_ticks(3000));
	csr_clear(sie, SIE_STIE);
	gt_atomic_add(&done, 1);
}

static void secondary(unsigned long hartid, unsigned long opaque)
{
	(void)opaque;
	work(hartid);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	unsigned long i, n = gt_nr_harts(), errors = 0, id;
	uint64_t sec = gt_timebase();
	char name[32];

	(void)fdt;
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	unsigned long want = 4;

	/* "vcpus=N" in bootargs overrides the expected 4 (dts/tests/smp8.dts) */
	for (; args && *args; args++) {
		if (args[0] == 'v' && args[1] == 'c' && args[2] == 'p' && args[3] == 'u' &&
		    args[4] == 's' && args[5] == '=') {
			want = 0;
			for (args += 6; *args >= '0' && *args <= '9'; args++)
				want = want * 10 + (unsigned long)(*args - '0');
			break;
		}
	}
	gt_printf("smp4: boot hart %lu, %lu harts (expecting %lu)\n", hartid, n, want);
	GT_CHECK_EQ("hart-count", n, want);
	gt_irq_register(IRQ_S_TIMER, timer_irq);
	for (i = 0; i < n; i++) {
		id = gt_hart_id_at(i);
		if (id != hartid && gt_hart_start(id, secondary, i).error)
			errors++;
	}
	GT_CHECK_EQ("start-errors", errors, 0);
	work(hartid);
	GT_CHECK_EQ("all-done", gt_wait_ge(&done, n, 30 * sec), 1);
	GT_CHECK_EQ("amoadd-total", gt_atomic_load(&amo_counter), n * N_AMO);
	GT_CHECK_EQ("lrsc-total", gt_atomic_load(&cas_counter), n * N_CAS);
	GT_CHECK_EQ("spinlock-total", lock_counter, n * N_LOCK);
	for (i = 0; i < n; i++) {
		id = gt_hart_id_at(i);
		gt_snprintf(name, sizeof(name), "hart%lu-ran", id);
		GT_CHECK_EQ(name, ran[id], 1);
		gt_snprintf(name, sizeof(name), "hart%lu-timer-ticks", id);
		GT_CHECK_EQ(name, ticks[id], TICKS);
		gt_snprintf(name, sizeof(name), "hart%lu-no-late-ticks", id);
		GT_CHECK_EQ(name, late_ticks[id], 0);
	}
	for (i = 0; i < n; i++) {
		id = gt_hart_id_at(i);
		if (id == hartid)
			continue;
		gt_snprintf(name, sizeof(name), "hart%lu-stopped", id);
		GT_CHECK_EQ(name, gt_wait_hart_state(id, SBI_HSM_STATE_STOPPED, 5 * sec),
			    SBI_HSM_STATE_STOPPED);
	}
}
