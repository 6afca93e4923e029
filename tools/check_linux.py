#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Host-side checks of Linux guests running perf under pmuvisor (docs/linux-guest.md).

Used by tools/run-tests.py for configurations with a `// test: linux=...` line, and usable on
its own to boot the same Linux guest natively (no hypervisor) and print what perf measured:

    tools/check_linux.py --native [--smp N] [--cpu CPU] [--no-icount] [--script NAME]
    tools/check_linux.py --log build/test-logs/linux-smp2.log   (parse a pmuvisor log)

The guest's /init (guest-tests/linux/init.c) prints `=== <title> ===` before every step; the
machine-readable scripts use `perf stat -x ,` ("<count>,,<event>,...") and `perf script -F ip`
(one hex IP per line). Check words of `// test: linux=` (space separated):

    probe          the SBI PMU driver found the counters (PROBE_RES) and the snapshot area
    exact          every `perf stat` count of a loop workload equals its analytic count
    approx=P       every such count is >= analytic and <= analytic * (1 + P/100)
    record         `perf record -e instructions:u -c 100000 loop-5m` (best of the recordings of a
                   boot): at least as many samples as
                   a native boot of the same kernel + initramfs on the same QEMU machine shape,
                   and every sampled IP inside loop-5m's hot loop (riscv64-linux-gnu-nm symbols)
    fw=A,B         SBI firmware events A, B (decimal ids: 5 SET_TIMER, 6 IPI_SENT, 7 IPI_RECEIVED)
                   counted > 0 by `perf stat -a -e r80000000000000XX`
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QEMU = os.environ.get("QEMU", "qemu-system-riscv64")
NM = os.environ.get("NM", "riscv64-linux-gnu-nm")

PROBE_RES = [r"riscv-pmu-sbi: 22 firmware and 18 hardware counters",
             r"riscv-pmu-sbi: SBI PMU snapshot detected"]
RE_NO_SSCOF = re.compile(r"riscv-pmu-sbi: Perf sampling/filtering is not supported")
RE_SECTION = re.compile(r"^=== (.*?) ===")
RE_STAT_CSV = re.compile(r"^\s*([0-9]+|<not supported>|<not counted>),[^,]*,([^,]+),")
RE_IP = re.compile(r"^\s*([0-9a-f]+)\s*$")
RE_DONE = re.compile(r"^=== done === \(([0-9.]+) s monotonic\)")
RE_INIT = re.compile(r"^\[init\] pmuvisor\.run=(\S+), started at ([0-9.]+) s monotonic")
FW_NAMES = {5: "set_timer", 6: "ipi_sent", 7: "ipi_received"}
RECORD_WORKLOAD = "loop-5m"


# ---------------------------------------------------------------- facts from the build
def analytic_counts():
    """{workload: user instructions}, from LG_LOOPS in linux.mk (3 * iterations + 4)."""
    out = {}
    with open(os.path.join(REPO, "guest-tests", "linux", "linux.mk")) as f:
        text = f.read().replace("\\\n", " ")
    m = re.search(r"^LG_LOOPS\s*:?=\s*(.*)$", text, re.M)
    for item in m.group(1).split():
        name, n = item.split(":")
        out[name] = 3 * int(n) + 4
    return out


def loop_range(build):
    """[loop, loop_end) of the recorded workload's ELF, from its symbol table."""
    elf = os.path.join(build, "linux", "workloads", RECORD_WORKLOAD + ".elf")
    out = subprocess.run([NM, elf], capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    return syms["loop"], syms["loop_end"]


# ---------------------------------------------------------------- parsing guest output
def parse(lines):
    """Console lines of one Linux guest (prefix removed) -> dict of what perf printed."""
    info = {"sections": {}, "stat": {}, "ips": [], "done": None, "init": None, "lines": lines,
            "recordings": []}
    cur = None
    for ln in lines:
        m = RE_DONE.match(ln)
        if m:
            info["done"] = float(m.group(1))
            cur = None
            continue
        m = RE_INIT.match(ln)
        if m:
            info["init"] = float(m.group(2))
            continue
        m = RE_SECTION.match(ln)
        if m:
            cur = m.group(1)
            info["sections"][cur] = []
            continue
        if cur is None:
            continue
        info["sections"][cur].append(ln)
        m = RE_STAT_CSV.match(ln)
        if m and cur.startswith("perf stat "):
            wl = cur.split()[2]
            val = int(m.group(1)) if m.group(1).isdigit() else m.group(1)
            info["stat"][(wl, m.group(2))] = val
        elif cur.startswith("perf script "):
            m = RE_IP.match(ln)
            if m:
                info["sections"][cur + " ips"] = info["sections"].get(cur + " ips", []) + [ln]
    # several recordings of the same workload: judge the one with the most samples (QEMU
    # sometimes delivers no overflow interrupt during a whole recording, natively too)
    for title, sec in info["sections"].items():
        if title.startswith("perf script ") and not title.endswith(" ips"):
            ips = [int(x, 16) for x in info["sections"].get(title + " ips", [])]
            info["recordings"].append(len(ips))
            if len(ips) > len(info["ips"]) or not info["recordings"][:-1]:
                info["ips"] = ips
    return info


def boot_line(info):
    if info["init"] is None:
        return "no /init line"
    s = f"/init at {info['init']:.4f} s"
    if info["done"] is not None:
        s += f", done at {info['done']:.4f} s (guest monotonic)"
    return s


def summary(info):
    """One-line digest of what perf measured."""
    parts = [f"{wl} {ev} {v:,}" if isinstance(v, int) else f"{wl} {ev} {v}"
             for (wl, ev), v in sorted(info["stat"].items())]
    if info["recordings"]:
        parts.append("record " + "/".join(str(n) for n in info["recordings"]) + " samples")
    return "; ".join(parts) + "; " + boot_line(info)


# ---------------------------------------------------------------- native reference
def machine_cmd(kernel, initrd, extra, append=None):
    """QEMU virt with -bios default: the defaults (-smp 2, -m 1G) unless extra overrides them."""
    base = {"-M": "virt", "-cpu": "max", "-smp": "2", "-m": "1G"}
    rest = []
    i = 0
    while i < len(extra):
        a = extra[i]
        if a in base and i + 1 < len(extra):
            base[a] = extra[i + 1]
            i += 2
            continue
        rest.append(a)
        i += 1
    cmd = [QEMU]
    for k, v in base.items():
        cmd += [k, v]
    cmd += ["-nographic", "-bios", "default", "-kernel", kernel, "-initrd", initrd]
    if append is not None:
        cmd += ["-append", append]
    return cmd + rest


def native_cmd(build, qemu_args, bootargs):
    """QEMU command booting the guest kernel + initramfs natively, same machine shape."""
    return machine_cmd(os.path.join(build, "linux", "Image"),
                       os.path.join(build, "linux", "initramfs.cpio"), qemu_args, bootargs)


def run_native(build, qemu_args, bootargs, log_path=None, timeout=60):
    cmd = native_cmd(build, qemu_args, bootargs)
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout)
        out = p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace") + f"\n*** TIMEOUT after {timeout} s\n"
    wall = time.monotonic() - t0
    lines = [ln.rstrip("\r") for ln in out.split("\n")]
    if log_path:
        with open(log_path, "w") as f:
            f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n" + "\n".join(lines))
    info = parse(lines)
    info["wall"] = wall
    return info


# ---------------------------------------------------------------- the checks
def parse_words(words):
    spec = {}
    for w in words:
        key, _, val = w.partition("=")
        if key not in ("probe", "exact", "approx", "record", "fw"):
            raise ValueError(f"unknown linux check {w!r}")
        spec[key] = val
    return spec


def check_guest(name, info, spec, res, verbose, native=None, build=None):
    """Named PASS/FAIL checks on one guest's parsed output; res has ok(name)/fail(name, d)."""
    analytic = analytic_counts()
    lines = info["lines"]
    no_sscof = any(RE_NO_SSCOF.search(ln) for ln in lines)
    hint = (" (the guest ISA lacks sscofpmf: riscv-pmu-sbi refuses :u filters and sampling)"
            if no_sscof else "")

    if "probe" in spec:
        for rx in PROBE_RES:
            what = "snapshot" if "snapshot" in rx else "counters"
            if any(re.search(rx, ln) for ln in lines):
                res.ok(f"{name}:linux:probe-{what}", verbose)
            else:
                got = [ln for ln in lines if "riscv-pmu-sbi" in ln]
                res.fail(f"{name}:linux:probe-{what}", f"no kernel line /{rx}/; got: " +
                         ("; ".join(got) if got else "no riscv-pmu-sbi line"))

    if "exact" in spec or "approx" in spec:
        tol = float(spec["approx"]) if spec.get("approx") else 0.0
        kind = "exact" if "exact" in spec else "approx"
        stats = {k: v for k, v in info["stat"].items() if k[0] in analytic and ":u" in k[1]}
        if not stats:
            res.fail(f"{name}:linux:{kind}", "no perf stat count of a loop workload in the "
                     "guest output" + hint)
        for (wl, ev), v in sorted(stats.items()):
            want = analytic[wl]
            cname = f"{name}:linux:{kind}:{wl}:{ev}"
            if not isinstance(v, int):
                res.fail(cname, f"perf printed {v}{hint}")
            elif kind == "exact" and v == want:
                res.ok(cname, verbose)
            elif kind == "approx" and want <= v <= want * (1 + tol / 100):
                res.ok(cname, verbose)
            else:
                bound = "" if kind == "exact" else f" .. {want * (1 + tol / 100):,.0f}"
                res.fail(cname, f"{v:,}, analytic {want:,}{bound} "
                         f"({(v - want) / want * 100:+.3f} %)")

    if "record" in spec:
        n = len(info["ips"])
        rec = info["sections"].get("perf record " + RECORD_WORKLOAD)
        if native is None or not native["recordings"]:
            res.fail(f"{name}:linux:record-samples", "no native reference run (see the "
                     "native log)")
        elif rec is None:
            res.fail(f"{name}:linux:record-samples", "the guest never ran perf record")
        elif n >= len(native["ips"]) and n > 0:
            res.ok(f"{name}:linux:record-samples", verbose)
        else:
            res.fail(f"{name}:linux:record-samples", f"{n} samples (best of "
                     f"{len(info['recordings'])} recordings), native {len(native['ips'])} "
                     f"on the same machine shape; perf record said: " +
                     " / ".join(ln.strip() for ln in rec if ln.strip())[:300] + hint)
        lo, hi = loop_range(build)
        outside = [ip for ip in info["ips"] if not lo <= ip < hi]
        if not info["ips"]:
            res.fail(f"{name}:linux:record-ips", "no sampled IP" + hint)
        elif outside:
            res.fail(f"{name}:linux:record-ips", f"{len(outside)} of {len(info['ips'])} IPs "
                     f"outside loop..loop_end [{lo:#x}, {hi:#x}): " +
                     ", ".join(f"{ip:#x}" for ip in outside[:8]))
        else:
            res.ok(f"{name}:linux:record-ips", verbose)

    if "fw" in spec:
        for ev in [int(x) for x in spec["fw"].split(",") if x]:
            raw = f"r{(2 << 62) | ev:016x}"
            cname = f"{name}:linux:fw-{FW_NAMES.get(ev, ev)}"
            vals = [v for (wl, e), v in info["stat"].items() if e == raw]
            if not vals:
                res.fail(cname, f"no perf stat count of {raw}")
            elif all(isinstance(v, int) and v > 0 for v in vals):
                res.ok(cname, verbose)
            else:
                res.fail(cname, f"{raw} counted {vals[0]}")

    if info["done"] is None:
        res.fail(f"{name}:linux:done", "no '=== done ===' line from /init")
    else:
        res.ok(f"{name}:linux:done", verbose)


# ---------------------------------------------------------------- stand-alone use
class Printer:
    def __init__(self):
        self.failed = 0

    def ok(self, name, verbose=False):
        print(f"  PASS {name}")

    def fail(self, name, detail):
        self.failed += 1
        print(f"  FAIL {name}: {detail}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--native", action="store_true", help="boot the Linux guest without pmuvisor")
    ap.add_argument("--log", help="parse a pmuvisor console log instead")
    ap.add_argument("--smp", default="2")
    ap.add_argument("--cpu", default="max")
    ap.add_argument("--no-icount", action="store_true")
    ap.add_argument("--script", default="perf-check", help="pmuvisor.run= script")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    args = ap.parse_args()
    if args.log:
        per = {}
        with open(args.log, errors="replace") as f:
            for ln in f:
                m = re.match(r"^\[([^\]\s]+)\] ?(.*)$", ln.rstrip("\n"))
                if m:
                    per.setdefault(m.group(1), []).append(m.group(2))
        for g, lines in per.items():
            print(f"{g}: {summary(parse(lines))}")
        return 0
    if not args.native:
        ap.error("--native or --log")
    qargs = ["-smp", args.smp, "-cpu", args.cpu] + ([] if args.no_icount else
                                                   ["-icount", "shift=0"])
    for i in range(args.repeat):
        info = run_native(args.build, qargs, f"console=hvc0 earlycon=sbi "
                          f"pmuvisor.run={args.script}")
        print(f"native #{i + 1} ({' '.join(qargs)}, {info['wall']:.1f} s wall): {summary(info)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
