// SPDX-License-Identifier: BSD-2-Clause
/* The guest SBI table: one row per extension; probe walks the same rows. */
#include <stddef.h>
#include "core/sbi.h"
#include "core/lib.h"

extern const struct sbi_ext sbi_ext_base, sbi_ext_time, sbi_ext_ipi, sbi_ext_rfence, sbi_ext_hsm,
	sbi_ext_srst, sbi_ext_dbcn, sbi_ext_legacy, sbi_ext_legacy_shutdown, sbi_ext_legacy_absent,
	sbi_ext_legacy_reserved, sbi_ext_pmu;

/*
 * Every extension the guest sees; probe_extension and dispatch read this
 * table only. The legacy EIDs (0x00-0x0F) answer in a0 only, also those not
 * offered (probed 0), as the spec's legacy calls keep every other register.
 */
static const struct sbi_ext *const sbi_exts[] = {
	&sbi_ext_pmu,		&sbi_ext_time,
	&sbi_ext_ipi,		&sbi_ext_rfence,
	&sbi_ext_base,		&sbi_ext_dbcn,
	&sbi_ext_hsm,		&sbi_ext_srst,
	&sbi_ext_legacy,	&sbi_ext_legacy_shutdown,
	&sbi_ext_legacy_absent, &sbi_ext_legacy_reserved,
};

/*
 * The low byte of every EID of the table is distinct (the spec's EIDs end in
 * different ASCII letters; the legacy ones are 0x00-0x0F, BASE 0x10), so a
 * call finds its row in one step instead of a walk. Built by sbi_init at
 * boot, before any guest runs; a table change that breaks the property
 * stops the boot (and the unit tests).
 */
static const struct sbi_ext *sbi_by_low_byte[256];

void sbi_init(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(sbi_exts); i++) {
		const struct sbi_ext *e = sbi_exts[i];

		if (e->eid_max - e->eid_min >= ARRAY_SIZE(sbi_by_low_byte))
			hv_panic("sbi: extension %s spans too many EIDs", e->name);
		for (unsigned long eid = e->eid_min; eid <= e->eid_max; eid++) {
			const struct sbi_ext **slot = &sbi_by_low_byte[eid & 0xff];

			if (*slot && *slot != e)
				hv_panic("sbi: extensions %s and %s share an EID low byte", e->name,
					 (*slot)->name);
			*slot = e;
		}
	}
	sbi_base_init();
}

static inline const struct sbi_ext *find_ext(unsigned long eid)
{
	const struct sbi_ext *e = sbi_by_low_byte[eid & 0xff];

	return e && eid >= e->eid_min && eid <= e->eid_max ? e : NULL;
}

const struct sbi_ext *sbi_find_ext(unsigned long eid)
{
	return find_ext(eid);
}

struct sbi_ret sbi_probe_ext(struct vcpu *vcpu, unsigned long eid)
{
	const struct sbi_ext *ext = find_ext(eid);

	if (!ext)
		return (struct sbi_ret){0, 0};
	return (struct sbi_ret){0, ext->probe ? (unsigned long)ext->probe(vcpu) : 1};
}

struct sbi_ret sbi_dispatch(struct vcpu *vcpu, unsigned long eid, unsigned long fid,
			    const unsigned long args[6])
{
	const struct sbi_ext *ext = find_ext(eid);

	if (!ext)
		return (struct sbi_ret){SBI_ERR_NOT_SUPPORTED, 0};
	return ext->handler(vcpu, eid, fid, args);
}
