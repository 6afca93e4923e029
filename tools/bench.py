#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Measure guest-visible costs under QEMU -icount shift=0 (`make bench`).

usage: bench.py [--only RUN[,RUN...]] [--jobs N] [--timeout S] [--build DIR] [--json FILE]
                [--kvm-build-failed] [--compare OLD.json [--against NEW.json]]
                [--tolerance-sbi N] [--tolerance-switch N]

Runs build/guest-tests/bench.bin on one hart with -icount shift=0, in every setup below, and
prints the figures side by side, with the ratios pmuvisor / KVM:
  native:        directly on OpenSBI (-bios default -kernel bench.bin), no hypervisor;
  kvm:           as the guest of Linux 6.12 KVM: a host kernel booted on the same QEMU
                 (-M virt,aia=aplic-imsic,aia-guests=1) whose /init is tools/kvm/vmm.c, a small
                 VMM running bench.bin (build/kvm/{Image,bench.cpio}, tools/kvm/kvm.mk);
  pmuvisor:      as a 2-vCPU guest of pmuvisor (dts/bench/bench.dts, both vCPUs on hart 0),
                 which also runs the vCPU switch measurement (same counters on both vCPUs);
  partition:     as two 1-vCPU guests on hart 0 with disjoint counters-mask
                 (dts/bench/bench-partition.dts): the vCPU switch with a physical partition;
  shared:        the same two guests counting the same events on the same counters
                 (dts/bench/bench-shared.dts): what a switch between guests costs when no
                 configuration may be taken over from another guest;
  pmuvisor-sbi, partition-sbi: the same two on a CPU without Smcdeleg/Ssccfg
                 (-cpu max,smcdeleg=false,ssccfg=false), where pmuvisor has only its SBI backend.
The image prints `BENCH <name> <instructions> ...` lines (guest-tests/images/bench/); this
script builds the bundles (tools/mkbundle.py), runs the QEMUs (tools/qemu.py, at most
--jobs at once, each under --timeout), parses the lines, prints the tables and writes
build/bench/results.json. A run that fails (KVM not built, no BENCH-DONE, timeout) is named
with its reason above the tables and its cells read FAILED; no figure is taken from elsewhere.
Three tables: the SBI calls and counter CSR reads on a fresh vCPU; the vCPU switch; and the
steady state, the same rows again in the state a Linux guest running `perf record` lives in
(after a counter overflow, ovf_*; and with counters running, busy_*), each with its change
from the fresh row. Method and explanation: docs/performance.md.

--compare OLD.json (a results file of an earlier run) prints, after the run, every row of the
three tables, every run's column, as old / new / new - old, and flags (!) the rows worse than
tolerance: a call or CSR row more than --tolerance-sbi (default 3) instructions dearer, a
vCPU switch row more than --tolerance-switch (default 5), a changed SBI error, or a figure
the old file has and the new run lacks. Only the runs of the new results are compared (--only
restricts both). With --against NEW.json nothing runs: the two files are compared.
Exit status: 0 iff every requested run printed BENCH-DONE and, with --compare, no row is worse
than tolerance; 1 if a run failed; 2 for a bad argument or results file, or a bundle that did
not build; 3 if the runs succeeded (or nothing ran: --against) but a compared row is worse.
"""
import argparse
import datetime
import functools
import json
import os
import re
import subprocess
import sys

import mkbundle
import qemu
from bench_tables import (COLUMNS, SWITCH_COLUMNS, compare, compare_verdict, load_results,
                          show_table, steady_table, switch_table, table)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QEMU = qemu.QEMU
DTS = os.path.join(REPO, "dts", "bench", "bench.dts")
DTS_PART = os.path.join(REPO, "dts", "bench", "bench-partition.dts")
DTS_SHARED = os.path.join(REPO, "dts", "bench", "bench-shared.dts")
CPU_NO_CDELEG = "max,smcdeleg=false,ssccfg=false"
KVM_MACHINE = "virt,aia=aplic-imsic,aia-guests=1"
RUNS = ["native", "kvm", "pmuvisor", "pmuvisor-sbi", "partition", "partition-sbi", "shared"]

# --compare: a row is worse when new - old exceeds these (instructions), unless told otherwise
TOLERANCE_SBI = 3
TOLERANCE_SWITCH = 5

RE_BENCH = re.compile(r"BENCH (\S+) (-?\d+\.\d+) err=(-?\d+) n=(\d+)(.*)$")
RE_INFO = re.compile(r"BENCH-INFO (.*)$")
RE_SKIP = re.compile(r"BENCH-SKIP (.*)$")
RE_SWA = re.compile(r"BENCH-SWA (\d+) (.*)$")
RE_SWB = re.compile(r"BENCH-SWB (\d+) (.*)$")
RE_REC = re.compile(r"BENCH-REC (\d+) (\d+) (\d+)")
# the first of these in a failed run's log says why it failed
RE_WHY = re.compile(r"(vmm: error: .*|vmm: guest \S+ reason [1-9].*|Kernel panic.*|"
                    r"pmuvisor: PANIC.*|qemu: fatal.*|qemu-system-\S+: .*)")


def rel(path):
    """path relative to the repository when inside it"""
    r = os.path.relpath(path, REPO)
    return path if r.startswith("..") else r


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def kv(text):
    return {k: int(v) for k, v in (x.split("=", 1) for x in text.split() if "=" in x)}


def partition_figures(res, swa, swb, recs):
    """The partitioned switch (bench_partition(), bench/partition.c): guest A timed the N0 loop
    over [s, e] (ticks) while guest B ran its worker loop and recorded (time, iterations) after each
    gap; the same computation as bench_switch(), across the two guests' outputs."""
    for n, a in sorted(swa.items()):
        b, r = swb.get(n), recs.get(n, [])
        why = None
        if b is None:
            why = "no worker output"
        elif a.get("err") or b.get("err"):
            why = f"counters: timer err {a.get('err')}, worker err {b.get('err')}"
        elif a.get("late"):
            why = "the interval outlasted the worker loop"
        idx = [i for i, (t, _) in enumerate(r) if a["s"] < t < a["e"]]
        if not why and (not idx or idx[-1] + 1 >= len(r)):
            why = f"records {len(r)}, none after the interval"
        if why:
            res["skipped"].append(f"switch_part_live_{n}: {why}")
            continue
        i1, i2 = idx[0], idx[-1]
        p = i2 - i1 + 1
        j = b["iter"] * (r[i2 + 1][1] - r[i1][1]) + b["rec"] * p
        over = a["with"] - a["alone"] - j
        res["figures"][f"switch_part_live_{n}"] = {
            "instructions": round(over / (2 * p), 3), "error": 0, "n": 2 * p,
            "switches": str(2 * p), "interval": str(a["with"]), "worker": str(j),
            **({"inexact": "1"} if a.get("inexact") else {})}


def parse(out, expect_done=1):
    res = {"figures": {}, "info": [], "skipped": [],
           "done": out.count("BENCH-DONE") >= expect_done}
    swa, swb, recs = {}, {}, {}
    for line in out.splitlines():
        m = RE_SWA.search(line)
        if m:
            swa[int(m.group(1))] = kv(m.group(2))
            continue
        m = RE_SWB.search(line)
        if m:
            swb[int(m.group(1))] = kv(m.group(2))
            continue
        m = RE_REC.search(line)
        if m:
            recs.setdefault(int(m.group(1)), []).append((int(m.group(2)), int(m.group(3))))
            continue
        m = RE_BENCH.search(line)
        if m:
            extra = dict(kv.split("=", 1) for kv in m.group(5).split() if "=" in kv)
            res["figures"][m.group(1)] = {"instructions": float(m.group(2)),
                                          "error": int(m.group(3)), "n": int(m.group(4)),
                                          **extra}
            continue
        m = RE_INFO.search(line)
        if m:
            res["info"].append(m.group(1).strip())
            continue
        m = RE_SKIP.search(line)
        if m:
            res["skipped"].append(m.group(1).strip())
    if swa:
        partition_figures(res, swa, swb, recs)
    return res


# every run's machine: QEMU with OpenSBI (-bios default), one hart, -icount
machine = functools.partial(qemu.machine_cmd, smp=1, icount="shift=0")


def commands(build, bundles):
    """{run: (QEMU command, files it needs, how to build them)}"""
    image = os.path.join(build, "guest-tests", "bench.bin")
    hv = os.path.join(build, "pmuvisor.bin")
    kvm_image = os.path.join(build, "kvm", "Image")
    kvm_initrd = os.path.join(build, "kvm", "bench.cpio")
    # sleep=off where the hart idles: the partition's two guests sleep between phases of their
    # timetable, the KVM host while its UART drains (vmm.c). The idle hart then jumps to the next
    # timer deadline instead of idling in host real time, which would make the phases, and the
    # phase of the KVM host's timer tick (in its figures), depend on the host's load
    part = "shift=0,sleep=off"
    on_hv = [hv, "make hv"]
    return {
        "native": (machine(image, mem="256M"), [image, "make guest-images"]),
        "kvm": (machine(kvm_image, kvm_initrd, ["-seed", "1"], "console=ttyS0",
                        machine=KVM_MACHINE, icount=part),
                [kvm_image, "make kvm-peer", kvm_initrd, "make kvm-peer"]),
        "pmuvisor": (machine(hv, bundles["pmuvisor"]), on_hv),
        "pmuvisor-sbi": (machine(hv, bundles["pmuvisor"], cpu=CPU_NO_CDELEG), on_hv),
        "partition": (machine(hv, bundles["partition"], icount=part), on_hv),
        "partition-sbi": (machine(hv, bundles["partition"], cpu=CPU_NO_CDELEG, icount=part),
                          on_hv),
        "shared": (machine(hv, bundles["shared"], icount=part), on_hv),
    }


def failed(why):
    return {"figures": {}, "info": [], "skipped": [], "done": False, "ok": False, "status": why}


def run_status(res, out, result):
    """ok, or why the run failed"""
    if result.timed_out:
        return f"FAILED: timeout after {result.seconds:.0f} s"
    m = RE_WHY.search(out)
    if res["done"] and not (m and m.group(1).startswith("vmm:")):
        return "ok"
    if m:
        return f"FAILED: {m.group(1).strip()}"
    return f"FAILED: no BENCH-DONE (QEMU exit status {result.rc})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated runs of: " + ", ".join(RUNS))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                    help="QEMUs at once (default: the host's cores)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per QEMU run")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--json", help="results file (default BUILD/bench/results.json)")
    ap.add_argument("--kvm-build-failed", action="store_true",
                    help="`make kvm-peer` failed: report the KVM run as failed, do not run it")
    ap.add_argument("--compare", metavar="OLD.json",
                    help="after the run, print every row as old / new / difference against this "
                    "results file; exit status 3 if a row is worse than tolerance")
    ap.add_argument("--against", metavar="NEW.json",
                    help="with --compare: compare with this results file instead of running")
    ap.add_argument("--tolerance-sbi", type=float, default=TOLERANCE_SBI, metavar="N",
                    help="--compare: instructions a call or CSR row may grow by "
                    f"(default {TOLERANCE_SBI})")
    ap.add_argument("--tolerance-switch", type=float, default=TOLERANCE_SWITCH, metavar="N",
                    help="--compare: instructions a vCPU switch row may grow by "
                    f"(default {TOLERANCE_SWITCH})")
    args = ap.parse_args()
    if args.against and not args.compare:
        ap.error("--against needs --compare")
    want = RUNS if not args.only else [w.strip() for w in args.only.split(",")]
    for w in want:
        if w not in RUNS:
            ap.error(f"--only: unknown run {w!r} (runs: {', '.join(RUNS)})")
    old_res = None
    if args.compare:
        old_res = load_results(args.compare)
        if old_res is None:
            return 2
    if args.against:
        new_res = load_results(args.against)
        if new_res is None:
            return 2
        new_res = dict(new_res, runs={n: r for n, r in new_res["runs"].items() if n in want})
        worse = compare(old_res, new_res, args.tolerance_sbi, args.tolerance_switch,
                        rel(args.compare), rel(args.against))
        return compare_verdict(worse, 0)

    out_dir = os.path.join(args.build, "bench")
    os.makedirs(out_dir, exist_ok=True)
    bundles = {"pmuvisor": os.path.join(out_dir, "bench.bundle"),
               "partition": os.path.join(out_dir, "bench-partition.bundle"),
               "shared": os.path.join(out_dir, "bench-shared.bundle")}
    for name, dts in (("pmuvisor", DTS), ("partition", DTS_PART), ("shared", DTS_SHARED)):
        if not any(w.startswith(name) for w in want):
            continue
        try:
            mkbundle.build(dts, bundles[name])
        except (mkbundle.BundleError, OSError) as e:
            print(f"bench.py: mkbundle failed: {e}", file=sys.stderr)
            return 2

    cmds = commands(args.build, bundles)
    runs, todo = {}, {}
    for name in [n for n in RUNS if n in want]:
        cmd, needs = cmds[name]
        missing = [(needs[i], needs[i + 1]) for i in range(0, len(needs), 2)
                   if not os.path.isfile(needs[i])]
        if name == "kvm" and args.kvm_build_failed:
            runs[name] = failed("FAILED: the KVM host did not build (make kvm-peer, output above)")
        elif missing:
            path, hint = missing[0]
            runs[name] = failed(f"FAILED: {rel(path)} not found ({hint})")
        else:
            todo[name] = (cmd, os.path.join(out_dir, f"{name}.log"))

    def started(name, cmd):
        print(f"bench.py: {name}: {' '.join(cmd)}", flush=True)

    def done(name, result):
        res = parse(result.output, 2 if name.startswith(("partition", "shared")) else 1)
        res["status"] = run_status(res, result.output, result)
        res["ok"] = res["status"] == "ok"
        res.update(command=todo[name][0], seconds=round(result.seconds, 1),
                   timed_out=result.timed_out)
        runs[name] = res
        print(f"bench.py: {name}: {len(res['figures'])} figures in {result.seconds:.0f} s, "
              f"{res['status']} (log {rel(todo[name][1])})", flush=True)
        for s in res["skipped"]:
            print(f"bench.py: {name}: skipped {s}")

    qemu.run_all(todo, args.timeout, args.jobs, on_start=started, on_done=done)
    runs = {n: runs[n] for n in RUNS if n in runs}

    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "qemu": sh([QEMU, "--version"]).stdout.splitlines()[0:1],
               "commit": sh(["git", "-C", REPO, "rev-parse", "HEAD"]).stdout.strip(),
               "method": "guest-visible instructions from the time CSR under -icount shift=0 "
                         "(1 tick = 100 instructions), edge-aligned intervals, empty loop "
                         "subtracted; see docs/performance.md",
               "runs": runs}
    print()
    for name, r in runs.items():
        if not r["ok"]:
            print(f"bench.py: {name}: {r['status']}")
    if any(n in runs for n, _ in COLUMNS):
        show_table(results, "table", "\nGuest-visible cost in instructions (-icount shift=0, 1 "
                   "instruction = 1 ns; (n/s) = NOT_SUPPORTED; FAILED = that run failed, see "
                   "above)", table(runs))
        evs = sorted({f["ev"] for r in runs.values() for f in r["figures"].values() if "ev" in f})
        if evs:
            print(f"* counts event {'/'.join(evs)} (DTLB read miss), not instructions: that "
                  "platform puts instructions on counter 2 whatever the mask (BENCH-INFO in "
                  "its log)")
    if any(n in runs for n, _, _ in SWITCH_COLUMNS):
        show_table(results, "switch_table", "\npmuvisor vCPU switch, instructions per switch "
                   "(two vCPUs time-sliced on one hart, 10 ms slices), (+PMU share = cost - the "
                   "0-counter cost of the same setup):\n  same counters: both vCPUs of one guest "
                   "use the same counters and events (every switch reconfigures);\n  "
                   "partitioned: two guests with disjoint counters-mask and events (a masked "
                   "stop + start);\n  one sampling: the same counters, the first (instret) of "
                   "each vCPU overflowing about once a slice, its LCOFI taken and the counter\n"
                   "  restarted by the guest; what its overflows cost the vCPU alone taken off "
                   "(switch_ovf in bench/switch.c)", switch_table(runs))
    if any(n in runs for n, _ in COLUMNS):
        show_table(results, "steady_table", "\nSteady state (bench_steady() in bench/steady.c), "
                   "instructions (change from the fresh row): after ovf = the vCPU has a "
                   "snapshot area, LCOFIE/STIE/SSIE enabled, took one counter overflow\n"
                   "(handled, counter reset, sip.LCOFIP cleared), calls made with sstatus.SIE "
                   "clear as Linux makes its PMU calls; running = the same with 3 more "
                   "counters\nrunning (cycles sampler, 2 TLB events; counters 11 and up)",
                   steady_table(runs))
    json_path = args.json or os.path.join(out_dir, "results.json")
    with open(json_path, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nbench.py: wrote {rel(json_path)}")
    status = 0 if all(r["ok"] for r in runs.values()) else 1
    if old_res is not None:
        worse = compare(old_res, results, args.tolerance_sbi, args.tolerance_switch,
                        rel(args.compare), rel(json_path))
        return compare_verdict(worse, status)
    return status


if __name__ == "__main__":
    sys.exit(main())
