// SPDX-License-Identifier: BSD-2-Clause
/*
 * Per-hart round-robin scheduling of vCPUs. sched_switch() is the single
 * point where one vCPU's state leaves the hart and another's arrives: the
 * PMU save/restore hangs here too.
 */
#include "arch/riscv/cpu.h"
#include "arch/riscv/csr.h"
#include "core/ecall.h"
#include "core/excl.h"
#include "core/hart.h"
#include "core/hostdt.h"
#include "arch/riscv/isa.h"
#include "core/sched.h"
#include "core/sched_internal.h"
#include "arch/riscv/timer.h"
#include "core/unstarve.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "vpmu/vpmu.h"

struct hart harts[HART_MAX];
struct hart_status hart_status[HART_MAX];

unsigned int nr_harts;

static unsigned long slice_ticks;
/* how soon to look again at a vCPU with an undelivered software interrupt */
#define RECHECK_TICKS 100

/* Some vCPU may move between harts (no cpu-affinity): set at boot */
static bool movers;

void sched_add(struct hart *h, struct vcpu *v)
{
	struct vcpu **p;

	if (!v->pinned)
		movers = true;

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
 * Called when this hart switches vCPUs: if it still has runnable vCPUs
 * another hart could take, wake one idle hart to steal them. Idle harts do
 * not poll: under QEMU -icount any instruction they ran would be charged
 * to the counters of the vCPUs running elsewhere.
 */
static void sched_offer_work(struct hart *h)
{
	unsigned long idle = __atomic_load_n(&idle_harts, __ATOMIC_SEQ_CST) & ~BIT(h->index);
	bool spare = false;

	if (!idle || (h->excl_on && excl_taken()))
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

static void sched_unload(struct hart *h)
{
	struct vcpu *v = hart_loaded(h);

	if (!v)
		return;
	vpmu_vcpu_put(&v->vpmu); /* an overflow found here raises its LCOFI itself */
	vcpu_arch_put(&v->arch);
}

/*
 * Exclusive counting's release (core/excl.c): counters never run without
 * the token, so a vCPU with running counters leaves the hart first
 */
void sched_put_counting(struct hart *h)
{
	struct vcpu *v;

	spin_lock(&h->lock);
	v = hart_loaded(h);
	if (v && vpmu_counting(&v->vpmu)) {
		sched_unload(h);
		h->resched = true; /* h->cur must be loaded again before it runs */
	}
	spin_unlock(&h->lock);
}

/*
 * A hart about to idle or park (exclusive counting) puts a profiled vCPU
 * first (not the PMU lane's vCPU waiting for the token: it is in its call).
 * Its sampling counter would stay enabled, and one count below its top it
 * starves the harts that run (docs/quirks.md, near-top) until this one
 * wakes.
 */
static bool sched_sampled_loaded(struct hart *h)
{
	return hart_loaded(h) && unstarve_put_idle(&hart_loaded(h)->vpmu);
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
	if (hart_loaded(h) != next) {
		sched_unload(h);
		/* loaded before its PMU: an overflow found there raises its LCOFI in the CSRs */
		vcpu_arch_load(&next->arch, next->vm->arch.hgatp);
		vpmu_vcpu_load(&next->vpmu);
	}
	h->cur = next;
}

/*
 * Whether v, in state, runs when picked: runnable, or made so by sched_poll
 * (starting, or woken by a pending interrupt)
 */
static bool sched_ready(struct vcpu *v, int state, unsigned long now)
{
	switch (state) {
	case VCPU_RUNNABLE:
	case VCPU_START_PENDING:
		return true;
	case VCPU_WFI:
	case VCPU_SUSPENDED:
	case VCPU_SUSPENDED_NR:
		return vcpu_arch_irq_pending(&v->arch, now);
	default:
		return false;
	}
}

/*
 * The last vCPU of vm, which asked for a reboot, stopped, and h is the hart
 * of the vCPU that asked (sched_stop_vcpu): loading a guest again copies
 * megabytes, so the hart does it holding neither its queue's lock (dropped
 * here, taken again) nor the exclusive-counting token, as between two
 * guest entries.
 */
static void sched_reboot(struct hart *h, struct vm *vm)
{
	spin_unlock(&h->lock);
	if (h->excl_on)
		excl_release(h);
	vm_reboot(vm);
	spin_lock(&h->lock);
}

/*
 * v's VM stops, so v does (sched_poll): it leaves h for good, and the hart
 * that stops the VM's last vCPU ends the VM, or has it rebooted on the hart
 * of the vCPU that asked (struct vm), here or by a kick there. Rare: out of
 * the poll's loop. Returns whether h's lock was dropped meanwhile.
 */
static __attribute__((cold)) bool sched_stop_vcpu(struct hart *h, struct vcpu *v, int state)
{
	struct vm *vm = v->vm;

	if (state == VCPU_RELOAD) {
		v->state = VCPU_DEAD;
		sched_reboot(h, vm);
		return true;
	}
	if (hart_loaded(h) == v)
		sched_unload(h);
	vcpu_arch_wake_on_msi(&v->arch, false);
	vpmu_vcpu_reset(&v->vpmu);
	v->state = VCPU_DEAD;
	if (h->cur == v)
		h->cur = NULL;
	if (__atomic_sub_fetch(&vm->live_vcpus, 1, __ATOMIC_ACQ_REL) > 0)
		return false;
	if (vm->stop_kind != VM_STOP_REBOOT) {
		vm_stopped(vm);
		return false;
	}
	if (vm->reboot_by->hart != h) {
		__atomic_store_n(&vm->reboot_by->state, VCPU_RELOAD, __ATOMIC_RELEASE);
		/* a kick to a parked hart waits for the release (excl_defer_kick) */
		vcpu_kick(vm->reboot_by);
		return false;
	}
	sched_reboot(h, vm);
	return true;
}

/*
 * Apply what other harts and the vCPUs' own calls asked for. Under h's
 * lock, which a reboot drops for a while: then it looks at the queue again.
 */
static void sched_poll(struct hart *h, unsigned long now)
{
again:
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
			if (sched_stop_vcpu(h, v, state))
				goto again;
			continue;
		}
		if (state == VCPU_RUNNABLE)
			continue;
		if (!sched_ready(v, state, now)) {
			/* waiting: an MSI to its guest interrupt file wakes this hart (SGEI) */
			if (state == VCPU_WFI || state == VCPU_SUSPENDED ||
			    state == VCPU_SUSPENDED_NR)
				vcpu_arch_wake_on_msi(&v->arch, true);
			continue;
		}
		vcpu_arch_wake_on_msi(&v->arch, false);
		/* HSM hart_start, or the non-retentive suspend's resume: a fresh entry */
		if (state == VCPU_START_PENDING || state == VCPU_SUSPENDED_NR) {
			if (hart_loaded(h) == v)
				sched_unload(h);
			if (state == VCPU_START_PENDING) {
				vcpu_arch_reset(&v->arch, v->id, v->start_pc, v->start_arg);
				vcpu_arch_clear_guest_file(&v->arch);
			} else {
				vcpu_arch_resume(&v->arch, v->id, v->resume_pc, v->start_arg);
			}
		}
		v->state = VCPU_RUNNABLE;
	}
}

/*
 * A guest that spins on a lock or a flag may wait for one of its vCPUs that
 * does not run: preempted on this hart (when one of the same guest could
 * run, the hart goes round to the next vCPU now), or parked or waiting under
 * exclusive counting (another hart waiting for a turn gets it now). As in
 * KVM's wrs.nto handling (kvm_vcpu_on_spin), other guests' vCPUs are not
 * what it waits for.
 */
void sched_yield_spin(struct hart *h)
{
	unsigned long now = timer_now();

	spin_lock(&h->lock);
	for (struct vcpu *v = h->queue; v; v = v->next)
		if (v != h->cur && v->vm == h->cur->vm && sched_ready(v, v->state, now)) {
			h->resched = true;
			break;
		}
	spin_unlock(&h->lock);
	if (h->excl_on && !excl_yield(h) && !h->resched)
		excl_spin_nap(h);
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

/*
 * A vCPU with a guest interrupt file, about to enter: its WFI may wait in
 * the guest, where the scheduler takes it for busy, only while that costs
 * nobody anything: no other vCPU here could use the hart, no vCPU anywhere
 * may move (an idle hart steals, a busy one does not), and under exclusive
 * counting it does not count and no hart holds or waits for the token or a
 * turn (its hart would keep a turn for nothing; a hart that comes to wait
 * makes it look again: turn_ours, excl_counting_starts). Under h's lock.
 */
static void sched_wfi_policy(struct hart *h, struct vcpu *v)
{
	bool others = movers;

	for (struct vcpu *o = h->queue; o && !others; o = o->next)
		if (o != v && o->state == VCPU_RUNNABLE)
			others = true;
	vcpu_arch_wfi_halts(
		&v->arch, !others && (!h->excl_on || (!vpmu_counting(&v->vpmu) && excl_quiet(h))));
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
		 * with nothing else to wake it (no Sscofpmf: no vPMU deadline) the
		 * hart would otherwise sleep for good (model-nosscof-hostile, guest
		 * hartstop).
		 */
		if (v->state != VCPU_DEAD && vm->watchdog_ticks && vm->state == VM_RUNNING) {
			uint64_t silent = vm->last_sbi + vm->watchdog_ticks + 1;

			if (silent < next)
				next = silent;
		}
		if (v == h->cur) {
			uint64_t d = vcpu_arch_timer_deadline(&v->arch);

			/* Sstc: the running vCPU's own timer needs no help from us */
			if (!riscv_has(RISCV_EXT_SSTC) && d < next)
				next = d;
			if (vcpu_arch_wants_recheck(&v->arch) && timer_now() + RECHECK_TICKS < next)
				next = timer_now() + RECHECK_TICKS;
			continue;
		}
		if (v->state == VCPU_RUNNABLE)
			others = true;
		else if (v->state == VCPU_WFI || v->state == VCPU_SUSPENDED ||
			 v->state == VCPU_SUSPENDED_NR) {
			/*
			 * not a deadline the guest disabled: in the past, it would
			 * fire at every entry of the others on this hart
			 */
			uint64_t d = vcpu_arch_wake_deadline(&v->arch);

			if (d < next)
				next = d;
		}
	}
	if (h->cur) {
		if (others && h->slice_end < next)
			next = h->slice_end;
		/*
		 * The next look for a hart QEMU leaves no time (core/unstarve.c),
		 * but for a vCPU whose WFI waits in the guest: its hart would wake
		 * every look
		 */
		if (h->look_at < next && !vcpu_arch_wfi_halting(&h->cur->arch))
			next = h->look_at;
	}
	/* all but a counter that may wrap unsignalled, which the PMU lane moves alone */
	h->timer_rest = next;
	if (h->cur)
		next = sched_timer_with(h, vpmu_deadline(&h->cur->vpmu));
	/* exclusive counting's deadlines: a tail call, so that this function needs no frame */
	if (h->excl_on && h->cur) {
		excl_arm_timer(h, next);
		return;
	}
	hart_arm_timer(h, next);
}

/*
 * A hart woken this often in a row with nothing to run spins (every sleep
 * ends at once): say once why, for whoever finds a run slow. Normal idling
 * wakes a few hundred times a second at most.
 */
#define IDLE_WAKES_SPIN 200000

static void sched_report_spin(struct hart *h, unsigned long sip)
{
	struct vcpu *l = hart_loaded(h);

	hv_printf("pmuvisor: hart %lu woke %u times in a row with nothing to run: sip %#lx, "
		  "timer %#lx (now %#lx), loaded %s vcpu %d state %d timer %#lx\n",
		  h->hartid, IDLE_WAKES_SPIN, sip, (unsigned long)h->timer_armed,
		  (unsigned long)timer_now(), l ? l->vm->name : "-", l ? (int)l->id : -1,
		  l ? (int)l->state : -1,
		  l ? (unsigned long)vcpu_arch_timer_deadline(&l->arch) : 0UL);
	for (struct vcpu *v = h->queue; v; v = v->next)
		hv_printf("pmuvisor:   queue: %s vcpu %u state %d timer %#lx\n", v->vm->name, v->id,
			  (int)v->state, (unsigned long)vcpu_arch_timer_deadline(&v->arch));
}

/* Sleep until an interrupt; an overflow belongs to the vCPU still loaded */
static void sched_idle(struct hart *h)
{
	unsigned long sip;

	sched_settle(h);
	sip = excl_sleep(h, h->timer_armed, false);

	if (sip & BIT(IRQ_S_TIMER))
		h->timer_armed = UINT64_MAX;
	if (sip & BIT(IRQ_PMU_OVF))
		vpmu_overflow_irq(hart_loaded(h) ? &hart_loaded(h)->vpmu : NULL);
	sched_probe_poll();
	if (unlikely(++h->idle_wakes == IDLE_WAKES_SPIN))
		sched_report_spin(h, sip);
}

void sched_timer_tick(struct hart *h)
{
	uint64_t now = timer_now();

	timer_ack();
	h->timer_armed = UINT64_MAX;
	if (now >= h->slice_end)
		h->resched = true;
	if (unlikely(unstarve_on))
		unstarve_tick(h, now);
}

static void sched_enter_guest(struct hart *h, struct vcpu *v)
{
	struct sched_seen *seen = &h->seen;

	sched_see(h, v);
	do {
		/* the short way needs none: the call it answers folded them first */
		vcpu_fold_pending(v);
		sched_before_entry(h, v);
		vcpu_arch_run(&v->arch);
		if (h->exit_handled) { /* the short way found the scheduler must look */
			h->exit_handled = false;
			break;
		}
		sched_after_exit(h, v);
		vcpu_handle_exit(v);
	} while (sched_fast_return(h, v, seen));
}

/*
 * Any SBI call but a PMU one, from the trap vector's short way (core/lane.c):
 * one turn of sched_enter_guest's loop, as sched_fast_return allows.
 */
struct vcpu_ctx *sched_sbi_ecall(struct vcpu_ctx *c)
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

void sched_run(struct hart *h)
{
	for (;;) {
		unsigned long now = timer_now();
		struct vcpu *v;

		if (h->excl_on) {
			excl_wake_sleepers(h, now);
			if (excl_blocked(h)) {
				if (unlikely(sched_sampled_loaded(h))) {
					spin_lock(&h->lock);
					sched_unload(h);
					h->resched = true; /* h->cur must be loaded again */
					spin_unlock(&h->lock);
				}
				excl_park(h);
				continue;
			}
		}
		spin_lock(&h->lock);
		sched_poll(h, now);
		v = h->cur;
		if (!v || v->state != VCPU_RUNNABLE || h->resched) {
			h->resched = false;
			v = sched_pick(h);
			if (v)
				h->idle_wakes = 0;
			if (!v) {
				h->cur = NULL;
				/*
				 * The loaded vCPU's timer, not what its last put
				 * saved: that copy, long past after a put by
				 * exclusive counting's release, ended every idle
				 * sleep of this hart at once, for good.
				 */
				if (sched_sampled_loaded(h))
					sched_unload(h);
				if (hart_loaded(h))
					vcpu_arch_sync_timer(&hart_loaded(h)->arch);
				sched_arm_timer(h);
				spin_unlock(&h->lock);
				if (h->excl_on)
					excl_idle(h);
				if (sched_steal_or_say_idle(h))
					continue;
				hart_set_doing(h, HART_IDLE);
				sched_idle(h);
				if (unlikely(unstarve_on))
					unstarve_awake(h);
				__atomic_and_fetch(&idle_harts, ~BIT(h->index), __ATOMIC_SEQ_CST);
				continue;
			}
			if (h->excl_on && hart_loaded(h) != v && vpmu_counting(&v->vpmu) &&
			    !excl_mine(h)) {
				/* its counters start at load: with the token only */
				h->resched = true;
				if (sched_sampled_loaded(h))
					sched_unload(h); /* it may park meanwhile */
				spin_unlock(&h->lock);
				excl_acquire(h);
				continue;
			}
			if (v != h->cur)
				h->slice_end = now + slice_ticks;
			sched_switch(h, v);
			sched_offer_work(h);
		}
		if (vcpu_arch_wfi_may_halt(&v->arch))
			sched_wfi_policy(h, v);
		sched_arm_timer(h);
		spin_unlock(&h->lock);
		if (h->excl_on && !excl_enter(h, v, now))
			continue;
		sched_settle(h);
		sched_enter_guest(h, v);
	}
}
