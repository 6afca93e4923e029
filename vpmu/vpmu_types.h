/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The vPMU's data, for the core to embed (struct vpmu in struct vcpu,
 * struct vpmu_hart in struct hart) and for vpmu/ to work on. Only vpmu/
 * reads or writes the fields.
 *
 * Guest-visible counter layout (virtual counter index = physical counter
 * index for hardware counters, so that a guest CSR read can be direct):
 *   0            cycle   (as the host reports it)
 *   1            time    (not a PMU counter: counter_get_info says invalid)
 *   2            instret
 *   3..H-1       the host's programmable counters (holes stay invalid)
 *   H..H+21      22 firmware counters, any of them can count any of the 22
 *                standard SBI_PMU_FW_* events (64 bits, CSR field 0)
 */
#ifndef VPMU_VPMU_TYPES_H
#define VPMU_VPMU_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#define VPMU_MAX_HW	  32 /* CSRs 0xC00..0xC1F */
#define VPMU_NUM_FW	  22 /* SBI_PMU_FW_MAX: one firmware counter per standard event */
#define VPMU_MAX_COUNTERS (VPMU_MAX_HW + VPMU_NUM_FW)
#define VPMU_CTR_SLOTS	  64 /* struct vpmu's ctr[]: VPMU_MAX_COUNTERS rounded up to a power of 2 */

struct vpmu_policy;

/*
 * Per physical hart: whose configuration each physical counter holds. A
 * vCPU's counters stay configured (stopped) on the hart after it is put, so
 * that coming back to a hart nobody else used costs one start call.
 * Invariants (vpmu_check_hart): H1 owned has bit i exactly when owner[i] is
 * set; H2 only counters the layout offers are owned.
 */
struct vpmu;
struct vpmu_hart {
	struct vpmu *owner[VPMU_MAX_HW];
	uint32_t owned; /* the counters with an owner */
	/* 64 bits: never wraps, so that a count equal to one a vCPU saw means nothing changed */
	uint64_t owners_changed;	 /* counts every change of owner[] */
	uint64_t configs_changed;	 /* counts every configuration and release of a counter */
	uint32_t event_idx[VPMU_MAX_HW]; /* what each owned counter is configured for */
	uint64_t event_data[VPMU_MAX_HW];
	uint8_t flags[VPMU_MAX_HW]; /* ... and with these host filter flags */
};

/* Per-counter state machine (vpmu/ctr.h changes it, in one transition function) */
enum vpmu_ctr_state {
	VPMU_CTR_UNCONFIGURED = 0, /* no event; start/fw_read refuse it */
	VPMU_CTR_CONFIGURED,	   /* an event is mapped, counter stopped */
	VPMU_CTR_STARTED,	   /* counting */
};

struct vpmu_ctr {
	uint8_t state;	    /* enum vpmu_ctr_state */
	int8_t key;	    /* the event's capability key (event.c), -1 for raw */
	uint32_t event_idx; /* valid unless UNCONFIGURED */
	uint64_t event_data;
	unsigned long flags; /* the guest's config_matching filter flags (bits 3..7) */
	uint64_t value; /* virtual value; live in the physical counter while STARTED and loaded */
};

/* A raw event an EVENT_GET_INFO call asked the host about, and the answer */
struct vpmu_evinfo_raw {
	uint32_t idx;
	uint64_t data;
	uint32_t out;
};
#define VPMU_EVINFO_RAW_SEEN 8

/* An EVENT_GET_INFO call answered in slices (event.c): where it stopped */
struct vpmu_evinfo {
	unsigned long lo, num; /* the call it belongs to */
	unsigned long pc;      /* ... and where its ecall is (a new call starts over) */
	unsigned long next;    /* the next entry of the current pass (E1: at most num while busy) */
	unsigned int from;     /* ... and its next candidate counter (a raw event's probes) */
	bool checked;	       /* the first pass (every entry well formed) is done */
	bool busy;
	/* the last raw events answered (how many so far): a repeat costs no host call */
	unsigned int raw_known;
	struct vpmu_evinfo_raw raw[VPMU_EVINFO_RAW_SEEN];
};

/*
 * The last event CONFIG_MATCHING accepted and what it found: Linux
 * configures the same event again at every context switch of a perf event.
 * Forgotten when the policy changes (vpmu_vcpu_set_policy). E2: what it
 * remembers is what classifying the event and asking the policy again
 * would find.
 */
struct vpmu_ev_seen {
	unsigned long event_idx;
	uint64_t event_data;
	uint32_t allowed; /* the hardware counters the policy allows for it */
	int kind;	  /* event.c's enum ev_kind; < 0: nothing remembered */
	int key;	  /* its capability key */
};

/*
 * A vCPU's vPMU. Several fields are derived from the counters' states and
 * kept for speed; each invariant below is checked by vpmu_check()
 * (vpmu/check.c): in the unit tests after every call, in the fuzzer after
 * every step, and after every PMU call in a debug build (make DEBUG=1).
 *
 * The scalars first, the 1.7 KiB counter array last: every field the trap
 * path and a vCPU switch touch stays within a load's 12-bit offset of the
 * vpmu and of the struct vcpu embedding it (no extra address arithmetic).
 */
struct vpmu {
	/*
	 * Counters that overflowed (wrapped) since the guest last started them:
	 * the guest's view of the Sscofpmf OF bits, bit = counter index.
	 * V1: only configured counters, only where the host has Sscofpmf.
	 */
	uint64_t overflow;
	/* V2: exactly the hardware counters in state STARTED */
	uint32_t started_hw;
	/* V3: exactly the hardware counters not UNCONFIGURED (started ones too) */
	uint32_t configured_hw;
	/*
	 * Hardware counters configured on the physical counter of the same
	 * index of vpmu.resident (valid while the hart's owner[] still says v),
	 * and of those, the ones whose physical value equals the virtual one.
	 * Masks, not per-counter fields: a vCPU switch and hcounteren test them
	 * for all counters at once. V4: synced within placed, placed within
	 * configured_hw. V5: while loaded, resident is the hart it runs on, and
	 * every placed counter is its own there (owner[] says v). V9: a placed
	 * counter the resident's owner[] still gives to v is configured there
	 * exactly as the guest configured it (event, data, host filter flags).
	 */
	uint32_t placed;
	uint32_t synced;
	/*
	 * resident's owners_changed when it last owned every counter it placed
	 * (after a load, at a put), and the counters put found near their top
	 */
	uint64_t owners_seen;
	uint32_t near_hw;
	/* resident's configs_changed at a put that found every counter it placed its own */
	uint64_t configs_seen;
	/*
	 * The snapshot area (SNAPSHOT_SET_SHMEM), a page of the guest's RAM
	 * where the hypervisor reaches it (vpmu_host_guest_ram); NULL: none.
	 * Word 0 the overflow bitmap, then a value per counter.
	 */
	uint64_t *shmem;
	bool loaded;		    /* between vpmu_vcpu_load and vpmu_vcpu_put on this hart */
	struct vpmu_hart *resident; /* the hart its counters are configured on */
	const struct vpmu_policy *policy; /* never NULL once initialised */
	/*
	 * The guest it belongs to (vpmu_vcpu_set_guest): a configuration is taken
	 * over only from a vCPU of the same guest, so that the time a
	 * CONFIG_MATCHING takes says nothing about what another guest counts
	 */
	unsigned int guest;
	/*
	 * V6: derived from the layout and the policy (vpmu_vcpu_set_policy):
	 * the counters it may use, of which firmware ones, and num_counters.
	 */
	uint64_t visible;
	uint64_t visible_fw;
	unsigned int nr_visible;
	uint32_t allowed_hw; /* V6: the hardware counters of visible */
	/*
	 * The hypervisor's sampling counter (the policy's profile), 0 if none:
	 * a hardware counter outside allowed_hw, kept STARTED from 2^width -
	 * period; its wraps are samples (vpmu_host_sample), never the guest's
	 * overflows. P1: bit set exactly when profiled, the counter configured
	 * with the profile's event; P2: it is never in overflow.
	 */
	uint32_t prof_mask;
	unsigned int prof_ctr;
	unsigned long nr_samples;
	/*
	 * Earliest host time (timer ticks) at which a started counter of the
	 * loaded vCPU may wrap: the core arms the hart's timer for it, so that
	 * an overflow the platform does not signal is still found and delivered.
	 * V7: UINT64_MAX while it is not loaded or has no hardware counter
	 * started.
	 */
	uint64_t deadline;
	uint32_t backoff; /* ticks the deadline waits at least (grows while it finds nothing) */
	unsigned long nr_overflows;   /* counter overflows recorded, for statistics */
	unsigned long nr_unsignalled; /* ... of which the platform had not flagged (OF clear) */
	struct vpmu_ev_seen ev_seen;
	struct vpmu_evinfo evinfo;
	/*
	 * VPMU_CTR_SLOTS, a power of two: an index masked to it stays inside (no
	 * speculation). V8: counters the layout does not offer stay UNCONFIGURED.
	 */
	struct vpmu_ctr ctr[VPMU_CTR_SLOTS];
};

#endif
