// SPDX-License-Identifier: BSD-2-Clause
/*
 * A busy hart that halts a moment when another hart seems to get no time
 * at all. Under QEMU -icount one thread runs the harts in turn, each for its
 * share of the virtual time to the next timer deadline. A counter that
 * counts only guest modes, one count below its top while its hart is in
 * HS-mode, makes QEMU re-arm its overflow timer every nanosecond
 * (docs/quirks.md, near-top): every share is then half an instruction,
 * rounded down to none for the second hart, which runs nothing more for as
 * long as the first one does not halt. The hypervisor's sampling counter
 * gets there whenever its hart traps at that count (seen: hart 1 at the
 * first instruction of hs_trap_vector for minutes, mhpmcounter18 = 2^64 -
 * 1, while hart 0 ran a guest). While a hart halts, the others share all
 * the time: the starved one leaves HS-mode, its counter advances and wraps.
 *
 * Every hart that runs a guest takes a timer interrupt at least every
 * look_ticks (hart.look_at), and a guest entry follows it: a hart that
 * runs, with no new entry for two looks, is starved (or busy in HS-mode so
 * long that a halt of another hart helps it too). The looks are frequent
 * because the busy hart crawls meanwhile: with the timer re-armed every
 * nanosecond QEMU runs it one instruction per expiry, about 0.4 million a
 * second of the host's time (seen: 30 ms of its time took 76 s).
 */
#include "arch/riscv/timer.h"
#include "core/excl.h"
#include "core/hart.h"
#include "core/hostdt.h"
#include "core/unstarve.h"

bool unstarve_on;
static uint64_t look_ticks; /* 1 ms */
static uint64_t halt_ticks; /* 100 us: 100,000 instructions for the others under -icount */

/* What one hart last saw of the others; only it writes its own */
struct unstarve_hart {
	uint64_t entries[HART_MAX]; /* hart_status[i].entries then */
	uint64_t since[HART_MAX];   /* when that changed, or the hart stopped running */
};
static struct unstarve_hart watch[HART_MAX];

void unstarve_init(bool may_starve)
{
	unstarve_on = may_starve && nr_harts > 1;
	if (!unstarve_on)
		return; /* look_at stays UINT64_MAX: no looks */
	look_ticks = host.timebase / 1000;
	halt_ticks = host.timebase / 10000;
	for (unsigned int i = 0; i < nr_harts; i++)
		harts[i].look_at = 0; /* the first timer interrupt of a guest's run */
}

void unstarve_awake(struct hart *h)
{
	h->look_at = timer_now() + look_ticks;
}

void unstarve_tick(struct hart *h, uint64_t now)
{
	struct unstarve_hart *w = &watch[h->index];

	h->look_at = now + look_ticks;
	for (unsigned int i = 0; i < nr_harts; i++) {
		uint64_t entries = __atomic_load_n(&hart_status[i].entries, __ATOMIC_RELAXED);
		uint64_t doing = __atomic_load_n(&hart_status[i].doing, __ATOMIC_RELAXED);

		if (i == h->index)
			continue;
		/* a hart waiting for its exclusive-counting turn says "hypervisor" meanwhile */
		if (entries != w->entries[i] || (doing != HART_GUEST && doing != HART_HYPERVISOR) ||
		    excl_sleeping(i)) {
			w->entries[i] = entries;
			w->since[i] = now;
		} else if (now - w->since[i] >= 2 * look_ticks) {
			w->since[i] = now; /* one halt per two looks at most */
			hart_halt(h, halt_ticks);
		}
	}
}
