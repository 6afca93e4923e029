// SPDX-License-Identifier: BSD-2-Clause
/* Parse the configuration DTB (docs/configuration.md); reject anything odd. */
#include <libfdt.h>
#include <stdlib.h>
#include <string.h>
#include "arch/riscv/gstage.h"
#include "core/config.h"
#include "core/lib.h"

#define fail(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		return -1;                                                                         \
	} while (0)

static uint64_t cells64(const fdt32_t *p)
{
	return ((uint64_t)fdt32_to_cpu(p[0]) << 32) | fdt32_to_cpu(p[1]);
}

/* A pair of 64-bit numbers (2 + 2 cells); -1 when absent or malformed */
static int get_pair(const void *fdt, int node, const char *prop, uint64_t *a, uint64_t *b)
{
	int len;
	const fdt32_t *p = fdt_getprop(fdt, node, prop, &len);

	if (!p)
		return 1;
	if (len != 16)
		return -1;
	*a = cells64(p);
	*b = cells64(p + 2);
	return 0;
}

static int get_blob(const void *fdt, int node, const char *prop, size_t bundle_size, uint64_t *off,
		    uint64_t *size)
{
	int r = get_pair(fdt, node, prop, off, size);

	if (r)
		return r;
	if (*off > bundle_size || *size > bundle_size - *off)
		return -1;
	return 0;
}

/* <first last [counters]> event ranges: cells = 2 (deny) or 3 (allow) */
static int parse_rules(const void *fdt, int node, const char *prop, int cells,
		       struct vpmu_event_rule *rules, unsigned int *n, const char *name, char *err,
		       size_t errlen)
{
	int len;
	const fdt32_t *p = fdt_getprop(fdt, node, prop, &len);

	if (!p)
		return 0;
	if (len <= 0 || len % (4 * cells) || len / (4 * cells) > VPMU_POLICY_RULES)
		fail("guest %s: pmu/%s needs groups of %d cells (at most %d)", name, prop, cells,
		     VPMU_POLICY_RULES);
	*n = (unsigned int)(len / (4 * cells));
	for (unsigned int i = 0; i < *n; i++, p += cells) {
		rules[i].first = fdt32_to_cpu(p[0]);
		rules[i].last = fdt32_to_cpu(p[1]);
		rules[i].counters = cells == 3 ? fdt32_to_cpu(p[2]) : 0;
		if (rules[i].first > rules[i].last)
			fail("guest %s: pmu/%s: range 0x%x..0x%x is empty", name, prop,
			     rules[i].first, rules[i].last);
	}
	return 0;
}

/* The optional "pmu" subnode: the guest's PMU policy (docs/configuration.md) */
static int parse_pmu(const void *fdt, int guest, struct vm_config *vc, char *err, size_t errlen)
{
	struct vpmu_policy *pol = &vc->pmu;
	const char *name = vc->name, *s;
	const fdt32_t *p;
	int node = fdt_subnode_offset(fdt, guest, "pmu"), len;

	if (node < 0)
		return 0;
	p = fdt_getprop(fdt, node, "counters-mask", &len);
	if (p) {
		if (len != 4 || !fdt32_to_cpu(*p))
			fail("guest %s: pmu/counters-mask must be one non-zero cell", name);
		pol->counters_mask = fdt32_to_cpu(*p);
	}
	p = fdt_getprop(fdt, node, "programmable-counters", &len);
	if (p) {
		uint32_t n = len == 4 ? fdt32_to_cpu(*p) : 0;

		if (len != 4 || n > 29 || pol->counters_mask)
			fail("guest %s: pmu/programmable-counters must be one cell <= 29, "
			     "and not with counters-mask",
			     name);
		/* cycle and instret, then the first n programmable counters */
		pol->counters_mask = 0x5U | (((1U << n) - 1) << 3);
	}
	if (parse_rules(fdt, node, "riscv,event-to-mhpmcounters", 3, pol->allow, &pol->nr_allow,
			name, err, errlen) ||
	    parse_rules(fdt, node, "deny-events", 2, pol->deny, &pol->nr_deny, name, err, errlen))
		return -1;
	s = fdt_getprop(fdt, node, "firmware-counters", &len);
	if (s) {
		if (len < 1 || s[len - 1] != '\0' ||
		    (strcmp(s, "on") != 0 && strcmp(s, "off") != 0))
			fail("guest %s: pmu/firmware-counters must be \"on\" or \"off\"", name);
		pol->no_firmware = strcmp(s, "off") == 0;
	}
	return 0;
}

/* Whether s may stand quoted in an error, which is one line of printable ASCII */
static bool printable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

/*
 * Profiling from the hypervisor (docs/profiling.md): "profile" names the
 * event ("cycles", "instructions" or an SBI event_idx such as "0x10019"),
 * "profile-period" its count between samples, "profile-depth" the chain's
 * frames, "profile-task-offsets" <pid tgid comm> of a Linux task_struct.
 */
static int parse_profile(const void *fdt, int node, struct vm_config *vc, char *err, size_t errlen)
{
	struct vpmu_profile *pr = &vc->pmu.profile;
	const char *name = vc->name, *s;
	const fdt32_t *p;
	char *end;
	int len;

	s = fdt_getprop(fdt, node, "profile", &len);
	if (!s)
		return 0;
	if (len < 2 || s[len - 1] != '\0')
		fail("guest %s: profile must be an event name or number", name);
	if (strcmp(s, "cycles") == 0)
		pr->event_idx = 0x1;
	else if (strcmp(s, "instructions") == 0)
		pr->event_idx = 0x2;
	else {
		pr->event_idx = (uint32_t)strtoul(s, &end, 0);
		if (*end || !pr->event_idx || pr->event_idx >> 20) {
			if (!printable(s))
				fail("guest %s: profile is not cycles, instructions or an "
				     "event_idx",
				     name);
			fail("guest %s: profile \"%.32s\" is not cycles, instructions or an "
			     "event_idx",
			     name, s);
		}
	}
	pr->period = 100000;
	p = fdt_getprop(fdt, node, "profile-period", &len);
	if (p) {
		if (len != 4 && len != 8)
			fail("guest %s: profile-period must be one or two cells", name);
		pr->period = len == 4 ? fdt32_to_cpu(*p) : cells64(p);
	}
	/* a smaller period would make the samples cost more than the guest's work */
	if (pr->period < 1000)
		fail("guest %s: profile-period must be at least 1000", name);
	vc->profile_depth = 32;
	p = fdt_getprop(fdt, node, "profile-depth", &len);
	if (p) {
		if (len != 4 || fdt32_to_cpu(*p) > PROFILE_DEPTH_MAX)
			fail("guest %s: profile-depth must be one cell <= %d", name,
			     PROFILE_DEPTH_MAX);
		vc->profile_depth = fdt32_to_cpu(*p);
	}
	p = fdt_getprop(fdt, node, "profile-task-offsets", &len);
	if (p) {
		if (len != 12)
			fail("guest %s: profile-task-offsets must be <pid tgid comm>", name);
		vc->profile_task = true;
		vc->task_pid = fdt32_to_cpu(p[0]);
		vc->task_tgid = fdt32_to_cpu(p[1]);
		vc->task_comm = fdt32_to_cpu(p[2]);
	}
	return 0;
}

static int parse_guest(const void *fdt, int node, size_t bundle_size, struct vm_config *vc,
		       char *err, size_t errlen)
{
	const char *name = fdt_get_name(fdt, node, NULL);
	const fdt32_t *p;
	const char *s;
	int len, r;

	memset(vc, 0, sizeof(*vc));
	if (!name || !*name || strlen(name) >= VM_NAME_MAX)
		fail("guest node name missing or longer than %d", VM_NAME_MAX - 1);
	/* the name prefixes console and log lines: device-tree node-name characters only */
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || strchr(",._+-@", *c)))
			fail("guest node name: byte 0x%02x at %d is not one of [A-Za-z0-9,._+-@]",
			     (unsigned char)*c, (int)(c - name));
	strcpy(vc->name, name);

	p = fdt_getprop(fdt, node, "vcpus", &len);
	if (!p || len != 4)
		fail("guest %s: 'vcpus' missing or not one cell", name);
	vc->nr_vcpus = fdt32_to_cpu(*p);
	if (vc->nr_vcpus < 1 || vc->nr_vcpus > VCPU_MAX)
		fail("guest %s: vcpus = %u, must be 1..%d", name, vc->nr_vcpus, VCPU_MAX);

	if (get_pair(fdt, node, "memory", &vc->ram_gpa, &vc->ram_size))
		fail("guest %s: 'memory' must be <base-hi base-lo size-hi size-lo>", name);
	if (!IS_ALIGNED(vc->ram_gpa, SZ_2M) || !IS_ALIGNED(vc->ram_size, SZ_2M) ||
	    vc->ram_size == 0)
		fail("guest %s: memory base and size must be non-zero multiples of 2 MiB", name);
	if (vc->ram_gpa >= GPA_LIMIT || vc->ram_size > GPA_LIMIT - vc->ram_gpa)
		fail("guest %s: memory beyond the 2^41 guest-physical limit", name);

	vc->load_offset = SZ_2M;
	p = fdt_getprop(fdt, node, "load-offset", &len);
	if (p) {
		if (len != 8)
			fail("guest %s: 'load-offset' must be two cells", name);
		vc->load_offset = cells64(p);
		if (!IS_ALIGNED(vc->load_offset, 4096))
			fail("guest %s: load-offset must be 4 KiB aligned", name);
	}

	r = get_blob(fdt, node, "pmuvisor,image-blob", bundle_size, &vc->image_off,
		     &vc->image_size);
	if (r)
		fail("guest %s: no valid image in the bundle (run tools/mkbundle.py)", name);
	if (vc->image_size == 0 || vc->load_offset >= vc->ram_size ||
	    vc->image_size > vc->ram_size - vc->load_offset)
		fail("guest %s: image (%lu bytes) does not fit in its memory", name,
		     (unsigned long)vc->image_size);

	r = get_blob(fdt, node, "pmuvisor,initrd-blob", bundle_size, &vc->initrd_off,
		     &vc->initrd_size);
	if (r < 0)
		fail("guest %s: initrd blob outside the bundle", name);

	s = fdt_getprop(fdt, node, "bootargs", &len);
	if (s) {
		if (len < 1 || len > BOOTARGS_MAX || s[len - 1] != '\0')
			fail("guest %s: bootargs not a string of < %d bytes", name, BOOTARGS_MAX);
		strcpy(vc->bootargs, s);
	}

	p = fdt_getprop(fdt, node, "watchdog-ms", &len);
	if (p) {
		if (len != 4 || !fdt32_to_cpu(*p))
			fail("guest %s: watchdog-ms must be one non-zero cell", name);
		vc->watchdog_ms = fdt32_to_cpu(*p);
	}

	s = fdt_getprop(fdt, node, "lcofi-injection", &len);
	if (s) {
		if (len < 1 || s[len - 1] != '\0' ||
		    (strcmp(s, "auto") != 0 && strcmp(s, "software") != 0))
			fail("guest %s: lcofi-injection must be \"auto\" or \"software\"", name);
		vc->lcofi_software = strcmp(s, "software") == 0;
	}

	if (parse_pmu(fdt, node, vc, err, errlen) || parse_profile(fdt, node, vc, err, errlen))
		return -1;

	p = fdt_getprop(fdt, node, "cpu-affinity", &len);
	if (p) {
		if (len != (int)(4 * vc->nr_vcpus))
			fail("guest %s: cpu-affinity needs one hart id per vCPU", name);
		vc->has_affinity = true;
		for (unsigned int i = 0; i < vc->nr_vcpus; i++)
			vc->affinity[i] = fdt32_to_cpu(p[i]);
	}
	return 0;
}

int config_parse(const void *bundle, size_t bundle_size, struct hv_config *out, char *err,
		 size_t errlen)
{
	const void *fdt = bundle;
	int guests, node;

	memset(out, 0, sizeof(*out));
	if (bundle_size < sizeof(struct fdt_header) || fdt_check_header(fdt) ||
	    fdt_totalsize(fdt) > bundle_size)
		fail("configuration: not a valid device tree");
	if (fdt_node_check_compatible(fdt, 0, "pmuvisor,config"))
		fail("configuration: root is not compatible with \"pmuvisor,config\"");
	guests = fdt_path_offset(fdt, "/guests");
	if (guests < 0)
		fail("configuration: no /guests node");

	fdt_for_each_subnode (node, fdt, guests) {
		if (out->nr_vms == CONFIG_VM_MAX)
			fail("configuration: more than %d guests", CONFIG_VM_MAX);
		if (parse_guest(fdt, node, bundle_size, &out->vms[out->nr_vms], err, errlen))
			return -1;
		for (unsigned int i = 0; i < out->nr_vms; i++)
			if (strcmp(out->vms[i].name, out->vms[out->nr_vms].name) == 0)
				fail("configuration: two guests named %s", out->vms[i].name);
		out->nr_vms++;
	}
	if (node < 0 && node != -FDT_ERR_NOTFOUND)
		fail("configuration: malformed device tree (%s)", fdt_strerror(node));
	if (!out->nr_vms)
		fail("configuration: no guests under /guests");
	return 0;
}
