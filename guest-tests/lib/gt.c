// SPDX-License-Identifier: BSD-2-Clause
/* Boot, SBI wrappers, checks, traps, secondary harts and timer helpers. */
#include "guest-tests/lib/gt.h"
#include "arch/riscv/sbi_call.h"

struct gt_hart gt_harts[GT_MAX_HARTS];
const unsigned long gt_hart_size = sizeof(struct gt_hart);
_Static_assert(offsetof(struct gt_hart, user_ksp) == 8, "entry.S HART_USER_KSP");
_Static_assert(offsetof(struct gt_hart, entry_sstatus) == 16, "entry.S HART_ENTRY_SSTATUS");
_Static_assert(offsetof(struct gt_hart, entry_satp) == 24, "entry.S HART_ENTRY_SATP");

static volatile unsigned long n_passed, n_failed;
static gt_irq_handler_t irq_handlers[64];
static unsigned long boot_hartid;
static unsigned long sbi_impl_id;

void gt_console_init(void);
void gt_boot_c(unsigned long hartid, const void *fdt);
void gt_secondary_c(unsigned long hartid, unsigned long opaque);
void gt_trap_c(struct gt_frame *f);
void __attribute__((noreturn)) gt_user_return(unsigned long ret);

/* ---- SBI ---- */
struct sbi_ret gt_sbi_call(unsigned long eid, unsigned long fid, unsigned long arg0,
			   unsigned long arg1, unsigned long arg2, unsigned long arg3,
			   unsigned long arg4, unsigned long arg5)
{
	/* the ecall is the same from VS-mode as from HS-mode: the hypervisor's inline one */
	return sbi_ecall(eid, fid, arg0, arg1, arg2, arg3, arg4, arg5);
}

long gt_sbi_probe(unsigned long eid)
{
	struct sbi_ret r = gt_sbi1(SBI_EXT_BASE, SBI_EXT_BASE_PROBE_EXT, eid);

	return r.error ? 0 : (long)r.value;
}

struct sbi_ret gt_sbi_set_timer(uint64_t stime)
{
	return gt_sbi1(SBI_EXT_TIME, SBI_EXT_TIME_SET_TIMER, stime);
}

struct sbi_ret gt_sbi_send_ipi(unsigned long mask, unsigned long base)
{
	return gt_sbi2(SBI_EXT_IPI, SBI_EXT_IPI_SEND_IPI, mask, base);
}

struct sbi_ret gt_sbi_hart_status(unsigned long hartid)
{
	return gt_sbi1(SBI_EXT_HSM, SBI_EXT_HSM_HART_GET_STATUS, hartid);
}

struct sbi_ret gt_sbi_hart_stop(void)
{
	return gt_sbi0(SBI_EXT_HSM, SBI_EXT_HSM_HART_STOP);
}

struct sbi_ret gt_sbi_hart_suspend(uint32_t type, unsigned long resume, unsigned long opaque)
{
	return gt_sbi3(SBI_EXT_HSM, SBI_EXT_HSM_HART_SUSPEND, type, resume, opaque);
}

void gt_sbi_shutdown(bool failure)
{
	struct sbi_ret r;

	r = gt_sbi2(SBI_EXT_SRST, SBI_EXT_SRST_RESET, SBI_SRST_RESET_TYPE_SHUTDOWN,
		    failure ? SBI_SRST_RESET_REASON_SYSFAIL : SBI_SRST_RESET_REASON_NONE);
	gt_printf("gt: SRST shutdown returned error %ld\n", r.error);
	for (;;)
		gt_wfi();
}

/* ---- checks ---- */
void gt_report(bool ok, const char *name, const char *file, int line, const char *expr,
	       unsigned long got, unsigned long expected)
{
	if (ok) {
		gt_atomic_add(&n_passed, 1);
		gt_printf("TEST PASS %s:%s\n", gt_image_name, name);
	} else {
		gt_atomic_add(&n_failed, 1);
		gt_printf("TEST FAIL %s:%s %s:%d: %s got=0x%lx expected=0x%lx\n", gt_image_name,
			  name, file, line, expr, got, expected);
	}
}

unsigned long gt_passed(void)
{
	return gt_atomic_load(&n_passed);
}

unsigned long gt_failed(void)
{
	return gt_atomic_load(&n_failed);
}

void gt_exit(void)
{
	unsigned long p = gt_passed(), f = gt_failed();

	gt_printf("TEST DONE %s %lu passed, %lu failed\n", gt_image_name, p, f);
	gt_sbi_shutdown(f != 0);
}

void gt_abort(const char *name, const char *file, int line, const char *msg, unsigned long got,
	      unsigned long expected)
{
	gt_report(false, name, file, line, msg, got, expected);
	gt_exit();
}

/* ---- boot ---- */
void gt_boot_c(unsigned long hartid, const void *fdt)
{
	unsigned long i;

	for (i = 0; i < GT_MAX_HARTS; i++) {
		gt_harts[i].hartid = i;
		gt_harts[i].expect_cause = -1;
		gt_harts[i].trapped_cause = -1;
	}
	boot_hartid = hartid;
	sbi_impl_id = gt_sbi0(SBI_EXT_BASE, SBI_EXT_BASE_GET_IMP_ID).value;
	gt_console_init();
	gt_fdt_init(fdt);
	gt_main(hartid, fdt);
	gt_exit();
}

bool gt_native(void)
{
	return sbi_impl_id == 1;
}

unsigned long gt_boot_hartid(void)
{
	return boot_hartid;
}

void gt_secondary_c(unsigned long hartid, unsigned long opaque)
{
	struct gt_hart *h = gt_this_hart();
	gt_hart_fn_t fn;
	struct sbi_ret r;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	fn = h->start_fn;
	if (fn)
		fn(hartid, opaque);
	else
		gt_printf("gt: hart %lu started with no function (opaque 0x%lx)\n", hartid, opaque);
	r = gt_sbi_hart_stop();
	gt_abort("hart-stop-returned", __FILE__, __LINE__, "hart_stop returned", r.error, 0);
}

struct sbi_ret gt_hart_start(unsigned long hartid, gt_hart_fn_t fn, unsigned long opaque)
{
	if (hartid < GT_MAX_HARTS) {
		gt_harts[hartid].start_fn = fn;
		gt_harts[hartid].start_opaque = opaque;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return gt_sbi3(SBI_EXT_HSM, SBI_EXT_HSM_HART_START, hartid,
		       (unsigned long)gt_secondary_entry, opaque);
}

long gt_wait_hart_state(unsigned long hartid, long state, uint64_t timeout_ticks)
{
	uint64_t end = gt_rdtime() + timeout_ticks;
	struct sbi_ret r;

	do {
		r = gt_sbi_hart_status(hartid);
		if (r.error)
			return r.error;
		if ((long)r.value == state)
			return (long)r.value;
	} while (gt_rdtime() < end);
	return (long)r.value;
}

/* ---- traps ---- */
void gt_irq_register(unsigned long irq, gt_irq_handler_t fn)
{
	if (irq < 64)
		irq_handlers[irq] = fn;
}

unsigned long gt_irq_count(unsigned long irq)
{
	return irq < 64 ? gt_this_hart()->irq_count[irq] : 0;
}

void gt_expect_trap(long cause)
{
	struct gt_hart *h = gt_this_hart();

	h->trapped_cause = -1;
	h->trapped_stval = 0;
	h->trapped_sepc = 0;
	h->expect_cause = cause;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

long gt_trapped(void)
{
	struct gt_hart *h = gt_this_hart();

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	h->expect_cause = -1;
	return h->trapped_cause;
}

void gt_trap_c(struct gt_frame *f)
{
	struct gt_hart *h = gt_this_hart();
	unsigned long cause = f->scause;

	if (cause & SCAUSE_IRQ) {
		unsigned long irq = cause & ~SCAUSE_IRQ;

		if (irq < 64) {
			h->irq_count[irq]++;
			h->last_irq_time = gt_rdtime();
			if (irq_handlers[irq]) {
				irq_handlers[irq](irq, f);
				return;
			}
		}
		/* unexpected: mask it so that it cannot storm, and report */
		if (irq < 64)
			csr_clear(sie, 1UL << irq);
		gt_report(false, "unexpected-interrupt", __FILE__, __LINE__, "scause", cause, 0);
		return;
	}
	if (cause == EXC_ECALL_U && f->regs[GT_REG_A7] == GT_USER_EXIT_EID)
		gt_user_return(f->regs[GT_REG_A0]);
	if (h->expect_cause >= 0) {
		bool fetch = cause == EXC_INSN_MISALIGNED || cause == EXC_INSN_ACCESS ||
			     cause == EXC_INSN_PAGE;
		uint16_t insn;

		h->trapped_cause = (long)cause;
		h->trapped_stval = f->stval;
		h->trapped_sepc = f->sepc;
		h->trapped_spp = (f->sstatus & SSTATUS_SPP) ? 1 : 0;
		h->expect_cause = -1;
		if (fetch && !h->trapped_spp)
			gt_user_return(-1UL); /* nothing to skip: leave U-mode */
		if (!fetch) {
			insn = *(volatile uint16_t *)f->sepc;
			f->sepc += (insn & 3) == 3 ? 4 : 2;
			return;
		}
	}
	gt_printf("gt: unexpected exception on hart %lu: scause=0x%lx sepc=0x%lx stval=0x%lx "
		  "sstatus=0x%lx\n",
		  h->hartid, cause, f->sepc, f->stval, f->sstatus);
	gt_abort("unexpected-exception", __FILE__, __LINE__, "scause", cause, 0);
}

/* ---- timer ---- */
uint64_t gt_us_to_ticks(uint64_t us)
{
	return us * gt_timebase() / 1000000;
}

uint64_t gt_ticks_to_us(uint64_t ticks)
{
	return ticks * 1000000 / gt_timebase();
}

void gt_delay_ticks(uint64_t ticks)
{
	uint64_t end = gt_rdtime() + ticks;

	while (gt_rdtime() < end)
		gt_cpu_relax();
}

bool gt_wait_ge(volatile unsigned long *p, unsigned long val, uint64_t timeout_ticks)
{
	uint64_t end = gt_rdtime() + timeout_ticks;

	for (;;) {
		if (gt_atomic_load(p) >= val)
			return true;
		if (gt_rdtime() >= end)
			return false;
		gt_cpu_relax();
	}
}

bool gt_wfi_wait_ge(volatile unsigned long *p, unsigned long val, uint64_t timeout_ticks)
{
	uint64_t end = gt_rdtime() + timeout_ticks;

	for (;;) {
		gt_irq_disable();
		if (gt_atomic_load(p) >= val) {
			gt_irq_enable();
			return true;
		}
		if (gt_rdtime() >= end) {
			gt_irq_enable();
			return false;
		}
		gt_wfi();
		gt_irq_enable();
	}
}
