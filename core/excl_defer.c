// SPDX-License-Identifier: BSD-2-Clause
/*
 * Exclusive counting's deferrals (core/excl.c is the token and the turns):
 * what other harts would send a parked hart waits for the release, since
 * whatever a woken hart executes counts as the holder's vCPU's.
 */
#include "arch/riscv/cpu.h"
#include "core/excl.h"
#include "core/excl_internal.h"
#include "core/hart.h"

/*
 * A kick to hart h (new work for it: a vCPU started, a guest to stop) waits
 * for the release while h is parked: h looks at its queue then. From now on
 * h waits for a turn, as a hart that parked with a live vCPU does: one that
 * parked with none (excl_park) would otherwise never get a turn, and the
 * holder would renew its own for as long as it counts. If h left its park
 * meanwhile, the bit stays until h next leaves a park or asks for a turn:
 * at most a turn given to a hart that did not need it.
 */
bool excl_defer_kick(struct hart *h)
{
	if (!excl_enabled)
		return false;
	/* the caller's store (a vCPU's state) before the look: excl_park looks the other way */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE) & BIT(h->index)) || !excl_blocked(h))
		return false;
	__atomic_or_fetch(&excl_want, BIT(h->index), __ATOMIC_SEQ_CST);
	return true;
}

/*
 * A guest's remote fence must not wake harts parked while this one counts:
 * what a woken hart executes (OpenSBI's IPI handler, some 400 instructions)
 * QEMU's -icount mode filter charges to the counting vCPU. Nothing runs on a
 * parked hart before the release, so it fences when it leaves its park.
 */
unsigned long excl_fence_now(unsigned long hmask)
{
	struct hart *me = this_hart();
	unsigned long parked;

	if (!excl_enabled || !excl_mine(me))
		return hmask;
	parked = __atomic_load_n(&excl_parked, __ATOMIC_ACQUIRE);
	for (unsigned int i = 0; i < nr_harts; i++)
		if (i != me->index && (parked & BIT(i)) && (hmask & BIT(harts[i].hartid))) {
			harts[i].excl.fence_pending = true;
			hmask &= ~BIT(harts[i].hartid);
		}
	return hmask;
}
