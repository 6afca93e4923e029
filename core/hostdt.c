// SPDX-License-Identifier: BSD-2-Clause
/* Parse the host device tree: harts, memory, timebase, UART, ISA, initrd, IMSIC. */
#include <libfdt.h>
#include <string.h>
#include "core/hostdt.h"
#include "arch/riscv/isa.h"
#include "core/lib.h"

struct host_info host;

static uint64_t read_cells(const fdt32_t *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = (v << 32) | fdt32_to_cpu(*p++);
	return v;
}

/* The riscv,isa string: single letters after rv64, then _-separated names */
static bool isa_string_has(const char *isa, const char *ext)
{
	size_t n = strlen(ext);
	const char *p;

	if (strncmp(isa, "rv64", 4) != 0 && strncmp(isa, "rv32", 4) != 0)
		return false;
	if (n == 1) {
		for (p = isa + 4; *p && *p != '_'; p++)
			if (*p == ext[0])
				return true;
		return false;
	}
	for (p = strchr(isa, '_'); p; p = strchr(p + 1, '_'))
		if (strncmp(p + 1, ext, n) == 0 && (p[1 + n] == '_' || p[1 + n] == '\0'))
			return true;
	return false;
}

bool hostdt_isa_has(const void *fdt, int cpu, const char *ext)
{
	int len;
	const char *s = fdt_getprop(fdt, cpu, "riscv,isa-extensions", &len);

	if (s) {
		for (const char *p = s; p < s + len; p += strlen(p) + 1)
			if (strcmp(p, ext) == 0)
				return true;
		return false;
	}
	s = fdt_getprop(fdt, cpu, "riscv,isa", &len);
	return s && isa_string_has(s, ext);
}

static int parse_cpus(const void *fdt, struct host_info *h, struct riscv_isa *isa, char *err,
		      unsigned long errlen)
{
	int cpus = fdt_path_offset(fdt, "/cpus");
	int node, len, first = -1;
	const fdt32_t *p;

	if (cpus < 0)
		return snprintf(err, errlen, "host DT: no /cpus"), -1;
	p = fdt_getprop(fdt, cpus, "timebase-frequency", &len);
	if (!p || len != 4)
		return snprintf(err, errlen, "host DT: no timebase-frequency"), -1;
	h->timebase = fdt32_to_cpu(*p);

	fdt_for_each_subnode (node, fdt, cpus) {
		const char *type = fdt_getprop(fdt, node, "device_type", NULL);
		const char *status = fdt_getprop(fdt, node, "status", NULL);

		if (!type || strcmp(type, "cpu") != 0)
			continue;
		if (status && strcmp(status, "okay") != 0)
			continue;
		p = fdt_getprop(fdt, node, "reg", &len);
		if (!p || len < 4 || h->nr_harts == HOST_HART_MAX)
			continue;
		h->hartids[h->nr_harts++] = (unsigned long)read_cells(p, len / 4);
		if (first < 0)
			first = node;
	}
	if (!h->nr_harts)
		return snprintf(err, errlen, "host DT: no usable harts"), -1;

	for (int e = 0; e < RISCV_EXT_MAX; e++)
		isa->ext[e] = hostdt_isa_has(fdt, first, riscv_ext_name((enum riscv_ext)e));
	{
		const char *mmu = fdt_getprop(fdt, first, "mmu-type", NULL);

		if (mmu && strlen(mmu) < sizeof(h->mmu_type))
			strcpy(h->mmu_type, mmu);
	}
	/* Linux uses Zicbom/Zicboz only with these (it zeroes pages with cbo.zero) */
	p = fdt_getprop(fdt, first, "riscv,cbom-block-size", &len);
	isa->cbom_block = p && len == 4 ? fdt32_to_cpu(*p) : 0;
	p = fdt_getprop(fdt, first, "riscv,cboz-block-size", &len);
	isa->cboz_block = p && len == 4 ? fdt32_to_cpu(*p) : 0;
	return 0;
}

static int parse_memory(const void *fdt, struct host_info *h, char *err, unsigned long errlen)
{
	int ac = fdt_address_cells(fdt, 0), sc = fdt_size_cells(fdt, 0);
	int node, len;
	const fdt32_t *p;

	node = fdt_node_offset_by_prop_value(fdt, -1, "device_type", "memory", 7);
	if (node < 0)
		return snprintf(err, errlen, "host DT: no memory node"), -1;
	p = fdt_getprop(fdt, node, "reg", &len);
	if (!p || len < (ac + sc) * 4)
		return snprintf(err, errlen, "host DT: bad memory reg"), -1;
	h->mem.base = read_cells(p, ac);
	h->mem.size = read_cells(p + ac, sc);

	/* /reserved-memory (OpenSBI's own region lives there) */
	node = fdt_path_offset(fdt, "/reserved-memory");
	if (node >= 0) {
		int child, rac = fdt_address_cells(fdt, node), rsc = fdt_size_cells(fdt, node);

		fdt_for_each_subnode (child, fdt, node) {
			p = fdt_getprop(fdt, child, "reg", &len);
			if (!p || len < (rac + rsc) * 4 || h->nr_resv == HOST_RESV_MAX)
				continue;
			h->resv[h->nr_resv].base = read_cells(p, rac);
			h->resv[h->nr_resv].size = read_cells(p + rac, rsc);
			h->nr_resv++;
		}
	}
	return 0;
}

static void parse_uart(const void *fdt, struct host_info *h)
{
	static const char *const compat[] = {"ns16550a", "ns16550"};
	int node = -1, len;
	const fdt32_t *p;

	for (unsigned int i = 0; i < ARRAY_SIZE(compat) && node < 0; i++)
		node = fdt_node_offset_by_compatible(fdt, -1, compat[i]);
	if (node < 0)
		return;
	p = fdt_getprop(fdt, node, "reg", &len);
	if (!p)
		return;
	h->uart_base =
		(uintptr_t)read_cells(p, fdt_address_cells(fdt, fdt_parent_offset(fdt, node)));
	p = fdt_getprop(fdt, node, "reg-shift", &len);
	h->uart_shift = p ? fdt32_to_cpu(*p) : 0;
}

/* QEMU's sifive,test device: writing FAIL | code << 16 ends QEMU with that code */
static void parse_finisher(const void *fdt, struct host_info *h)
{
	int node = fdt_node_offset_by_compatible(fdt, -1, "sifive,test1"), len;
	const fdt32_t *p;

	if (node < 0)
		node = fdt_node_offset_by_compatible(fdt, -1, "sifive,test0");
	if (node < 0)
		return;
	p = fdt_getprop(fdt, node, "reg", &len);
	if (p)
		h->finisher_base = (uintptr_t)read_cells(
			p, fdt_address_cells(fdt, fdt_parent_offset(fdt, node)));
}

/*
 * The S-level IMSIC ("riscv,imsics" whose parents take interrupt 9): hart
 * index i (its place in interrupts-extended) has its files at
 * base + (i << (guest-index-bits + 12)), one group, one reg region.
 */
static void parse_imsic(const void *fdt, struct host_info *h)
{
	int node = -1, len, rlen;

	while ((node = fdt_node_offset_by_compatible(fdt, node, "riscv,imsics")) >= 0) {
		const fdt32_t *ie = fdt_getprop(fdt, node, "interrupts-extended", &len);
		const fdt32_t *reg = fdt_getprop(fdt, node, "reg", &rlen);
		const fdt32_t *gb = fdt_getprop(fdt, node, "riscv,guest-index-bits", NULL);
		int ac = fdt_address_cells(fdt, fdt_parent_offset(fdt, node));
		int sc = fdt_size_cells(fdt, fdt_parent_offset(fdt, node));
		uint64_t base, size;
		unsigned int bits = gb ? fdt32_to_cpu(*gb) : 0;

		if (!ie || len < 8 || fdt32_to_cpu(ie[1]) != 9 || !reg || rlen < (ac + sc) * 4 ||
		    bits > 6)
			continue;
		base = read_cells(reg, ac);
		size = read_cells(reg + ac, sc);
		for (int i = 0; i < len / 8; i++, ie += 2) {
			int intc = fdt_node_offset_by_phandle(fdt, fdt32_to_cpu(ie[0]));
			int cpu = intc < 0 ? intc : fdt_parent_offset(fdt, intc);
			const fdt32_t *id = cpu < 0 ? NULL : fdt_getprop(fdt, cpu, "reg", &rlen);
			uint64_t file = base + ((uint64_t)i << (bits + 12));

			if (!id || file + (1ULL << (bits + 12)) > base + size)
				continue;
			for (unsigned int k = 0; k < h->nr_harts; k++)
				if (h->hartids[k] == (unsigned long)read_cells(id, rlen / 4))
					h->imsic_file[k] = file;
		}
		h->imsic_guest_bits = bits;
		gb = fdt_getprop(fdt, node, "riscv,num-guest-ids", NULL);
		if (!gb)
			gb = fdt_getprop(fdt, node, "riscv,num-ids", NULL);
		h->imsic_guest_ids = gb ? fdt32_to_cpu(*gb) : 0;
		return;
	}
}

static void parse_chosen(const void *fdt, struct host_info *h)
{
	int node = fdt_path_offset(fdt, "/chosen"), len;
	const fdt32_t *p;
	const char *s;

	if (node < 0)
		return;
	p = fdt_getprop(fdt, node, "linux,initrd-start", &len);
	if (p)
		h->initrd_start = read_cells(p, len / 4);
	p = fdt_getprop(fdt, node, "linux,initrd-end", &len);
	if (p)
		h->initrd_end = read_cells(p, len / 4);
	p = fdt_getprop(fdt, node, "rng-seed", &len);
	if (p && len > 0) {
		h->rng_seed_len = (unsigned int)len < sizeof(h->rng_seed) ? (unsigned int)len
									  : sizeof(h->rng_seed);
		memcpy(h->rng_seed, p, h->rng_seed_len);
	}
	s = fdt_getprop(fdt, node, "bootargs", &len);
	if (s && len > 0)
		snprintf(h->bootargs, sizeof(h->bootargs), "%.*s", len, s);
}

int hostdt_parse(const void *fdt, struct host_info *h, struct riscv_isa *isa, char *err,
		 unsigned long errlen)
{
	memset(h, 0, sizeof(*h));
	memset(isa, 0, sizeof(*isa));
	if (fdt_check_header(fdt))
		return snprintf(err, errlen, "host DT: bad header"), -1;
	parse_uart(fdt, h);
	parse_finisher(fdt, h);
	parse_chosen(fdt, h);
	/* a stringlist: its first entry is enough, QEMU's virt names only itself */
	h->qemu_virt = fdt_node_check_compatible(fdt, 0, "riscv-virtio") == 0;
	if (parse_cpus(fdt, h, isa, err, errlen) || parse_memory(fdt, h, err, errlen))
		return -1;
	parse_imsic(fdt, h);
	return 0;
}

/* Where the first bootargs word made of prefix and then end (a space: the word's end) ends */
static const char *bootargs_word(const char *prefix, char end)
{
	size_t n = strlen(prefix);

	for (const char *p = host.bootargs; *p;) {
		while (*p == ' ')
			p++;
		if (strncmp(p, prefix, n) == 0 && (p[n] == end || (end == ' ' && p[n] == '\0')))
			return p + n;
		while (*p && *p != ' ')
			p++;
	}
	return NULL;
}

bool hostdt_option(const char *word)
{
	return bootargs_word(word, ' ') != NULL;
}

const char *hostdt_option_value(const char *key)
{
	const char *p = bootargs_word(key, '=');

	return p ? p + 1 : NULL;
}
