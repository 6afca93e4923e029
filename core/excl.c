// SPDX-License-Identifier: BSD-2-Clause
/*
 * Exclusive counting: the workaround for platforms that charge a hart's
 * counters with other harts' work (QEMU -icount). The scheduler (core/sched.c)
 * calls in here only while excl_enabled; core/excl.h says what for.
 */
#include "arch/riscv/cpu.h"
#include "core/excl.h"
#include "core/excl_internal.h"
#include "core/hart.h"
#include "core/hostdt.h"
#include "core/sched.h"
#include "arch/riscv/timer.h"
#include "core/vcpu.h"
#include "vpmu/vpmu.h"

/*
 * Exclusive counting. Under QEMU -icount a hart's mode-filtered counters
 * advance with every instruction any hart executes while that hart is in
 * the counted mode (QEMU's target/riscv/pmu.c adds global icount deltas;
 * the vPMU measures it at boot: vpmu_counts_other_harts()). A vCPU with
 * running hardware counters would count other guests' work, so it runs
 * only while every other hart is halted: its hart takes the token
 * (excl_token), makes the others park (halt, waiting for an IPI only) and
 * enters its guest once each has acknowledged. They run again when it
 * releases the token: when its vCPU stops counting, leaves the hart, or its
 * hart's turn is over (below). While it holds the token no other hart may
 * execute a single instruction, so nothing wakes a parked hart but the
 * release: no timer, and no IPI (kicks to parked harts are deferred to the
 * release).
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
volatile unsigned long excl_parked;
volatile unsigned long excl_want;

#define EXCL_OWNER_BITS 16

static int excl_owner(unsigned long token)
{
	return (int)(token & (BIT(EXCL_OWNER_BITS) - 1)) - 1;
}

static unsigned long excl_gen(unsigned long token)
{
	return token >> EXCL_OWNER_BITS;
}

bool excl_mine(const struct hart *h)
{
	return excl_owner(__atomic_load_n(&excl_token, __ATOMIC_ACQUIRE)) == (int)h->index;
}

static bool excl_blocks(const struct hart *h, unsigned long token)
{
	int o = excl_owner(token);

	return o >= 0 && o != (int)h->index;
}

bool excl_quiet(const struct hart *h)
{
	return !excl_taken() && !(__atomic_load_n(&excl_want, __ATOMIC_ACQUIRE) & ~BIT(h->index));
}

bool excl_blocked(const struct hart *h)
{
	return excl_blocks(h, __atomic_load_n(&excl_token, __ATOMIC_ACQUIRE));
}

bool excl_enabled;
/* A hart's turn: a vCPU's slice (10 ms) */
static unsigned long turn_ticks;
/*
 * How far ahead a hart taking the token arms its timer while it waits for
 * the others to park (1 us: they park as soon as they take its IPI)
 */
static unsigned long park_poll_ticks;
/* How long a vCPU that spins with nothing to yield to naps (10 us) */
static unsigned long spin_nap_ticks;

/* Arm the hart timer for t unless it fires earlier already */
static void arm_before(struct hart *h, uint64_t t)
{
	if (t < h->timer_armed) {
		h->timer_armed = t;
		timer_arm(t);
	}
}

/*
 * Turns: fairness per hart, whatever the counting guests do. The token may
 * be taken only by the hart whose turn it is (turn_hart, until turn_end), as
 * often as it likes within its turn: a vCPU that stops counting gives the
 * token back (the others run meanwhile) but not its turn, so a guest that
 * stops just before the turn ends and starts again at once gets no fresh
 * turn (or it could keep the token and starve the other harts). When a turn is
 * over, the next goes to the next hart in hart order after its hart that
 * has work: one that waits (parked with a live vCPU, or waiting for a turn),
 * or, for the slice after the turn, one that runs a vCPU; to the asker if
 * nobody else. The turn of a hart that does not wait for the token is its
 * rest: it runs as it likes, nobody takes the token, and it ends a slice
 * after the turn before it did. A turn ends early when its hart has nothing
 * to run (excl_idle) or its vCPU spins while another hart waits
 * (excl_yield). So a vCPU waits for other harts' turns at most one
 * turn (a slice) per other hart with work, for each slice its hart's
 * other vCPUs take of its hart's turns (docs/security.md, the stall bound).
 */
static spinlock_t turn_lock;
static int turn_hart = -1;	   /* whose turn it is (hart index), -1: nobody's yet */
static volatile uint64_t turn_end; /* ... until then */
static bool turn_unstarted;	   /* ... its hart took it to count and has not yet */

/* The harts running a vCPU, or about to */
static unsigned long harts_busy(void)
{
	unsigned long busy = 0;

	for (unsigned int i = 0; i < nr_harts; i++)
		if (hart_status[i].doing == HART_GUEST || hart_status[i].doing == HART_HYPERVISOR)
			busy |= BIT(i);
	return busy;
}

/* Under turn_lock: if the turn is over at `now`, the next one; whether it is h's */
static bool turn_next(struct hart *h, uint64_t now)
{
	unsigned long want, cand;

	if (now < turn_end)
		return turn_hart == (int)h->index;
	want = __atomic_load_n(&excl_want, __ATOMIC_ACQUIRE) | BIT(h->index);
	cand = want | (now < turn_end + turn_ticks ? harts_busy() : 0);
	for (unsigned int k = 1; k <= nr_harts; k++) {
		unsigned int i = (unsigned int)(turn_hart + (int)k) % nr_harts;

		if (cand & BIT(i)) {
			turn_hart = (int)i;
			break;
		}
	}
	/* a hart that runs without waiting for the token: its rest, the slice after the turn */
	turn_end = want & BIT(turn_hart) ? now + turn_ticks : turn_end + turn_ticks;
	turn_unstarted = turn_hart == (int)h->index;
	return turn_unstarted;
}

/* Whether h runs a vCPU whose WFI waits in the guest, and is not parked (a hint: racy reads) */
static bool holder_may_halt(const struct hart *h)
{
	const struct vcpu *v = __atomic_load_n(&h->cur, __ATOMIC_RELAXED);

	return v && vcpu_arch_wfi_halting(&v->arch) &&
	       !(__atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE) & BIT(h->index));
}

/*
 * Whether h may take the token now. If not, it waits until the turn ends
 * (or an IPI: a hart that takes the token sends one; h parks then).
 */
static bool turn_ours(struct hart *h)
{
	uint64_t until;
	bool mine;
	int holder;

	/* waiting, before the turn is looked at: whoever ends a turn early wakes us */
	__atomic_or_fetch(&excl_want, BIT(h->index), __ATOMIC_SEQ_CST);
	spin_lock(&turn_lock);
	mine = turn_next(h, timer_now());
	until = turn_end;
	holder = turn_hart;
	spin_unlock(&turn_lock);
	/*
	 * The holder's vCPU may wait in WFI in VS-mode, idle to the scheduler
	 * (sched_wfi_policy): it looks again, sees us waiting, and its WFI
	 * traps, so that its hart idles and hands the turn over (excl_idle).
	 * Never to a parked hart: it may not execute anything.
	 */
	if (!mine && holder >= 0 && holder != (int)h->index && holder_may_halt(&harts[holder]))
		hart_send_ipi(harts[holder].hartid);
	if (!mine) {
		h->timer_armed = until;
		timer_arm(until);
		excl_sleep(h, until, true);
	}
	__atomic_and_fetch(&excl_want, ~BIT(h->index), __ATOMIC_SEQ_CST);
	return mine;
}

/* The holder, its turn over at `now`: whether it has another (nobody else has work) */
static bool turn_renew(struct hart *h, uint64_t now)
{
	bool mine;

	spin_lock(&turn_lock);
	mine = turn_next(h, now);
	turn_unstarted = false;
	h->excl.turn_end = turn_end;
	spin_unlock(&turn_lock);
	return mine;
}

/*
 * h has taken the token and the others have parked: a turn taken to count
 * starts now. The turn may have passed to another hart between h's look
 * (turn_ours) and its taking the token (QEMU's round robin can switch harts
 * there): that hart parked; h's turn is over at once, not the other's.
 */
static void turn_started(struct hart *h)
{
	spin_lock(&turn_lock);
	if (turn_hart == (int)h->index && turn_unstarted) {
		turn_end = timer_now() + turn_ticks;
		turn_unstarted = false;
	}
	h->excl.turn_end = turn_hart == (int)h->index ? turn_end : timer_now();
	spin_unlock(&turn_lock);
}

/* Halt, waiting for IPIs only, as long as another hart holds the token */
void excl_park(struct hart *h)
{
	unsigned long token;
	bool want = false;

	h->excl.park_gen = ~0UL;
	hart_set_doing(h, HART_PARKED);
	__atomic_or_fetch(&excl_parked, BIT(h->index), __ATOMIC_SEQ_CST);
	/*
	 * A vCPU waiting here for an interrupt may be what the owner's guest
	 * waits for (an IPI answer): any live vCPU counts as work, since
	 * kicks to parked harts are deferred to the release. Looked at after
	 * the parked bit: a kick before it is seen here, one after it finds
	 * the bit and sets ours itself (excl_defer_kick). Looked at before,
	 * a kick in between sent an IPI, which the loop below swallowed.
	 */
	for (struct vcpu *v = h->queue; v && !want; v = v->next)
		want = v->state != VCPU_DEAD && v->state != VCPU_STOPPED;
	if (want)
		__atomic_or_fetch(&excl_want, BIT(h->index), __ATOMIC_SEQ_CST);
	while (token = __atomic_load_n(&excl_token, __ATOMIC_ACQUIRE), excl_blocks(h, token)) {
		unsigned long mark = __atomic_load_n(&h->excl.ipi_gen, __ATOMIC_ACQUIRE);

		/* read after the IPIs taken so far, seen before the acknowledgement (parked_quiet) */
		__atomic_store_n(&h->excl.ipi_seen, mark, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		timer_wait_ipi(false, &h->excl.park_gen, excl_gen(token));
	}
	if (h->excl.fence_pending) {
		h->excl.fence_pending = false;
		hart_fence_guests();
	}
	h->excl.park_gen = ~0UL;
	__atomic_and_fetch(&excl_parked, ~BIT(h->index), __ATOMIC_SEQ_CST);
	__atomic_and_fetch(&excl_want, ~BIT(h->index), __ATOMIC_SEQ_CST);
}

void excl_release(struct hart *h)
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
	sched_put_counting(h);
	h->excl.counter = NULL;
	__atomic_store_n(&excl_token, excl_gen(token) << EXCL_OWNER_BITS, __ATOMIC_RELEASE);
	/*
	 * excl_park sets its bit, then reads the token: with the store above
	 * ordered before the read below, either it sees the release or we see
	 * its bit and wake it (a weakly ordered hart could do neither)
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	parked = __atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE);
	for (i = 0; i < nr_harts; i++)
		if (parked & BIT(i))
			hart_send_ipi(harts[i].hartid);
}

/* Hart i has acknowledged acquisition gen: it halted, or is about to (its last store before wfi) */
static bool parked_acked(unsigned int i, unsigned long gen)
{
	return (__atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE) & BIT(i)) &&
	       __atomic_load_n(&harts[i].excl.park_gen, __ATOMIC_ACQUIRE) == gen;
}

/*
 * Hart i has parked for acquisition gen and executes nothing more: also the
 * IPI we sent it (sent) has arrived. An IPI (an MSI, or through the SBI)
 * that arrives after the hart looked for one and acknowledged ends its wfi
 * at once (and, through the SBI, runs the firmware's IPI handler, some 400
 * instructions), which QEMU charges to our counters. The hart may take an
 * older IPI and acknowledge before ours arrives (QEMU's round robin can run
 * it between any two of our instructions). So we mark ours (ipi_gen) after
 * sending it, and the hart reads the mark before each acknowledgement,
 * after the IPIs it took (ipi_seen): having read our mark, it looked for
 * IPIs while ours was pending.
 */
static bool parked_quiet(unsigned int i, unsigned long gen, bool sent)
{
	return parked_acked(i, gen) &&
	       (!sent || __atomic_load_n(&harts[i].excl.ipi_seen, __ATOMIC_ACQUIRE) == gen);
}

/* Interrupt hart i for acquisition gen: the mark after the IPI (parked_quiet) */
static void send_marked(unsigned int i, unsigned long gen)
{
	hart_send_ipi(harts[i].hartid);
	__atomic_store_n(&harts[i].excl.ipi_gen, gen, __ATOMIC_RELEASE);
}

/*
 * Wait until hart i has parked for acquisition gen (parked_quiet); whether
 * it had not yet.
 *
 * We wait running, the timer armed a microsecond ahead, and look again:
 * under -icount QEMU's round robin runs a hart for at most half the time to
 * the machine's next deadline before the others (icount_percpu_budget), so
 * the deadline gives the hart we wait for its turn at once. Unarmed, a
 * spinning hart ran through its whole budget first (23 ms of virtual time
 * per acquisition on average, 93 % of a `perf stat -a -- sleep 3`). Halted
 * (a nap), we would leave every hart halted once the other parks, and QEMU's
 * CPU thread would wait for its main loop thread to run our timer: two host
 * thread switches per acquisition. A parked hart's acknowledgement is its
 * last store before its wfi, so it cannot send us an IPI. IPIs to us stay
 * pending meanwhile, for the guest entry to see. A hart that took our IPI
 * before we marked it may halt before it reads the mark: it gets another.
 */
static bool wait_parked(unsigned int i, unsigned long gen, bool sent)
{
	bool waited = false;

	while (!parked_quiet(i, gen, sent)) {
		uint64_t until = timer_now() + park_poll_ticks;

		waited = true;
		timer_arm(until);
		while (!parked_quiet(i, gen, sent) && timer_now() < until)
			cpu_relax();
		if (sent && parked_acked(i, gen) &&
		    __atomic_load_n(&harts[i].excl.ipi_seen, __ATOMIC_ACQUIRE) != gen)
			send_marked(i, gen);
	}
	return waited;
}

/*
 * Take the token and wait until every other hart has parked; false if
 * another hart holds it (we parked until its release) or it is another
 * hart's turn (we waited for it to end, or for an IPI): look at the queue
 * again. Harts already parked are not sent an IPI: one arriving after their
 * acknowledgement would wake them while we count. (A parked hart that has
 * not acknowledged this acquisition is awake already: the release that
 * ended the previous one sent it an IPI.)
 *
 * A turn taken to count starts once the others have parked, not when it is
 * taken: a turn counted from the take could be over before our vCPU ran
 * (when we spun here, under -icount through QEMU's whole budget for this
 * hart, tens of ms, before the hart we waited for ran again): we would
 * release at once, take it again later, and the vCPU never run (seen: a
 * pmu-mux vCPU starved for minutes).
 */
bool excl_acquire(struct hart *h)
{
	unsigned long others = (BIT(nr_harts) - 1) & ~BIT(h->index);
	unsigned long token, gen, sent = 0;
	bool waited = false;

	if (excl_blocked(h)) {
		excl_park(h);
		return false;
	}
	if (!turn_ours(h))
		return false;
	token = __atomic_load_n(&excl_token, __ATOMIC_ACQUIRE);
	if (excl_owner(token) >= 0 ||
	    !__atomic_compare_exchange_n(&excl_token, &token,
					 ((excl_gen(token) + 1) << EXCL_OWNER_BITS) |
						 (h->index + 1),
					 false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		excl_park(h);
		return false;
	}
	gen = excl_gen(token) + 1;
	for (unsigned int i = 0; i < nr_harts; i++)
		if ((others & BIT(i)) &&
		    !(__atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE) & BIT(i))) {
			sent |= BIT(i);
			send_marked(i, gen);
		}
	for (unsigned int i = 0; i < nr_harts; i++)
		if (others & BIT(i))
			waited |= wait_parked(i, gen, (sent >> i) & 1);
	if (waited)
		timer_arm(h->timer_armed);
	turn_started(h);
	arm_before(h, h->excl.turn_end);
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

static bool excl_pause(struct hart *h, struct vcpu *v, unsigned long now)
{
	if (!excl_mine(h) || h->excl.counter != v)
		return false;
	if (!h->excl.pause_end) {
		h->excl.pause_end = now + EXCL_PAUSE_TICKS;
		arm_before(h, h->excl.pause_end);
	}
	return now < h->excl.pause_end;
}

/*
 * What excl_enter decides without a look at the others: v goes on running
 * now, within its pause (it stopped counting) or its turn (it counts)
 */
static bool excl_goes_on(struct hart *h, struct vcpu *v, unsigned long now)
{
	if (!vpmu_counting(&v->vpmu))
		return excl_pause(h, v, now);
	h->excl.counter = v;
	h->excl.pause_end = 0;
	return excl_mine(h) && now < h->excl.turn_end;
}

/* Before entering v: may it run now? False: we waited, look at the queue again */
bool excl_enter(struct hart *h, struct vcpu *v, unsigned long now)
{
	if (excl_goes_on(h, v, now))
		return true;
	if (!vpmu_counting(&v->vpmu)) {
		excl_release(h);
		return !excl_blocked(h);
	}
	if (excl_mine(h)) {
		if (turn_renew(h, now)) {
			/* nobody else has work: another turn, and a look again at its end */
			arm_before(h, h->excl.turn_end);
			return true;
		}
		/*
		 * The next turn is another hart's: wait for h's. The release
		 * puts v (it counts), so v runs again only once the scheduler's
		 * switch has loaded it, even when the token comes back at once
		 * (the other hart's want or turn gone meanwhile). Entered from
		 * here, v ran on its put state: what it changed of its CSRs was
		 * lost at its next load, and its counters stood still.
		 */
		excl_release(h);
		excl_acquire(h);
		return false;
	}
	return excl_acquire(h);
}

bool excl_lane(struct hart *h, struct vcpu *v)
{
	return excl_goes_on(h, v, timer_now());
}

/* h's turn, if it is h's, is over now: those waiting for a turn need not wait for it */
static void turn_over(struct hart *h, uint64_t now)
{
	unsigned long waiting;

	spin_lock(&turn_lock);
	if (turn_hart != (int)h->index) {
		spin_unlock(&turn_lock);
		return;
	}
	if (now < turn_end)
		turn_end = now;
	spin_unlock(&turn_lock);
	waiting = __atomic_load_n(&excl_want, __ATOMIC_ACQUIRE) &
		  ~__atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE) & ~BIT(h->index);
	for (unsigned int i = 0; i < nr_harts; i++)
		if (waiting & BIT(i))
			hart_send_ipi(harts[i].hartid);
}

void excl_idle(struct hart *h)
{
	excl_release(h);
	turn_over(h, timer_now());
}

/*
 * The vCPU that h runs spins, waiting for a store (sched_yield_spin): the
 * vCPU that will make it may be parked, or waiting for its turn. If another
 * hart waits, h's turn, or its pause with the token, is over now; holding
 * the token, h hands it on at its next guest entry (excl_unchanged fails,
 * excl_enter releases).
 */
bool excl_yield(struct hart *h)
{
	uint64_t now;

	if (!(__atomic_load_n(&excl_want, __ATOMIC_ACQUIRE) & ~BIT(h->index)))
		return false;
	now = timer_now();
	if (excl_mine(h)) {
		h->excl.turn_end = now;
		if (h->excl.pause_end)
			h->excl.pause_end = now;
	}
	turn_over(h, now);
	return true;
}

/*
 * ... and when nobody waits for a turn: the vCPU it waits for may run on
 * another hart, which under -icount runs only once this one halts or its
 * budget is spent (core/excl_sleep.c). Halt for a nap (or until an
 * IPI), as a hart that waits for the token does, instead of spinning
 * through the budget, each wait a trap.
 */
void excl_spin_nap(struct hart *h)
{
	hart_nap(h, spin_nap_ticks);
}

void excl_init(bool counts_other_harts)
{
	/* one hart has nobody to wait for */
	excl_enabled = counts_other_harts && nr_harts > 1;
	turn_ticks = host.timebase / 100;
	park_poll_ticks = host.timebase / 1000000 + 1;
	spin_nap_ticks = host.timebase / 100000 + 1;
	vpmu_set_exclusive(excl_enabled);
	for (unsigned int i = 0; i < nr_harts; i++)
		harts[i].excl_on = excl_enabled;
}

/* Whether any hart holds the token: then nobody is woken to take work (core/sched.c) */
bool excl_taken(void)
{
	return excl_owner(__atomic_load_n(&excl_token, __ATOMIC_ACQUIRE)) >= 0;
}
