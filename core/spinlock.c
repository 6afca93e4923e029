// SPDX-License-Identifier: BSD-2-Clause
/* The wait of a contended spinlock. */
#include "core/hart.h"
#include "core/hostdt.h"
#include "core/lib.h"

/* Looks at a held lock before the hart halts between looks */
#define SPIN_LOOKS 64

/*
 * Another hart holds l. Under QEMU -icount one thread runs the harts in
 * turn, and a spinning hart runs through its whole budget (up to the next
 * timer deadline of any hart: seen, 44 ms) before the holder runs again and
 * releases; that stalled every hart, the holder's guests included. After a
 * few looks the hart halts 1 us at a time instead (the holder runs
 * meanwhile); elsewhere the holder runs beside us and the halts are rare.
 * An IPI does not end a halt: the unlock sends none, and one pending (for
 * the scheduler, later) would end every halt at once, a spin again. Before
 * a hart has its per-hart state (tp 0: early boot) it only spins.
 */
void spin_lock_contended(spinlock_t *l)
{
	struct hart *h = this_hart();
	unsigned int looks = 0;

	do {
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			if (++looks > SPIN_LOOKS && h)
				hart_halt(h, host.timebase / 1000000 + 1);
	} while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE));
}
