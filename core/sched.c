// SPDX-License-Identifier: BSD-2-Clause
/*
 * Per-hart round-robin scheduling of vCPUs. sched_switch() is the single
 * point where one vCPU's state leaves the hart and another's arrives: the
 * PMU save/restore hangs here too.
 */
#include "arch/riscv/cpu.h"
#include "arch/riscv/csr.h"
#include "core/ecall.h"
#include "core/hart.h"
#include "core/hostdt.h"
#include "arch/riscv/sbi_call.h"
#include "core/sched.h"
#include "arch/riscv/timer.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "vpmu/vpmu_sbi.h"

struct hart harts[HART_MAX];
struct hart_status hart_status[HART_MAX];

static void status_doing(struct hart *h, enum hart_doing d)
{
	hart_status[h->index].doing = d;
	hart_status[h->index].since = timer_now();
}
unsigned int nr_harts;

static unsigned long slice_ticks;
/* how soon to look again at a vCPU with an undelivered software interrupt */
#define RECHECK_TICKS 100

void sched_add(struct hart *h, struct vcpu *v)
{
	struct vcpu **p;

	spin_lock(&h->lock);
	for (p = &h->queue; *p; p = &(*p)->next)
		;
	*p = v;
	v->next = NULL;
	v->hart = h;
	/* before this hart reads v's pending interrupts: vcpu_raise_irq's other side */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	spin_unlock(&h->lock);
	slice_ticks = host.timebase / 100; /* 10 ms */
}

/*
 * Take a vCPU another hart could run but is not running: runnable, not
 * pinned, and with no state live in that hart's registers. Only one lock
 * is ever held at a time, so two harts stealing from each other cannot
 * deadlock.
 */
static struct vcpu *steal_from(struct hart *victim)
{
	struct vcpu **p, *v = NULL;

	spin_lock(&victim->lock);
	for (p = &victim->queue; *p; p = &(*p)->next) {
		struct vcpu *c = *p;

		if (c->state == VCPU_RUNNABLE && !c->pinned && c != victim->cur &&
		    c != victim->loaded) {
			*p = c->next;
			v = c;
			break;
		}
	}
	spin_unlock(&victim->lock);
	return v;
}

/* Harts sleeping with nothing to run: a busy hart wakes one to take work */
static volatile unsigned long idle_harts;

/*
 * Exclusive counting. Under QEMU -icount a hart's mode-filtered counters
 * advance with every instruction any hart executes while that hart is in
 * the counted mode (QEMU's target/riscv/pmu.c adds global icount deltas;
 * the vPMU measures it at boot: vpmu_counts_other_harts()). A vCPU with
 * running hardware counters would count other guests' work, so it runs
 * only while every other hart is halted: its hart takes the token
 * (excl_token), makes the others park (halt, waiting for an IPI only) and
 * enters its guest once each has acknowledged. They run again when it
 * releases the token: when its vCPU stops counting, leaves the hart, or has
 * had a slice while others wait (then it rests a slice itself, for
 * fairness). While it holds the token no other hart may execute a single
 * instruction, so nothing wakes a parked hart but the release: no timer,
 * and no IPI (kicks to parked harts are deferred to the release).
 */
/*
 * The token: which hart holds it (bits 0-15: hart index + 1, 0 for none)
 * and how many times it has been taken (the rest). One word, so that a
 * hart that sees an owner also sees that owner's acquisition: a parked
 * hart acknowledges exactly the acquisition that parks it, by the store
 * right before its wfi, and only when no IPI is pending. Once every other
 * hart has acknowledged, none of them executes anything until the release.
 */
static volatile unsigned long excl_token;
static volatile unsigned long excl_parked; /* harts halted */
static volatile unsigned long excl_want;   /* ... of which these have work to do */

#define EXCL_OWNER_BITS 16

static int excl_owner(unsigned long token)
{
	return (int)(token & (BIT(EXCL_OWNER_BITS) - 1)) - 1;
}

static unsigned long excl_gen(unsigned long token)
{
	return token >> EXCL_OWNER_BITS;
}

static bool excl_mine(const struct hart *h)
{
	return excl_owner(__atomic_load_n(&excl_token, __ATOMIC_ACQUIRE)) == (int)h->index;
}

static bool excl_blocks(const struct hart *h, unsigned long token)
{
	int o = excl_owner(token);

	return o >= 0 && o != (int)h->index;
}

static bool excl_blocked(const struct hart *h)
{
	return excl_blocks(h, __atomic_load_n(&excl_token, __ATOMIC_ACQUIRE));
}

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

static bool excl_enabled;

/* Halt until an interrupt; the timer is armed for `until` (UINT64_MAX: not) */
static unsigned long sched_sleep(struct hart *h, uint64_t until, bool rest)
{
	unsigned long sip = 0;

	if (excl_enabled && until != UINT64_MAX) {
		h->wake_at = until;
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

/* The earliest wake-up this hart must stand in for */
static uint64_t sched_sleepers_next(const struct hart *h)
{
	unsigned long s = __atomic_load_n(&sleepers, __ATOMIC_ACQUIRE) & ~BIT(h->index);
	uint64_t next = UINT64_MAX;

	for (unsigned int i = 0; s; i++, s >>= 1)
		if ((s & 1) && harts[i].wake_at < next)
			next = harts[i].wake_at;
	return next;
}

static void sched_wake_sleepers(const struct hart *h, uint64_t now)
{
	unsigned long s = __atomic_load_n(&sleepers, __ATOMIC_ACQUIRE) & ~BIT(h->index);

	for (unsigned int i = 0; s; i++, s >>= 1)
		if ((s & 1) && harts[i].wake_at <= now &&
		    (__atomic_fetch_and(&sleepers, ~BIT(i), __ATOMIC_SEQ_CST) & BIT(i)))
			hart_send_ipi(harts[i].hartid);
}

/* Arm the hart timer for t unless it fires earlier already */
static void sched_arm_before(struct hart *h, uint64_t t)
{
	if (t < h->timer_armed) {
		h->timer_armed = t;
		timer_arm(t);
	}
}

/* Halt, waiting for IPIs only, as long as another hart holds the token */
static void sched_park(struct hart *h)
{
	unsigned long token;
	bool want = false;

	/*
	 * A vCPU waiting here for an interrupt may be what the owner's guest
	 * waits for (an IPI answer): any live vCPU counts as work, since
	 * kicks to parked harts are deferred to the release.
	 */
	for (struct vcpu *v = h->queue; v && !want; v = v->next)
		want = v->state != VCPU_DEAD && v->state != VCPU_STOPPED;
	if (want)
		__atomic_or_fetch(&excl_want, BIT(h->index), __ATOMIC_SEQ_CST);
	h->park_gen = ~0UL;
	status_doing(h, HART_PARKED);
	__atomic_or_fetch(&excl_parked, BIT(h->index), __ATOMIC_SEQ_CST);
	while (token = __atomic_load_n(&excl_token, __ATOMIC_ACQUIRE), excl_blocks(h, token))
		timer_wait_ipi(false, &h->park_gen, excl_gen(token));
	if (h->fence_pending) {
		h->fence_pending = false;
		hart_fence_guests();
	}
	h->park_gen = ~0UL;
	__atomic_and_fetch(&excl_parked, ~BIT(h->index), __ATOMIC_SEQ_CST);
	__atomic_and_fetch(&excl_want, ~BIT(h->index), __ATOMIC_SEQ_CST);
}

static void sched_unload(struct hart *h);

static void sched_excl_release(struct hart *h)
{
	unsigned long parked, token = __atomic_load_n(&excl_token, __ATOMIC_ACQUIRE);
	unsigned int i;

	if (excl_owner(token) != (int)h->index)
		return;
	/*
	 * Counters never run without the token: QEMU re-arms the overflow timer
	 * of an enabled counter that does not advance as often as every
	 * nanosecond, which starves the other harts of their -icount slices.
	 */
	spin_lock(&h->lock);
	if (h->loaded && vpmu_counting(&h->loaded->vpmu)) {
		sched_unload(h);
		h->resched = true; /* h->cur must be loaded again before it runs */
	}
	spin_unlock(&h->lock);
	h->excl_counter = NULL;
	__atomic_store_n(&excl_token, excl_gen(token) << EXCL_OWNER_BITS, __ATOMIC_RELEASE);
	parked = __atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE);
	for (i = 0; i < nr_harts; i++)
		if (parked & BIT(i))
			hart_send_ipi(harts[i].hartid);
}

/*
 * Take the token and wait until every other hart has parked; false if it
 * was taken (we parked until its release: look at the queue again).
 * Harts already parked are not sent an IPI: one arriving after their
 * acknowledgement would wake them while we count. (A parked hart that has
 * not acknowledged this acquisition is awake already: the release that
 * ended the previous one sent it an IPI.)
 *
 * The turn starts once the others have parked, not when the token is taken:
 * under -icount the wait can be long (we spin through QEMU's whole budget
 * for this hart before the hart we wait for runs again, tens of ms), and a
 * turn counted from the take would be over before our vCPU ran: we would
 * release at once, rest, take it again, and the vCPU never run (seen: a
 * pmu-mux vCPU starved for minutes).
 */
static bool sched_excl_acquire(struct hart *h)
{
	unsigned long others = (BIT(nr_harts) - 1) & ~BIT(h->index);
	unsigned long token = __atomic_load_n(&excl_token, __ATOMIC_ACQUIRE), gen;

	if (excl_owner(token) >= 0 ||
	    !__atomic_compare_exchange_n(&excl_token, &token,
					 ((excl_gen(token) + 1) << EXCL_OWNER_BITS) |
						 (h->index + 1),
					 false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		sched_park(h);
		return false;
	}
	gen = excl_gen(token) + 1;
	for (unsigned int i = 0; i < nr_harts; i++)
		if ((others & BIT(i)) &&
		    !(__atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE) & BIT(i)))
			hart_send_ipi(harts[i].hartid);
	for (unsigned int i = 0; i < nr_harts; i++)
		while ((others & BIT(i)) &&
		       (!(__atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE) & BIT(i)) ||
			__atomic_load_n(&harts[i].park_gen, __ATOMIC_ACQUIRE) != gen))
			;
	h->excl_turn_end = timer_now() + slice_ticks;
	sched_arm_before(h, h->excl_turn_end);
	return true;
}

/*
 * A vCPU that stops its counters keeps the token for EXCL_PAUSE_TICKS: a
 * guest's overflow handler stops every counter, takes its sample and starts
 * them again. Releasing at the stop would make the start wait for another
 * hart's whole turn, and Linux, timing its handler, would lower
 * perf_event_max_sample_rate and throttle the event (lost samples).
 */
#define EXCL_PAUSE_TICKS 500 /* 50 us at 10 MHz */

static bool sched_excl_pause(struct hart *h, struct vcpu *v, unsigned long now)
{
	if (!excl_mine(h) || h->excl_counter != v)
		return false;
	if (!h->excl_pause_end) {
		h->excl_pause_end = now + EXCL_PAUSE_TICKS;
		sched_arm_before(h, h->excl_pause_end);
	}
	return now < h->excl_pause_end;
}

/* Before entering v: may it run now? False: we waited, look at the queue again */
static bool sched_excl_enter(struct hart *h, struct vcpu *v, unsigned long now)
{
	if (!vpmu_counting(&v->vpmu)) {
		if (sched_excl_pause(h, v, now))
			return true;
		sched_excl_release(h);
		return !excl_blocked(h);
	}
	h->excl_counter = v;
	h->excl_pause_end = 0;
	if (excl_mine(h)) {
		if (now < h->excl_turn_end)
			return true;
		if (!__atomic_load_n(&excl_want, __ATOMIC_ACQUIRE)) {
			/* nobody waits: another turn, and a look again at its end */
			h->excl_turn_end = now + slice_ticks;
			sched_arm_before(h, h->excl_turn_end);
			return true;
		}
		/* others have waited a whole turn: theirs now */
		sched_excl_release(h);
		h->excl_rest_until = now + slice_ticks;
	}
	if (now < h->excl_rest_until) {
		/*
		 * Rest like an idle hart, not parked: whoever takes the token
		 * meanwhile sends an IPI and we park then.
		 */
		h->timer_armed = h->excl_rest_until;
		timer_arm(h->excl_rest_until);
		sched_sleep(h, h->excl_rest_until, true);
		return false;
	}
	return sched_excl_acquire(h);
}

/*
 * v's hardware counters are about to start (SBI START on its own hart):
 * take the token first, so that they never run while another hart does.
 */
static __attribute__((noinline)) void sched_excl_wait_turn(struct hart *h)
{
	/* from the PMU lane too, which leaves hart_status at "guest": a hang here must say otherwise */
	if (!excl_mine(h))
		status_doing(h, HART_HYPERVISOR);
	while (!excl_mine(h))
		sched_excl_acquire(h);
}

/* On every counter start: no frame unless exclusive counting is on */
void sched_excl_counting_starts(struct vcpu *v)
{
	(void)v;
	if (excl_enabled)
		sched_excl_wait_turn(this_hart());
}

/* Whether a kick to hart h needs an IPI: a parked hart looks at its queue when released */
bool sched_needs_ipi(const struct hart *h)
{
	return !excl_enabled ||
	       !(__atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE) & BIT(h->index)) ||
	       !excl_blocked(h);
}

/*
 * A guest's remote fence must not wake harts parked while this one counts:
 * what a woken hart executes (OpenSBI's IPI handler, some 400 instructions)
 * QEMU's -icount mode filter charges to the counting vCPU. Nothing runs on a
 * parked hart before the release, so it fences when it leaves its park.
 */
unsigned long sched_fence_now(unsigned long hmask)
{
	struct hart *me = this_hart();
	unsigned long parked;

	if (!excl_enabled || !excl_mine(me))
		return hmask;
	parked = __atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE);
	for (unsigned int i = 0; i < nr_harts; i++)
		if (i != me->index && (parked & BIT(i)) && (hmask & BIT(harts[i].hartid))) {
			harts[i].fence_pending = true;
			hmask &= ~BIT(harts[i].hartid);
		}
	return hmask;
}

void sched_excl_init(void)
{
	excl_enabled = vpmu_counts_other_harts() && nr_harts > 1;
	vpmu_set_exclusive(excl_enabled);
	for (unsigned int i = 0; i < nr_harts; i++)
		harts[i].excl = excl_enabled;
}

/*
 * Called when this hart switches vCPUs: if it still has runnable vCPUs
 * another hart could take, wake one idle hart to steal them. Idle harts do
 * not poll: under QEMU -icount any instruction they ran would be charged
 * to the counters of the vCPUs running elsewhere.
 */
static void sched_offer_work(struct hart *h)
{
	unsigned long idle = __atomic_load_n(&idle_harts, __ATOMIC_SEQ_CST) & ~BIT(h->index);
	bool spare = false;

	if (!idle ||
	    (excl_enabled && excl_owner(__atomic_load_n(&excl_token, __ATOMIC_ACQUIRE)) >= 0))
		return;
	for (struct vcpu *v = h->queue; v && !spare; v = v->next)
		spare = v != h->cur && v->state == VCPU_RUNNABLE && !v->pinned;
	if (!spare)
		return;
	for (unsigned int i = 0; i < nr_harts; i++)
		if (idle & BIT(i)) {
			hart_send_ipi(harts[i].hartid);
			return;
		}
}

/* An idle hart balances the load: returns whether it found work */
static bool sched_steal(struct hart *h)
{
	for (unsigned int i = 1; i < nr_harts; i++) {
		struct hart *victim = &harts[(h->index + i) % nr_harts];
		struct vcpu *v = steal_from(victim);

		if (!v)
			continue;
		sched_add(h, v);
		if (v->moves++ < 4)
			hv_printf("pmuvisor: guest %s vcpu %u moved from hart %lu to hart %lu%s\n",
				  v->vm->name, v->id, victim->hartid, h->hartid,
				  v->moves == 4 ? " (further moves not logged)" : "");
		return true;
	}
	return false;
}

static void sched_unload(struct hart *h)
{
	struct vcpu *v = h->loaded;

	if (!v)
		return;
	vpmu_vcpu_put(&v->vpmu); /* an overflow found here raises its LCOFI itself */
	vcpu_arch_put(v);
	h->loaded = NULL;
}

/* The switch point: the outgoing vCPU's state is saved, the next one's loaded */
static void sched_switch(struct hart *h, struct vcpu *next)
{
	if (h->cur != next) {
		struct hart_status *st = &hart_status[h->index];

		__builtin_memcpy(st->guest, next->vm->name, sizeof(st->guest) - 1);
		st->guest[sizeof(st->guest) - 1] = '\0';
		st->vcpu = next->id;
	}
	if (h->loaded != next) {
		sched_unload(h);
		vcpu_arch_load(next);
		/* loaded before its PMU: an overflow found there raises its LCOFI in the CSRs */
		h->loaded = next;
		vpmu_vcpu_load(&next->vpmu);
	}
	h->cur = next;
}

/* Apply what other harts and the vCPUs' own calls asked for */
static void sched_poll(struct hart *h, unsigned long now)
{
	for (struct vcpu *v = h->queue; v; v = v->next) {
		struct vm *vm = v->vm;
		int state = __atomic_load_n(&v->state, __ATOMIC_ACQUIRE);

		if (state == VCPU_DEAD)
			continue;
		uint64_t last_sbi = vm->last_sbi; /* another hart may set it after `now` */

		if (vm->watchdog_ticks && vm->state == VM_RUNNING && now > last_sbi &&
		    now - last_sbi > vm->watchdog_ticks) {
			char why[80];

			snprintf(why, sizeof(why),
				 "vcpu %u stopped: watchdog: no SBI call for %lu ms", v->id,
				 (unsigned long)vm->cfg->watchdog_ms);
			vm_request_stop(vm, VM_STOP_FAILED, why);
		}
		if (__atomic_load_n(&vm->state, __ATOMIC_ACQUIRE) == VM_STOPPING) {
			if (h->loaded == v)
				sched_unload(h);
			vpmu_vcpu_reset(&v->vpmu);
			v->state = VCPU_DEAD;
			if (h->cur == v)
				h->cur = NULL;
			if (__atomic_sub_fetch(&vm->live_vcpus, 1, __ATOMIC_ACQ_REL) == 0)
				vm_stopped(vm);
			continue;
		}
		switch (state) {
		case VCPU_START_PENDING:
			if (h->loaded == v)
				sched_unload(h);
			vcpu_arch_reset(v, v->start_pc, v->start_arg);
			v->state = VCPU_RUNNABLE;
			break;
		case VCPU_SUSPENDED_NR:
			if (vcpu_arch_irq_pending(v, now)) {
				if (h->loaded == v)
					sched_unload(h);
				vcpu_arch_reset(v, v->resume_pc, v->start_arg);
				v->state = VCPU_RUNNABLE;
			}
			break;
		case VCPU_WFI:
		case VCPU_SUSPENDED:
			if (vcpu_arch_irq_pending(v, now))
				v->state = VCPU_RUNNABLE;
			break;
		default:
			break;
		}
	}
}

static struct vcpu *sched_pick(struct hart *h)
{
	struct vcpu *start = h->cur && h->cur->next ? h->cur->next : h->queue;
	struct vcpu *v = start;

	if (!start)
		return NULL;
	do {
		if (v->state == VCPU_RUNNABLE)
			return v;
		v = v->next ? v->next : h->queue;
	} while (v != start);
	return NULL;
}

/* Program the hart's timer for the next event it must act on */
static void sched_arm_timer(struct hart *h)
{
	uint64_t next = UINT64_MAX;
	bool others = false;

	for (struct vcpu *v = h->queue; v; v = v->next) {
		const struct vm *vm = v->vm;

		/*
		 * A guest spinning with interrupts off must not keep the hart, and
		 * one whose harts all stopped must still be found silent: on a hart
		 * with nothing else to wake it (no Sscofpmf: no vPMU deadline) it
		 * used to sleep for good (model-nosscof-hostile, guest hartstop).
		 */
		if (v->state != VCPU_DEAD && vm->watchdog_ticks && vm->state == VM_RUNNING) {
			uint64_t silent = vm->last_sbi + vm->watchdog_ticks + 1;

			if (silent < next)
				next = silent;
		}
		if (v == h->cur) {
			uint64_t d = vcpu_arch_timer_deadline(&v->arch);

			/* Sstc: the running vCPU's own timer needs no help from us */
			if (!host.ext[HOST_EXT_SSTC] && d < next)
				next = d;
			if (vcpu_arch_wants_recheck(&v->arch) && timer_now() + RECHECK_TICKS < next)
				next = timer_now() + RECHECK_TICKS;
			/* a counter that may wrap without the platform saying so */
			if (vpmu_deadline(&v->vpmu) < next)
				next = vpmu_deadline(&v->vpmu);
			continue;
		}
		if (v->state == VCPU_RUNNABLE)
			others = true;
		else if (v->state == VCPU_WFI || v->state == VCPU_SUSPENDED ||
			 v->state == VCPU_SUSPENDED_NR) {
			uint64_t d = vcpu_arch_timer_deadline(&v->arch);

			if (d < next)
				next = d;
		}
	}
	if (others && h->cur && h->slice_end < next)
		next = h->slice_end;
	if (excl_enabled && h->cur) {
		uint64_t s = sched_sleepers_next(h);

		if (s < next)
			next = s;
	}
	/* the token's holder looks at the end of its turn (and of a pause) whether others wait */
	if (excl_enabled && h->cur && excl_mine(h)) {
		if (h->excl_turn_end < next)
			next = h->excl_turn_end;
		if (h->excl_pause_end && h->excl_pause_end < next)
			next = h->excl_pause_end;
	}
	if (next != h->timer_armed) {
		h->timer_armed = next;
		timer_arm(next);
	}
}

static volatile unsigned int harts_settled;

static void sched_settle(struct hart *h)
{
	if (h->settled)
		return;
	h->settled = true;
	__atomic_add_fetch(&harts_settled, 1, __ATOMIC_SEQ_CST);
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

void sched_wait_settled(unsigned int others)
{
	uint64_t deadline = timer_now() + host.timebase; /* 1 s */

	while (__atomic_load_n(&harts_settled, __ATOMIC_SEQ_CST) < others)
		if (timer_now() > deadline) {
			hv_printf("pmuvisor: warning: %u of %u harts started\n", harts_settled,
				  others);
			return;
		}
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

static void sched_probe_poll(void)
{
	unsigned long n = __atomic_exchange_n(&probe_iters, 0, __ATOMIC_ACQ_REL);

	if (!n)
		return;
	cpu_spin(n);
	__atomic_store_n(&probe_done, true, __ATOMIC_RELEASE);
	hart_send_ipi(probe_from);
}

/* Sleep until an interrupt; an overflow belongs to the vCPU still loaded */
static void sched_idle(struct hart *h)
{
	unsigned long sip;

	sched_settle(h);
	sip = sched_sleep(h, h->timer_armed, false);

	if (sip & BIT(IRQ_S_TIMER))
		h->timer_armed = UINT64_MAX;
	if (sip & BIT(IRQ_PMU_OVF))
		vpmu_overflow_irq(h->loaded ? &h->loaded->vpmu : NULL);
	sched_probe_poll();
}

void sched_timer_tick(struct hart *h)
{
	timer_ack();
	h->timer_armed = UINT64_MAX;
	if (timer_now() >= h->slice_end)
		h->resched = true;
}

static void sched_see(const struct vcpu *v, struct sched_seen *s)
{
	s->timer = vcpu_arch_timer_deadline(&v->arch);
	s->pmu_deadline = vpmu_deadline(&v->vpmu);
	s->recheck = vcpu_arch_wants_recheck(&v->arch);
	/* only exclusive counting asks whether the vCPU counts */
	s->counting = excl_enabled && vpmu_counting(&v->vpmu);
}

/*
 * After an SBI call or an emulated instruction: back into the guest at once
 * when the loop would decide nothing new. What other harts ask for comes
 * with an IPI (an interrupt exit: the long way); a call that changes what
 * this hart runs sets resched or the vCPU's state; the timer stays right as
 * long as the deadlines it was armed for stay (a later watchdog heartbeat
 * only makes it fire early). Exclusive counting: the vCPU keeps counting
 * within the turn it holds, or keeps not counting without the token.
 */
static __attribute__((noinline)) bool sched_excl_unchanged(struct hart *h, struct vcpu *v,
							   const struct sched_seen *was)
{
	bool counting = vpmu_counting(&v->vpmu);

	if (counting != was->counting)
		return false;
	return counting ? excl_mine(h) && timer_now() < h->excl_turn_end : !excl_mine(h);
}

/*
 * What a PMU call can change of what the loop watches, but a software LCOFI
 * (the PMU lane looks at that only when an LCOFI waits): resched and excl
 * are side by side, one load for both
 */
static inline bool sched_pmu_call_unchanged(struct hart *h, struct vcpu *v,
					    const struct sched_seen *was)
{
	if (h->resched || h->excl) {
		if (h->resched || !sched_excl_unchanged(h, v, was))
			return false;
	}
	return vpmu_deadline(&v->vpmu) == was->pmu_deadline;
}

/* ... and a software LCOFI's recheck: what sched_fast_return asks of the vPMU after other exits */
static inline bool sched_pmu_unchanged(struct hart *h, struct vcpu *v, const struct sched_seen *was)
{
	return sched_pmu_call_unchanged(h, v, was) &&
	       vcpu_arch_wants_recheck(&v->arch) == was->recheck;
}

/* Inline: the trap vector's short way asks this after every SBI call */
static inline bool sched_fast_return(struct hart *h, struct vcpu *v, const struct sched_seen *was)
{
	const struct vcpu_arch *a = &v->arch;

	if ((a->ctx.scause & CAUSE_IRQ_FLAG) || h->cur != v || v->state != VCPU_RUNNABLE ||
	    v->vm->state != VM_RUNNING || vcpu_arch_timer_deadline(a) != was->timer)
		return false;
	return sched_pmu_unchanged(h, v, was);
}

/* Before every entry but the PMU lane's: the interrupts to inject, the arch's other entry work */
static void sched_before_entry(struct hart *h, struct vcpu *v)
{
	struct hart_status *st = h->status;

	st->doing = HART_GUEST;
	st->entries++;
	if (v->pending_irqs || vcpu_arch_entry_work(&v->arch))
		vcpu_arch_prepare_entry(v);
}

static void sched_after_exit(struct hart *h, struct vcpu *v)
{
	struct hart_status *st = h->status;

	st->doing = HART_HYPERVISOR;
	st->last_cause = vcpu_ctx(v)->scause;
	st->last_pc = vcpu_ctx(v)->sepc;
}

/* Any other SBI call: one turn of sched_enter_guest's loop, as sched_fast_return allows */
static __attribute__((noinline)) struct vcpu_ctx *sched_sbi_ecall(struct vcpu_ctx *c)
{
	struct vcpu *v = container_of(c, struct vcpu, arch.ctx);
	struct hart *h = this_hart();

	sched_after_exit(h, v);
	vcpu_handle_ecall(v);
	if (!sched_fast_return(h, v, &h->seen)) {
		h->exit_handled = true;
		return NULL;
	}
	sched_before_entry(h, v);
	return c;
}

/*
 * The trap vector's short way for an SBI call (arch/riscv/entry.S): only the
 * registers a C call may clobber are saved, which is all an SBI call reads
 * and writes. The call is answered and the context returned to resume at
 * once, or NULL: the scheduler must look; the vector saves the rest and
 * ctx_enter_guest returns, and the loop does not answer the call again.
 *
 * Any call but a PMU one goes on to sched_sbi_ecall. This function is the
 * PMU lane: perf's every event switch is a few SBI PMU calls, so they skip
 * what the others need. The PMU adapter is called without the table,
 * and afterwards only what a PMU call can change is looked at: whether it
 * asked for the scheduler (restart), the vPMU's deadline, exclusive
 * counting; then the arch's entry work if there is an LCOFI to deliver. A
 * software LCOFI it raised that the guest cannot take yet sends it to the
 * loop, which re-checks soon (recheck). The rest of the entry work needs no
 * look: interrupts other harts posted (pending_irqs) come with an IPI, and
 * the hart's timer is armed for the guest's (non-Sstc) timer, so the guest
 * exits again at once for either. A PMU call changes no vCPU or VM state,
 * no guest timer and not the hart's vCPU. hart_status keeps saying "guest":
 * to a hang report the call is part of the guest's turn.
 */
struct vcpu_ctx *sched_guest_ecall(struct vcpu_ctx *c)
{
	struct vcpu *v = container_of(c, struct vcpu, arch.ctx);
	struct hart *h;

	if (c->regs[17] != SBI_EXT_PMU) /* a tail call, before this lane's frame is built */
		return sched_sbi_ecall(c);
	vcpu_ecall_begin(v);
	vcpu_ecall_end(v, vpmu_sbi_call(&v->vpmu, c->regs[16], &c->regs[10]));
	/* the hart looked up again after each call: no register keeps it across one */
	h = this_hart();
	if (unlikely(!sched_pmu_call_unchanged(h, v, &h->seen)))
		goto to_loop;
	if (unlikely(vcpu_arch_lcofi_work(&v->arch))) {
		vcpu_arch_prepare_entry(v);
		if (vcpu_arch_wants_recheck(&v->arch) && !this_hart()->seen.recheck)
			goto to_loop;
	}
	return c;
to_loop:
	h = this_hart();
	sched_after_exit(h, v);
	h->exit_handled = true;
	return NULL;
}

static void sched_enter_guest(struct hart *h, struct vcpu *v)
{
	struct sched_seen *seen = &h->seen;

	sched_see(v, seen);
	do {
		/* the short way needs none: the call it answers folded them first */
		vcpu_fold_pending(v);
		sched_before_entry(h, v);
		vcpu_arch_run(v);
		if (h->exit_handled) { /* the short way found the scheduler must look */
			h->exit_handled = false;
			break;
		}
		sched_after_exit(h, v);
		vcpu_handle_exit(v);
	} while (sched_fast_return(h, v, seen));
}

void sched_run(struct hart *h)
{
	for (;;) {
		unsigned long now = timer_now();
		struct vcpu *v;

		if (excl_enabled) {
			sched_wake_sleepers(h, now);
			if (excl_blocked(h)) {
				sched_park(h);
				continue;
			}
		}
		spin_lock(&h->lock);
		sched_poll(h, now);
		v = h->cur;
		if (!v || v->state != VCPU_RUNNABLE || h->resched) {
			h->resched = false;
			v = sched_pick(h);
			if (!v) {
				h->cur = NULL;
				sched_arm_timer(h);
				spin_unlock(&h->lock);
				if (excl_enabled)
					sched_excl_release(h);
				if (sched_steal(h))
					continue;
				__atomic_or_fetch(&idle_harts, BIT(h->index), __ATOMIC_SEQ_CST);
				/* a vCPU may have become stealable just before we said so */
				if (sched_steal(h)) {
					__atomic_and_fetch(&idle_harts, ~BIT(h->index),
							   __ATOMIC_SEQ_CST);
					continue;
				}
				status_doing(h, HART_IDLE);
				sched_idle(h);
				__atomic_and_fetch(&idle_harts, ~BIT(h->index), __ATOMIC_SEQ_CST);
				continue;
			}
			if (excl_enabled && h->loaded != v && vpmu_counting(&v->vpmu) &&
			    !excl_mine(h)) {
				/* its counters start at load: with the token only */
				h->resched = true;
				spin_unlock(&h->lock);
				sched_excl_acquire(h);
				continue;
			}
			if (v != h->cur)
				h->slice_end = now + slice_ticks;
			sched_switch(h, v);
			sched_offer_work(h);
		}
		sched_arm_timer(h);
		spin_unlock(&h->lock);
		if (excl_enabled && !sched_excl_enter(h, v, now))
			continue;
		sched_settle(h);
		sched_enter_guest(h, v);
	}
}
