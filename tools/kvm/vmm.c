// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm: the smallest KVM user space that runs one bare-metal guest image on
 * Linux/riscv64, as the peer of pmuvisor in `make bench` (tools/kvm/kvm.mk,
 * docs/performance.md). It is /init of the KVM host's initramfs.
 *
 * usage: vmm [IMAGE [DTB]]   (defaults /guest.bin, /guest.dtb)
 *
 * One VM with GUEST_MEM bytes of RAM at 0x80000000 (tools/kvm/guest.dts
 * describes the same), the image at RAM + 2 MiB, the DTB at RAM + 1 MiB,
 * one vCPU started there with a0 = 0 (hart id) and a1 = the DTB, as an SBI
 * firmware would. KVM implements the SBI itself but for what it forwards to
 * user space: the console (DBCN, enabled here, and the legacy putchar) is
 * written to stdout and drained (drain()), everything else forwarded answers
 * NOT_SUPPORTED. The guest ends with SBI SRST (KVM_EXIT_SYSTEM_EVENT); the
 * VMM then prints "vmm: guest <event> reason <n>" and, as PID 1, powers the
 * host off.
 * Exit status (not PID 1): 0 iff the guest shut down with reason 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include <linux/kvm.h>

#define GUEST_RAM		    0x80000000UL
#define GUEST_MEM		    (128UL << 20)
#define IMAGE_OFF		    (2UL << 20)
#define DTB_OFF			    (1UL << 20)
#define DTB_MAX			    (IMAGE_OFF - DTB_OFF)
#define SBI_EXT_0_1_CONSOLE_PUTCHAR 0x1
#define SBI_EXT_0_1_CONSOLE_GETCHAR 0x2
#define SBI_EXT_DBCN		    0x4442434E
#define SBI_DBCN_WRITE		    0
#define SBI_DBCN_WRITE_BYTE	    2
#define SBI_ERR_FAILURE		    (-1L)
#define SBI_ERR_NOT_SUPPORTED	    (-2L)
#define SBI_ERR_INVALID_PARAM	    (-3L)

static uint8_t *ram;

static void __attribute__((noreturn)) finish(int status)
{
	fflush(stdout);
	if (getpid() == 1) {
		sync();
		reboot(RB_POWER_OFF);
	}
	exit(status);
}

static void __attribute__((noreturn)) die(const char *what)
{
	printf("vmm: error: %s: %s\n", what, strerror(errno));
	finish(2);
}

/* Read file `path` into guest RAM at offset `off`, at most `max` bytes */
static void load(const char *path, unsigned long off, unsigned long max)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	size_t done = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		die(path);
	if ((unsigned long)st.st_size > max) {
		errno = EFBIG;
		die(path);
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, ram + off + done, (size_t)st.st_size - done);

		if (n <= 0)
			die(path);
		done += (size_t)n;
	}
	close(fd);
}

static void set_reg(int vcpu, uint64_t id, unsigned long val, const char *what)
{
	struct kvm_one_reg reg = {.id = id, .addr = (uintptr_t)&val};

	if (ioctl(vcpu, KVM_SET_ONE_REG, &reg) < 0)
		die(what);
}

#define SBI_EXT_REG(e)                                                                             \
	(KVM_REG_RISCV | KVM_REG_SIZE_U64 | KVM_REG_RISCV_SBI_EXT | KVM_REG_RISCV_SBI_SINGLE | (e))
#define CORE_REG(r)                                                                                \
	(KVM_REG_RISCV | KVM_REG_SIZE_U64 | KVM_REG_RISCV_CORE | KVM_REG_RISCV_CORE_REG(regs.r))

/*
 * Wait until the console has sent what the guest wrote: the host's UART
 * interrupts then do not fall into the guest's next measurement.
 */
static void drain(void)
{
	fflush(stdout);
	tcdrain(STDOUT_FILENO);
}

/* The SBI calls KVM forwards to user space: the console, or NOT_SUPPORTED */
static void sbi_call(struct kvm_run *run)
{
	unsigned long *a = run->riscv_sbi.args, *ret = run->riscv_sbi.ret;

	ret[0] = (unsigned long)SBI_ERR_NOT_SUPPORTED;
	ret[1] = 0;
	if (run->riscv_sbi.extension_id == SBI_EXT_0_1_CONSOLE_PUTCHAR) {
		putchar((int)(a[0] & 0xff));
		if ((a[0] & 0xff) == '\n')
			drain();
		ret[0] = 0;
	} else if (run->riscv_sbi.extension_id == SBI_EXT_0_1_CONSOLE_GETCHAR) {
		ret[0] = (unsigned long)-1L;
	} else if (run->riscv_sbi.extension_id == SBI_EXT_DBCN) {
		if (run->riscv_sbi.function_id == SBI_DBCN_WRITE) {
			unsigned long len = a[0], addr = a[1];

			if (a[2] || addr < GUEST_RAM || addr - GUEST_RAM > GUEST_MEM ||
			    len > GUEST_MEM - (addr - GUEST_RAM)) {
				ret[0] = (unsigned long)SBI_ERR_INVALID_PARAM;
				return;
			}
			if (fwrite(ram + (addr - GUEST_RAM), 1, len, stdout) != len) {
				ret[0] = (unsigned long)SBI_ERR_FAILURE;
				return;
			}
			drain();
			ret[0] = 0;
			ret[1] = len;
		} else if (run->riscv_sbi.function_id == SBI_DBCN_WRITE_BYTE) {
			putchar((int)(a[0] & 0xff));
			drain();
			ret[0] = 0;
		}
	}
}

/* SRST reached KVM: report it; status 0 iff a shutdown with reason 0 (no failure) */
static void __attribute__((noreturn)) system_event(const struct kvm_run *run)
{
	unsigned long long reason = run->system_event.ndata ? run->system_event.data[0] : 0;
	const char *ev = "event";

	if (run->system_event.type == KVM_SYSTEM_EVENT_SHUTDOWN)
		ev = "shutdown";
	else if (run->system_event.type == KVM_SYSTEM_EVENT_RESET)
		ev = "reset";
	printf("vmm: guest %s reason %llu\n", ev, reason);
	finish(run->system_event.type == KVM_SYSTEM_EVENT_SHUTDOWN && !reason ? 0 : 1);
}

int main(int argc, char **argv)
{
	const char *image = argc > 1 ? argv[1] : "/guest.bin";
	const char *dtb = argc > 2 ? argv[2] : "/guest.dtb";
	struct kvm_userspace_memory_region mem;
	struct kvm_run *run;
	int kvm, vm, vcpu;
	long run_size;

	setvbuf(stdout, NULL, _IOLBF, 0);
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		die("/dev/kvm");
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		die("KVM_CREATE_VM");
	ram = mmap(NULL, GUEST_MEM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ram == MAP_FAILED)
		die("mmap guest RAM");
	load(image, IMAGE_OFF, GUEST_MEM - IMAGE_OFF);
	load(dtb, DTB_OFF, DTB_MAX);
	mem = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = GUEST_RAM,
		.memory_size = GUEST_MEM,
		.userspace_addr = (uintptr_t)ram,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &mem) < 0)
		die("KVM_SET_USER_MEMORY_REGION");
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		die("KVM_CREATE_VCPU");
	run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < (long)sizeof(*run))
		die("KVM_GET_VCPU_MMAP_SIZE");
	run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		die("mmap kvm_run");
	/* DBCN is off by default in KVM: the guest then writes one ecall per line, not per byte */
	set_reg(vcpu, SBI_EXT_REG(KVM_RISCV_SBI_EXT_DBCN), 1, "enable SBI DBCN");
	set_reg(vcpu, CORE_REG(pc), GUEST_RAM + IMAGE_OFF, "set pc");
	set_reg(vcpu, CORE_REG(a0), 0, "set a0");
	set_reg(vcpu, CORE_REG(a1), GUEST_RAM + DTB_OFF, "set a1");
	printf("vmm: %s at 0x%lx, %s at 0x%lx, %lu MiB RAM\n", image, GUEST_RAM + IMAGE_OFF, dtb,
	       GUEST_RAM + DTB_OFF, GUEST_MEM >> 20);

	for (;;) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die("KVM_RUN");
		}
		switch (run->exit_reason) {
		case KVM_EXIT_RISCV_SBI:
			sbi_call(run);
			break;
		case KVM_EXIT_SYSTEM_EVENT:
			system_event(run);
		case KVM_EXIT_MMIO:
			printf("vmm: error: guest %s of unmapped 0x%llx\n",
			       run->mmio.is_write ? "write" : "read",
			       (unsigned long long)run->mmio.phys_addr);
			finish(1);
		default:
			printf("vmm: error: unexpected exit reason %u\n", run->exit_reason);
			finish(1);
		}
	}
}
