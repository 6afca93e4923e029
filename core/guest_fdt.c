// SPDX-License-Identifier: BSD-2-Clause
/*
 * Each guest gets a device tree built at boot: its vCPUs with the ISA it
 * may use, its memory, and /chosen. No devices: the console is SBI DBCN,
 * timers are Sstc or SBI TIME, IPIs are SBI IPI or, where its vCPUs own
 * guest interrupt files (guest_imsic.c), MSIs to its IMSIC.
 */
#include <libfdt.h>
#include <string.h>
#include "core/entropy.h"
#include "core/guest_fdt.h"
#include "core/hostdt.h"
#include "arch/riscv/isa.h"
#include "core/lib.h"
#include "core/vm.h"
#include "vpmu/vpmu.h"

/* Unprivileged extensions pass through; privileged ones need our support. */
static const char *const passthrough_exts[] = {
	"i",	  "m",		 "a",	      "f",   "d",   "c",   "zicsr", "zifencei", "zicntr",
	"zihpm",  "zihintpause", "zihintntl", "zba", "zbb", "zbc", "zbs",   "zfa",	"zfh",
	"zfhmin", "zicond",	 "zca",	      "zcb", "zcd", "zkt", "zbkb",  "zbkc",	"zbkx",
};

static const void *host_fdt;

void guest_fdt_set_host(const void *fdt)
{
	host_fdt = fdt;
}

unsigned int guest_isa_extensions(const char **out, unsigned int max)
{
	int cpu = fdt_node_offset_by_prop_value(host_fdt, -1, "device_type", "cpu", 4);
	unsigned int n = 0;

	for (unsigned int i = 0; i < ARRAY_SIZE(passthrough_exts) && n < max; i++)
		if (hostdt_isa_has(host_fdt, cpu, passthrough_exts[i]))
			out[n++] = passthrough_exts[i];
	/* its wrs.nto traps (hstatus.VTW): the wait ends there and lets another vCPU run */
	if (hostdt_isa_has(host_fdt, cpu, "zawrs") && n < max)
		out[n++] = "zawrs";
	if (riscv_has(RISCV_EXT_SSTC) && n < max)
		out[n++] = "sstc";
	if (riscv_has(RISCV_EXT_SSCOFPMF) && vpmu_overflow_available() && n < max)
		out[n++] = "sscofpmf";
	if (riscv_has(RISCV_EXT_SVPBMT) && n < max)
		out[n++] = "svpbmt";
	/* enabled for VS/VU in henvcfg by vcpu_arch_hart_init() */
	if (riscv_has(RISCV_EXT_ZICBOM) && riscv_isa.cbom_block && n < max)
		out[n++] = "zicbom";
	if (riscv_has(RISCV_EXT_ZICBOZ) && riscv_isa.cboz_block && n < max)
		out[n++] = "zicboz";
	return n;
}

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		if ((x) < 0)                                                                       \
			return -1;                                                                 \
	} while (0)

static int build_cpu(void *fdt, unsigned int id, const char *isa, const char *const *exts,
		     unsigned int n)
{
	char name[16];
	char list[512];
	size_t len = 0;

	for (unsigned int i = 0; i < n; i++) {
		size_t l = strlen(exts[i]) + 1;

		if (len + l > sizeof(list))
			return -1;
		memcpy(list + len, exts[i], l);
		len += l;
	}
	snprintf(name, sizeof(name), "cpu@%u", id);
	CHECK(fdt_begin_node(fdt, name));
	CHECK(fdt_property_string(fdt, "device_type", "cpu"));
	CHECK(fdt_property_u32(fdt, "reg", id));
	CHECK(fdt_property_string(fdt, "status", "okay"));
	CHECK(fdt_property_string(fdt, "compatible", "riscv"));
	CHECK(fdt_property_string(fdt, "riscv,isa", isa));
	CHECK(fdt_property_string(fdt, "riscv,isa-base", "rv64i"));
	CHECK(fdt_property(fdt, "riscv,isa-extensions", list, (int)len));
	CHECK(fdt_property_string(fdt, "mmu-type",
				  host.mmu_type[0] ? host.mmu_type : "riscv,sv39"));
	if (riscv_has(RISCV_EXT_ZICBOM) && riscv_isa.cbom_block)
		CHECK(fdt_property_u32(fdt, "riscv,cbom-block-size", riscv_isa.cbom_block));
	if (riscv_has(RISCV_EXT_ZICBOZ) && riscv_isa.cboz_block)
		CHECK(fdt_property_u32(fdt, "riscv,cboz-block-size", riscv_isa.cboz_block));
	CHECK(fdt_begin_node(fdt, "interrupt-controller"));
	CHECK(fdt_property_u32(fdt, "#interrupt-cells", 1));
	CHECK(fdt_property(fdt, "interrupt-controller", NULL, 0));
	CHECK(fdt_property_string(fdt, "compatible", "riscv,cpu-intc"));
	CHECK(fdt_property_u32(fdt, "phandle", id + 1));
	CHECK(fdt_end_node(fdt));
	return fdt_end_node(fdt);
}

/*
 * The guest's S-level IMSIC (riscv,imsics binding): vCPU i's file at
 * imsic_gpa + i pages, its parent interrupt the vCPU's S-level external (9)
 */
static int build_imsic(void *fdt, const struct vm *vm)
{
	struct {
		fdt32_t intc, irq;
	} parents[VCPU_MAX];
	fdt64_t reg[2];
	char name[40];

	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		parents[i].intc = cpu_to_fdt32(i + 1); /* its interrupt-controller (build_cpu) */
		parents[i].irq = cpu_to_fdt32(9);
	}
	snprintf(name, sizeof(name), "interrupt-controller@%lx", (unsigned long)vm->imsic_gpa);
	CHECK(fdt_begin_node(fdt, name));
	CHECK(fdt_property_string(fdt, "compatible", "riscv,imsics"));
	reg[0] = cpu_to_fdt64(vm->imsic_gpa);
	reg[1] = cpu_to_fdt64((uint64_t)vm->nr_vcpus * 0x1000);
	CHECK(fdt_property(fdt, "reg", reg, sizeof(reg)));
	CHECK(fdt_property(fdt, "interrupts-extended", parents,
			   (int)(vm->nr_vcpus * sizeof(parents[0]))));
	CHECK(fdt_property(fdt, "interrupt-controller", NULL, 0));
	CHECK(fdt_property_u32(fdt, "#interrupt-cells", 0));
	CHECK(fdt_property(fdt, "msi-controller", NULL, 0));
	CHECK(fdt_property_u32(fdt, "#msi-cells", 0));
	CHECK(fdt_property_u32(fdt, "riscv,num-ids", host.imsic_guest_ids));
	CHECK(fdt_property_u32(fdt, "phandle", vm->nr_vcpus + 1));
	return fdt_end_node(fdt);
}

static void isa_string(char *buf, size_t size, const char *const *exts, unsigned int n)
{
	size_t len = (size_t)snprintf(buf, size, "rv64");

	for (unsigned int i = 0; i < n; i++)
		if (strlen(exts[i]) == 1 && len + 1 < size) {
			buf[len++] = exts[i][0];
			buf[len] = '\0';
		}
	for (unsigned int i = 0; i < n; i++)
		if (strlen(exts[i]) > 1 && len + strlen(exts[i]) + 1 < size)
			len += (size_t)snprintf(buf + len, size - len, "_%s", exts[i]);
}

int guest_fdt_build(struct vm *vm, void *fdt, size_t size, uint64_t initrd_gpa,
		    uint64_t initrd_size)
{
	const char *exts[40];
	unsigned int n = guest_isa_extensions(exts, ARRAY_SIZE(exts));
	char isa[512], name[40];
	fdt64_t reg[2];
	uint8_t seed[32];
	static unsigned long boots; /* every boot of every guest gets another seed */

	/* the IMSIC driver wants Ssaia: the guest's AIA CSRs are VS-mode's (hstateen0) */
	if (vm->imsic_gpa && n < ARRAY_SIZE(exts))
		exts[n++] = "ssaia";
	isa_string(isa, sizeof(isa), exts, n);
	CHECK(fdt_create(fdt, (int)size));
	CHECK(fdt_finish_reservemap(fdt));
	CHECK(fdt_begin_node(fdt, ""));
	CHECK(fdt_property_u32(fdt, "#address-cells", 2));
	CHECK(fdt_property_u32(fdt, "#size-cells", 2));
	CHECK(fdt_property_string(fdt, "compatible", "pmuvisor,guest"));
	snprintf(name, sizeof(name), "pmuvisor guest %s", vm->name);
	CHECK(fdt_property_string(fdt, "model", name));

	CHECK(fdt_begin_node(fdt, "chosen"));
	if (vm->cfg->bootargs[0])
		CHECK(fdt_property_string(fdt, "bootargs", vm->cfg->bootargs));
	if (initrd_size) {
		CHECK(fdt_property_u64(fdt, "linux,initrd-start", initrd_gpa));
		CHECK(fdt_property_u64(fdt, "linux,initrd-end", initrd_gpa + initrd_size));
	}
	if (entropy_guest_seed(host.rng_seed, host.rng_seed_len, vm->id,
			       __atomic_fetch_add(&boots, 1, __ATOMIC_RELAXED), seed, sizeof(seed)))
		CHECK(fdt_property(fdt, "rng-seed", seed, sizeof(seed)));
	CHECK(fdt_end_node(fdt));

	CHECK(fdt_begin_node(fdt, "cpus"));
	CHECK(fdt_property_u32(fdt, "#address-cells", 1));
	CHECK(fdt_property_u32(fdt, "#size-cells", 0));
	CHECK(fdt_property_u32(fdt, "timebase-frequency", host.timebase));
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		CHECK(build_cpu(fdt, i, isa, exts, n));
	CHECK(fdt_end_node(fdt));
	if (vm->imsic_gpa)
		CHECK(build_imsic(fdt, vm));

	snprintf(name, sizeof(name), "memory@%lx", (unsigned long)vm->ram_gpa);
	CHECK(fdt_begin_node(fdt, name));
	CHECK(fdt_property_string(fdt, "device_type", "memory"));
	reg[0] = cpu_to_fdt64(vm->ram_gpa);
	reg[1] = cpu_to_fdt64(vm->ram_size);
	CHECK(fdt_property(fdt, "reg", reg, sizeof(reg)));
	CHECK(fdt_end_node(fdt));

	CHECK(fdt_end_node(fdt));
	CHECK(fdt_finish(fdt));
	return 0;
}
