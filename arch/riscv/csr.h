/* SPDX-License-Identifier: BSD-2-Clause */
/* CSR numbers, bits and accessors (names as in the privileged spec). */
#ifndef ARCH_CSR_H
#define ARCH_CSR_H

#define CSR_SSTATUS    0x100
#define CSR_SIE	       0x104
#define CSR_STVEC      0x105
#define CSR_SCOUNTEREN 0x106
#define CSR_SENVCFG    0x10a
#define CSR_SSCRATCH   0x140
#define CSR_SEPC       0x141
#define CSR_SCAUSE     0x142
#define CSR_STVAL      0x143
#define CSR_SIP	       0x144
#define CSR_STIMECMP   0x14d
#define CSR_SATP       0x180
#define CSR_SCOUNTOVF  0xda0

#define CSR_VSSTATUS  0x200
#define CSR_VSIE      0x204
#define CSR_VSTVEC    0x205
#define CSR_VSSCRATCH 0x240
#define CSR_VSEPC     0x241
#define CSR_VSCAUSE   0x242
#define CSR_VSTVAL    0x243
#define CSR_VSIP      0x244
#define CSR_VSTIMECMP 0x24d
#define CSR_VSATP     0x280
#define CSR_SISELECT  0x150 /* Ssaia: the hart's own S-level interrupt file */
#define CSR_SIREG     0x151
#define CSR_STOPEI    0x15c
#define CSR_VSISELECT 0x250 /* Ssaia: the guest's siselect */
#define CSR_VSIREG    0x251

#define CSR_HSTATUS    0x600
#define CSR_HEDELEG    0x602
#define CSR_HIDELEG    0x603
#define CSR_HIE	       0x604
#define CSR_HTIMEDELTA 0x605
#define HCOUNTEREN_TM  (1UL << 1) /* the time CSR: the core always lets guests read it */
#define CSR_HCOUNTEREN 0x606
#define CSR_HGEIE      0x607
#define CSR_HVIEN      0x608
#define CSR_HENVCFG    0x60a
#define CSR_HSTATEEN0  0x60c
#define CSR_HTVAL      0x643
#define CSR_HIP	       0x644
#define CSR_HVIP       0x645
#define CSR_HTINST     0x64a
#define CSR_HGATP      0x680
#define CSR_HGEIP      0xe12

#define CSR_CYCLE	 0xc00
#define CSR_TIME	 0xc01
#define CSR_INSTRET	 0xc02
#define CSR_HPMCOUNTER3	 0xc03
#define CSR_HPMCOUNTER31 0xc1f

#define SSTATUS_SIE	   (1UL << 1)
#define SSTATUS_SPIE	   (1UL << 5)
#define SSTATUS_SPP	   (1UL << 8)
#define SSTATUS_FS	   (3UL << 13)
#define SSTATUS_FS_INITIAL (1UL << 13)
#define SSTATUS_FS_CLEAN   (2UL << 13)
#define SSTATUS_FS_DIRTY   (3UL << 13)
#define SSTATUS_VS	   (3UL << 9)
#define SSTATUS_SUM	   (1UL << 18)

#define HSTATUS_VSBE	    (1UL << 5)
#define HSTATUS_GVA	    (1UL << 6)
#define HSTATUS_SPV	    (1UL << 7)
#define HSTATUS_SPVP	    (1UL << 8)
#define HSTATUS_HU	    (1UL << 9)
#define HSTATUS_VTVM	    (1UL << 20)
#define HSTATUS_VTW	    (1UL << 21)
#define HSTATUS_VTSR	    (1UL << 22)
#define HSTATUS_VGEIN_SHIFT 12 /* guest external interrupt file VS-mode uses */
#define HSTATUS_VGEIN	    (0x3fUL << HSTATUS_VGEIN_SHIFT)

#define ENVCFG_STCE	  (1UL << 63)
#define ENVCFG_PBMTE	  (1UL << 62)
#define HSTATEEN0_ENVCFG  (1UL << 62) /* VS-mode may access senvcfg */
#define HSTATEEN0_CSRIND  (1UL << 60) /* ... siselect/sireg (vsiselect/vsireg) */
#define HSTATEEN0_AIA	  (1UL << 59) /* ... the other AIA CSRs (stopi: vstopi) */
#define HSTATEEN0_IMSIC	  (1UL << 58) /* ... stopei (vstopei) */
#define ENVCFG_CBZE	  (1UL << 7)
#define ENVCFG_CBCFE	  (1UL << 6)
#define ENVCFG_CBIE_FLUSH (1UL << 4) /* CBIE = 01: cbo.inval flushes (never drops our data) */

#define CAUSE_IRQ_FLAG		     (1UL << 63)
#define CAUSE_MISALIGNED_FETCH	     0
#define CAUSE_FETCH_ACCESS	     1
#define CAUSE_ILLEGAL_INSN	     2
#define CAUSE_BREAKPOINT	     3
#define CAUSE_MISALIGNED_LOAD	     4
#define CAUSE_LOAD_ACCESS	     5
#define CAUSE_MISALIGNED_STORE	     6
#define CAUSE_STORE_ACCESS	     7
#define CAUSE_USER_ECALL	     8
#define CAUSE_SUPERVISOR_ECALL	     9
#define CAUSE_VS_ECALL		     10
#define CAUSE_FETCH_PAGE_FAULT	     12
#define CAUSE_LOAD_PAGE_FAULT	     13
#define CAUSE_STORE_PAGE_FAULT	     15
#define CAUSE_FETCH_GUEST_PAGE_FAULT 20
#define CAUSE_LOAD_GUEST_PAGE_FAULT  21
#define CAUSE_VIRTUAL_INSN	     22
#define CAUSE_STORE_GUEST_PAGE_FAULT 23

#ifndef __ASSEMBLER__
#define csr_read(csr)                                                                              \
	({                                                                                         \
		unsigned long __v;                                                                 \
		asm volatile("csrr %0, " __csr_str(csr) : "=r"(__v) : : "memory");                 \
		__v;                                                                               \
	})
#define csr_write(csr, val)                                                                        \
	({                                                                                         \
		unsigned long __v = (unsigned long)(val);                                          \
		asm volatile("csrw " __csr_str(csr) ", %0" : : "rK"(__v) : "memory");              \
	})
#define csr_set(csr, val)                                                                          \
	({                                                                                         \
		unsigned long __v = (unsigned long)(val);                                          \
		asm volatile("csrs " __csr_str(csr) ", %0" : : "rK"(__v) : "memory");              \
	})
#define csr_clear(csr, val)                                                                        \
	({                                                                                         \
		unsigned long __v = (unsigned long)(val);                                          \
		asm volatile("csrc " __csr_str(csr) ", %0" : : "rK"(__v) : "memory");              \
	})
#define csr_swap(csr, val)                                                                         \
	({                                                                                         \
		unsigned long __v = (unsigned long)(val);                                          \
		asm volatile("csrrw %0, " __csr_str(csr) ", %1"                                    \
			     : "=r"(__v)                                                           \
			     : "rK"(__v)                                                           \
			     : "memory");                                                          \
		__v;                                                                               \
	})
#define __csr_str(x)  __csr_str2(x)
#define __csr_str2(x) #x
#endif

#endif
