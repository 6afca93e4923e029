// SPDX-License-Identifier: BSD-2-Clause
/*
 * guest-dt: the device tree and boot state the hypervisor gives a guest
 * match its configuration (dts/tests/guest-dt.dts: 3 vCPUs, 32 MiB at
 * 0x80000000, bootargs below), and all of that RAM is usable.
 */
#include "guest-tests/lib/gt.h"

GT_IMAGE("guest-dt");

#define RAM_BASE 0x80000000UL
#define RAM_SIZE 0x2000000UL
#define NR_VCPUS 3
#define BOOTARGS "pmuvisor-test guest-dt bootargs"

extern char _end[];

static bool str_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* is `s` in the string list [p, p + len)? */
static bool strlist_has(const char *p, unsigned int len, const char *s)
{
	unsigned int off = 0;

	while (off < len) {
		if (str_eq(p + off, s))
			return true;
		while (off < len && p[off])
			off++;
		off++;
	}
	return false;
}

static unsigned long cells64(const void *p)
{
	return ((unsigned long)gt_fdt32(p) << 32) | gt_fdt32((const uint8_t *)p + 4);
}

void gt_main(unsigned long hartid, const void *fdt)
{
	const char *s;
	const void *p;
	unsigned int len = 0;
	unsigned long i, fdt_addr = (unsigned long)fdt, fdt_size, errors;
	char path[48], name[48];
	volatile unsigned long *w;

	gt_printf("guest-dt: hart %lu, fdt at 0x%lx, image end %p\n", hartid, fdt_addr, _end);
	if (gt_native()) {
		p = gt_fdt_getprop("/memory@80000000", "reg", &len);
		s = gt_fdt_getprop("/cpus/cpu@0/interrupt-controller", "compatible", NULL);
		gt_printf("guest-dt: native run: ram 0x%lx+0x%lx, memory reg len %u base 0x%lx "
			  "size 0x%lx, %lu cpus, cpu0 intc %s\n",
			  gt_ram_base(), gt_ram_size(), len, p ? cells64(p) : 0,
			  p ? cells64((const uint8_t *)p + 8) : 0, gt_nr_harts(), s ? s : "-");
		return;
	}
	GT_CHECK_EQ("boot-hart-zero", hartid, 0);
	GT_CHECK_EQ("fdt-magic", gt_fdt32(fdt), 0xd00dfeed);
	fdt_size = gt_fdt32((const uint8_t *)fdt + 4);
	GT_CHECK_EQ("fdt-aligned", fdt_addr & 7, 0);
	GT_CHECK_GE("fdt-above-image", fdt_addr, (unsigned long)_end);
	GT_CHECK_LE("fdt-inside-ram", fdt_addr + fdt_size, RAM_BASE + RAM_SIZE);

	/* memory */
	gt_snprintf(path, sizeof(path), "/memory@%lx", RAM_BASE);
	p = gt_fdt_getprop(path, "reg", &len);
	if (GT_CHECK_NE("memory-node", (unsigned long)p, 0)) {
		GT_CHECK_EQ("memory-reg-len", len, 16);
		GT_CHECK_EQ("memory-reg-base", cells64(p), RAM_BASE);
		GT_CHECK_EQ("memory-reg-size", cells64((const uint8_t *)p + 8), RAM_SIZE);
	}
	s = gt_fdt_getprop(path, "device_type", NULL);
	GT_CHECK_EQ("memory-device-type", s && str_eq(s, "memory"), 1);

	/* chosen */
	s = gt_fdt_getprop("/chosen", "bootargs", &len);
	GT_CHECK_EQ("chosen-bootargs", s && str_eq(s, BOOTARGS), 1);
	/* QEMU gives the host a seed: the guest gets 32 bytes of its own (core/entropy.c) */
	p = gt_fdt_getprop("/chosen", "rng-seed", &len);
	GT_CHECK_EQ("chosen-rng-seed-len", p ? len : 0, 32);
	if (p) {
		unsigned long nonzero = 0;

		for (unsigned int i = 0; i < len; i++)
			nonzero += ((const uint8_t *)p)[i] != 0;
		GT_CHECK_GE("chosen-rng-seed-nonzero-bytes", nonzero, 24);
	}
	if (s)
		gt_printf("guest-dt: bootargs \"%s\"\n", s);

	/* cpus */
	p = gt_fdt_getprop("/cpus", "timebase-frequency", &len);
	GT_CHECK_EQ("timebase-frequency", p && len == 4 ? gt_fdt32(p) : 0, 10000000);
	GT_CHECK_EQ("cpu-count", gt_nr_harts(), NR_VCPUS);
	for (i = 0; i < NR_VCPUS; i++) {
		gt_snprintf(name, sizeof(name), "cpu%lu-hartid", i);
		GT_CHECK_EQ(name, gt_hart_id_at(i), i);
		gt_snprintf(path, sizeof(path), "/cpus/cpu@%lx", i);
		s = gt_fdt_getprop(path, "device_type", NULL);
		gt_snprintf(name, sizeof(name), "cpu%lu-device-type", i);
		GT_CHECK_EQ(name, s && str_eq(s, "cpu"), 1);
		s = gt_fdt_getprop(path, "riscv,isa-extensions", &len);
		gt_snprintf(name, sizeof(name), "cpu%lu-isa-ima", i);
		GT_CHECK_EQ(name,
			    s && strlist_has(s, len, "i") && strlist_has(s, len, "m") &&
				    strlist_has(s, len, "a") && strlist_has(s, len, "zicsr"),
			    1);
		gt_snprintf(name, sizeof(name), "cpu%lu-isa-no-h", i);
		GT_CHECK_EQ(name, s && !strlist_has(s, len, "h"), 1);
		s = gt_fdt_getprop(path, "mmu-type", NULL);
		gt_snprintf(name, sizeof(name), "cpu%lu-mmu-type", i);
		GT_CHECK_EQ(name,
			    s && (str_eq(s, "riscv,sv39") || str_eq(s, "riscv,sv48") ||
				  str_eq(s, "riscv,sv57")),
			    1);
		gt_snprintf(path, sizeof(path), "/cpus/cpu@%lx/interrupt-controller", i);
		s = gt_fdt_getprop(path, "compatible", NULL);
		gt_snprintf(name, sizeof(name), "cpu%lu-intc", i);
		GT_CHECK_EQ(name, s && str_eq(s, "riscv,cpu-intc"), 1);
	}
	p = gt_fdt_getprop("/cpus/cpu@3", "reg", NULL);
	GT_CHECK_EQ("no-cpu3", (unsigned long)p, 0);

	/* RAM below the image starts zeroed (nothing left by the hypervisor) */
	errors = 0;
	for (w = (volatile unsigned long *)RAM_BASE;
	     w < (volatile unsigned long *)(RAM_BASE + 0x200000); w++)
		if (*w)
			errors++;
	GT_CHECK_EQ("ram-below-image-zeroed", errors, 0);

	/* all of RAM is usable: the first 2 MiB and the end below the FDT */
	errors = 0;
	for (w = (volatile unsigned long *)RAM_BASE;
	     w < (volatile unsigned long *)(RAM_BASE + 0x200000); w += 512) {
		*w = (unsigned long)w ^ 0xa5a5a5a5a5a5a5a5UL;
		if (*w != ((unsigned long)w ^ 0xa5a5a5a5a5a5a5a5UL))
			errors++;
	}
	GT_CHECK_EQ("ram-below-image", errors, 0);
	errors = 0;
	for (w = (volatile unsigned long *)(((unsigned long)_end + 4096) & ~4095UL);
	     w < (volatile unsigned long *)(fdt_addr & ~7UL); w += 512) {
		*w = (unsigned long)w ^ 0x5a5a5a5a5a5a5a5aUL;
		if (*w != ((unsigned long)w ^ 0x5a5a5a5a5a5a5a5aUL))
			errors++;
	}
	GT_CHECK_EQ("ram-above-image", errors, 0);
	GT_CHECK_EQ("fdt-intact", gt_fdt32(fdt), 0xd00dfeed);
	/* the byte just past RAM is not: that is fault.dts's job */
}
