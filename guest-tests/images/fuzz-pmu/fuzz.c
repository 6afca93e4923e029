// SPDX-License-Identifier: BSD-2-Clause
/* fuzz-pmu: one vCPU's stream of calls and the checks after each */
#include "guest-tests/images/fuzz-pmu/fuzz.h"

/* ---- counter CSR read, may trap ---- */
unsigned long read_counter(unsigned long idx)
{
	return gt_pmu_read_csr(idx);
}

static void lcofi_handler(unsigned long irq, struct gt_frame *f)
{
	(void)irq;
	(void)f;
	st[gt_hartid()].lcofi++;
	csr_clear(sip, 1UL << 13);
}

/*
 * The errors the SBI v3.0 PMU chapter lists for the function; stricter for
 * SNAPSHOT_SET_SHMEM and EVENT_GET_INFO, which pmuvisor implements and which
 * never fail "for other reasons"
 */
static bool error_allowed(unsigned long fid, long err)
{
	if ((fid == SBI_EXT_PMU_SNAPSHOT_SET_SHMEM || fid == SBI_EXT_PMU_EVENT_GET_INFO) &&
	    (err == SBI_ERR_NOT_SUPPORTED || err == SBI_ERR_FAILED))
		return false;
	return sbi_pmu_error_allowed(fid, err);
}

static void randomize_ei(unsigned long *rs, struct arena *ar, unsigned long hart)
{
	for (unsigned long i = 0; i < EI_N; i++) {
		ar->ei[i].event_idx = PCT(85) ? (uint32_t)events[RN(nevents)] : (uint32_t)R();
		ar->ei[i].output = (uint32_t)R();
		ar->ei[i].event_data = PCT(85) ? 0 : R();
	}
	for (unsigned long i = 0; i < EI_N; i++)
		ei_copy[hart][i] = ar->ei[i];
}

void fuzz(unsigned long hart, unsigned long seed, unsigned long calls)
{
	unsigned long s = seed ? seed : 1, *rs = &s;
	struct arena *ar = &arenas[hart];
	struct stats *S = &st[hart];
	long live_snap = -1; /* arena snapshot page the hypervisor may write */
	uint64_t t0 = gt_rdtime();

	fill_pattern((unsigned long)ar, (unsigned long)ar + sizeof(*ar));
	randomize_ei(rs, ar, hart);
	gt_irq_register(13, lcofi_handler);
	csr_set(sie, 1UL << 13);
	gt_irq_enable();
	if (turns_ms) {
		turns(rs, hart, turns_ms);
		calls = 0;
	}

	for (unsigned long n = 0; n < calls; n++) {
		unsigned long fid, a[6] = {0}, ei_lo = 0, ei_num = 0;
		bool addr_bad = false, addr_check = false, snap_valid = false;
		long snap_page = -1;
		struct sbi_ret r;

		if ((n & (CHECK_EVERY - 1)) == CHECK_EVERY - 1) {
			check_arena(hart, n, live_snap);
			if (hart == 0)
				check_canary("periodic");
		}
		if (n % directed_every == 100 % directed_every)
			directed_overflow(hart);
		if (directed_only) {
			S->calls++;
			continue;
		}
		if (long_every && n % long_every == 200 % long_every)
			long_event_info(rs, hart);
		if (dbcn_every && n % dbcn_every == 300 % dbcn_every)
			long_console_write(rs, hart);
		if (PCT(3)) { /* a counter CSR read: value or illegal instruction */
			unsigned long idx = RN(32);

			gt_expect_trap(EXC_ILLEGAL_INSN);
			(void)read_counter(idx);
			if (gt_trapped() >= 0)
				S->csr_traps++;
			S->csr_reads++; /* and an SBI call too */
		}

		fid = RN(100);
		if (fid < 3)
			fid = PCT(50) ? 9 + RN(32) : R();
		else
			fid = (fid - 3) % 9;
		if (fid == SBI_EXT_PMU_COUNTER_CFG_MATCH && PCT(50))
			fid = PCT(50) ? SBI_EXT_PMU_COUNTER_START : SBI_EXT_PMU_COUNTER_STOP;

		switch (fid) {
		case SBI_EXT_PMU_NUM_COUNTERS:
			break;
		case SBI_EXT_PMU_COUNTER_GET_INFO:
		case SBI_EXT_PMU_COUNTER_FW_READ:
		case SBI_EXT_PMU_COUNTER_FW_READ_HI:
			a[0] = PCT(80) ? RN(num + 2) : gen_base(rs);
			break;
		case SBI_EXT_PMU_COUNTER_CFG_MATCH:
			gen_set(rs, &a[0], &a[1]);
			a[2] = gen_flags(rs, SBI_PMU_CFG_FLAG_MASK);
			a[3] = gen_event(rs);
			a[4] = PCT(85) ? 0 : R();
			break;
		case SBI_EXT_PMU_COUNTER_START:
			gen_set(rs, &a[0], &a[1]);
			a[2] = gen_flags(rs, SBI_PMU_START_FLAG_MASK);
			a[3] = gen_value(rs);
			if (live_snap >= 0 && PCT(20)) /* initial values for INIT_SNAPSHOT */
				for (int i = 0; i < 8; i++)
					((volatile uint64_t *)ar->snap[live_snap])[1 + RN(64)] =
						gen_value(rs);
			break;
		case SBI_EXT_PMU_COUNTER_STOP:
			gen_set(rs, &a[0], &a[1]);
			a[2] = gen_flags(rs, SBI_PMU_STOP_FLAG_MASK);
			break;
		case SBI_EXT_PMU_SNAPSHOT_SET_SHMEM:
			if (PCT(5)) {
				a[0] = a[1] = ~0UL; /* disable */
			} else {
				a[0] = gen_addr(rs, hart, PAGE, false);
				a[1] = gen_hi(rs);
			}
			a[2] = PCT(95) ? 0 : (PCT(50) ? 1 : R());
			if (a[0] == ~0UL && a[1] == ~0UL)
				break;
			addr_check = true;
			addr_bad = a[1] || !in_arena(hart, a[0], PAGE);
			if (!addr_bad && !(a[0] & (PAGE - 1)) && !a[2]) {
				snap_valid = true;
				snap_page = (long)((a[0] - (unsigned long)ar->snap) / PAGE);
			}
			break;
		case SBI_EXT_PMU_EVENT_GET_INFO:
			a[0] = gen_addr(rs, hart, 16, true);
			a[1] = gen_hi(rs);
			if (in_arena(hart, a[0], 16)) {
				unsigned long room = ((unsigned long)ar->guard2 - a[0]) / 16;

				/* fits the arena, or rarely extends past RAM's end (refused
				 * after the hypervisor read every entry up to the end) */
				if (!PCT(1) && room)
					a[2] = 1 + RN(PCT(80) ? (room < 8 ? room : 8) : room);
				else
					a[2] = (ram_end - a[0]) / 16 + 1 + RN(1000);
				if (PCT(3))
					a[2] = 0;
				if (a[2] > room || a[1])
					addr_bad = true;
				ei_lo = a[0];
				ei_num = a[2] ? a[2] : 1;
			} else if (in_ram(a[0], 1)) {
				/* straddles the end of RAM: never wholly inside */
				a[2] = (ram_end - a[0]) / 16 + 1 + RN(64);
				addr_bad = true;
			} else {
				a[2] = PCT(50) ? 1 + RN(64) : R();
				addr_bad = true;
			}
			a[3] = PCT(95) ? 0 : R();
			addr_check = true;
			break;
		default:
			break;
		}
		/* any register values, where no guest address is involved */
		if (PCT(2) && fid != SBI_EXT_PMU_SNAPSHOT_SET_SHMEM &&
		    fid != SBI_EXT_PMU_EVENT_GET_INFO)
			for (int i = 0; i < 6; i++)
				a[i] = R();

		r = gt_sbi_call(SBI_EXT_PMU, fid, a[0], a[1], a[2], a[3], a[4], a[5]);
		S->calls++;
		S->per_fid[fid < 9 ? fid : 9]++;
		if (!r.error)
			S->success++;

		if (!error_allowed(fid, r.error)) {
			S->bad_err++;
			report(hart, n, "error not allowed", fid, a, r.error, r.value);
		}
		switch (fid) {
		case SBI_EXT_PMU_NUM_COUNTERS:
			if (r.value != num) {
				S->bad_value++;
				report(hart, n, "NUM_COUNTERS changed", fid, a, r.error, r.value);
			}
			break;
		case SBI_EXT_PMU_COUNTER_GET_INFO:
			if (a[0] < 64 &&
			    (r.error != info_err[a[0]] || (!r.error && r.value != info[a[0]]))) {
				S->bad_value++;
				report(hart, n, "COUNTER_GET_INFO changed", fid, a, r.error,
				       r.value);
			}
			if (a[0] >= num && !r.error) {
				S->bad_value++;
				report(hart, n, "COUNTER_GET_INFO past the end", fid, a, r.error,
				       r.value);
			}
			break;
		case SBI_EXT_PMU_COUNTER_FW_READ_HI:
			if (!r.error && r.value) {
				S->bad_value++;
				report(hart, n, "FW_READ_HI not 0", fid, a, r.error, r.value);
			}
			break;
		case SBI_EXT_PMU_COUNTER_CFG_MATCH:
			if (!r.error && (r.value < a[0] || r.value - a[0] >= 64 ||
					 !((a[1] >> (r.value - a[0])) & 1) || r.value >= num ||
					 !((valid_mask >> r.value) & 1))) {
				S->bad_value++;
				report(hart, n, "CFG_MATCH counter outside the set", fid, a,
				       r.error, r.value);
			}
			break;
		case SBI_EXT_PMU_SNAPSHOT_SET_SHMEM:
			if (a[0] == ~0UL && a[1] == ~0UL && !r.error) {
				if (live_snap >= 0)
					fill_pattern((unsigned long)ar->snap[live_snap],
						     (unsigned long)ar->snap[live_snap] + PAGE);
				live_snap = -1;
				break;
			}
			if (snap_valid) {
				if (r.error) {
					S->shmem_valid_refused++;
					report(hart, n, "valid snapshot page refused", fid, a,
					       r.error, r.value);
					break;
				}
				for (unsigned long w = 0; w < 512; w++)
					if (((volatile uint64_t *)a[0])[w]) {
						S->shmem_not_zeroed++;
						report(hart, n, "snapshot not zeroed", fid, a,
						       r.error, w);
						break;
					}
				if (live_snap >= 0 && live_snap != snap_page)
					fill_pattern((unsigned long)ar->snap[live_snap],
						     (unsigned long)ar->snap[live_snap] + PAGE);
				live_snap = snap_page;
			}
			break;
		default:
			break;
		}
		if (addr_check && addr_bad) {
			if (!r.error) {
				S->bad_addr_accepted++;
				report(hart, n, "address outside guest RAM accepted", fid, a,
				       r.error, r.value);
			} else if (r.error != SBI_ERR_INVALID_ADDRESS &&
				   r.error != SBI_ERR_INVALID_PARAM) {
				S->bad_addr_err++;
				report(hart, n, "bad address: wrong error", fid, a, r.error,
				       r.value);
			}
		}
		if (fid == SBI_EXT_PMU_EVENT_GET_INFO && ei_num) {
			/* only output words inside [lo, lo + 16 num) may change, to 0/1 */
			unsigned long first = (ei_lo - (unsigned long)ar->ei) / 16;
			bool aligned = !(ei_lo & 15), ok = !r.error && aligned;
			unsigned long changed = 0;

			for (unsigned long i = 0; i < EI_N; i++) {
				struct ei_entry *e = &ar->ei[i], *c = &ei_copy[hart][i];
				bool inside = ok && i >= first && i - first < ei_num;

				if (e->event_idx != c->event_idx ||
				    e->event_data != c->event_data ||
				    (!inside && e->output != c->output) ||
				    (inside && e->output > 1))
					changed++;
				c->output = e->output;
			}
			if (changed) {
				S->ei_corrupt++;
				report(hart, n, "EVENT_GET_INFO wrote outside its outputs", fid, a,
				       r.error, changed);
				randomize_ei(rs, ar, hart);
			} else if (PCT(5)) {
				randomize_ei(rs, ar, hart);
			}
		}
		/* a guest area the hypervisor must write only on request */
		if (fid == SBI_EXT_PMU_EVENT_GET_INFO && !ei_num && PCT(1))
			randomize_ei(rs, ar, hart);
	}
	/* leave nothing running: stop and release every counter */
	gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_COUNTER_STOP, 0, valid_mask, SBI_PMU_STOP_FLAG_RESET,
		    0, 0, 0);
	gt_sbi_call(SBI_EXT_PMU, SBI_EXT_PMU_SNAPSHOT_SET_SHMEM, ~0UL, ~0UL, 0, 0, 0, 0);
	check_arena(hart, calls, live_snap);
	S->ns = (gt_rdtime() - t0) * 1000 / (gt_timebase() / 1000000);
}
