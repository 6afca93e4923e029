/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-hart state of the physical layer (vpmu/phys/). The core embeds one
 * struct phys_hart in each hart's table; the layer finds this hart's at a
 * build-time offset from tp (phys_this_hart, vpmu/phys.h). Nothing
 * outside vpmu/phys/ reads these fields.
 */
#ifndef VPMU_PHYS_TYPES_H
#define VPMU_PHYS_TYPES_H

#include <stdbool.h>
#include <stdint.h>

/* The QEMU 10 workarounds' own (phys/qemu.c, where each quirk is described) */
struct qemu_hart {
	bool init;    /* far set up on this hart */
	uint32_t far; /* stale-deadline: counters last started (or written) far from their top */
	/* event-map: released without M-mode, so QEMU's map still gives them their event */
	uint32_t released;
	uint32_t bias63;   /* bias: counters running biased by 2^63 */
	uint32_t bias62;   /* ... and by 2^62 */
	uint32_t low;	   /* bias: counters running below 2^63 unbiased */
	uint32_t cyc, ins; /* bias: configured for an event QEMU may time as cycles / instret */
	/* tlb-overflow (while on): configured for an event QEMU counts in its TLB fill */
	uint32_t tlb;
	/* ... each one's configuration, for the host to make again (qemu_tlb.c, tlb_config_again) */
	uint32_t tlb_ev[32];
	uint8_t tlb_flags[32];
	/* event-map: the event QEMU's map gives each programmable counter (0: none) */
	uint32_t ev[32];
};

struct phys_hart {
	unsigned long counteren; /* hcounteren's PMU bits last asked for (phys.c) */
	uint32_t hidden;	 /* ... never granted: the hypervisor's own counters (phys.c) */
	uint32_t minh; /* counter delegation: counters whose MINH the host set (cdeleg.c) */
	struct qemu_hart qemu;
};

#endif
