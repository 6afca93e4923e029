/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tlb-overflow (QEMU_TLB_OVERFLOW), the one QEMU 10 quirk whose workaround
 * needs more than qemu.c's start paths. QEMU counts the TLB events (DTLB
 * read and write miss, ITLB miss) one by one in its TLB fill
 * (riscv_pmu_incr_ctr), and a wrap there raises LCOFIP unless the counter's
 * OF bit is set; under -icount an interrupt raised outside an I/O
 * instruction aborts QEMU ("Raised interrupt while not in I/O function"):
 * one guest's perf record of dTLB-load-misses would kill the machine. So
 * under -icount (the boot probe counts instructions exactly) a counter
 * configured for a TLB event (qemu.c's note_event marks it in qemu_hart.tlb)
 * runs near its top with its OF bit set (the backend's start_held); QEMU
 * then raises nothing, and the logic finds the wrap by the counter's value
 * (its deadline and scans) and delivers the guest's LCOFI itself.
 * docs/quirks.md has its row.
 */
#include "vpmu/bits.h"
#include "vpmu/phys/qemu_internal.h"
#include "vpmu/vpmu_host.h"

/*
 * The SBI backend's held start only keeps an OF bit that is set, and one
 * plain start (far from the top: perf stat) cleared it; a later
 * configuration of the same event may have taken the counter over without
 * the host (Linux's add after its del, or another vCPU's). The host's
 * configuration sets it again.
 */
static __cold long tlb_config_again(struct qemu_hart *q, unsigned int idx)
{
	struct sbi_ret r;

	qemu_release(idx);
	r = qemu_config(idx, q->tlb_flags[idx], q->tlb_ev[idx], 0);
	if (r.error == SBI_SUCCESS && r.value != idx)
		return SBI_ERR_FAILED;
	return r.error;
}

/* It runs near its top now: no far mark (a masked start then holds its OF bit again) */
__cold long qemu_start_tlb(struct qemu_hart *q, unsigned int idx, uint64_t value)
{
	q->far &= ~(1U << idx);
	if (qemu_raw.keeps_of && !((vpmu_phys_overflowed() >> idx) & 1)) {
		long err = tlb_config_again(q, idx);

		if (err != SBI_SUCCESS)
			return err;
	}
	return qemu_raw.start_held(idx, value);
}
