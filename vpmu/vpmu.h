/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Virtual PMU: the SBI PMU extension (EID 0x504D55) for guests, backed by
 * the host SBI PMU. Hypervisor-independent: it reaches the machine only
 * through vpmu_phys.h (physical counters) and vpmu_host.h (guest memory).
 * Design and conformance table: docs/vpmu.md.
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
#ifndef VPMU_VPMU_H
#define VPMU_VPMU_H

#include <stdbool.h>
#include <stdint.h>

#define VPMU_MAX_HW	  32 /* CSRs 0xC00..0xC1F */
#define VPMU_NUM_FW	  22 /* SBI_PMU_FW_MAX: one firmware counter per standard event */
#define VPMU_MAX_COUNTERS (VPMU_MAX_HW + VPMU_NUM_FW)
#define VPMU_CTR_SLOTS	  64 /* struct vpmu's ctr[]: VPMU_MAX_COUNTERS rounded up to a power of 2 */

/*
 * A guest's PMU policy (configuration DT, docs/configuration.md): which
 * hardware counters it may use, which events, and whether it gets the
 * firmware counters. Rules are event_idx ranges [first, last].
 */
#define VPMU_POLICY_RULES 16
struct vpmu_event_rule {
	uint32_t first, last;
	uint32_t counters; /* allow rules: hardware counters the events may use */
};
struct vpmu_policy {
	uint32_t counters_mask; /* 0: every hardware counter of the host */
	bool no_firmware;
	unsigned int nr_allow; /* 0: every event; else only these */
	struct vpmu_event_rule allow[VPMU_POLICY_RULES];
	unsigned int nr_deny;
	struct vpmu_event_rule deny[VPMU_POLICY_RULES];
};

/*
 * Per physical hart: whose configuration each physical counter holds. A
 * vCPU's counters stay configured (stopped) on the hart after it is put, so
 * that coming back to a hart nobody else used costs one start call.
 */
struct vpmu;
struct vpmu_hart {
	struct vpmu *owner[VPMU_MAX_HW];
	uint32_t owned;			 /* the counters with an owner */
	uint32_t owners_changed;	 /* counts every change of owner[] */
	uint32_t configs_changed;	 /* counts every configuration and release of a counter */
	uint32_t event_idx[VPMU_MAX_HW]; /* what each owned counter is configured for */
	uint64_t event_data[VPMU_MAX_HW];
	uint8_t flags[VPMU_MAX_HW]; /* ... and with these host filter flags */
	uint32_t phys_far;	    /* the physical backend's own: see phys_common.c */
	bool phys_init;		    /* ... and whether it has set it up on this hart */
	uint32_t phys_minh;	    /* ... counters whose MINH it had the host set: phys_cdeleg.c */
	uint32_t phys_released;	    /* ... counters released, the platform's mapping kept */
	uint32_t phys_ev[VPMU_MAX_HW]; /* ... the event the platform maps to each counter */
	uint32_t phys_bias63;	       /* ... counters running biased by 2^63 (quirk 5) */
	uint32_t phys_bias62;	       /* ... and by 2^62 */
	uint32_t phys_low;	       /* ... running below 2^63 unbiased */
	uint32_t phys_cyc,
		phys_ins; /* ... configured for an event QEMU may time as cycles, instret */
	unsigned long phys_counteren; /* ... hcounteren's PMU bits last asked for */
};

/* Per-counter state machine; vpmu.c changes it in one transition function */
enum vpmu_ctr_state {
	VPMU_CTR_UNCONFIGURED = 0, /* no event; start/fw_read refuse it */
	VPMU_CTR_CONFIGURED,	   /* an event is mapped, counter stopped */
	VPMU_CTR_STARTED,	   /* counting */
};

struct vpmu_ctr {
	uint8_t state;	    /* enum vpmu_ctr_state */
	int8_t key;	    /* vpmu.c's capability key of the event (classify), -1 for raw */
	uint32_t event_idx; /* valid unless UNCONFIGURED */
	uint64_t event_data;
	unsigned long flags; /* the guest's config_matching filter flags (bits 3..7) */
	uint64_t value; /* virtual value; live in the physical counter while STARTED and loaded */
};

/* An EVENT_GET_INFO call answered in slices (vpmu.c): where it stopped */
struct vpmu_evinfo {
	unsigned long lo, num; /* the call it belongs to */
	unsigned long next;    /* the next entry of the current pass */
	bool checked;	       /* the first pass (every entry well formed) is done */
	bool busy;
	bool raw_known; /* the last raw event answered, so a repeat costs no host call */
	uint32_t raw_idx;
	uint64_t raw_data;
	uint32_t raw_out;
};

/*
 * The last event CONFIG_MATCHING accepted and what it found: Linux
 * configures the same event again at every context switch of a perf event.
 * Forgotten when the policy changes (vpmu_vcpu_set_policy).
 */
struct vpmu_ev_seen {
	unsigned long event_idx;
	uint64_t event_data;
	uint32_t allowed; /* the hardware counters the policy allows for it */
	int kind;	  /* vpmu.c's enum ev_kind; -1: nothing remembered */
	int key;	  /* its acceptance-cache key */
};

/*
 * The scalars first, the 1.7 KiB counter array last: every field the trap
 * path and a vCPU switch touch stays within a load's 12-bit offset of the
 * vpmu and of the struct vcpu embedding it (no extra address arithmetic).
 */
struct vpmu {
	/*
	 * Counters that overflowed (wrapped) since the guest last started them:
	 * the guest's view of the Sscofpmf OF bits, bit = counter index.
	 */
	uint64_t overflow;
	uint32_t started_hw;	/* hardware counters in state STARTED */
	uint32_t configured_hw; /* hardware counters not UNCONFIGURED (started ones too) */
	/*
	 * Hardware counters configured on the physical counter of the same
	 * index of vpmu.resident (valid while the hart's owner[] still says v),
	 * and of those, the ones whose physical value equals the virtual one
	 * (loaded). Masks, not per-counter fields: a vCPU switch and hcounteren
	 * test them for all counters at once.
	 */
	uint32_t placed;
	uint32_t synced;
	/*
	 * resident's owners_changed when it last owned every counter it placed
	 * (after a load, at a put), and the counters put found near their top
	 */
	uint32_t owners_seen;
	uint32_t near_hw;
	/* resident's configs_changed at a put that found every counter it placed its own */
	uint32_t configs_seen;
	uint64_t shmem_gpa; /* snapshot area, valid if shmem_set */
	bool shmem_set;
	bool loaded;		    /* between vpmu_vcpu_load and vpmu_vcpu_put on this hart */
	struct vpmu_hart *resident; /* the hart its counters are configured on */
	const struct vpmu_policy *policy; /* never NULL once initialised */
	uint64_t visible;		  /* the counters it may use (layout and policy) */
	uint64_t visible_fw;		  /* ... of which firmware counters */
	unsigned int nr_visible;	  /* num_counters: the index space it sees */
	/*
	 * Earliest host time (timer ticks) at which a started counter of the
	 * loaded vCPU may wrap: the core arms the hart's timer for it, so that
	 * an overflow the platform does not signal is still found and delivered.
	 */
	uint64_t deadline;
	uint32_t backoff; /* ticks the deadline waits at least (grows while it finds nothing) */
	unsigned long nr_overflows;   /* counter overflows recorded, for statistics */
	unsigned long nr_unsignalled; /* ... of which the platform had not flagged (OF clear) */
	struct vpmu_ev_seen ev_seen;
	struct vpmu_evinfo evinfo;
	/* VPMU_CTR_SLOTS, a power of two: an index masked to it stays inside (no speculation) */
	struct vpmu_ctr ctr[VPMU_CTR_SLOTS];
};

/* ---- called by the core ---- */

/* Boot hart, once, before any vCPU runs: probe the host PMU */
void vpmu_global_init(void);
/* Every other hart, once, when it starts (the boot hart's is part of global_init) */
void vpmu_hart_init(void);
/* Whether guests are offered the PMU extension (host has SBI PMU); inline: every call asks */
extern bool vpmu_offered;
static inline bool vpmu_available(void)
{
	return vpmu_offered;
}
void vpmu_vcpu_init(struct vpmu *v);
/* The guest's policy (kept by reference; NULL: no restriction) */
void vpmu_vcpu_set_policy(struct vpmu *v, const struct vpmu_policy *p);
/* Guest reboot, HSM stop: every counter unconfigured, snapshot area forgotten */
void vpmu_vcpu_reset(struct vpmu *v);
/*
 * At the vCPU switch point on its hart: put stops and saves the running
 * counters (they stay configured there: lazy), load continues or restores
 */
void vpmu_vcpu_load(struct vpmu *v);
void vpmu_vcpu_put(struct vpmu *v);
/*
 * hcounteren bits for the PMU counters (never bit 1, TM: the core owns it).
 * vpmu itself writes them through vpmu_phys_set_counteren() after load, put
 * and every PMU call; this is the value it writes.
 */
unsigned long vpmu_hcounteren(const struct vpmu *v);
/*
 * Emulated read of CSR 0xC00..0xC1F (a counter) or of scountovf (the
 * guest's own overflow bits): 0 with *val, -1 if the guest may not read it
 */
#define VPMU_CSR_SCOUNTOVF 0xda0
int vpmu_csr_read(struct vpmu *v, unsigned int csr, unsigned long *val);
/*
 * Counter overflow (Sscofpmf) is decided here, from the counters' values:
 * a started counter whose value fell below the value it was started from
 * has wrapped. Each wrap is recorded once (until the guest starts that
 * counter again) and raises the guest's LCOFI through
 * vpmu_host_raise_lcofi(). The platform's own interrupt is only a hint:
 * the core calls vpmu_overflow_irq() when the hart takes a physical LCOFI
 * (v: the loaded vCPU, or NULL), and vpmu_timer() when the hart's timer
 * fires while v runs (v->deadline may have passed). Loads, puts and every
 * PMU call check too, so a wrap is never lost and never reported twice.
 */
void vpmu_overflow_irq(struct vpmu *v);
void vpmu_timer(struct vpmu *v);
/* When the core must arm the hart's timer for v at the latest (vpmu_timer), UINT64_MAX: never */
static inline uint64_t vpmu_deadline(const struct vpmu *v)
{
	return v->deadline;
}
/* Whether v has hardware counters running (they count whatever runs in guest mode) */
static inline bool vpmu_counting(const struct vpmu *v)
{
	return v->started_hw != 0;
}
/*
 * Whether the platform charges a hart's mode-filtered counters with the
 * instructions other harts execute (QEMU -icount: docs/vpmu.md). Then a
 * vCPU with running counters must run while the other harts are stopped.
 */
bool vpmu_counts_other_harts(void);
/*
 * The core runs vCPUs with running counters alone (exclusive counting, set
 * once at boot): vpmu then calls vpmu_host_counting_starts() before it
 * starts hardware counters.
 */
void vpmu_set_exclusive(bool on);
/* Whether guests may be offered Sscofpmf (the host has it and its PMU) */
bool vpmu_overflow_available(void);
/* Count one SBI_PMU_FW_* event (only counters that are started count it) */
void vpmu_fw_event(struct vpmu *v, unsigned int fw_event);

/* ---- introspection (tests, debugging) ---- */
unsigned int vpmu_num_hw(void);	    /* H: first firmware counter index */
unsigned int vpmu_num_total(void);  /* H + 22, what NUM_COUNTERS returns */
uint32_t vpmu_hw_valid_mask(void);  /* usable hardware counters */
bool vpmu_prog_counts(int instret); /* boot probe: programmable counters count cycles/instret */
/* Boot hart, after vpmu_global_init, with the other harts idle: see vpmu_counts_other_harts */
void vpmu_probe_other_harts(void);
uint64_t vpmu_ctr_value(struct vpmu *v, unsigned int idx); /* current virtual value */

#endif
