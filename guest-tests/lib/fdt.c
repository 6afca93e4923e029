// SPDX-License-Identifier: BSD-2-Clause
/* Just enough flattened device tree parsing for the tests: /cpus. */
#include "gt.h"

#define FDT_MAGIC	0xd00dfeed
#define FDT_BEGIN_NODE	1
#define FDT_END_NODE	2
#define FDT_PROP	3
#define FDT_NOP		4
#define FDT_END		9

struct gt_cpu {
	unsigned long hartid;
	const char *isa_ext;	/* riscv,isa-extensions string list */
	unsigned int isa_ext_len;
	const char *isa;	/* riscv,isa */
	bool disabled;
};

static const void *fdt_base;
static struct gt_cpu cpus[GT_MAX_HARTS];
static unsigned long nr_cpus;
static uint64_t timebase = 10000000;

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

void gt_fdt_init(const void *fdt)
{
	const uint8_t *p, *strings;
	int depth = 0, cpus_depth = -1;
	struct gt_cpu *cur = NULL;
	uint32_t addr_cells = 1;

	fdt_base = fdt;
	nr_cpus = 0;
	if (!fdt || be32(fdt) != FDT_MAGIC)
		return;
	p = (const uint8_t *)fdt + be32((const uint8_t *)fdt + 8);
	strings = (const uint8_t *)fdt + be32((const uint8_t *)fdt + 12);
	for (;;) {
		uint32_t tok = be32(p);

		p += 4;
		if (tok == FDT_BEGIN_NODE) {
			const char *name = (const char *)p;
			size_t len = 0;

			while (name[len])
				len++;
			p += (len + 4) & ~3UL;
			depth++;
			if (depth == 2 && streq(name, "cpus"))
				cpus_depth = depth;
			else if (cpus_depth > 0 && depth == cpus_depth + 1 && strprefix(name, "cpu@") &&
				 nr_cpus < GT_MAX_HARTS) {
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
			if (cpus_depth > 0 && depth == cpus_depth) {
				if (streq(pname, "timebase-frequency") && len == 4)
					timebase = be32(val);
				if (streq(pname, "#address-cells") && len == 4)
					addr_cells = be32(val);
			} else if (cur && depth == cpus_depth + 1) {
				if (streq(pname, "reg"))
					cur->hartid = addr_cells == 2 && len >= 8 ?
							      ((uint64_t)be32(val) << 32) | be32(val + 4) :
							      be32(val);
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
