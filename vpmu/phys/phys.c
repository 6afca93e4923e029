/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vpmu/phys.h for the hypervisor: the backend is chosen once at boot
 * (vpmu_phys_init), the platform's quirks are wrapped around it (qemu.c),
 * and what every backend shares lives here: counter CSR reads, hcounteren,
 * scountovf and the LCOFI pending bit.
 */
#include "arch/riscv/csr.h"
#include "vpmu/bits.h"
#include "vpmu/phys.h"
#include "vpmu/phys/backend.h"
#include "vpmu/phys/qemu.h"
#include "vpmu/vpmu_host.h"

/* What the logic's calls go to: the backend's operations, wrapped in the quirks' workarounds */
static struct phys_ops phys = {.name = "none"};

const char *vpmu_phys_init(void)
{
	const char *why = "";

	phys = phys_sbi_ops;
	if (vpmu_host_option("pmu-backend=sbi"))
		why = " (counter delegation not used: pmu-backend=sbi)";
	else if (phys_cdeleg_ops.usable())
		phys = phys_cdeleg_ops;
	qemu_quirks_init(&phys);
	vpmu_phys_start_op = phys.start;
	return *why ? "host SBI PMU (counter delegation not used: pmu-backend=sbi)" : phys.name;
}

/* An index from outside the layer that names no counter, or the time CSR */
static bool no_counter(unsigned int idx)
{
	return idx >= PHYS_MAX_HW || idx == 1;
}

struct sbi_ret vpmu_phys_config(unsigned int idx, unsigned long host_flags, unsigned long event_idx,
				uint64_t event_data)
{
	if (qemu_quirks & (QEMU_EVENT_MAP | QEMU_BIAS | QEMU_TLB_OVERFLOW))
		return qemu_config(idx, host_flags, event_idx, event_data);
	if (phys.config_direct && phys.config_direct(idx, host_flags, event_idx, event_data))
		return (struct sbi_ret){SBI_SUCCESS, idx};
	return phys.config_host(idx, host_flags, event_idx, event_data);
}

long (*vpmu_phys_start_op)(unsigned int idx, uint64_t value);

long vpmu_phys_stop(unsigned int idx)
{
	if (no_counter(idx))
		return SBI_ERR_INVALID_PARAM;
	return phys.stop(idx);
}

long vpmu_phys_release(unsigned int idx)
{
	if (no_counter(idx))
		return SBI_ERR_INVALID_PARAM;
	return phys.release(idx);
}

long vpmu_phys_start_mask(uint32_t mask)
{
	return phys.start_mask(mask);
}

uint32_t vpmu_phys_start_values(uint32_t mask, const uint64_t *values, size_t stride)
{
	uint32_t started = 0;
	unsigned int i;

	if (phys.start_values) {
		phys.start_values(mask, values, stride);
		return mask;
	}
	while (mask) {
		i = lowest_bit(mask);
		mask &= mask - 1;
		if (phys.start(i, values[i * stride]) == SBI_SUCCESS)
			started |= 1U << i;
	}
	return started;
}

void vpmu_phys_set_wide(uint32_t mask)
{
	qemu_set_wide(mask);
}

#define RD(n, csr)                                                                                 \
	case n:                                                                                    \
		return csr_read(csr)

/* Inline in vpmu_phys_read: a vCPU switch reads every counter it puts */
static inline uint64_t read_csr_of(unsigned int idx)
{
	switch (idx) {
		RD(0, 0xc00);
		RD(2, 0xc02);
		RD(3, 0xc03);
		RD(4, 0xc04);
		RD(5, 0xc05);
		RD(6, 0xc06);
		RD(7, 0xc07);
		RD(8, 0xc08);
		RD(9, 0xc09);
		RD(10, 0xc0a);
		RD(11, 0xc0b);
		RD(12, 0xc0c);
		RD(13, 0xc0d);
		RD(14, 0xc0e);
		RD(15, 0xc0f);
		RD(16, 0xc10);
		RD(17, 0xc11);
		RD(18, 0xc12);
		RD(19, 0xc13);
		RD(20, 0xc14);
		RD(21, 0xc15);
		RD(22, 0xc16);
		RD(23, 0xc17);
		RD(24, 0xc18);
		RD(25, 0xc19);
		RD(26, 0xc1a);
		RD(27, 0xc1b);
		RD(28, 0xc1c);
		RD(29, 0xc1d);
		RD(30, 0xc1e);
		RD(31, 0xc1f);
	default:
		return 0;
	}
}

uint64_t phys_read_csr(unsigned int idx)
{
	return read_csr_of(idx);
}

/*
 * The guest's value: what the CSR holds, less the bias (QEMU quirk `bias`). A
 * hart biases only its own counters and sees its own writes of
 * qemu_ever_biased, so plain loads do.
 */
uint64_t vpmu_phys_read(unsigned int idx)
{
	if (idx < PHYS_MAX_HW && unlikely((qemu_ever_biased >> idx) & 1))
		return read_csr_of(idx) - qemu_bias_of(idx);
	return read_csr_of(idx);
}

uint64_t vpmu_phys_stop_read_one(unsigned int idx)
{
	if (unlikely(qemu_ever_biased != 0) && ((qemu_ever_biased >> idx) & 1))
		return phys.stop_read_one(idx) - qemu_bias_of(idx);
	return phys.stop_read_one(idx);
}

/* The backend reads the stopped counters in a row; the biased ones, if any, lose their bias after */
void vpmu_phys_stop_read(uint32_t mask, uint64_t values[32])
{
	uint32_t biased = mask & qemu_ever_biased;
	unsigned int i;

	if (phys.stop_read) {
		phys.stop_read(mask, values);
	} else {
		phys.stop_mask(mask);
		for_each_bit_dense (i, mask)
			values[i] = read_csr_of(i);
	}
	for_each_bit_dense (i, biased)
		values[i] -= qemu_bias_of(i);
}

/* A direct guest read of a biased counter would see the bias: those trap */
void vpmu_phys_write_counteren(unsigned long bits)
{
	unsigned long en;

	phys_this_hart()->counteren = bits;
	bits &= ~(unsigned long)phys_this_hart()->hidden;
	if (bits & qemu_ever_biased)
		bits = qemu_hide_biased(bits);
	en = csr_read(CSR_HCOUNTEREN);
	csr_write(CSR_HCOUNTEREN, (en & HCOUNTEREN_TM) | (bits & 0xffffffffUL & ~HCOUNTEREN_TM));
}

void vpmu_phys_hide(uint32_t mask)
{
	phys_this_hart()->hidden = mask;
	vpmu_phys_write_counteren(phys_this_hart()->counteren);
}

uint32_t vpmu_phys_overflowed(void)
{
	return (uint32_t)csr_read(CSR_SCOUNTOVF);
}

#define SIP_LCOFIP (1UL << IRQ_PMU_OVF)

bool vpmu_phys_irq_pending(void)
{
	return (csr_read(CSR_SIP) & SIP_LCOFIP) != 0;
}

void vpmu_phys_irq_clear(void)
{
	csr_clear(CSR_SIP, SIP_LCOFIP);
}

bool vpmu_phys_start_keeps_of(void)
{
	return phys.keeps_of;
}
