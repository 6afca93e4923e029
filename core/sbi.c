// SPDX-License-Identifier: BSD-2-Clause
/* The guest SBI table: one row per extension; probe walks the same rows. */
#include <stddef.h>
#include "core/sbi.h"
#include "core/lib.h"

extern const struct sbi_ext sbi_ext_base, sbi_ext_time, sbi_ext_ipi, sbi_ext_rfence, sbi_ext_hsm,
	sbi_ext_srst, sbi_ext_dbcn, sbi_ext_legacy, sbi_ext_legacy_shutdown, sbi_ext_pmu;

/* Walked on every call: the most frequent first (PMU: the product's hot path) */
static const struct sbi_ext *const sbi_exts[] = {
	&sbi_ext_pmu,  &sbi_ext_time, &sbi_ext_ipi,  &sbi_ext_rfence, &sbi_ext_base,
	&sbi_ext_dbcn, &sbi_ext_hsm,  &sbi_ext_srst, &sbi_ext_legacy, &sbi_ext_legacy_shutdown,
};

const struct sbi_ext *sbi_find_ext(unsigned long eid)
{
	for (size_t i = 0; i < ARRAY_SIZE(sbi_exts); i++)
		if (eid >= sbi_exts[i]->eid_min && eid <= sbi_exts[i]->eid_max)
			return sbi_exts[i];
	return NULL;
}

struct sbi_ret sbi_dispatch(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
			    const unsigned long args[6])
{
	const struct sbi_ext *ext = sbi_find_ext(eid);

	if (!ext)
		return (struct sbi_ret){SBI_ERR_NOT_SUPPORTED, 0};
	return ext->handler(vcpu, eid, fid, args);
}
