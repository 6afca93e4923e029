/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Constants of the RISC-V SBI specification (v3.0), shared by the
 * hypervisor and the bare-metal guest test images. Names follow the spec.
 */
#ifndef SBI_SPEC_H
#define SBI_SPEC_H

#ifndef __ASSEMBLER__
/* The two-register result of every SBI call */
struct sbi_ret {
	long error;
	unsigned long value;
};
#endif

/* Extension IDs */
#define SBI_EXT_0_1_SET_TIMER		   0x00
#define SBI_EXT_0_1_CONSOLE_PUTCHAR	   0x01
#define SBI_EXT_0_1_CONSOLE_GETCHAR	   0x02
#define SBI_EXT_0_1_CLEAR_IPI		   0x03
#define SBI_EXT_0_1_SEND_IPI		   0x04
#define SBI_EXT_0_1_REMOTE_FENCE_I	   0x05
#define SBI_EXT_0_1_REMOTE_SFENCE_VMA	   0x06
#define SBI_EXT_0_1_REMOTE_SFENCE_VMA_ASID 0x07
#define SBI_EXT_0_1_SHUTDOWN		   0x08
#define SBI_EXT_BASE			   0x10
#define SBI_EXT_TIME			   0x54494D45
#define SBI_EXT_IPI			   0x735049
#define SBI_EXT_RFENCE			   0x52464E43
#define SBI_EXT_HSM			   0x48534D
#define SBI_EXT_SRST			   0x53525354
#define SBI_EXT_PMU			   0x504D55
#define SBI_EXT_DBCN			   0x4442434E

/* Error codes */
#define SBI_SUCCESS		  0
#define SBI_ERR_FAILED		  -1
#define SBI_ERR_NOT_SUPPORTED	  -2
#define SBI_ERR_INVALID_PARAM	  -3
#define SBI_ERR_DENIED		  -4
#define SBI_ERR_INVALID_ADDRESS	  -5
#define SBI_ERR_ALREADY_AVAILABLE -6
#define SBI_ERR_ALREADY_STARTED	  -7
#define SBI_ERR_ALREADY_STOPPED	  -8
#define SBI_ERR_NO_SHMEM	  -9
#define SBI_ERR_INVALID_STATE	  -10
#define SBI_ERR_BAD_RANGE	  -11
#define SBI_ERR_TIMEOUT		  -12
#define SBI_ERR_IO		  -13
#define SBI_ERR_DENIED_LOCKED	  -14

/* BASE */
#define SBI_EXT_BASE_GET_SPEC_VERSION  0
#define SBI_EXT_BASE_GET_IMP_ID	       1
#define SBI_EXT_BASE_GET_IMP_VERSION   2
#define SBI_EXT_BASE_PROBE_EXT	       3
#define SBI_EXT_BASE_GET_MVENDORID     4
#define SBI_EXT_BASE_GET_MARCHID       5
#define SBI_EXT_BASE_GET_MIMPID	       6
#define SBI_SPEC_VERSION(major, minor) (((unsigned long)(major) << 24) | (minor))

/* TIME, IPI, RFENCE */
#define SBI_EXT_TIME_SET_TIMER		       0
#define SBI_EXT_IPI_SEND_IPI		       0
#define SBI_EXT_RFENCE_REMOTE_FENCE_I	       0
#define SBI_EXT_RFENCE_REMOTE_SFENCE_VMA       1
#define SBI_EXT_RFENCE_REMOTE_SFENCE_VMA_ASID  2
#define SBI_EXT_RFENCE_REMOTE_HFENCE_GVMA_VMID 3
#define SBI_EXT_RFENCE_REMOTE_HFENCE_GVMA      4
#define SBI_EXT_RFENCE_REMOTE_HFENCE_VVMA_ASID 5
#define SBI_EXT_RFENCE_REMOTE_HFENCE_VVMA      6

/* HSM */
#define SBI_EXT_HSM_HART_START		0
#define SBI_EXT_HSM_HART_STOP		1
#define SBI_EXT_HSM_HART_GET_STATUS	2
#define SBI_EXT_HSM_HART_SUSPEND	3
#define SBI_HSM_STATE_STARTED		0
#define SBI_HSM_STATE_STOPPED		1
#define SBI_HSM_STATE_START_PENDING	2
#define SBI_HSM_STATE_STOP_PENDING	3
#define SBI_HSM_STATE_SUSPENDED		4
#define SBI_HSM_STATE_SUSPEND_PENDING	5
#define SBI_HSM_STATE_RESUME_PENDING	6
#define SBI_HSM_SUSPEND_RET_DEFAULT	0x00000000UL
#define SBI_HSM_SUSPEND_NON_RET_DEFAULT 0x80000000UL

/* SRST */
#define SBI_EXT_SRST_RESET		0
#define SBI_SRST_RESET_TYPE_SHUTDOWN	0
#define SBI_SRST_RESET_TYPE_COLD_REBOOT 1
#define SBI_SRST_RESET_TYPE_WARM_REBOOT 2
#define SBI_SRST_RESET_REASON_NONE	0
#define SBI_SRST_RESET_REASON_SYSFAIL	1

/* DBCN */
#define SBI_EXT_DBCN_CONSOLE_WRITE	0
#define SBI_EXT_DBCN_CONSOLE_READ	1
#define SBI_EXT_DBCN_CONSOLE_WRITE_BYTE 2

/* PMU function IDs */
#define SBI_EXT_PMU_NUM_COUNTERS       0
#define SBI_EXT_PMU_COUNTER_GET_INFO   1
#define SBI_EXT_PMU_COUNTER_CFG_MATCH  2
#define SBI_EXT_PMU_COUNTER_START      3
#define SBI_EXT_PMU_COUNTER_STOP       4
#define SBI_EXT_PMU_COUNTER_FW_READ    5
#define SBI_EXT_PMU_COUNTER_FW_READ_HI 6
#define SBI_EXT_PMU_SNAPSHOT_SET_SHMEM 7
#define SBI_EXT_PMU_EVENT_GET_INFO     8

/* PMU event types (event_idx[19:16]) */
#define SBI_PMU_EVENT_TYPE_HW	  0x0
#define SBI_PMU_EVENT_TYPE_CACHE  0x1
#define SBI_PMU_EVENT_TYPE_RAW	  0x2
#define SBI_PMU_EVENT_TYPE_RAW_V2 0x3
#define SBI_PMU_EVENT_TYPE_FW	  0xf

/* General hardware events */
#define SBI_PMU_HW_NO_EVENT		   0
#define SBI_PMU_HW_CPU_CYCLES		   1
#define SBI_PMU_HW_INSTRUCTIONS		   2
#define SBI_PMU_HW_CACHE_REFERENCES	   3
#define SBI_PMU_HW_CACHE_MISSES		   4
#define SBI_PMU_HW_BRANCH_INSTRUCTIONS	   5
#define SBI_PMU_HW_BRANCH_MISSES	   6
#define SBI_PMU_HW_BUS_CYCLES		   7
#define SBI_PMU_HW_STALLED_CYCLES_FRONTEND 8
#define SBI_PMU_HW_STALLED_CYCLES_BACKEND  9
#define SBI_PMU_HW_REF_CPU_CYCLES	   10

/* Firmware events */
#define SBI_PMU_FW_MISALIGNED_LOAD	 0
#define SBI_PMU_FW_MISALIGNED_STORE	 1
#define SBI_PMU_FW_ACCESS_LOAD		 2
#define SBI_PMU_FW_ACCESS_STORE		 3
#define SBI_PMU_FW_ILLEGAL_INSN		 4
#define SBI_PMU_FW_SET_TIMER		 5
#define SBI_PMU_FW_IPI_SENT		 6
#define SBI_PMU_FW_IPI_RCVD		 7
#define SBI_PMU_FW_FENCE_I_SENT		 8
#define SBI_PMU_FW_FENCE_I_RCVD		 9
#define SBI_PMU_FW_SFENCE_VMA_SENT	 10
#define SBI_PMU_FW_SFENCE_VMA_RCVD	 11
#define SBI_PMU_FW_SFENCE_VMA_ASID_SENT	 12
#define SBI_PMU_FW_SFENCE_VMA_ASID_RCVD	 13
#define SBI_PMU_FW_HFENCE_GVMA_SENT	 14
#define SBI_PMU_FW_HFENCE_GVMA_RCVD	 15
#define SBI_PMU_FW_HFENCE_GVMA_VMID_SENT 16
#define SBI_PMU_FW_HFENCE_GVMA_VMID_RCVD 17
#define SBI_PMU_FW_HFENCE_VVMA_SENT	 18
#define SBI_PMU_FW_HFENCE_VVMA_RCVD	 19
#define SBI_PMU_FW_HFENCE_VVMA_ASID_SENT 20
#define SBI_PMU_FW_HFENCE_VVMA_ASID_RCVD 21
#define SBI_PMU_FW_MAX			 22
#define SBI_PMU_FW_PLATFORM		 0xffff

/* counter_get_info result */
#define SBI_PMU_CTR_INFO_CSR(x)	  ((x)&0xfff)
#define SBI_PMU_CTR_INFO_WIDTH(x) (((x) >> 12) & 0x3f)
#define SBI_PMU_CTR_INFO_FW	  (1UL << 63)

/* config_matching flags */
#define SBI_PMU_CFG_FLAG_SKIP_MATCH  (1UL << 0)
#define SBI_PMU_CFG_FLAG_CLEAR_VALUE (1UL << 1)
#define SBI_PMU_CFG_FLAG_AUTO_START  (1UL << 2)
#define SBI_PMU_CFG_FLAG_SET_VUINH   (1UL << 3)
#define SBI_PMU_CFG_FLAG_SET_VSINH   (1UL << 4)
#define SBI_PMU_CFG_FLAG_SET_UINH    (1UL << 5)
#define SBI_PMU_CFG_FLAG_SET_SINH    (1UL << 6)
#define SBI_PMU_CFG_FLAG_SET_MINH    (1UL << 7)
#define SBI_PMU_CFG_FLAG_MASK	     0xffUL

/* counter_start / counter_stop flags */
#define SBI_PMU_START_FLAG_SET_INIT_VALUE (1UL << 0)
#define SBI_PMU_START_FLAG_INIT_SNAPSHOT  (1UL << 1)
#define SBI_PMU_START_FLAG_MASK		  0x3UL
#define SBI_PMU_STOP_FLAG_RESET		  (1UL << 0)
#define SBI_PMU_STOP_FLAG_TAKE_SNAPSHOT	  (1UL << 1)
#define SBI_PMU_STOP_FLAG_MASK		  0x3UL

#ifndef __ASSEMBLER__
/* The errors the SBI v3.0 PMU chapter allows each function to return */
static inline int sbi_pmu_error_allowed(unsigned long fid, long err)
{
	switch (fid) {
	case SBI_EXT_PMU_NUM_COUNTERS:
		return err == SBI_SUCCESS;
	case SBI_EXT_PMU_COUNTER_GET_INFO:
	case SBI_EXT_PMU_COUNTER_FW_READ:
	case SBI_EXT_PMU_COUNTER_FW_READ_HI:
		return err == SBI_SUCCESS || err == SBI_ERR_INVALID_PARAM;
	case SBI_EXT_PMU_COUNTER_CFG_MATCH:
		return err == SBI_SUCCESS || err == SBI_ERR_INVALID_PARAM ||
		       err == SBI_ERR_NOT_SUPPORTED;
	case SBI_EXT_PMU_COUNTER_START:
		return err == SBI_SUCCESS || err == SBI_ERR_INVALID_PARAM ||
		       err == SBI_ERR_ALREADY_STARTED || err == SBI_ERR_NO_SHMEM;
	case SBI_EXT_PMU_COUNTER_STOP:
		return err == SBI_SUCCESS || err == SBI_ERR_INVALID_PARAM ||
		       err == SBI_ERR_ALREADY_STOPPED || err == SBI_ERR_NO_SHMEM;
	case SBI_EXT_PMU_SNAPSHOT_SET_SHMEM:
	case SBI_EXT_PMU_EVENT_GET_INFO:
		return err == SBI_SUCCESS || err == SBI_ERR_NOT_SUPPORTED ||
		       err == SBI_ERR_INVALID_PARAM || err == SBI_ERR_INVALID_ADDRESS ||
		       err == SBI_ERR_FAILED;
	default:
		return err == SBI_ERR_NOT_SUPPORTED;
	}
}
#endif

/* Snapshot shared memory layout (4 KiB) */
#define SBI_PMU_SNAPSHOT_SIZE	       4096
#define SBI_PMU_SNAPSHOT_OVF_OFFSET    0x0
#define SBI_PMU_SNAPSHOT_VALUES_OFFSET 0x8

/* Scause values and interrupt numbers */
#define IRQ_S_SOFT   1
#define IRQ_VS_SOFT  2
#define IRQ_S_TIMER  5
#define IRQ_VS_TIMER 6
#define IRQ_S_EXT    9
#define IRQ_VS_EXT   10
#define IRQ_S_GEXT   12
#define IRQ_PMU_OVF  13

#endif
