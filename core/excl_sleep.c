// SPDX-License-Identifier: BSD-2-Clause
/*
 * Exclusive counting's timed sleeps (core/excl.c is the rest of the
 * workaround): how a halted hart's own timer is stood in for by the harts
 * that run, under QEMU -icount, and the timer of a hart that runs.
 */
#include "arch/riscv/timer.h"
#include "core/excl.h"
#include "core/hart.h"
#include "core/vcpu.h"
#include "vpmu/vpmu.h"

/*
 * Timed sleeps. Under QEMU -icount one thread runs all harts in turn
 * (accel/tcg/tcg-accel-ops-rr.c): a busy hart runs up to half the time to
 * the next timer deadline of the machine (icount_percpu_budget) before a
 * halted hart is looked at again, so a halted hart's own timer wakes it up
 * to ~50 ms late (the next deadline is often QEMU's 100 ms round-robin
 * kick). An IPI ends the busy hart's run at once. So a hart that sleeps
 * until a time says so (wake_at, bit in `sleepers`), and a hart that runs
 * arms its own timer for that time too and wakes the sleeper with an IPI.
 * Only where that quirk is (excl_enabled: the -icount probe).
 */
static volatile unsigned long sleepers;

/* Halt until an interrupt; the timer is armed for `until` (UINT64_MAX: not) */
unsigned long excl_sleep(struct hart *h, uint64_t until, bool rest)
{
	unsigned long sip = 0;

	if (excl_enabled && until != UINT64_MAX) {
		h->excl.wake_at = until;
		__atomic_or_fetch(&sleepers, BIT(h->index), __ATOMIC_SEQ_CST);
		/* a running hart whose timer is set later learns of us now */
		for (unsigned int i = 0; i < nr_harts; i++)
			if (i != h->index && !(sleepers & BIT(i)) &&
			    (hart_status[i].doing == HART_GUEST ||
			     hart_status[i].doing == HART_HYPERVISOR) &&
			    harts[i].timer_armed > until)
				hart_send_ipi(harts[i].hartid);
	}
	if (rest)
		timer_wait_ipi(true, NULL, 0);
	else
		sip = timer_idle();
	__atomic_and_fetch(&sleepers, ~BIT(h->index), __ATOMIC_SEQ_CST);
	return sip;
}

bool excl_sleeping(unsigned int index)
{
	return (__atomic_load_n(&sleepers, __ATOMIC_RELAXED) >> index) & 1;
}

/* The earliest wake-up this hart must stand in for */
static uint64_t excl_sleepers_next(const struct hart *h)
{
	unsigned long s = __atomic_load_n(&sleepers, __ATOMIC_ACQUIRE) & ~BIT(h->index);
	uint64_t next = UINT64_MAX;

	for (unsigned int i = 0; s; i++, s >>= 1)
		if ((s & 1) && harts[i].excl.wake_at < next)
			next = harts[i].excl.wake_at;
	return next;
}

void excl_wake_sleepers(const struct hart *h, uint64_t now)
{
	unsigned long s = __atomic_load_n(&sleepers, __ATOMIC_ACQUIRE) & ~BIT(h->index);

	for (unsigned int i = 0; s; i++, s >>= 1)
		if ((s & 1) && harts[i].excl.wake_at <= now &&
		    (__atomic_fetch_and(&sleepers, ~BIT(i), __ATOMIC_SEQ_CST) & BIT(i)))
			hart_send_ipi(harts[i].hartid);
}

void excl_arm_timer(struct hart *h, uint64_t next)
{
	uint64_t s = excl_sleepers_next(h);

	if (s < next)
		next = s;
	/*
	 * The token's holder looks at the end of its turn whether others wait,
	 * and at the end of a pause while its vCPU does not count: one that
	 * counts again (a sampler's START after its STOP, every sample) has no
	 * pause left to end, and its timer fired for nothing once per sample.
	 */
	if (excl_mine(h)) {
		if (h->excl.turn_end < next)
			next = h->excl.turn_end;
		if (h->excl.pause_end && h->excl.pause_end < next && !vpmu_counting(&h->cur->vpmu))
			next = h->excl.pause_end;
	}
	hart_arm_timer(h, next);
}
