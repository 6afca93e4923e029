#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Sampling repeatability: boot a configuration N times and judge every perf recording.

usage: sampling.py [CONFIG] [-n N] [--timeout S] [--stall S] [--cpu MODEL] [--smp N]

CONFIG is a configuration of dts/ (default: default, the `make run` demo). Its Linux guests run
their script (guest-tests/linux/init.c): every `perf record -e <event>:u -c 100000 loop-5m` must
hold the analytic 50 samples (down to one less per further vCPU of the guest: perf record's
event per CPU keeps the partial period the task leaves there) with every sampled IP in the loop
(tools/check_linux.py); recordings of perf's default event (cycles in user and kernel mode) must
hold at least that least number. Each boot prints one line per guest, then a summary line per
guest and event, and a final verdict.
A boot that prints nothing for --stall seconds is declared hung: the line says where each hart
was (QEMU monitor). Exit status 0 iff every boot finished and every recording was good.
`make sampling CONFIG=... N=...` runs it (docs/linux-guest.md).
"""
import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_linux  # noqa: E402
import qemu  # noqa: E402
import run  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RE_GUEST = re.compile(r"^\[([^\]\s]+)\] ?(.*)$")
RE_SUMMARY = re.compile(r"pmuvisor: all guests stopped: (\d+) ok, (\d+) failed")
RE_STATS = re.compile(r"pmuvisor: guest (\S+) vcpu \d+: (\d+) counter overflows \((\d+) ")
RE_DROPPED = re.compile(r"pmuvisor: guest (\S+) vcpu \d+: .* LCOFI raised \((\d+) dropped")


def boot_once(args, i, logs):
    bundle = os.path.join(args.build, "bundles", args.config + ".bundle")
    extra = run.dts_run_args(args.config)
    if args.cpu:
        extra += ["-cpu", args.cpu]
    if args.smp:
        extra += ["-smp", str(args.smp)]
    cmd = qemu.machine_cmd(os.path.join(args.build, "pmuvisor.bin"), bundle, extra)
    log = os.path.join(logs, f"boot-{i:03d}.log")
    t0 = time.monotonic()
    r = qemu.run_process(cmd, args.timeout, log, stop_re=RE_SUMMARY, stall=args.stall,
                         elf=os.path.join(args.build, "pmuvisor.elf"))
    wall = time.monotonic() - t0
    per = {}
    finished = None
    unflagged = {}
    dropped = {}
    for ln in r.lines:
        m = RE_GUEST.match(ln)
        if m:
            per.setdefault(m.group(1), []).append(m.group(2))
            continue
        m = RE_SUMMARY.search(ln)
        if m:
            finished = (int(m.group(1)), int(m.group(2)))
        m = RE_STATS.match(ln)
        if m:
            unflagged[m.group(1)] = unflagged.get(m.group(1), 0) + int(m.group(3))
        m = RE_DROPPED.match(ln)
        if m:
            dropped[m.group(1)] = dropped.get(m.group(1), 0) + int(m.group(2))
    return r, per, finished, wall, log, unflagged, dropped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config", nargs="?", default="default")
    ap.add_argument("-n", type=int, default=20, help="boots (default 20)")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--stall", type=float, default=120,
                    help="seconds without console output that count as a hang")
    ap.add_argument("--cpu", help="QEMU -cpu model instead of the configuration's")
    ap.add_argument("--smp", type=int)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    args = ap.parse_args()

    bundles = os.path.join(args.build, "bundles")
    if not os.path.isfile(os.path.join(bundles, args.config + ".bundle")):
        known = sorted(os.path.relpath(os.path.join(d, f), bundles)[:-len(".bundle")]
                       for d, _, files in os.walk(bundles) for f in files
                       if f.endswith(".bundle") and "tests" not in os.path.relpath(d, bundles))
        print(f"sampling: no configuration {args.config!r} in {bundles} (built: "
              f"{', '.join(known) or 'none; run make first'})", file=sys.stderr)
        return 2
    logs = os.path.join(args.build, "sampling", args.config.replace("/", "-"))
    os.makedirs(logs, exist_ok=True)
    lo, hi = check_linux.loop_range(args.build)
    base = check_linux.map_base(args.build)
    want = check_linux.analytic_counts()[check_linux.RECORD_WORKLOAD] // check_linux.PERIOD
    print(f"sampling: {args.config}, {args.n} boots; each :u recording of "
          f"{check_linux.RECORD_WORKLOAD} at -c {check_linux.PERIOD} must hold {want} "
          f"samples (down to one less per further vCPU) in [{lo:#x}, {hi:#x}]; "
          f"logs in {os.path.relpath(logs, REPO)}", flush=True)
    bad_boots = hung = 0
    table = {}  # (guest, event) -> [samples per recording]
    bad_recs = total_recs = 0
    for i in range(1, args.n + 1):
        r, per, finished, wall, log, unflagged, dropped = boot_once(args, i, logs)
        parts = []
        boot_bad = False
        for g in sorted(per):
            info = check_linux.parse(per[g])
            recs = []
            for rec in info["recordings"]:
                total_recs += 1
                if rec["event"].endswith(":u"):
                    problems = check_linux.judge_recording(rec, lo, hi, want, base, info["cpus"])
                else:
                    least = check_linux.per_cpu_floor(want, info["cpus"])
                    problems = [] if (rec["samples"] or 0) >= least else [
                        f"{rec['samples']} samples, want >= {least}"]
                table.setdefault((g, rec["event"]), []).append(rec["samples"])
                if problems:
                    bad_recs += 1
                    boot_bad = True
                recs.append(f"{rec['event']} {rec['samples']}" +
                            (" (" + "; ".join(problems) + ")" if problems else " ok"))
            done = "done" if info["done"] is not None else "NOT DONE"
            if info["done"] is None or not recs:
                boot_bad = True
            extra = f", {unflagged[g]} overflows unflagged by the platform" if unflagged.get(g) \
                else ""
            if dropped.get(g):
                extra += f", {dropped[g]} LCOFI dropped (cause gone before delivery)"
            parts.append(f"{g}: " + (", ".join(recs) or "no recording") + f"; {done}{extra}")
        if r.timed_out:
            hung += 1
            boot_bad = True
            why = "no output for %g s" % args.stall if r.stalled else "timeout"
            parts.append(f"HUNG ({why}): " + " | ".join(r.harts))
        elif finished is None:
            boot_bad = True
            parts.append("no final hypervisor line")
        elif finished[1] or sum(finished) != len(per):
            boot_bad = True
            parts.append(f"{finished[0]} guest(s) ok, {finished[1]} failed, "
                         f"{len(per)} printed anything")
        bad_boots += boot_bad
        print(f"boot {i:3d} ({wall:5.1f} s{'' if not boot_bad else ', BAD, ' + os.path.relpath(log, REPO)}): "
              + " | ".join(parts), flush=True)

    print("per guest and event: samples of every recording (min..max)")
    for (g, ev), ns in sorted(table.items()):
        vals = [n for n in ns if n is not None]
        rng = f"{min(vals)}..{max(vals)}" if vals else "-"
        print(f"  {g:10s} {ev:16s} {len(ns):3d} recordings, samples {rng}: " +
              " ".join(str(n) for n in ns))
    print(f"sampling: {args.n} boots, {args.n - hung} finished, {hung} hung, "
          f"{total_recs} recordings, {bad_recs} bad, {bad_boots} bad boots")
    return 0 if bad_boots == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
