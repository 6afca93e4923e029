// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the tests need from their device tree (the hypervisor's guest DT, or
 * QEMU's natively): RAM, the harts and their ISA, the timebase, any property
 * by path. Parsed with libfdt, extracted at build time like the hypervisor's.
 */
#include <libfdt.h>
#include <string.h>
#include "guest-tests/lib/gt.h"

struct gt_cpu {
	unsigned long hartid;
	int node;
};

static const void *fdt_base;
static struct gt_cpu cpus[GT_MAX_HARTS];
static unsigned long nr_cpus;
static uint64_t timebase = 10000000;
static unsigned long ram_base, ram_size;

static uint64_t cells(const fdt32_t *p, int n)
{
	return n == 2 ? ((uint64_t)fdt32_to_cpu(p[0]) << 32) | fdt32_to_cpu(p[1])
		      : fdt32_to_cpu(p[0]);
}

static bool okay(int node)
{
	const char *st = fdt_getprop(fdt_base, node, "status", NULL);

	return !st || !strcmp(st, "okay") || !strcmp(st, "ok");
}

void gt_fdt_init(const void *fdt)
{
	const fdt32_t *p;
	int cpus_node, node, len, ac;

	fdt_base = NULL;
	nr_cpus = 0;
	if (!fdt || fdt_check_header(fdt))
		return;
	fdt_base = fdt;
	/* RAM: the first memory node; the root's #address-cells = #size-cells = 2 on RV64 */
	node = fdt_node_offset_by_prop_value(fdt, -1, "device_type", "memory", sizeof("memory"));
	p = node >= 0 ? fdt_getprop(fdt, node, "reg", &len) : NULL;
	if (p && len >= 16) {
		ram_base = cells(p, 2);
		ram_size = cells(p + 2, 2);
	}
	cpus_node = fdt_path_offset(fdt, "/cpus");
	if (cpus_node < 0)
		return;
	p = fdt_getprop(fdt, cpus_node, "timebase-frequency", &len);
	if (p && len == 4)
		timebase = fdt32_to_cpu(*p);
	ac = fdt_address_cells(fdt, cpus_node);
	fdt_for_each_subnode (node, fdt, cpus_node) {
		const char *name = fdt_get_name(fdt, node, NULL);

		if (!name || strncmp(name, "cpu@", 4) != 0 || !okay(node) ||
		    nr_cpus == GT_MAX_HARTS)
			continue;
		p = fdt_getprop(fdt, node, "reg", &len);
		cpus[nr_cpus].hartid = p && len >= 4 * ac ? cells(p, ac) : ~0UL;
		cpus[nr_cpus].node = node;
		nr_cpus++;
		p = fdt_getprop(fdt, node, "timebase-frequency", &len);
		if (p && len == 4)
			timebase = fdt32_to_cpu(*p);
	}
}

unsigned long gt_ram_base(void)
{
	return ram_base;
}

unsigned long gt_ram_size(void)
{
	return ram_size;
}

const void *gt_fdt(void)
{
	return fdt_base;
}

unsigned long gt_nr_harts(void)
{
	return nr_cpus ? nr_cpus : 1;
}

unsigned long gt_hart_id_at(unsigned long idx)
{
	if (!nr_cpus)
		return gt_boot_hartid();
	return idx < nr_cpus ? cpus[idx].hartid : ~0UL;
}

unsigned long gt_max_hart_id(void)
{
	unsigned long i, m = 0;

	for (i = 0; i < gt_nr_harts(); i++)
		if (gt_hart_id_at(i) > m)
			m = gt_hart_id_at(i);
	return m;
}

bool gt_hart_has_ext(unsigned long hartid, const char *ext)
{
	const char *list, *s;
	size_t el = strlen(ext);
	unsigned long i;
	int len;

	for (i = 0; i < nr_cpus && cpus[i].hartid != hartid; i++)
		;
	if (i == nr_cpus)
		return false;
	list = fdt_getprop(fdt_base, cpus[i].node, "riscv,isa-extensions", &len);
	if (list)
		return fdt_stringlist_contains(list, len, ext);
	/* riscv,isa: rv64imafdc_zicsr_sstc...: look for "_<ext>" */
	list = fdt_getprop(fdt_base, cpus[i].node, "riscv,isa", NULL);
	for (s = list; s && *s; s++)
		if (*s == '_' && !strncmp(s + 1, ext, el) && (!s[1 + el] || s[1 + el] == '_'))
			return true;
	return false;
}

uint64_t gt_timebase(void)
{
	return timebase;
}

const void *gt_fdt_getprop(const char *path, const char *prop, unsigned int *lenp)
{
	int node, len;
	const void *p;

	if (!fdt_base)
		return NULL;
	node = fdt_path_offset(fdt_base, path);
	if (node < 0)
		return NULL;
	p = fdt_getprop(fdt_base, node, prop, &len);
	if (p && lenp)
		*lenp = (unsigned int)len;
	return p;
}

uint32_t gt_fdt32(const void *p)
{
	return fdt32_to_cpu(*(const fdt32_t *)p);
}

/* The first bootargs word that starts with key, or NULL */
static const char *arg_word(const char *key)
{
	const char *args = gt_fdt_getprop("/chosen", "bootargs", NULL);
	unsigned long len = __builtin_strlen(key);

	for (const char *p = args; p && *p; p++)
		if ((p == args || p[-1] == ' ') && __builtin_strncmp(p, key, len) == 0)
			return p;
	return NULL;
}

bool gt_arg_has(const char *key)
{
	return arg_word(key) != NULL;
}

unsigned long gt_arg_ul(const char *key, unsigned long def)
{
	const char *p = arg_word(key);
	unsigned long v = 0;

	if (!p)
		return def;
	for (p += __builtin_strlen(key); *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (unsigned long)(*p - '0');
	return v;
}
