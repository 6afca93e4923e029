// SPDX-License-Identifier: BSD-2-Clause
/*
 * Boot: learn the machine from the host DT, find the bundle, create the
 * guests, start the other harts, then every hart runs its vCPU queue.
 */
#include <libfdt.h>
#include <string.h>
#include "core/bundle.h"
#include "core/config.h"
#include "core/console.h"
#include "arch/riscv/cpu.h"
#include "core/excl.h"
#include "core/guest_fdt.h"
#include "core/guest_imsic.h"
#include "core/hart.h"
#include "core/hostdt.h"
#include "arch/riscv/gstage.h"
#include "arch/riscv/ipi.h"
#include "arch/riscv/isa.h"
#include "core/lib.h"
#include "core/mm.h"
#include "core/profile.h"
#include "core/sbi.h"
#include "arch/riscv/sbi_call.h"
#include "core/sched.h"
#include "arch/riscv/timer.h"
#include "core/unstarve.h"
#include "core/vcpu.h"
#include "core/vm.h"

#define HART_STACK_SIZE 16384

extern char _hv_start[], _hv_end[];
extern char _secondary_start[];

const uint8_t *bundle_base;
struct mm host_mm;
static struct hv_config config;

#define FINISHER_FAIL 0x3333

void hv_poweroff(bool failure)
{
	profile_flush_all(); /* its last lines go through the console's ring too */
	console_flush_all();
	/* SBI SRST cannot say "failed" to QEMU; its test device can (exit code 1) */
	if (failure && host.finisher_base)
		*(volatile uint32_t *)host.finisher_base = FINISHER_FAIL | (1U << 16);
	sbi_ecall(SBI_EXT_SRST, SBI_EXT_SRST_RESET, SBI_SRST_RESET_TYPE_SHUTDOWN,
		  failure ? SBI_SRST_RESET_REASON_SYSFAIL : SBI_SRST_RESET_REASON_NONE, 0, 0, 0, 0);
	for (;;)
		cpu_wfi();
}

void hv_panic(const char *fmt, ...)
{
	char buf[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	hv_printf("pmuvisor: PANIC: %s\n", buf);
	hv_poweroff(true);
}

void *mm_zalloc_pages(uint64_t size, uint64_t align)
{
	uint64_t pa = mm_alloc(&host_mm, ALIGN_UP(size, 4096), align);

	if (!pa)
		hv_panic("out of memory allocating %lu bytes", (unsigned long)size);
	memset((void *)(uintptr_t)pa, 0, size);
	return (void *)(uintptr_t)pa;
}

static void banner(void)
{
	hv_printf("\npmuvisor: RISC-V hypervisor with a virtual PMU\n");
	hv_printf("pmuvisor: %u harts (", host.nr_harts);
	for (unsigned int i = 0; i < host.nr_harts; i++)
		hv_printf("%s%lu", i ? " " : "", host.hartids[i]);
	hv_printf("), memory 0x%lx+%lu MiB, timebase %u Hz, uart 0x%lx\n",
		  (unsigned long)host.mem.base, (unsigned long)(host.mem.size >> 20), host.timebase,
		  (unsigned long)host.uart_base);
	hv_printf("pmuvisor: host extensions:");
	for (int e = 0; e < RISCV_EXT_MAX; e++)
		hv_printf(" %s%s", riscv_has((enum riscv_ext)e) ? "+" : "-",
			  riscv_ext_name((enum riscv_ext)e));
	hv_printf("\n");
}

static void banner_guests(void)
{
	const char *exts[40];
	unsigned int n = guest_isa_extensions(exts, ARRAY_SIZE(exts));

	hv_printf("pmuvisor: guest ISA: ");
	for (unsigned int i = 0; i < n; i++)
		hv_printf("%s%s", i ? "," : "", exts[i]);
	hv_printf("\npmuvisor: counter overflow (LCOFI) reaches guests by %s\n",
		  vcpu_arch_lcofi_path());
}

/* Host IPIs as MSIs where every hart has an S-level interrupt file (arch/riscv/ipi.h) */
static void ipi_init(void)
{
	bool files = riscv_has(RISCV_EXT_SSAIA) && nr_harts <= IPI_HARTS_MAX;

	for (unsigned int i = 0; i < nr_harts; i++)
		files = files && host.imsic_file[i];
	for (unsigned int i = 0; files && i < nr_harts; i++)
		ipi_arch_add_file(harts[i].hartid, host.imsic_file[i]);
	hv_printf("pmuvisor: IPIs between harts: %s\n",
		  files ? "MSIs to their S-level IMSIC files" : "SBI IPI");
}

static void reserve(uint64_t base, uint64_t size)
{
	if (mm_reserve(&host_mm, base, size))
		hv_panic("too many reserved memory ranges");
}

static void reserve_memory(const void *fdt)
{
	mm_init(&host_mm, host.mem.base, host.mem.size);
	for (unsigned int i = 0; i < host.nr_resv; i++)
		reserve(host.resv[i].base, host.resv[i].size);
	/* OpenSBI's own region is reserved in the DT on QEMU, but be safe */
	reserve(host.mem.base, (uintptr_t)_hv_start - host.mem.base);
	reserve((uintptr_t)_hv_start, (uintptr_t)_hv_end - (uintptr_t)_hv_start);
	reserve((uintptr_t)fdt, fdt_totalsize(fdt));
	if (host.initrd_end > host.initrd_start)
		reserve(host.initrd_start, host.initrd_end - host.initrd_start);
}

static struct hart *hart_by_id(unsigned long hartid)
{
	for (unsigned int i = 0; i < nr_harts; i++)
		if (harts[i].hartid == hartid)
			return &harts[i];
	return NULL;
}

static void create_guests(void)
{
	char err[160];
	unsigned int rr = 0;

	if (host.initrd_end <= host.initrd_start)
		hv_panic("no bundle: boot QEMU with -initrd build/bundles/NAME.bundle");
	bundle_base = (const uint8_t *)(uintptr_t)host.initrd_start;
	if (config_parse(bundle_base, host.initrd_end - host.initrd_start, &config, err,
			 sizeof(err)))
		hv_panic("configuration error: %s", err);

	nr_vms = config.nr_vms;
	for (unsigned int i = 0; i < config.nr_vms; i++) {
		const struct vm_config *vc = &config.vms[i];

		for (unsigned int c = 0; c < vc->nr_vcpus; c++)
			if (vc->has_affinity && !hart_by_id(vc->affinity[c]))
				hv_panic("configuration error: guest %s vcpu %u: no hart %u",
					 vc->name, c, vc->affinity[c]);
		if (vm_create(vc, i))
			hv_panic("cannot create guest %s", vc->name);
		for (unsigned int c = 0; c < vc->nr_vcpus; c++) {
			struct hart *h = vc->has_affinity ? hart_by_id(vc->affinity[c])
							  : &harts[rr++ % nr_harts];

			vms[i]->vcpus[c]->pinned = vc->has_affinity;
			sched_add(h, vms[i]->vcpus[c]);
		}
		guest_imsic_assign(vms[i]);
	}
	vm_count_live((int)nr_vms);
	for (unsigned int i = 0; i < nr_vms; i++) {
		struct vm *vm = vms[i];

		hv_printf("pmuvisor: guest %s: %u vCPU(s) on hart(s)", vm->name, vm->nr_vcpus);
		for (unsigned int c = 0; c < vm->nr_vcpus; c++)
			hv_printf(" %lu", vm->vcpus[c]->hart->hartid);
		hv_printf(", %lu MiB at 0x%lx (host 0x%lx, %s pages)%s\n",
			  (unsigned long)(vm->ram_size >> 20), (unsigned long)vm->ram_gpa,
			  (unsigned long)vm->ram_hpa,
			  gstage_leaf_size(vm->ram_gpa, vm->ram_hpa, vm->ram_size) == SZ_1G
				  ? "1 GiB"
				  : "2 MiB",
			  vm->imsic_gpa ? ", IMSIC guest files" : "");
		if (vm_arch_vmid_shared(&vm->arch))
			hv_printf(
				"pmuvisor: guest %s: VMID 0, shared: some hart keeps too few VMID "
				"bits for its own\n",
				vm->name);
		if (vm_boot(vm))
			hv_panic("cannot load guest %s", vm->name);
	}
	profile_start();
}

/*
 * A test's switch: vmid-bits=N in the bootargs makes every hart keep at most
 * N VMID bits, as a hart that implements no more would (the privileged spec
 * allows 0), so that VMs share VMIDs and the G-stage is fenced between them
 */
static void limit_vmid_bits(void)
{
	const char *p = hostdt_option_value("vmid-bits");
	unsigned int bits = 0;

	if (!p)
		return;
	if (*p < '0' || *p > '9') {
		hv_printf("pmuvisor: vmid-bits= wants a number of bits: ignored\n");
		return;
	}
	while (*p >= '0' && *p <= '9' && bits < 14)
		bits = bits * 10 + (unsigned int)(*p++ - '0');
	if (bits > 14)
		bits = 14;
	vcpu_arch_limit_vmid_bits(bits);
	hv_printf("pmuvisor: harts keep at most %u VMID bit(s) (vmid-bits=)\n", bits);
}

static void hart_start(struct hart *h)
{
	cpu_set_tp(h);
	vcpu_arch_hart_init();
	ipi_arch_hart_init(h->hartid);
	sched_run(h);
}

void hv_secondary_main(unsigned long hartid, struct hart *h)
{
	(void)hartid;
	cpu_set_tp(h);
	vpmu_hart_init();
	hart_start(h);
}

void hv_main(unsigned long hartid, const void *fdt)
{
	char err[120];
	struct hart *boot = NULL;

	if (hostdt_parse(fdt, &host, &riscv_isa, err, sizeof(err))) {
		/* no console of our own yet: the firmware's will do */
		for (const char *p = err; *p; p++)
			sbi_ecall(SBI_EXT_DBCN, SBI_EXT_DBCN_CONSOLE_WRITE_BYTE, (unsigned char)*p,
				  0, 0, 0, 0, 0);
		hv_poweroff(true);
	}
	host.verbose = hostdt_option("verbose");
	console_init(host.uart_base, host.uart_shift);
	guest_fdt_set_host(fdt);
	banner();
	if (!riscv_has(RISCV_EXT_H))
		hv_panic("the harts lack the H extension (QEMU: -cpu max)");
	timer_init(riscv_has(RISCV_EXT_SSTC));
	reserve_memory(fdt);

	nr_harts = host.nr_harts;
	for (unsigned int i = 0; i < nr_harts; i++) {
		harts[i].index = i;
		harts[i].status = &hart_status[i];
		harts[i].hartid = host.hartids[i];
		harts[i].timer_armed = UINT64_MAX - 1;
		harts[i].look_at = UINT64_MAX;
		harts[i].arch.stack_top =
			(uintptr_t)mm_zalloc_pages(HART_STACK_SIZE, 4096) + HART_STACK_SIZE;
		if (harts[i].hartid == hartid)
			boot = &harts[i];
	}
	if (!boot)
		hv_panic("boot hart %lu is not in the device tree", hartid);
	cpu_set_tp(boot);

	vpmu_global_init();
	sbi_init();
	ipi_init();
	limit_vmid_bits();
	vcpu_arch_hart_init();
	ipi_arch_hart_init(hartid);
	banner_guests();
	/* a test's switch: the path of hosts that leave stval 0 (QEMU writes the instruction) */
	exit_insn_from_memory = hostdt_option("trapped-insn=fetch");
	if (exit_insn_from_memory)
		hv_printf("pmuvisor: trapped instructions read from guest memory "
			  "(trapped-insn=fetch)\n");

	/*
	 * The other harts start with empty queues and settle (sleep) first: their
	 * start-up is over before any guest counts, and the vPMU can probe with
	 * an idle hart whether counters count other harts' instructions.
	 */
	for (unsigned int i = 0; i < nr_harts; i++) {
		struct sbi_ret r;

		if (&harts[i] == boot)
			continue;
		r = sbi_ecall(SBI_EXT_HSM, SBI_EXT_HSM_HART_START, harts[i].hartid,
			      (uintptr_t)_secondary_start, (uintptr_t)&harts[i], 0, 0, 0);
		if (r.error)
			hv_panic("cannot start hart %lu: SBI error %ld", harts[i].hartid, r.error);
	}
	sched_wait_settled(nr_harts - 1);
	vpmu_probe_other_harts();
	excl_init(vpmu_counts_other_harts());
	unstarve_init(vpmu_harts_may_starve());
	create_guests();
	sched_kick_and_settle();
	hart_start(boot);
}
