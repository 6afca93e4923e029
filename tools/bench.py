#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Measure guest-visible costs under QEMU -icount shift=0 (`make bench`).

usage: bench.py [--only native|pmuvisor|partition] [--timeout S] [--build DIR] [--json FILE]

Runs build/guest-tests/bench.bin three times, side by side, each on one hart with -icount shift=0:
  native:    directly on OpenSBI (-bios default -kernel bench.bin), no hypervisor;
  pmuvisor:  as a 2-vCPU guest of pmuvisor (dts/bench/bench.dts, both vCPUs on hart 0),
             which also runs the vCPU switch measurement (same counters on both vCPUs);
  partition: as two 1-vCPU guests on hart 0 with disjoint counters-mask
             (dts/bench/bench-partition.dts): the vCPU switch with a physical partition.
The image prints `BENCH <name> <instructions> ...` lines (guest-tests/images/bench.c); this
script builds the bundles (tools/mkbundle.py), runs QEMU under a timeout, parses the lines,
prints a table next to the OpenSBI and Linux KVM figures of /work/shared/platform.md and
writes build/bench/results.json. Method and explanation: docs/performance.md.
Exit status 0 iff every requested run printed BENCH-DONE.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QEMU = os.environ.get("QEMU", "qemu-system-riscv64")
DTS = os.path.join(REPO, "dts", "bench", "bench.dts")
DTS_PART = os.path.join(REPO, "dts", "bench", "bench-partition.dts")

# Reference figures measured on the same platform (platform.md: "OpenSBI 1.5 as the host SBI"
# and "Linux KVM measured on the same platform"), in instructions.
REFERENCE = {
    "base_get_spec_version": (314, 960),
    "pmu_num_counters": (341, 1008),
    "pmu_counter_get_info": (404, 1023),
    "pmu_cfg_match_stop_reset": (2508, 9498),
    "pmu_start_stop": (1201, 10471),
    "pmu_fw_read": (377, 1049),
    "csr_read_hpmcounter_started": (18, 1859),
    "csr_read_hpmcounter_configured": (None, 1859),  # KVM traps every counter read
}

ROWS = [
    ("base_get_spec_version", "BASE get_spec_version (null call)"),
    ("pmu_num_counters", "PMU num_counters"),
    ("pmu_counter_get_info", "PMU counter_get_info"),
    ("pmu_cfg_match_stop_reset", "PMU config_matching + stop(RESET), Linux-style mask"),
    ("pmu_cfg_match_stop_reset_ctr3", "PMU config_matching + stop(RESET), counter 3 only"),
    ("pmu_start_stop", "PMU start(SET_INIT_VALUE) + stop, one counter"),
    ("pmu_start_stop_mask1", "PMU start + stop, one counter, no initial value"),
    ("pmu_start_stop_mask8", "PMU start + stop, 8 counters, one masked call each"),
    ("pmu_fw_read", "PMU fw_read"),
    ("pmu_snapshot_set_shmem", "PMU snapshot_set_shmem (4 KiB area)"),
    ("pmu_event_get_info_1", "PMU event_get_info, 1 entry"),
    ("pmu_event_get_info_4", "PMU event_get_info, 4 entries"),
    ("csr_read_hpmcounter_started", "hpmcounter3 read, counter started (direct)"),
    ("csr_read_hpmcounter_stopped", "hpmcounter3 read, counter stopped by the guest"),
    ("csr_read_hpmcounter_configured", "hpmcounter3 read, configured never started (trapped)"),
    ("csr_read_cycle_started", "cycle read, counter 0 started"),
    ("csr_read_instret_started", "instret read, counter 2 started"),
    ("csr_read_time", "time read"),
]

RE_BENCH = re.compile(r"BENCH (\S+) (-?\d+\.\d+) err=(-?\d+) n=(\d+)(.*)$")
RE_INFO = re.compile(r"BENCH-INFO (.*)$")
RE_SKIP = re.compile(r"BENCH-SKIP (.*)$")
RE_SWA = re.compile(r"BENCH-SWA (\d+) (.*)$")
RE_SWB = re.compile(r"BENCH-SWB (\d+) (.*)$")
RE_REC = re.compile(r"BENCH-REC (\d+) (\d+) (\d+)")


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def start_qemu(cmd, log_path):
    """Start QEMU with its console going to log_path; returns (process, log file, start time)."""
    f = open(log_path, "wb")
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return p, f, time.monotonic()


def finish_qemu(run, timeout, log_path):
    """Wait for a started QEMU under a timeout; returns (output, timed_out, seconds)."""
    p, f, t0 = run
    timed_out = False
    try:
        p.wait(timeout=max(1.0, t0 + timeout - time.monotonic()))
    except subprocess.TimeoutExpired:
        timed_out = True
        p.kill()
        p.wait()
    f.close()
    with open(log_path, "rb") as lf:
        out = lf.read().decode("utf-8", "replace")
    return out, timed_out, time.monotonic() - t0


def kv(text):
    return {k: int(v) for k, v in (x.split("=", 1) for x in text.split() if "=" in x)}


def partition_figures(res, swa, swb, recs):
    """The partitioned switch (bench_partition() in bench.c): guest A timed the N0 loop over
    [s, e] (ticks) while guest B ran its worker loop and recorded (time, iterations) after each
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


def fmt(v, err=0):
    if v is None:
        return "-"
    s = f"{v:,.0f}" if abs(v - round(v)) < 0.0005 else f"{v:,.2f}"
    if err == -2:
        s += " (n/s)"  # SBI_ERR_NOT_SUPPORTED: the call did nothing
    elif err:
        s += f" (err {err})"
    return s


def table(native, hv):
    nat = native["figures"] if native else {}
    pv = hv["figures"] if hv else {}
    head = ["operation", "OpenSBI native (this run)", "OpenSBI (platform.md)",
            "KVM 6.12 (platform.md)", "pmuvisor", "pmuvisor / KVM"]
    rows = []
    for key, label in ROWS:
        n, p = nat.get(key), pv.get(key)
        ref_o, ref_k = REFERENCE.get(key, (None, None))
        ratio = "-"
        if p is not None and ref_k:
            q = p["instructions"] / ref_k
            ratio = f"{q:.2f}" if q >= 0.1 else f"{q:.4f}"
        rows.append([label,
                     fmt(n["instructions"], n["error"]) if n else "-",
                     fmt(ref_o), fmt(ref_k),
                     fmt(p["instructions"], p["error"]) if p else "-", ratio])
    return head, rows


def live_figures(run, prefix):
    """{live counters: figure} of one switch configuration, in increasing order"""
    figs = (run or {}).get("figures", {})
    return dict(sorted((int(k[len(prefix):]), f) for k, f in figs.items()
                       if k.startswith(prefix)))


def switch_table(hv, part):
    """Rows 0, 1, 4, all: per configuration, the switch cost and its PMU share (cost minus
    the 0-counter cost of the same configuration)."""
    cols = []
    for c in (live_figures(hv, "switch_live_"), live_figures(part, "switch_part_live_")):
        top = max(c) if c else 0
        cols.append({"0": c.get(0), "1": c.get(1), "4": c.get(4),
                     "all": (top, c[top]) if top > 4 else None, "zero": c.get(0)})
    head = ["live counters per vCPU",
            "one guest, same counters", "PMU share",
            "two guests, partitioned", "PMU share", "switches measured"]
    rows = []
    for key in ("0", "1", "4", "all"):
        row, tops, sw = [], [], []
        for c in cols:
            f = c[key]
            if key == "all" and f:
                tops.append(str(f[0]))
                f = f[1]
            if not f:
                row += ["-", "-"]
                sw.append("-")
                continue
            zero = c["zero"]
            row += [fmt(round(f["instructions"])),
                    fmt(round(f["instructions"] - zero["instructions"])) if zero else "-"]
            sw.append(str(f.get("switches", "?")))
        label = key if key != "all" else f"all ({' / '.join(tops)})"
        rows.append([label] + row + [" / ".join(sw)])
    return head, rows


def print_table(head, rows):
    w = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    line = lambda r: "  ".join(str(c).ljust(w[i]) if i == 0 else str(c).rjust(w[i])
                               for i, c in enumerate(r))
    print(line(head))
    print("  ".join("-" * x for x in w))
    for r in rows:
        print(line(r))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["native", "pmuvisor", "partition"])
    ap.add_argument("--timeout", type=float, default=600, help="seconds per QEMU run")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--json", help="results file (default BUILD/bench/results.json)")
    args = ap.parse_args()

    out_dir = os.path.join(args.build, "bench")
    os.makedirs(out_dir, exist_ok=True)
    image = os.path.join(args.build, "guest-tests", "bench.bin")
    hv_bin = os.path.join(args.build, "pmuvisor.bin")
    bundle = os.path.join(out_dir, "bench.bundle")
    bundle_part = os.path.join(out_dir, "bench-partition.bundle")
    want = [args.only] if args.only else ["native", "pmuvisor", "partition"]
    need = [(image, "make guest-images")]
    if want != ["native"]:
        need.append((hv_bin, "make hv"))
    for path, hint in need:
        if not os.path.isfile(path):
            print(f"bench.py: {path} not found ({hint}, or make bench)", file=sys.stderr)
            return 2
    for name, dts, out in (("pmuvisor", DTS, bundle), ("partition", DTS_PART, bundle_part)):
        if name not in want:
            continue
        p = sh([sys.executable, os.path.join(REPO, "tools", "mkbundle.py"), dts, out],
               cwd=REPO)
        if p.returncode != 0:
            print(f"bench.py: mkbundle failed:\n{p.stdout}{p.stderr}", file=sys.stderr)
            return 2

    common = [QEMU, "-M", "virt", "-cpu", "max", "-smp", "1", "-nographic", "-bios", "default",
              "-icount", "shift=0"]
    runs = {}
    if "native" in want:
        runs["native"] = common + ["-m", "256M", "-kernel", image]
    if "pmuvisor" in want:
        runs["pmuvisor"] = common + ["-m", "1G", "-kernel", hv_bin, "-initrd", bundle]
    if "partition" in want:
        # sleep=off: the two guests sleep between phases of their timetable; the idle hart
        # then jumps to the next timer deadline instead of idling in host real time, which
        # would make the phases (not the figures) depend on the host's load
        runs["partition"] = [QEMU, "-M", "virt", "-cpu", "max", "-smp", "1", "-nographic",
                             "-bios", "default", "-icount", "shift=0,sleep=off", "-m", "1G",
                             "-kernel", hv_bin, "-initrd", bundle_part]

    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "qemu": sh([QEMU, "--version"]).stdout.splitlines()[0:1],
               "commit": sh(["git", "-C", REPO, "rev-parse", "HEAD"]).stdout.strip(),
               "method": "guest-visible instructions from the time CSR under -icount shift=0 "
                         "(1 tick = 100 instructions), edge-aligned intervals, empty loop "
                         "subtracted; see docs/performance.md",
               "reference": {k: {"opensbi": v[0], "kvm": v[1]} for k, v in REFERENCE.items()},
               "runs": {}}
    ok = True
    parsed = {}
    # The runs are independent and deterministic (icount): run them side by side
    started = {}
    for name, cmd in runs.items():
        print(f"bench.py: {name}: {' '.join(cmd)}", flush=True)
        started[name] = start_qemu(cmd, os.path.join(out_dir, f"{name}.log"))
    for name, cmd in runs.items():
        out, timed_out, secs = finish_qemu(started[name], args.timeout,
                                           os.path.join(out_dir, f"{name}.log"))
        r = parse(out, 2 if name == "partition" else 1)
        r["command"] = cmd
        r["seconds"] = round(secs, 1)
        r["timed_out"] = timed_out
        parsed[name] = r
        results["runs"][name] = r
        status = "ok" if r["done"] else ("TIMEOUT" if timed_out else "no BENCH-DONE")
        print(f"bench.py: {name}: {len(r['figures'])} figures in {secs:.0f} s, {status} "
              f"(log {os.path.relpath(os.path.join(out_dir, name + '.log'), REPO)})")
        for s in r["skipped"]:
            print(f"bench.py: {name}: skipped {s}")
        if not r["done"]:
            ok = False

    head, rows = table(parsed.get("native"), parsed.get("pmuvisor"))
    if "native" in parsed or "pmuvisor" in parsed:
        print()
        print("Guest-visible cost in instructions (-icount shift=0, 1 instruction = 1 ns; "
              "(n/s) = NOT_SUPPORTED)")
        print_table(head, rows)
    results["table"] = {"head": head, "rows": rows}
    if "pmuvisor" in parsed or "partition" in parsed:
        print()
        print("pmuvisor vCPU switch, instructions per switch (two vCPUs time-sliced on one hart, "
              "10 ms slices):\n  one guest, same counters: both vCPUs of one guest use the "
              "same counters and events (every switch reconfigures);\n  two guests, "
              "partitioned: disjoint counters-mask and events (a masked stop + start);\n"
              "  PMU share = cost - the 0-counter cost of the same configuration")
        shead, srows = switch_table(parsed.get("pmuvisor"), parsed.get("partition"))
        print_table(shead, srows)
        results["switch_table"] = {"head": shead, "rows": srows}
    json_path = args.json or os.path.join(out_dir, "results.json")
    with open(json_path, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nbench.py: wrote {os.path.relpath(json_path, REPO)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
