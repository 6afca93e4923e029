#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Where the instructions of a Linux guest's perf run go (`tools/e2e.py --breakdown`).

Boots the loop workload's BREAKDOWN rows of tools/e2e.py once each, natively and in the guest,
with QEMU's execution trace (tools/tbtrace.py), and tabulates the perf run's instructions minus
the alone run's, per sample: firmware, hypervisor, kernel and user space, episodes by what they
did (EPISODES). tools/e2e.py's --update replaces the `e2e-breakdown` block with the table.
"""
import collections
import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu  # noqa: E402
import tbtrace  # noqa: E402
from e2e import SIDES, boot_commands, parse, perf_command, run_command, update  # noqa: E402

# Regions by pc: QEMU's OpenSBI below 0x80200000, pmuvisor from there (it runs with translation
# off), the Linux kernel's text at the top, user space below 0x4000000000 (Sv39).
REGIONS = [("firmware", 0x80000000, 0x80200000), ("hypervisor", 0x80200000, 0x80400000),
           ("kernel", 0xffffffff80000000, 1 << 64), ("user", 0, 0x4000000000)]
# The loop workload's blocks: the window opens at _start and closes at loop_end; the loop body
# (its 100,000,000 instructions, one block) is not traced, everything else the machine runs is
LOOP_START, LOOP_BODY, LOOP_END = 0x100b0, 0x100b8, 0x100c4
DFILTER = (f"0..{LOOP_BODY - 1:#x},{LOOP_END:#x}..0x7fffffff,0x80000000..0x803fffff,"
           f"0x80400000..0x3fffffffff,0xffffffff80000000..0xffffffffffffffff")
# A run of consecutive blocks of one hart in one region, up to the next trap (pmuvisor's
# hs_trap_vector, Linux's handle_exception), is an episode, named by the first rule whose
# function it executed (pmuvisor's and Linux's function names)
EPISODES = [
    ("the LCOFI: interrupt, overflow scan, injection", {"vpmu_overflow_irq"}),
    ("SBI PMU counter_stop", {"vpmu_counter_stop"}),
    ("SBI PMU counter_start", {"vpmu_counter_start"}),
    ("exclusive counting: waiting for a turn", {"excl_acquire", "excl_park"}),
    ("timer interrupt (vPMU deadline, slice end)", {"vpmu_timer", "sched_timer_tick"}),
    ("other SBI calls", {"sched_sbi_ecall"}),
    ("the PMU interrupt handler, with the sample", {"pmu_sbi_ovf_handler"}),
    ("SBI calls (OpenSBI, no symbols)", {"?"}),
]
BREAKDOWN = [(1, "rec10k"), (1, "recF"), (2, "stat2"), (2, "rec10k")]


def breakdown_run(side, smp, cfg, inp, out_dir, timeout):
    """Trace windows of the loop's alone and perf runs of one boot (tbtrace.run)."""
    cmd = run_command(side, smp, "loop", cfg, inp, out_dir)
    name = f"trace-{side}{smp}-loop-{cfg}"
    elfs = [inp["vmlinux"]] + ([inp["pmuvisor.elf"]] if side != "native" else [])

    def runner(full):
        return qemu.run_process(full, timeout, os.path.join(out_dir, name + ".log"))

    windows, res = tbtrace.run(cmd, DFILTER, REGIONS, elfs, LOOP_START, LOOP_END,
                               trap_regions=("firmware", "hypervisor", "kernel"),
                               classify=EPISODES, split=("hs_trap_vector", "handle_exception"),
                               runner=runner)
    r = parse(res.lines, len(boot_commands("loop", cfg)))
    if res.timed_out:
        r["error"] = f"timed out after {timeout:g} s"
    if not r["error"] and len(windows) != 3:
        r["error"] = f"{len(windows)} trace windows, want 3 (warm-up, alone, under perf)"
    return r, windows


def breakdown_table(runs):
    """Where the instructions of a perf run go, per sample (perf record) or per run (perf stat):
    the perf run's window minus the alone run's, one column per run."""
    cols = []
    for (side, smp, cfg), (r, wins) in runs.items():
        rec = cfg.startswith("rec")
        short = perf_command("loop", cfg).split(" loop")[0].replace(" -o /tmp/perf.data", "")
        title = f"{side}: `{short.replace(' -x ,', '')}`, " + ("per sample" if rec else "per run")
        if r.get("error"):
            cols.append((title, None, r["error"]))
            continue
        alone, perf = wins[1], wins[2]
        c = {"n": perf.calls["pmu_sbi_ovf_handler"] if rec else 1, "rec": rec,
             "diff": collections.Counter(perf.ep_insns), "eps": collections.Counter(perf.episodes),
             "ins": collections.Counter(), "elapsed": r["elapsed"] - r["alone"]}
        c["diff"].subtract(alone.ep_insns)
        c["eps"].subtract(alone.episodes)
        for (_, reg), v in perf.insns.items():
            c["ins"][reg] += v
        for (_, reg), v in alone.insns.items():
            c["ins"][reg] -= v
        cols.append((title, c, None))

    def cell(c, v, episodes=None):
        if c is None:
            return "FAILED"
        per = v / c["n"]
        return (f"{per:,.0f}" if abs(per) >= 0.5 else "0") + \
            (f" ({episodes / c['n']:.2f}x)" if episodes else "")

    def row(label, fn):
        vals = [fn(c) if c else "FAILED" for _, c, _ in cols]
        return f"| {label} | " + " | ".join(vals) + " |", vals

    order = [x for x, _, _ in REGIONS]
    # by region, then as EPISODES lists them ("other" last): not a set's order, which changes
    # from one run to the next
    kinds = [k for k, _ in EPISODES] + ["other"]
    keys = sorted({k for _, c, _ in cols if c for k in c["diff"] if c["diff"][k]},
                  key=lambda k: (order.index(k[0]), kinds.index(k[1])))
    rows = ["| where | " + " | ".join(t for t, _, _ in cols) + " |",
            "| --- |" + " ---: |" * len(cols),
            row("samples in the window (Linux's PMU interrupts)",
                lambda c: f"{c['n']:,}" if c["rec"] else "-")[0]]
    for reg in order:
        rows.append(row(f"**{reg}**, all", lambda c: cell(c, c["ins"][reg]))[0])
        for k in [k for k in keys if k[0] == reg]:
            text, vals = row(f"{reg}: {k[1]}", lambda c: cell(c, c["diff"][k], c["eps"][k]))
            if any(v != "0" for v in vals):
                rows.append(text)
    rows.append(row("**outside the window** (the workload's fork, exec and exit) **and idle** "
                    "(virtual time in which no hart executed)",
                    lambda c: cell(c, c["elapsed"] - sum(c["ins"].values())))[0])
    rows.append(row("elapsed (the table above)", lambda c: cell(c, c["elapsed"]))[0])
    return "\n".join(rows), [f"- {t}: FAILED: {e}" for t, c, e in cols if not c]


def breakdown(args, inp):
    """--breakdown: trace the BREAKDOWN runs natively and in the guest, print the table."""
    out_dir = os.path.join(args.build, "e2e")
    # a rule naming a function that no longer exists would file its episodes under "other"
    known = {n for _, _, _, names in tbtrace.Symbols([inp["vmlinux"], inp["pmuvisor.elf"]]).tables
             for n in names}
    stale = sorted({f for _, fns in EPISODES for f in fns if f != "?"} - set(known))
    if stale:
        sys.exit(f"e2e.py: EPISODES names functions that neither ELF has: {', '.join(stale)}")
    runs = {}
    smps, configs = [int(x) for x in args.smp.split(",")], args.configs.split(",")
    for smp, cfg in [(s, c) for s, c in BREAKDOWN if s in smps and c in configs]:
        for side in SIDES:
            print(f"e2e.py: tracing {side}{smp}-loop-{cfg}", flush=True)
            runs[(side, smp, cfg)] = breakdown_run(side, smp, cfg, inp, out_dir,
                                                   args.timeout * 4)
    parts = []
    for smp in sorted({s for _, s, _ in runs}):
        tab, fails = breakdown_table({k: v for k, v in runs.items() if k[1] == smp})
        parts.append(f"**-smp {smp}**, loop-100m, instructions (in parentheses: episodes):\n\n"
                     + tab + "".join("\n" + f for f in fails))
    today = datetime.date.today().isoformat()
    text = (f"Generated by `make bench-linux BENCH_LINUX_ARGS=--breakdown` "
            f"(tools/e2e_breakdown.py, tools/tbtrace.py) on {today}, commit {args.commit}.\n\n"
            + "\n\n".join(parts))
    print("\n" + text)
    if args.update:
        update(args.update, "e2e-breakdown", text)
    return 1 if any(r.get("error") for r, _ in runs.values()) else 0
