/* SPDX-License-Identifier: BSD-2-Clause */
/* What the hypervisor learns from the host device tree OpenSBI hands it. */
#ifndef CORE_HOSTDT_H
#define CORE_HOSTDT_H

#include <stdbool.h>
#include <stdint.h>

struct riscv_isa;

#define HOST_HART_MAX 8
#define HOST_RESV_MAX 8

struct mem_range {
	uint64_t base, size;
};

struct host_info {
	unsigned int nr_harts;
	unsigned long hartids[HOST_HART_MAX];
	uint32_t timebase;
	struct mem_range mem;
	unsigned int nr_resv;
	struct mem_range resv[HOST_RESV_MAX];
	uintptr_t uart_base;
	uintptr_t finisher_base; /* sifive,test: lets a failed run end with an exit code */
	unsigned int uart_shift;
	uint64_t initrd_start, initrd_end;
	char isa_base[16];    /* e.g. "rv64imafdch" letters */
	char mmu_type[16];    /* e.g. "riscv,sv57" */
	uint8_t rng_seed[64]; /* /chosen/rng-seed (the guests' seeds derive from it) */
	unsigned int rng_seed_len;
	char bootargs[128]; /* /chosen/bootargs (QEMU -append): hypervisor options */
	bool qemu_virt;	    /* the root's compatible is QEMU's virt machine ("riscv-virtio") */
	bool verbose;	    /* bootargs word `verbose`: say what the scheduler does (moves) */
	/*
	 * AIA's S-level IMSIC: per hart (as hartids[]) its supervisor interrupt
	 * file's page, 0 where none; the guest interrupt files follow it, file
	 * k at + k pages, up to 2^imsic_guest_bits - 1 of them
	 */
	uint64_t imsic_file[HOST_HART_MAX];
	unsigned int imsic_guest_bits;
	unsigned int imsic_guest_ids; /* interrupt identities of a guest file */
};

extern struct host_info host;

/* Returns 0, or -1 with the reason in err; the ISA extensions go to isa (arch/riscv/isa.h) */
int hostdt_parse(const void *fdt, struct host_info *h, struct riscv_isa *isa, char *err,
		 unsigned long errlen);
/* Whether the bootargs hold this word (e.g. "pmu-backend=sbi"), space separated */
bool hostdt_option(const char *word);
/* The value of key=value in the bootargs (up to the next space), or NULL */
const char *hostdt_option_value(const char *key);
/* True if the named extension appears in a cpu node's ISA description */
bool hostdt_isa_has(const void *fdt, int cpu, const char *ext);

#endif
