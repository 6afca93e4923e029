/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A guest's SBI call (VS-mode ecall), answered: inline, because both exit
 * paths take it and the trap vector's short way (sched_guest_ecall, and
 * its PMU lane) pays for every call and return it makes.
 */
#ifndef CORE_ECALL_H
#define CORE_ECALL_H

#include "arch/riscv/timer.h"
#include "core/hart.h"
#include "core/sbi.h"
#include "core/vcpu.h"
#include "core/vm.h"

/*
 * Before a call is answered (the trap vector has set sepc past the ecall):
 * the watchdog fed, other harts' events folded
 */
static inline struct vcpu_ctx *vcpu_ecall_begin(struct vcpu *v)
{
	struct vcpu_ctx *c = vcpu_ctx(v);

	v->vm->last_sbi = timer_now(); /* the watchdog's heartbeat */
	/* firmware events other harts posted must show in this call's reads */
	vcpu_fold_pending(v);
	return c;
}

/* The internal markers lie below every SBI error code: one test finds them both */
_Static_assert(SBI_RET_RESTART < SBI_RET_NO_REPLY && SBI_RET_NO_REPLY < -100,
	       "internal markers below SBI errors");

/* The answer into a0 and a1; an unfinished call is made again after the scheduler's turn */
static inline void vcpu_ecall_end(struct vcpu *v, struct sbi_ret r)
{
	struct vcpu_ctx *c = vcpu_ctx(v);

	if (unlikely(r.error <= SBI_RET_NO_REPLY)) {
		if (r.error == SBI_RET_RESTART) {
			c->sepc -= 4; /* the same ecall again */
			this_hart()->resched = true;
		}
		return;
	}
	c->regs[10] = (unsigned long)r.error;
	c->regs[11] = r.value;
}

static inline void vcpu_handle_ecall(struct vcpu *v)
{
	struct vcpu_ctx *c = vcpu_ecall_begin(v);

	vcpu_ecall_end(v, sbi_dispatch(v, c->regs[17], c->regs[16], &c->regs[10]));
}

#endif
