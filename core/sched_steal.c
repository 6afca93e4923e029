// SPDX-License-Identifier: BSD-2-Clause
/*
 * Load balancing between harts: a hart with nothing to run takes a vCPU
 * that another hart could run but does not, before it says it is idle;
 * a busy hart wakes an idle one when it has such vCPUs (sched_offer_work,
 * core/sched.c).
 */
#include "core/hart.h"
#include "core/hostdt.h"
#include "core/sched.h"
#include "core/sched_internal.h"
#include "core/vcpu.h"
#include "core/vm.h"

volatile unsigned long idle_harts;

/*
 * Take a vCPU another hart could run but is not running: runnable, not
 * pinned, and with no state live in that hart's registers. Only one lock
 * is ever held at a time, so two harts stealing from each other cannot
 * deadlock. The other hart's lock is only tried (busy set if it is held):
 * its hart holds it while it schedules, and under QEMU -icount a hart
 * spinning on it ran through its whole budget before the holder ran again
 * (an idle Linux guest's 2 vCPUs on 2 harts, 134 times in 2 s, 52 M spins:
 * its `sleep 2` cost QEMU 0.6 s of CPU, native 0.2).
 */
static struct vcpu *steal_from(struct hart *victim, bool *busy)
{
	struct vcpu **p, *v = NULL;

	if (!spin_trylock(&victim->lock)) {
		*busy = true;
		return NULL;
	}
	for (p = &victim->queue; *p; p = &(*p)->next) {
		struct vcpu *c = *p;

		if (c->state == VCPU_RUNNABLE && !c->pinned && c != victim->cur &&
		    c != hart_loaded(victim)) {
			*p = c->next;
			v = c;
			break;
		}
	}
	spin_unlock(&victim->lock);
	return v;
}

/* Attempts of steal() at a queue whose lock is held, 10 us apart */
#define STEAL_TRIES 8

/* An idle hart balances the load: returns whether it found work */
static bool steal(struct hart *h)
{
	bool busy = true;

	for (unsigned int tries = 0; busy && tries < STEAL_TRIES; tries++) {
		/* a kick (new work here, or the token taken) ends the tries */
		if (tries && hart_nap(h, host.timebase / 100000 + 1))
			return false;
		busy = false;
		for (unsigned int i = 1; i < nr_harts; i++) {
			struct hart *victim = &harts[(h->index + i) % nr_harts];
			struct vcpu *v = steal_from(victim, &busy);

			if (!v)
				continue;
			/* the guest's FENCE.Is so far were the other hart's */
			vcpu_arch_request_fence_i(&v->arch);
			sched_add(h, v);
			/* verbose only: on a guest's console (an interactive shell) they are noise */
			if (v->moves++ < 4 && host.verbose)
				hv_printf("pmuvisor: guest %s vcpu %u moved from hart %lu to hart "
					  "%lu%s\n",
					  v->vm->name, v->id, victim->hartid, h->hartid,
					  v->moves == 4 ? " (further moves not logged)" : "");
			return true;
		}
	}
	return false;
}

bool sched_steal_or_say_idle(struct hart *h)
{
	if (steal(h))
		return true;
	__atomic_or_fetch(&idle_harts, BIT(h->index), __ATOMIC_SEQ_CST);
	/* a vCPU may have become stealable just before we said so */
	if (steal(h)) {
		__atomic_and_fetch(&idle_harts, ~BIT(h->index), __ATOMIC_SEQ_CST);
		return true;
	}
	return false;
}
