// SPDX-License-Identifier: BSD-2-Clause
/* Just enough flattened device tree parsing for the tests: /cpus. */
#include "gt.h"

#define FDT_MAGIC      0xd00dfeed
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE   2
#define FDT_PROP       3
#define FDT_NOP	       4
#define FDT_END	       9

struct gt_cpu {
	unsigned long hartid;
	const char *isa_ext; /* riscv,isa-extensions string list */
	const char *isa;     /* riscv,isa */
	unsigned int isa_ext_len;
	bool disabled;
};

static const void *fdt_base;
static struct gt_cpu cpus[GT_MAX_HARTS];
static unsigned long nr_cpus;
static uint64_t timebase = 10000000;
static unsigned long ram_base, ram_size;

static uint32_t be32(const void *p)
{
	const uint8_t *b = p;

	return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

static bool streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

static bool strprefix(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	return true;
}

/* The FDT's structure block; *strings gets its strings block */
static const uint8_t *structure(const void *fdt, const uint8_t **strings)
{
	*strings = (const uint8_t *)fdt + be32((const uint8_t *)fdt + 12);
	return (const uint8_t *)fdt + be32((const uint8_t *)fdt + 8);
}

/* At an FDT_BEGIN_NODE's name: return it and move *p past it (4-byte aligned) */
static const char *begin_node(const uint8_t **p)
{
	const char *name = (const char *)*p;
	size_t len = 0;

	while (name[len])
		len++;
	*p += (len + 4) & ~3UL;
	return name;
}

void gt_fdt_init(const void *fdt)
{
	const uint8_t *p, *strings;
	int depth = 0, cpus_depth = -1;
	struct gt_cpu *cur = NULL;
	uint32_t addr_cells = 1;
	bool in_memory = false;

	fdt_base = fdt;
	nr_cpus = 0;
	if (!fdt || be32(fdt) != FDT_MAGIC)
		return;
	p = structure(fdt, &strings);
	for (;;) {
		uint32_t tok = be32(p);

		p += 4;
		if (tok == FDT_BEGIN_NODE) {
			const char *name = begin_node(&p);

			depth++;
			in_memory = depth == 2 && strprefix(name, "memory") && !ram_size;
			if (depth == 2 && streq(name, "cpus"))
				cpus_depth = depth;
			else if (cpus_depth > 0 && depth == cpus_depth + 1 &&
				 strprefix(name, "cpu@") && nr_cpus < GT_MAX_HARTS) {
				cur = &cpus[nr_cpus++];
				cur->hartid = ~0UL;
				cur->isa_ext = NULL;
				cur->isa = NULL;
				cur->disabled = false;
			}
		} else if (tok == FDT_END_NODE) {
			if (cur && depth == cpus_depth + 1)
				cur = NULL;
			if (depth == cpus_depth)
				cpus_depth = -1;
			depth--;
		} else if (tok == FDT_PROP) {
			uint32_t len = be32(p), nameoff = be32(p + 4);
			const char *pname = (const char *)strings + nameoff;
			const uint8_t *val = p + 8;

			p += 8 + ((len + 3) & ~3U);
			if (in_memory && streq(pname, "reg") && len >= 16) {
				/* the root's #address-cells = #size-cells = 2 on RV64 */
				ram_base = ((uint64_t)be32(val) << 32) | be32(val + 4);
				ram_size = ((uint64_t)be32(val + 8) << 32) | be32(val + 12);
			}
			if (cpus_depth > 0 && depth == cpus_depth) {
				if (streq(pname, "timebase-frequency") && len == 4)
					timebase = be32(val);
				if (streq(pname, "#address-cells") && len == 4)
					addr_cells = be32(val);
			} else if (cur && depth == cpus_depth + 1) {
				if (streq(pname, "reg"))
					cur->hartid = addr_cells == 2 && len >= 8
							      ? ((uint64_t)be32(val) << 32) |
									be32(val + 4)
							      : be32(val);
				else if (streq(pname, "riscv,isa-extensions")) {
					cur->isa_ext = (const char *)val;
					cur->isa_ext_len = len;
				} else if (streq(pname, "riscv,isa"))
					cur->isa = (const char *)val;
				else if (streq(pname, "status"))
					cur->disabled = !streq((const char *)val, "okay") &&
							!streq((const char *)val, "ok");
				else if (streq(pname, "timebase-frequency") && len == 4)
					timebase = be32(val);
			}
		} else if (tok == FDT_NOP) {
			continue;
		} else {
			break;
		}
	}
	/* drop disabled cpus */
	{
		unsigned long i, j = 0;

		for (i = 0; i < nr_cpus; i++)
			if (!cpus[i].disabled)
				cpus[j++] = cpus[i];
		nr_cpus = j;
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

static struct gt_cpu *find_cpu(unsigned long hartid)
{
	unsigned long i;

	for (i = 0; i < nr_cpus; i++)
		if (cpus[i].hartid == hartid)
			return &cpus[i];
	return NULL;
}

bool gt_hart_has_ext(unsigned long hartid, const char *ext)
{
	struct gt_cpu *c = find_cpu(hartid);
	unsigned int off = 0;

	if (!c)
		return false;
	if (c->isa_ext) {
		while (off < c->isa_ext_len) {
			const char *s = c->isa_ext + off;
			unsigned int len = 0;

			while (off + len < c->isa_ext_len && s[len])
				len++;
			if (streq(s, ext))
				return true;
			off += len + 1;
		}
		return false;
	}
	if (c->isa) {
		/* riscv,isa: rv64imafdc_zicsr_sstc...: look for "_<ext>" */
		const char *s = c->isa;

		for (; *s; s++) {
			if (*s == '_' && strprefix(s + 1, ext)) {
				size_t el = 0;
				char n;

				while (ext[el])
					el++;
				n = s[1 + el];

				if (n == '\0' || n == '_')
					return true;
			}
		}
	}
	return false;
}

uint64_t gt_timebase(void)
{
	return timebase;
}

/* Does node name `name` equal path component [c, c + clen)? */
static bool comp_eq(const char *name, const char *c, size_t clen)
{
	size_t i;

	for (i = 0; i < clen; i++)
		if (name[i] != c[i])
			return false;
	return name[clen] == '\0';
}

const void *gt_fdt_getprop(const char *path, const char *prop, unsigned int *lenp)
{
	const uint8_t *p, *strings;
	const char *comp[16];
	size_t clen[16];
	int ncomp = 0, depth = 0, matched = 0;
	const char *s = path;

	if (!fdt_base || be32(fdt_base) != FDT_MAGIC || *s != '/')
		return NULL;
	while (*s) {
		while (*s == '/')
			s++;
		if (!*s || ncomp == 16)
			break;
		comp[ncomp] = s;
		while (*s && *s != '/')
			s++;
		clen[ncomp] = (size_t)(s - comp[ncomp]);
		ncomp++;
	}
	p = structure(fdt_base, &strings);
	for (;;) {
		uint32_t tok = be32(p);

		p += 4;
		if (tok == FDT_BEGIN_NODE) {
			const char *name = begin_node(&p);

			depth++;
			/* depth 1 is the root node */
			if (depth >= 2 && matched == depth - 2 && depth - 2 < ncomp &&
			    comp_eq(name, comp[depth - 2], clen[depth - 2]))
				matched = depth - 1;
		} else if (tok == FDT_END_NODE) {
			if (matched == depth - 1 && depth >= 2)
				matched = depth - 2;
			depth--;
			if (depth == 0)
				break;
		} else if (tok == FDT_PROP) {
			uint32_t len = be32(p), nameoff = be32(p + 4);

			if (matched == ncomp && depth == ncomp + 1 &&
			    streq((const char *)strings + nameoff, prop)) {
				if (lenp)
					*lenp = len;
				return p + 8;
			}
			p += 8 + ((len + 3) & ~3U);
		} else if (tok == FDT_NOP) {
			continue;
		} else {
			break;
		}
	}
	return NULL;
}

uint32_t gt_fdt32(const void *p)
{
	return be32(p);
}
