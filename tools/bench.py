#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Measure guest-visible costs under QEMU -icount shift=0 (`make bench`).

usage: bench.py [--only native|pmuvisor] [--timeout S] [--build DIR] [--json FILE]

Runs build/guest-tests/bench.bin twice, each time on one hart with -icount shift=0:
  native:   directly on OpenSBI (-bios default -kernel bench.bin), no hypervisor;
  pmuvisor: as a 2-vCPU guest of pmuvisor (dts/bench/bench.dts, both vCPUs on hart 0),
            which also runs the vCPU switch measurement.
The image prints `BENCH <name> <instructions> ...` lines (guest-tests/images/bench.c); this
script builds the bundle (tools/mkbundle.py), runs QEMU under a timeout, parses the lines,
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


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def run_qemu(cmd, timeout, log_path):
    """Run QEMU under a timeout; returns (output, timed_out, seconds)."""
    t0 = time.monotonic()
    timed_out = False
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout)
        out = p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout or b""
        timed_out = True
    out = out.decode("utf-8", "replace")
    with open(log_path, "w") as f:
        f.write(out)
    return out, timed_out, time.monotonic() - t0


def parse(out):
    res = {"figures": {}, "info": [], "skipped": [], "done": "BENCH-DONE" in out}
    for line in out.splitlines():
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


def switch_table(hv):
    rows = []
    for key, f in sorted((hv or {}).get("figures", {}).items(),
                         key=lambda kv: int(kv[0].rsplit("_", 1)[1])
                         if kv[0].startswith("switch_live_") else -1):
        if key.startswith("switch_live_"):
            rows.append([key.rsplit("_", 1)[1], fmt(f["instructions"]), f.get("switches", "?")])
    return ["live counters per vCPU", "instructions per switch", "switches measured"], rows


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
    ap.add_argument("--only", choices=["native", "pmuvisor"])
    ap.add_argument("--timeout", type=float, default=600, help="seconds per QEMU run")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--json", help="results file (default BUILD/bench/results.json)")
    args = ap.parse_args()

    out_dir = os.path.join(args.build, "bench")
    os.makedirs(out_dir, exist_ok=True)
    image = os.path.join(args.build, "guest-tests", "bench.bin")
    hv_bin = os.path.join(args.build, "pmuvisor.bin")
    bundle = os.path.join(out_dir, "bench.bundle")
    need = [(image, "make guest-images")]
    if args.only != "native":
        need.append((hv_bin, "make hv"))
    for path, hint in need:
        if not os.path.isfile(path):
            print(f"bench.py: {path} not found ({hint}, or make bench)", file=sys.stderr)
            return 2
    if args.only != "native":
        p = sh([sys.executable, os.path.join(REPO, "tools", "mkbundle.py"), DTS, bundle],
               cwd=REPO)
        if p.returncode != 0:
            print(f"bench.py: mkbundle failed:\n{p.stdout}{p.stderr}", file=sys.stderr)
            return 2

    common = [QEMU, "-M", "virt", "-cpu", "max", "-smp", "1", "-nographic", "-bios", "default",
              "-icount", "shift=0"]
    runs = {}
    if args.only != "pmuvisor":
        runs["native"] = common + ["-m", "256M", "-kernel", image]
    if args.only != "native":
        runs["pmuvisor"] = common + ["-m", "1G", "-kernel", hv_bin, "-initrd", bundle]

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
    for name, cmd in runs.items():
        print(f"bench.py: {name}: {' '.join(cmd)}", flush=True)
        out, timed_out, secs = run_qemu(cmd, args.timeout, os.path.join(out_dir, f"{name}.log"))
        r = parse(out)
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

    print()
    print("Guest-visible cost in instructions (-icount shift=0, 1 instruction = 1 ns; "
          "(n/s) = NOT_SUPPORTED)")
    head, rows = table(parsed.get("native"), parsed.get("pmuvisor"))
    print_table(head, rows)
    if "pmuvisor" in parsed:
        print()
        print("pmuvisor vCPU switch (two vCPUs time-sliced on one hart, 10 ms slices; "
              "both vCPUs have the same live counters)")
        print_table(*switch_table(parsed["pmuvisor"]))
    results["table"] = {"head": head, "rows": rows}
    json_path = args.json or os.path.join(out_dir, "results.json")
    with open(json_path, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nbench.py: wrote {os.path.relpath(json_path, REPO)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
