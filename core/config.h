/* SPDX-License-Identifier: BSD-2-Clause */
/* The configuration device tree: which guests exist and what they get. */
#ifndef CORE_CONFIG_H
#define CORE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vpmu/vpmu.h"

#define VM_NAME_MAX	  32
#define VCPU_MAX	  8
#define CONFIG_VM_MAX	  8
#define BOOTARGS_MAX	  512
#define PROFILE_DEPTH_MAX 64 /* frames a sample can carry (core/profile.c) */
/* Sv39x4 reaches 2^41 bytes of guest-physical space */
#define GPA_LIMIT (1ULL << 41)

struct vm_config {
	char name[VM_NAME_MAX];
	unsigned int nr_vcpus;
	uint64_t ram_gpa, ram_size;
	uint64_t load_offset;
	uint64_t image_off, image_size;	  /* in the bundle */
	uint64_t initrd_off, initrd_size; /* size 0: none */
	char bootargs[BOOTARGS_MAX];
	bool lcofi_software;	/* deliver LCOFI by emulating the trap, even with hvip */
	uint32_t watchdog_ms;	/* stop the guest after this long without an SBI call; 0: never */
	struct vpmu_policy pmu; /* the guest's PMU policy: its "pmu" subnode */
	/* profiling from the hypervisor (pmu.profile: event, period; docs/profiling.md) */
	uint32_t profile_depth; /* frames of a sample's call chain */
	bool profile_task;	/* a Linux guest: task_struct offsets for pid, tgid, comm */
	uint32_t task_pid, task_tgid, task_comm;
	bool has_affinity;
	uint32_t affinity[VCPU_MAX]; /* physical hart id per vCPU */
};

struct hv_config {
	unsigned int nr_vms;
	struct vm_config vms[CONFIG_VM_MAX];
};

/*
 * Parse and validate the configuration DTB at the start of a bundle of
 * bundle_size bytes. Returns 0, or -1 with a one-line reason in err.
 */
int config_parse(const void *bundle, size_t bundle_size, struct hv_config *out, char *err,
		 size_t errlen);

#endif
