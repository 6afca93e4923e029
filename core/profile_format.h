/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The guest profile stream: what the hypervisor's sampler writes to the host
 * (one file per run) and tools/profile.py turns into perf.data, flame graphs
 * and a text report (docs/profiling.md).
 *
 * A stream is one struct profile_file_header followed by records. Every
 * record starts with struct profile_record; its size counts the whole record,
 * is a multiple of 8 and lets a reader skip types it does not know. All fields
 * are little-endian (the hart's own order) and naturally aligned, so the
 * structs below have no padding and are the bytes on disk. Records of one
 * hart are in time order; records of different harts interleave in drain
 * order (readers sort samples by time). Freestanding: needs <stdint.h> only.
 */
#ifndef CORE_PROFILE_FORMAT_H
#define CORE_PROFILE_FORMAT_H

#include <stdint.h>

/* "PMUVPROF" as bytes in the file */
#define PROFILE_MAGIC	0x464f525056554d50ULL
#define PROFILE_VERSION 1

struct profile_file_header {
	uint64_t magic;	      /* PROFILE_MAGIC */
	uint16_t version;     /* PROFILE_VERSION; readers refuse others */
	uint16_t header_size; /* sizeof(struct profile_file_header): records start there */
	uint16_t harts;	      /* physical harts, each with its own sample buffer */
	uint16_t reserved;    /* 0 */
	/*
	 * The sampled event as the SBI PMU extension names it: event_idx
	 * (type << 16 | code: 0x1 = CPU_CYCLES, 0x2 = INSTRUCTIONS, type 2 =
	 * raw) and, for raw events, event_data (the mhpmevent value).
	 */
	uint32_t event_idx;
	uint32_t reserved2; /* 0 */
	uint64_t event_data;
	/* events between two samples: the counter starts at 2^64 - period */
	uint64_t period;
};

/* Record types */
#define PROFILE_REC_SAMPLE 1
#define PROFILE_REC_GUEST  2
#define PROFILE_REC_LOST   3

struct profile_record {
	uint16_t type; /* PROFILE_REC_* */
	uint16_t size; /* bytes of the whole record, a multiple of 8 */
};

/* profile_sample.mode: the guest's privilege mode when the counter overflowed */
#define PROFILE_MODE_VU 0 /* V = 1, U: guest user space */
#define PROFILE_MODE_VS 1 /* V = 1, S: guest kernel */

/* profile_sample.flags */
/* pid, tid and comm were read from the guest */
#define PROFILE_SAMPLE_TASK (1U << 0)
/* the chain walk stopped early: a load faulted, or the depth limit */
#define PROFILE_SAMPLE_TRUNCATED (1U << 1)

/*
 * A chain entry (perf's PERF_CONTEXT_USER) for a VS-mode sample whose walk went on
 * into user space: the entries after it are the interrupted VU-mode pc and its
 * return addresses.
 */
#define PROFILE_CHAIN_USER ((uint64_t)-512)

/* Most chain entries a sample carries (nr is 8 bits) */
#define PROFILE_CHAIN_MAX 255

/*
 * One overflow of the sampling counter taken in HS-mode while a guest ran
 * (hstatus.SPV = 1 in the interrupt's trap).
 */
struct profile_sample {
	struct profile_record hdr; /* PROFILE_REC_SAMPLE, size 64 + 8 * nr */
	uint16_t guest;		   /* guest id (a PROFILE_REC_GUEST names it) */
	uint16_t vcpu;		   /* the guest's hart id of the running vCPU */
	uint64_t time;		   /* ns: the time CSR scaled by timebase-frequency */
	uint16_t hart;		   /* physical hart (mhartid) the vCPU ran on */
	uint8_t mode;		   /* PROFILE_MODE_VU or PROFILE_MODE_VS (sstatus.SPP) */
	uint8_t nr;		   /* entries in chain[] */
	/*
	 * Linux guests: the interrupted task's tgid and pid (user space's pid
	 * and tid) and task_struct.comm, read from guest memory; 0 and an empty
	 * comm when PROFILE_SAMPLE_TASK is clear.
	 */
	uint32_t pid;
	uint32_t tid;
	uint32_t flags; /* PROFILE_SAMPLE_* */
	uint64_t pc;	/* guest virtual PC of the interrupted instruction (sepc) */
	uint64_t vsatp; /* the guest's address space: vsatp (mode, ASID, root PPN) */
	char comm[16];	/* NUL-padded, like Linux's TASK_COMM_LEN */
	/*
	 * Return addresses, innermost first, without pc: the guest's frame
	 * pointer chain (ra at fp - 8, the caller's fp at fp - 16) read with
	 * HLV in the sample's mode.
	 */
	uint64_t chain[];
};

/* Names a guest id; written before the guest's first sample */
struct profile_guest {
	struct profile_record hdr; /* PROFILE_REC_GUEST, size 8 + name, rounded up to 8 */
	uint16_t guest;		   /* id used by profile_sample.guest */
	uint16_t vcpus;		   /* its vCPU count */
	char name[];		   /* the configuration node's name, NUL-terminated, zero-padded */
};

/* profile_lost.guest when the dropped samples may belong to several guests */
#define PROFILE_GUEST_ANY 0xffff

/* Samples a hart dropped because its buffer was full */
struct profile_lost {
	struct profile_record hdr; /* PROFILE_REC_LOST, size 24 */
	uint16_t hart;		   /* the hart whose buffer overflowed */
	uint16_t guest;		   /* the guest the samples belonged to, or PROFILE_GUEST_ANY */
	uint64_t time;		   /* when the count was written, ns as in samples */
	uint64_t count;		   /* samples dropped since that hart's previous LOST record */
};

_Static_assert(sizeof(struct profile_file_header) == 40, "profile header layout");
_Static_assert(sizeof(struct profile_sample) == 64, "profile sample layout");
_Static_assert(sizeof(struct profile_guest) == 8, "profile guest layout");
_Static_assert(sizeof(struct profile_lost) == 24, "profile lost layout");

#endif
