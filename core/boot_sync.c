// SPDX-License-Identifier: BSD-2-Clause
/*
 * The scheduler at boot. Under QEMU -icount any instruction a hart executes
 * is charged to the counters of whatever mode another hart counts, so the
 * boot hart waits until every other hart has settled (gone to sleep or
 * entered a guest) before guests count; and it asks a settled hart to run
 * a known amount of work, for the vPMU's probe of that charging.
 */
#include "arch/riscv/cpu.h"
#include "core/hart.h"
#include "core/hostdt.h"
#include "core/sched.h"
#include "core/sched_internal.h"
#include "arch/riscv/timer.h"

static volatile unsigned int harts_settled;
/* hart id + 1 of the hart waiting in sched_wait_settled, 0: none */
static volatile unsigned long settle_waiter;

void sched_settle_slow(struct hart *h)
{
	unsigned long w;

	h->settled = true;
	__atomic_add_fetch(&harts_settled, 1, __ATOMIC_SEQ_CST);
	w = __atomic_load_n(&settle_waiter, __ATOMIC_SEQ_CST);
	if (w)
		hart_send_ipi(w - 1);
}

/*
 * Boot hart, once the guests exist: wake the other (settled, sleeping)
 * harts so they look at their queues, and wait until each has gone back
 * to sleep or entered a guest, before any guest counts.
 */
void sched_kick_and_settle(void)
{
	struct hart *me = this_hart();
	unsigned int others = 0;

	__atomic_store_n(&harts_settled, 0, __ATOMIC_SEQ_CST);
	for (unsigned int i = 0; i < nr_harts; i++) {
		if (&harts[i] == me || !harts[i].settled)
			continue;
		harts[i].settled = false;
		others++;
		hart_send_ipi(harts[i].hartid);
	}
	sched_wait_settled(others);
}

/*
 * Halted, not spinning: under QEMU -icount one thread runs the harts in turn,
 * and a spinning hart ran through its whole budget before the hart it waited
 * for ran again (33 ms of virtual time at the first wait, 18 ms at the
 * second). Each settling hart sends an IPI; the timer ends the wait.
 */
void sched_wait_settled(unsigned int others)
{
	struct hart *me = this_hart();
	uint64_t deadline = timer_now() + host.timebase; /* 1 s */

	__atomic_store_n(&settle_waiter, me->hartid + 1, __ATOMIC_SEQ_CST);
	timer_arm(deadline);
	while (__atomic_load_n(&harts_settled, __ATOMIC_SEQ_CST) < others) {
		if (timer_now() > deadline) {
			hv_printf("pmuvisor: warning: %u of %u harts started\n", harts_settled,
				  others);
			break;
		}
		timer_idle();
	}
	__atomic_store_n(&settle_waiter, 0, __ATOMIC_SEQ_CST);
	timer_ack();
	me->timer_armed = UINT64_MAX;
}

/*
 * Boot probe of vpmu (vpmu_host_busy_other_hart): the boot hart asks an
 * idle hart to run a known amount of work while it sleeps itself.
 */
static volatile unsigned long probe_iters;
static volatile unsigned long probe_from;
static volatile bool probe_done;

bool sched_busy_other_hart(unsigned long iters)
{
	struct hart *me = this_hart();

	for (unsigned int i = 0; i < nr_harts; i++) {
		if (&harts[i] == me || !harts[i].settled)
			continue;
		probe_done = false;
		probe_from = me->hartid;
		__atomic_store_n(&probe_iters, iters, __ATOMIC_SEQ_CST);
		hart_send_ipi(harts[i].hartid);
		while (!__atomic_load_n(&probe_done, __ATOMIC_ACQUIRE))
			timer_idle();
		return true;
	}
	return false;
}

void sched_probe_poll(void)
{
	unsigned long n = __atomic_exchange_n(&probe_iters, 0, __ATOMIC_ACQ_REL);

	if (!n)
		return;
	cpu_spin(n);
	__atomic_store_n(&probe_done, true, __ATOMIC_RELEASE);
	hart_send_ipi(probe_from);
}
