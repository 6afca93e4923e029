// SPDX-License-Identifier: BSD-2-Clause
/* SBI DBCN and the legacy console/timer/IPI/shutdown calls. */
#include "core/console.h"
#include "core/sbi.h"
#include "core/vcpu.h"
#include "core/vm.h"

/*
 * The most one console_write or console_read call moves. Both may do part of
 * the work and say how much (the spec; Linux's hvc driver loops on it, its
 * buffer is 256 bytes too): one call of 262,144 bytes would hold the hart
 * and the console lock, with interrupts off, for 0.7 s, longer than a
 * neighbour's 250 ms watchdog on the same hart allows. The console
 * takes only what its buffers have room for, never waiting for the UART
 * (core/console.c). A call that could take nothing is made again until it
 * takes something (SBI_RET_RESTART: the hart's other vCPUs run in
 * between): write_byte and the legacy putchar must not return before their
 * byte is taken, and Linux's printk (hvc_console_print) drops the bytes of
 * a write that answers 0.
 */
#define DBCN_CALL_MAX 256

static struct sbi_ret dbcn_handler(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
				   const unsigned long args[6])
{
	struct vm *vm = vcpu->vm;
	unsigned long n = args[0];
	char *p;

	(void)eid;
	if (fid == SBI_EXT_DBCN_CONSOLE_WRITE_BYTE) {
		if (!console_guest_putc(vm, (char)args[0]))
			return (struct sbi_ret){SBI_RET_RESTART, 0};
		return (struct sbi_ret){0, 0};
	}
	if (fid != SBI_EXT_DBCN_CONSOLE_WRITE && fid != SBI_EXT_DBCN_CONSOLE_READ)
		return (struct sbi_ret){SBI_ERR_NOT_SUPPORTED, 0};
	/* RV64: the address is base_lo; a non-zero base_hi is beyond any RAM */
	p = args[2] ? NULL : vm_gpa_to_hva(vm, args[1], n ? n : 1);
	if (!p)
		return (struct sbi_ret){SBI_ERR_INVALID_PARAM, 0};
	/* the whole buffer is checked (its end may be past RAM), part of it is done */
	if (n > DBCN_CALL_MAX)
		n = DBCN_CALL_MAX;
	if (fid == SBI_EXT_DBCN_CONSOLE_WRITE) {
		size_t taken = console_guest_write(vm, p, n);

		/* 0 is the spec's "try later", but Linux's printk drops what got 0: made again */
		if (n && !taken)
			return (struct sbi_ret){SBI_RET_RESTART, 0};
		return (struct sbi_ret){0, taken};
	}
	for (unsigned long i = 0; i < n; i++) {
		int c = console_getc(vm);

		if (c < 0)
			return (struct sbi_ret){0, i};
		p[i] = (char)c;
	}
	return (struct sbi_ret){0, n};
}

const struct sbi_ext sbi_ext_dbcn = {
	.eid_min = SBI_EXT_DBCN,
	.eid_max = SBI_EXT_DBCN,
	.name = "dbcn",
	.handler = dbcn_handler,
};

/*
 * Legacy v0.1 calls return in a0 only and must keep a1. Those that take a
 * pointer to a hart mask in guest virtual memory (0x04-0x07) are not
 * offered: every guest that needs IPIs uses the IPI and RFENCE extensions.
 */
static struct sbi_ret legacy_handler(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
				     const unsigned long args[6])
{
	long ret = 0;

	(void)fid;
	switch (eid) {
	case SBI_EXT_0_1_SET_TIMER:
		vcpu_fw_event(vcpu, SBI_PMU_FW_SET_TIMER);
		vcpu_arch_set_timer(&vcpu->arch, args[0]);
		break;
	case SBI_EXT_0_1_CONSOLE_PUTCHAR:
		if (!console_guest_putc(vcpu->vm, (char)args[0]))
			return (struct sbi_ret){SBI_RET_RESTART, 0};
		break;
	case SBI_EXT_0_1_CONSOLE_GETCHAR:
		ret = console_getc(vcpu->vm);
		break;
	case SBI_EXT_0_1_CLEAR_IPI:
		__atomic_and_fetch(&vcpu->arch.pending_irqs, ~(1UL << IRQ_VS_SOFT),
				   __ATOMIC_RELAXED);
		vcpu_arch_clear_irq(&vcpu->arch, 1UL << IRQ_VS_SOFT);
		break;
	case SBI_EXT_0_1_SHUTDOWN:
		vm_request_stop(vcpu->vm, VM_STOP_OK, "shutdown (legacy)");
		return (struct sbi_ret){SBI_RET_NO_REPLY, 0};
	default: /* not offered (sbi_ext_legacy_absent) */
		ret = SBI_ERR_NOT_SUPPORTED;
		break;
	}
	vcpu_ctx(vcpu)->regs[10] = (unsigned long)ret;
	return (struct sbi_ret){SBI_RET_NO_REPLY, 0};
}

const struct sbi_ext sbi_ext_legacy = {
	.eid_min = SBI_EXT_0_1_SET_TIMER,
	.eid_max = SBI_EXT_0_1_CLEAR_IPI,
	.name = "legacy",
	.handler = legacy_handler,
};

const struct sbi_ext sbi_ext_legacy_shutdown = {
	.eid_min = SBI_EXT_0_1_SHUTDOWN,
	.eid_max = SBI_EXT_0_1_SHUTDOWN,
	.name = "legacy-shutdown",
	.handler = legacy_handler,
};

static long legacy_absent_probe(struct vcpu *vcpu)
{
	(void)vcpu;
	return 0;
}

/* The rest of the legacy range: probed 0, and a call says NOT_SUPPORTED in a0 only */
const struct sbi_ext sbi_ext_legacy_absent = {
	.eid_min = SBI_EXT_0_1_SEND_IPI,
	.eid_max = SBI_EXT_0_1_REMOTE_SFENCE_VMA_ASID,
	.name = "legacy-absent",
	.handler = legacy_handler,
	.probe = legacy_absent_probe,
};

const struct sbi_ext sbi_ext_legacy_reserved = {
	.eid_min = SBI_EXT_0_1_SHUTDOWN + 1,
	.eid_max = 0x0f,
	.name = "legacy-reserved",
	.handler = legacy_handler,
	.probe = legacy_absent_probe,
};
