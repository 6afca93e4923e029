/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gt: a small freestanding library for bare-metal guest test images that
 * run in (V)S-mode with satp off. See guest-tests/README.md.
 */
#ifndef GT_H
#define GT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/riscv/sbi_spec.h"

#define GT_MAX_HARTS   8
#define GT_STACK_SIZE  16384
#define GT_USTACK_SIZE 8192

/* CSRs and bits as a (V)S-mode guest sees them */
#define SSTATUS_SIE  (1UL << 1)
#define SSTATUS_SPIE (1UL << 5)
#define SSTATUS_SPP  (1UL << 8)
#define SIP_SSIP     (1UL << IRQ_S_SOFT)
#define SIP_STIP     (1UL << IRQ_S_TIMER)
#define SIP_SEIP     (1UL << IRQ_S_EXT)
#define SIE_SSIE     SIP_SSIP
#define SIE_STIE     SIP_STIP
#define SIE_SEIE     SIP_SEIP
#define SCAUSE_IRQ   (1UL << 63)

#define EXC_INSN_MISALIGNED  0
#define EXC_INSN_ACCESS	     1
#define EXC_ILLEGAL_INSN     2
#define EXC_BREAKPOINT	     3
#define EXC_LOAD_MISALIGNED  4
#define EXC_LOAD_ACCESS	     5
#define EXC_STORE_MISALIGNED 6
#define EXC_STORE_ACCESS     7
#define EXC_ECALL_U	     8
#define EXC_ECALL_S	     9
#define EXC_INSN_PAGE	     12
#define EXC_LOAD_PAGE	     13
#define EXC_STORE_PAGE	     15

#define __gt_str(x) #x
#define gt_str(x)   __gt_str(x)

#define csr_read(csr)                                                                              \
	({                                                                                         \
		unsigned long __v;                                                                 \
		asm volatile("csrr %0, " gt_str(csr) : "=r"(__v)::"memory");                       \
		__v;                                                                               \
	})
#define csr_write(csr, val)                                                                        \
	({ asm volatile("csrw " gt_str(csr) ", %0" ::"rK"((unsigned long)(val)) : "memory"); })
#define csr_set(csr, val)                                                                          \
	({ asm volatile("csrs " gt_str(csr) ", %0" ::"rK"((unsigned long)(val)) : "memory"); })
#define csr_clear(csr, val)                                                                        \
	({ asm volatile("csrc " gt_str(csr) ", %0" ::"rK"((unsigned long)(val)) : "memory"); })

static inline uint64_t gt_rdtime(void)
{
	return csr_read(time);
}

static inline void gt_wfi(void)
{
	asm volatile("wfi" ::: "memory");
}

static inline void gt_irq_enable(void)
{
	csr_set(sstatus, SSTATUS_SIE);
}

static inline void gt_irq_disable(void)
{
	csr_clear(sstatus, SSTATUS_SIE);
}

static inline void gt_cpu_relax(void)
{
	asm volatile("nop; nop; nop; nop" ::: "memory");
}

/* ---- SBI ---- */
struct sbi_ret gt_sbi_call(unsigned long eid, unsigned long fid, unsigned long a0, unsigned long a1,
			   unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5);
#define gt_sbi0(e, f)		  gt_sbi_call(e, f, 0, 0, 0, 0, 0, 0)
#define gt_sbi1(e, f, a)	  gt_sbi_call(e, f, a, 0, 0, 0, 0, 0)
#define gt_sbi2(e, f, a, b)	  gt_sbi_call(e, f, a, b, 0, 0, 0, 0)
#define gt_sbi3(e, f, a, b, c)	  gt_sbi_call(e, f, a, b, c, 0, 0, 0)
#define gt_sbi4(e, f, a, b, c, d) gt_sbi_call(e, f, a, b, c, d, 0, 0)
long gt_sbi_probe(unsigned long eid);
struct sbi_ret gt_sbi_set_timer(uint64_t stime);
struct sbi_ret gt_sbi_send_ipi(unsigned long mask, unsigned long base);
struct sbi_ret gt_sbi_hart_status(unsigned long hartid);
struct sbi_ret gt_sbi_hart_stop(void);
struct sbi_ret gt_sbi_hart_suspend(uint32_t type, unsigned long resume, unsigned long opaque);
void __attribute__((noreturn)) gt_sbi_shutdown(bool failure);

/*
 * True when running directly on OpenSBI (SBI implementation ID 1) instead of
 * the hypervisor: for the few checks where OpenSBI is known to diverge from
 * the SBI specification that the hypervisor implements.
 */
bool gt_native(void);

/* ---- console ---- */
void gt_puts(const char *s); /* writes s as is (a whole line should end in \n) */
/* The console to oneself (other harts' lines wait), interrupts off: what to give unlock */
unsigned long gt_console_lock(void);
void gt_console_unlock(unsigned long flags);
int gt_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int gt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int gt_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- checks (output protocol: TEST PASS / TEST FAIL / TEST DONE) ---- */
extern const char gt_image_name[]; /* defined by each image: GT_IMAGE("name") */
#define GT_IMAGE(name) const char gt_image_name[] = name

void gt_report(bool ok, const char *name, const char *file, int line, const char *expr,
	       unsigned long got, unsigned long expected);
unsigned long gt_passed(void);
unsigned long gt_failed(void);

/* Each check has a stable name; returns whether it passed. */
#define GT_CHECK_EQ(name, got, expected)                                                           \
	({                                                                                         \
		unsigned long __g = (unsigned long)(got), __e = (unsigned long)(expected);         \
		gt_report(__g == __e, name, __FILE__, __LINE__, #got " == " #expected, __g, __e);  \
		__g == __e;                                                                        \
	})
#define GT_CHECK_NE(name, got, unexpected)                                                         \
	({                                                                                         \
		unsigned long __g = (unsigned long)(got), __e = (unsigned long)(unexpected);       \
		gt_report(__g != __e, name, __FILE__, __LINE__, #got " != " #unexpected, __g,      \
			  __e);                                                                    \
		__g != __e;                                                                        \
	})
/* unsigned comparisons: got >= bound, got <= bound */
#define GT_CHECK_GE(name, got, bound)                                                              \
	({                                                                                         \
		unsigned long __g = (unsigned long)(got), __e = (unsigned long)(bound);            \
		gt_report(__g >= __e, name, __FILE__, __LINE__, #got " >= " #bound, __g, __e);     \
		__g >= __e;                                                                        \
	})
#define GT_CHECK_LE(name, got, bound)                                                              \
	({                                                                                         \
		unsigned long __g = (unsigned long)(got), __e = (unsigned long)(bound);            \
		gt_report(__g <= __e, name, __FILE__, __LINE__, #got " <= " #bound, __g, __e);     \
		__g <= __e;                                                                        \
	})
/*
 * A counter index a call answered (config_matching): first <= idx <= 63. An
 * SBI error is negative, which GT_CHECK_GE's unsigned compare would pass.
 */
#define GT_CHECK_CTR(name, idx, first)                                                             \
	({                                                                                         \
		long __i = (long)(idx), __f = (long)(first);                                       \
		bool __ok = __i >= __f && __i <= 63;                                               \
		gt_report(__ok, name, __FILE__, __LINE__, #first " <= " #idx " <= 63",             \
			  (unsigned long)__i, (unsigned long)__f);                                 \
		__ok;                                                                              \
	})
/* got & mask == expected */
#define GT_CHECK_BITS(name, got, mask, expected)                                                   \
	({                                                                                         \
		unsigned long __g = (unsigned long)(got) & (unsigned long)(mask);                  \
		unsigned long __e = (unsigned long)(expected);                                     \
		gt_report(__g == __e, name, __FILE__, __LINE__,                                    \
			  "(" #got " & " #mask ") == " #expected, __g, __e);                       \
		__g == __e;                                                                        \
	})
/* An SBI return: error == expected error */
#define GT_CHECK_SBI(name, ret, experr) GT_CHECK_EQ(name, (ret).error, (experr))

/* Print TEST DONE and shut the guest down (failure if any check failed). */
void __attribute__((noreturn)) gt_exit(void);
/* Fail check `name` with a message and exit at once. */
void __attribute__((noreturn)) gt_abort(const char *name, const char *file, int line,
					const char *msg, unsigned long got, unsigned long expected);

/* ---- per-hart state, traps and interrupts ---- */
struct gt_frame {
	unsigned long regs[32]; /* x0..x31 (regs[2] = sp at trap time) */
	unsigned long sepc;
	unsigned long sstatus;
	unsigned long scause;
	unsigned long stval;
};
#define GT_REG_SP 2
#define GT_REG_A0 10
#define GT_REG_A7 17

typedef void (*gt_irq_handler_t)(unsigned long irq, struct gt_frame *f);
typedef void (*gt_hart_fn_t)(unsigned long hartid, unsigned long opaque);

struct gt_hart {
	unsigned long hartid;	     /* offset 0 */
	unsigned long user_ksp;	     /* offset 8: kernel sp saved by gt_run_user */
	unsigned long entry_sstatus; /* offset 16: sstatus at gt_secondary_entry */
	unsigned long entry_satp;    /* offset 24: satp at gt_secondary_entry */
	gt_hart_fn_t start_fn;
	unsigned long start_opaque;
	/* expected exception */
	volatile long expect_cause;  /* -1: none expected */
	volatile long trapped_cause; /* -1: no trap since gt_expect_trap() */
	volatile unsigned long trapped_stval;
	volatile unsigned long trapped_sepc;
	volatile unsigned long trapped_spp; /* sstatus.SPP of the trap */
	volatile unsigned long irq_count[64];
	volatile unsigned long last_irq_time;
};

extern struct gt_hart gt_harts[GT_MAX_HARTS];
static inline struct gt_hart *gt_this_hart(void)
{
	struct gt_hart *h;

	asm volatile("mv %0, tp" : "=r"(h));
	return h;
}
static inline unsigned long gt_hartid(void)
{
	return gt_this_hart()->hartid;
}

/* Register an interrupt handler (irq = scause without the interrupt bit). */
void gt_irq_register(unsigned long irq, gt_irq_handler_t fn);
unsigned long gt_irq_count(unsigned long irq);

/*
 * Expect an exception: gt_expect_trap(cause); <code>; gt_trapped() returns
 * the scause that was taken (or -1). The faulting instruction is skipped; an
 * instruction fetch fault in U-mode ends gt_run_user() with ~0UL instead.
 */
void gt_expect_trap(long cause);
long gt_trapped(void);

/* Run fn(arg) in U-mode on this hart's user stack; returns its return value. */
unsigned long gt_run_user(unsigned long (*fn)(unsigned long), unsigned long arg);
/* From U-mode code: make an ecall (a7 = eid, a6 = fid) */
#define GT_USER_EXIT_EID 0x47545558UL /* "GTUX": internal, never reaches the SBI */

/* ---- secondary harts ---- */
/* Asm entry for SBI HSM hart_start: a0 = hartid, a1 = opaque */
void gt_secondary_entry(void);
/*
 * Start hart `hartid` running fn(hartid, opaque); when fn returns the hart
 * stops itself with HSM hart_stop. Returns the SBI result of hart_start.
 */
struct sbi_ret gt_hart_start(unsigned long hartid, gt_hart_fn_t fn, unsigned long opaque);
/* Poll HSM status of hartid until it is `state` or timeout_ticks pass. */
long gt_wait_hart_state(unsigned long hartid, long state, uint64_t timeout_ticks);

/* ---- timer ---- */
uint64_t gt_timebase(void); /* ticks per second from the FDT */
uint64_t gt_us_to_ticks(uint64_t us);
uint64_t gt_ticks_to_us(uint64_t ticks);
void gt_delay_ticks(uint64_t ticks); /* busy-wait */
/* Poll until *p >= val or timeout_ticks pass; returns whether *p >= val */
bool gt_wait_ge(volatile unsigned long *p, unsigned long val, uint64_t timeout_ticks);
/*
 * Same with WFI between checks (interrupts are enabled while waiting): only
 * for waits that an enabled interrupt ends, as WFI may not return otherwise.
 */
bool gt_wfi_wait_ge(volatile unsigned long *p, unsigned long val, uint64_t timeout_ticks);

/* ---- device tree ---- */
void gt_fdt_init(const void *fdt);
unsigned long gt_nr_harts(void);		/* cpu nodes under /cpus */
unsigned long gt_hart_id_at(unsigned long idx); /* idx-th cpu's hart id */
unsigned long gt_max_hart_id(void);
bool gt_hart_has_ext(unsigned long hartid, const char *ext); /* riscv,isa-extensions */
unsigned long gt_boot_hartid(void);
const void *gt_fdt(void);
unsigned long gt_ram_base(void); /* first /memory node's reg */
unsigned long gt_ram_size(void);
/* Property `prop` of the node at full path `path` (e.g. "/cpus/cpu@0"), or NULL */
const void *gt_fdt_getprop(const char *path, const char *prop, unsigned int *lenp);
uint32_t gt_fdt32(const void *p); /* big-endian cell */
/*
 * The image's bootargs (/chosen): whether a word starts with key ("hog",
 * "imsic.count"), and the number after a key ending in '=' ("ms="), def
 * when no word starts with it
 */
bool gt_arg_has(const char *key);
unsigned long gt_arg_ul(const char *key, unsigned long def);

/* ---- Sv39 page tables (the guest's own translation, VS-stage) ---- */
#define PTE_V	    (1UL << 0)
#define PTE_R	    (1UL << 1)
#define PTE_W	    (1UL << 2)
#define PTE_X	    (1UL << 3)
#define PTE_U	    (1UL << 4)
#define PTE_G	    (1UL << 5)
#define PTE_A	    (1UL << 6)
#define PTE_D	    (1UL << 7)
#define SATP_SV39   (8UL << 60)
#define SSTATUS_SUM (1UL << 18)

/* An entry for physical address pa */
static inline unsigned long gt_pte(unsigned long pa, unsigned long flags)
{
	return ((pa >> 12) << 10) | flags;
}

/* ---- atomics ---- */
static inline unsigned long gt_atomic_add(volatile unsigned long *p, unsigned long v)
{
	return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static inline unsigned long gt_atomic_load(volatile unsigned long *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}
static inline void gt_atomic_store(volatile unsigned long *p, unsigned long v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* ---- entry point each image provides ---- */
void gt_main(unsigned long hartid, const void *fdt);

#endif
