// SPDX-License-Identifier: BSD-2-Clause
/*
 * Profiling guests from the hypervisor (docs/profiling.md). A guest whose
 * configuration asks for a profile gets a sampling counter from the vPMU,
 * which counts only that guest's VS and VU modes and calls back here at
 * every wrap, from HS-mode, whatever the guest's own interrupt enables say.
 * A sample (core/profile_format.h) says where the guest was: pc, mode,
 * address space, the frame-pointer chain read with guest-virtual loads
 * (guest_va.h: a bad pointer ends the chain, it never traps) and, for a
 * Linux guest whose task_struct offsets the configuration gives, the task.
 *
 * Each hart appends to its own buffer (no lock: only it samples its
 * vCPUs) and drains it to the console as lines "!P <base64 of whole
 * records>", which no guest can forge (guest lines start with "[name] ").
 * A drain waits while a guest's line is open, so a line is never split;
 * what does not fit meanwhile is counted and reported in a LOST record.
 * Not QEMU semihosting: it would let any guest kernel open host files too
 * (QEMU only refuses it to U-mode).
 */
#include <string.h>
#include "arch/riscv/csr.h"
#include "arch/riscv/guest_va.h"
#include "arch/riscv/timer.h"
#include "core/console.h"
#include "core/hart.h"
#include "core/hostdt.h"
#include "core/profile.h"
#include "core/profile_format.h"
#include "core/vcpu.h"
#include "core/vm.h"

#define PROFILE_BUF   65536 /* per hart: 250 ms of samples at 1,000 per second */
#define PROFILE_DRAIN 4096  /* drain once this much is buffered */
#define LINE_RAW      768   /* record bytes per console line at most (1,024 base64) */
#define CHAIN_MAX     64    /* the deepest chain a configuration may ask for */

_Static_assert(sizeof(struct profile_sample) + 8UL * CHAIN_MAX <= LINE_RAW,
	       "a console line holds the largest sample");

struct profile_hart {
	size_t len;
	uint64_t lost; /* samples dropped since the last LOST record */
	uint64_t buf[PROFILE_BUF / 8];
};

static struct profile_hart prof_harts[HART_MAX];
static bool profiling;

static uint64_t now_ns(void)
{
	uint64_t t = timer_now(), tb = host.timebase;

	return t / tb * 1000000000ULL + t % tb * 1000000000ULL / tb;
}

/* ---- the console channel ---- */

/* the 64 digits, then the padding */
static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";

static size_t base64(char *out, const uint8_t *in, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t w = (uint32_t)in[i] << 16;

		if (i + 1 < n)
			w |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			w |= in[i + 2];
		out[o++] = b64[w >> 18];
		out[o++] = b64[(w >> 12) & 63];
		out[o++] = b64[i + 1 < n ? (w >> 6) & 63 : 64];
		out[o++] = b64[i + 2 < n ? w & 63 : 64];
	}
	return o;
}

/* One line of whole records; false if the console refused it (a guest's open line, no room) */
static bool put_line(const uint8_t *rec, size_t n, bool force)
{
	char line[3 + (LINE_RAW + 2) / 3 * 4] = "!P ";

	return console_data_line(line, 3 + base64(line + 3, rec, n), force);
}

static void append(struct profile_hart *ph, const void *rec, size_t size)
{
	memcpy((uint8_t *)ph->buf + ph->len, rec, size);
	ph->len += size;
}

/* The hart's lost samples as a record (room is kept for it) */
static void append_lost(struct profile_hart *ph, unsigned long hartid)
{
	struct profile_lost l = {{PROFILE_REC_LOST, sizeof(l)},
				 (uint16_t)hartid,
				 PROFILE_GUEST_ANY,
				 now_ns(),
				 ph->lost};

	if (ph->lost && ph->len + sizeof(l) <= PROFILE_BUF) {
		append(ph, &l, sizeof(l));
		ph->lost = 0;
	}
}

/* As many lines of whole records as the console takes now; the rest stays */
static void drain(struct profile_hart *ph, unsigned long hartid, bool force)
{
	const uint8_t *b = (const uint8_t *)ph->buf;
	size_t done = 0;

	append_lost(ph, hartid);
	while (done < ph->len) {
		size_t n = 0;

		/* records are whole and at most LINE_RAW bytes: at least one fits a line */
		while (done + n < ph->len) {
			const struct profile_record *r = (const void *)(b + done + n);

			if (n + r->size > LINE_RAW)
				break;
			n += r->size;
		}
		if (!put_line(b + done, n, force))
			break;
		done += n;
	}
	memmove(ph->buf, b + done, ph->len - done);
	ph->len -= done;
}

/* ---- samples ---- */

/*
 * The return addresses of the frame-pointer chain: a frame's return
 * address at fp - 8, its caller's fp at fp - 16 (the RISC-V psABI's frame
 * record, GCC and Clang with -fno-omit-frame-pointer). Callers' frames lie
 * above: the chain ends at a frame pointer that does not climb strictly,
 * is misaligned or 0 (the outermost frame, code without frame pointers,
 * or a bad one: cyclic, wild). A leaf function keeps ra in its register
 * and only the caller's fp at fp - 8; that is recognised, as Linux's
 * unwinder does, by the value at fp - 8 looking like a frame pointer of the
 * same stack. *truncated: a load faulted or the depth limit was reached.
 */
static unsigned int walk(const struct vcpu_ctx *c, bool vs, uint64_t *chain, unsigned int max,
			 bool *truncated)
{
	uint64_t fp = c->regs[8], sp = c->regs[2], rec[2];
	unsigned int n = 0;

	*truncated = false;
	if (!max || fp & 7 || fp <= sp)
		return 0;
	if (guest_va_read(fp - 16, vs, rec, sizeof(rec))) {
		*truncated = true;
		return 0;
	}
	/* the interrupted function saved no ra: rec[1] is its caller's fp */
	if (rec[1] > fp && rec[1] - sp < 0x4000 && !(rec[1] & 7)) {
		chain[n++] = c->regs[1];
		fp = rec[1];
		if (guest_va_read(fp - 16, vs, rec, sizeof(rec))) {
			*truncated = true;
			return n;
		}
	}
	for (;;) {
		uint64_t ra = rec[1], next = rec[0];

		if (!ra)
			return n;
		if (n == max) {
			*truncated = true;
			return n;
		}
		chain[n++] = ra;
		if (next <= fp || next & 7)
			return n;
		if (guest_va_read(next - 16, vs, rec, sizeof(rec))) {
			*truncated = true;
			return n;
		}
		fp = next;
	}
}

/*
 * A Linux guest's current task: tp in the kernel, sscratch while in user
 * space (arch/riscv/kernel/entry.S swaps them), a kernel address either way
 */
static bool read_task(struct vcpu *v, bool vs, struct profile_sample *s)
{
	const struct vm_config *cfg = v->vm->cfg;
	uint64_t task = vs ? vcpu_ctx(v)->regs[4] : csr_read(CSR_VSSCRATCH);
	uint32_t id[2];

	if (!cfg->profile_task || !(task >> 63) ||
	    guest_va_read(task + cfg->task_pid, true, &id[0], 4) ||
	    guest_va_read(task + cfg->task_tgid, true, &id[1], 4) ||
	    guest_va_read(task + cfg->task_comm, true, s->comm, sizeof(s->comm)))
		return false;
	s->tid = id[0];
	s->pid = id[1];
	s->comm[sizeof(s->comm) - 1] = 0;
	return true;
}

void profile_sample(struct vcpu *v)
{
	struct hart *h = this_hart();
	struct profile_hart *ph = &prof_harts[h->index];
	const struct vcpu_ctx *c = vcpu_ctx(v);
	unsigned int depth = v->vm->cfg->profile_depth;
	size_t room = sizeof(struct profile_sample) + 8UL * depth + sizeof(struct profile_lost);
	struct profile_sample *s;
	bool vs = c->sstatus & SSTATUS_SPP, truncated;

	if (ph->len + room > PROFILE_BUF)
		drain(ph, h->hartid, false);
	if (ph->len + room > PROFILE_BUF) {
		ph->lost++;
		return;
	}
	s = (struct profile_sample *)((uint8_t *)ph->buf + ph->len);
	memset(s, 0, sizeof(*s));
	s->guest = (uint16_t)v->vm->id;
	s->vcpu = (uint16_t)v->id;
	s->time = now_ns();
	s->hart = (uint16_t)h->hartid;
	s->mode = vs ? PROFILE_MODE_VS : PROFILE_MODE_VU;
	s->pc = c->sepc;
	s->vsatp = csr_read(CSR_VSATP);
	/*
	 * In an SBI call answered on the trap vector's short way the guest's
	 * s-registers were not saved (entry.S): no frame pointer to start from
	 */
	if (c->scause == CAUSE_VS_ECALL) {
		s->nr = 0;
		truncated = depth != 0; /* there may have been a chain */
	} else {
		s->nr = (uint8_t)walk(c, vs, s->chain, depth, &truncated);
	}
	if (truncated)
		s->flags |= PROFILE_SAMPLE_TRUNCATED;
	if (read_task(v, vs, s))
		s->flags |= PROFILE_SAMPLE_TASK;
	s->hdr.type = PROFILE_REC_SAMPLE;
	s->hdr.size = (uint16_t)(sizeof(*s) + 8UL * s->nr);
	ph->len += s->hdr.size;
	if (ph->len >= PROFILE_DRAIN)
		drain(ph, h->hartid, false);
}

void profile_start(void)
{
	struct profile_hart *ph = &prof_harts[this_hart()->index];
	const struct vm_config *first = NULL;
	struct profile_file_header fh = {
		PROFILE_MAGIC, PROFILE_VERSION, sizeof(fh), 0, 0, 0, 0, 0, 0};

	for (unsigned int i = 0; i < nr_vms; i++) {
		const struct vm_config *cfg = vms[i]->cfg;
		unsigned int ctr = vpmu_profile_counter(&vms[i]->vcpus[0]->vpmu);

		if (!cfg->pmu.profile.period)
			continue;
		if (!ctr) {
			hv_printf("pmuvisor: guest %s: no profile: the host has no counter "
				  "overflow (Sscofpmf) or cannot count event 0x%x\n",
				  cfg->name, cfg->pmu.profile.event_idx);
			continue;
		}
		hv_printf("pmuvisor: guest %s: profiled: event 0x%x every %lu, on counter %u "
			  "(not offered to the guest: %u hardware counters left to it), chains of "
			  "%u frames\n",
			  cfg->name, cfg->pmu.profile.event_idx,
			  (unsigned long)cfg->pmu.profile.period, ctr,
			  vpmu_hw_offered(&vms[i]->vcpus[0]->vpmu), cfg->profile_depth);
		if (!first)
			first = cfg;
	}
	if (!first)
		return;
	profiling = true;
	fh.harts = (uint16_t)host.nr_harts;
	fh.event_idx = first->pmu.profile.event_idx;
	fh.event_data = first->pmu.profile.event_data;
	fh.period = first->pmu.profile.period;
	put_line((const uint8_t *)&fh, sizeof(fh), true);
	for (unsigned int i = 0; i < nr_vms; i++) {
		struct {
			struct profile_guest g;
			char name[VM_NAME_MAX];
		} rec = {{{PROFILE_REC_GUEST, 0}, (uint16_t)i, (uint16_t)vms[i]->nr_vcpus}, {0}};
		size_t len = strlen(vms[i]->name) + 1;

		memcpy(rec.name, vms[i]->name, len);
		rec.g.hdr.size = (uint16_t)((sizeof(rec.g) + len + 7) & ~7UL);
		append(ph, &rec, rec.g.hdr.size);
	}
	drain(ph, this_hart()->hartid, true);
}

void profile_flush_all(void)
{
	if (!profiling)
		return;
	for (unsigned int i = 0; i < nr_harts; i++)
		drain(&prof_harts[i], harts[i].hartid, true);
}
