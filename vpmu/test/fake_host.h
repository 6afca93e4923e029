/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fakes for vpmu unit tests and fuzzing: a physical PMU that behaves like
 * OpenSBI 1.5 on QEMU 10 `virt` (16 programmable counters, cycles and
 * instret counted by one programmable counter per hart each, fixed-counter
 * fallback), a host clock, guest RAM and hv_printf.
 */
#ifndef VPMU_TEST_FAKE_HOST_H
#define VPMU_TEST_FAKE_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include "vpmu/vpmu.h"
#include "vpmu/vpmu_host.h"

struct vcpu {
	struct vpmu vpmu;
};

#define FAKE_NCTR     32
#define FAKE_RAM_BASE 0x80000000UL
#define FAKE_RAM_SIZE (64UL * 1024)

/* Raw events the fake host knows (event_data of type 2 / type 3) */
#define FAKE_RAW_OK  0x1234UL
#define FAKE_RAW2_OK 0xffffffffffff00UL /* 56 bits */

struct fake_pctr {
	bool configured;
	bool running;
	uint64_t value;
	unsigned long event_idx;
	uint64_t event_data;
	unsigned long flags;
	bool of; /* Sscofpmf overflow flag: set on wrap, cleared by start */
};

struct fake_host {
	int available;
	unsigned int num_hw;	  /* host hardware counters 0..num_hw-1 */
	uint32_t hw_mask;	  /* which of them exist (bit 1 never) */
	unsigned int prog_width;  /* bits of programmable counters */
	unsigned int num_host_fw; /* host firmware counters after them */
	bool prog_cycles_count;	  /* false: a host whose cycles on 3.. read 0 */
	uint32_t cycles_map;	  /* programmable counters the host maps cycles to */
	struct fake_pctr c[FAKE_NCTR];
	unsigned long counteren;
	uint32_t wide; /* what vpmu_phys_set_wide was told (the fake adds no bias) */
	/* statistics */
	unsigned int n_config, n_start, n_stop;
	int fail_start;	     /* force vpmu_phys_start errors */
	bool lcofip;	     /* the hart's LCOFI is pending: start leaves OF set, like OpenSBI */
	bool start_keeps_of; /* ... (the SBI backend); false: start clears OF (delegation) */
	unsigned int n_counting_starts; /* vpmu_host_counting_starts calls */
	bool event_exclusive;		/* like QEMU: an event counts on one counter per hart */
	unsigned int map[3]; /* event_exclusive: the counter cycles [1] / instret [2] count on */
	bool lose_of;	     /* wraps set no OF bit and no LCOFI (QEMU's lost timer) */
	bool sscofpmf;	     /* the host has Sscofpmf */
	bool charged;	     /* a sleeping hart counts other harts' instructions (QEMU icount) */
	uint64_t now;	     /* host time in timer ticks: 100 events per tick */
	uint64_t now_frac;
	unsigned int nr_lcofi;	      /* vpmu_host_raise_lcofi calls */
	unsigned int nr_lcofi_cancel; /* vpmu_host_cancel_lcofi calls */
	unsigned int nr_samples;      /* vpmu_host_sample calls */
	uint32_t unfiltered;	/* counters the host cannot filter by mode (count HS and M too) */
	unsigned long ecall_pc; /* vpmu_host_ecall_pc: where the guest's SBI call is */
};

extern struct fake_host fake;
/* The physical hart the fake runs on: 0 or 1 (tests may switch between two) */
void fake_set_hart(unsigned int n);
#define fake_hart vpmu_host_hart()
extern uint8_t fake_ram[FAKE_RAM_SIZE];

/* QEMU 10 virt + OpenSBI 1.5 defaults; clears RAM */
void fake_reset(void);
/* Guest executes n events: every running counter that counts advances */
void fake_advance(uint64_t n);
/* Is physical counter p configured with anything? */
bool fake_busy(unsigned int p);

#endif
