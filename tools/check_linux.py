#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Host-side checks of Linux guests running perf under pmuvisor (docs/linux-guest.md).

Used by tools/run-tests.py for configurations with a `// test: linux=...` line, and usable on
its own to boot the same Linux guest natively (no hypervisor) and print what perf measured:

    tools/check_linux.py --native [--smp N] [--cpu CPU] [--no-icount] [--script NAME]
    tools/check_linux.py --log build/test-logs/linux-smp2.log   (parse a pmuvisor log)

The guest's /init (guest-tests/linux/init.c) prints `=== <title> ===` before every step; the
machine-readable scripts use `perf stat -x ,` ("<count>,,<event>,...") and
`perf script -F cpu,ip` ("[<cpu>] <hex IP>" per line). Every guest checked gets `steps`: no /init
step printed that it exited with a non-zero status. Check words of `// test: linux=` (space
separated):

    probe          the SBI PMU driver found the counters (PROBE_RES) and the snapshot area
    probe=N        ... with N hardware counters (18 on QEMU; a guest the hypervisor profiles: 17)
    exact          every `perf stat` count of a loop workload equals its analytic count
    approx=P       every such count is >= analytic and <= analytic * (1 + P/100)
    record         every `perf record -e <event>:u -c 100000 loop-5m` of the boot, one by one: the
                   analytic number of samples (5,000,002 user instructions / 100,000 = 50), or
                   down to one less per further CPU of the guest (perf record opens an event per
                   CPU, each with its own period: a move leaves a partial period behind), never
                   more; and every sampled IP inside loop-5m's hot loop (riscv64-linux-gnu-nm
                   symbols; the overflow of the loop's last instruction is taken at loop_end)
    fw=A,B         SBI firmware events A, B (decimal ids: 5 SET_TIMER, 6 IPI_SENT, 7 IPI_RECEIVED)
                   counted > 0 by `perf stat -a -e r80000000000000XX`
    fw-all         all 22 standard firmware events at once, per task (`perf stat fw22`) and
                   system-wide (`fw22a`): every row reads a count, exactly 0 for events the
                   hypervisor never sees (0-3, 14-21), more for SET_TIMER (5) system-wide, and
                   counted 100% of the time (no event left out of the schedule)
    symbols        every `perf record` of BusyBox gzip, and of true at a period of 97 (most of
                   its samples in BusyBox's startup code): `perf report` names its user samples
                   by function, each a function of BusyBox's symbol table (build/linux/busybox,
                   /bin/busybox in the guest), none a bare address or a data object; and
                   `perf script` of gzip's (raw IPs): every user-mode IP inside BusyBox's code
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest_symbols  # noqa: E402
import qemu  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NM = os.environ.get("NM", "riscv64-linux-gnu-nm")
READELF = os.environ.get("READELF", "riscv64-linux-gnu-readelf")

PROBE_RES = [r"riscv-pmu-sbi: 22 firmware and 18 hardware counters",
             r"riscv-pmu-sbi: SBI PMU snapshot detected"]
RE_NO_SSCOF = re.compile(r"riscv-pmu-sbi: Perf sampling/filtering is not supported")
RE_SECTION = re.compile(r"^=== (.*?) ===")
RE_STEP_FAILED = re.compile(r"^\[init\] ('.*'|cmd \d+) exited with -?\d+$")
# the start of a count line, cut before its run time: count, unit, event (seen: "5000002,,"
# and "5000002,,instructions:u")
RE_STAT_CUT = re.compile(r"^[0-9]+(,[^,]*){0,2}$")
RE_STAT_CSV = re.compile(r"^\s*([0-9]+|<not supported>|<not counted>),[^,]*,([^,]+),")
# ... and its time counted, in percent: "<count>,,<event>,<time>,<pct>,,"
RE_STAT_PCT = re.compile(r"^\s*[^,]*,[^,]*,([^,]+),[^,]*,([0-9.]+),")
RE_CPUS = re.compile(r"smp: Brought up \d+ nodes?, (\d+) CPUs?")
RE_IP = re.compile(r"^\s*(?:\[(\d+)\]\s+)?([0-9a-f]+)\s*$")  # perf script -F [cpu,]ip
RE_DONE = re.compile(r"^=== done === \(([0-9.]+) s monotonic\)")
RE_INIT = re.compile(r"^\[init\] pmuvisor\.run=(\S+), started at ([0-9.]+) s monotonic")
RE_CAPTURED = re.compile(r"perf record: Captured and wrote .*\((\d+) samples\)")
# perf script -F cpu,tid,time,ip,sym,symoff,period: "<tid> [<cpu>] <time>: <period> <ip> <sym>";
# a line the console cut before its symbol does not match
RE_SAMPLE = re.compile(r"^\s*(\d+)\s+\[(\d+)\]\s+([0-9.]+):\s+(\d+)\s+([0-9a-f]+)\s+\S")
RE_REPORT_SAMPLES = re.compile(r"^# Samples: (\d+)\s+of event '([^']+)'")
RE_REPORT_IP = re.compile(r"\[\.\]\s+(0x[0-9a-f]+|\S+)")
PERIOD = 100000
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
    """(loop, loop_end) of the recorded workload's ELF, from its symbol table. A sampled IP is
    in the loop if loop <= ip <= loop_end: an overflow on the loop's last instruction (the
    50th sample of loop-5m exactly) is taken with the pc at loop_end, natively too."""
    out = subprocess.run([NM, workload_elf(build)], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    return syms["loop"], syms["loop_end"]


def workload_elf(build):
    return os.path.join(build, "linux", "workloads", RECORD_WORKLOAD + ".elf")


def busybox_symbols(build):
    """Function names of BusyBox's symbol table, as perf in the guest finds it."""
    out = subprocess.run([NM, os.path.join(build, "linux", "busybox")],
                         capture_output=True, text=True, check=True).stdout
    return {p[2] for p in (ln.split() for ln in out.splitlines())
            if len(p) == 3 and p[1] in "tTwW"}


def busybox_code(build):
    """[start, end) of BusyBox's executable segment"""
    vaddr, memsz, _ = guest_symbols.Elf(os.path.join(build, "linux", "busybox")).exec_segments[0]
    return vaddr, vaddr + memsz


def foreign_user_samples(lines, code):
    """The `perf script` sample lines whose user IP lies outside BusyBox's code; None if the
    lines hold no user sample at all"""
    ips = [(ln.strip(), int(m.group(5), 16)) for ln in lines if (m := RE_SAMPLE.match(ln))]
    users = [(ln, ip) for ln, ip in ips if ip < 1 << 63]
    if not users:
        return None
    return [ln for ln, ip in users if not code[0] <= ip < code[1]]


def map_base(build):
    """perf report prints an unresolved IP relative to its mapping: ip - (vaddr - offset) of
    the workload's first LOAD segment."""
    out = subprocess.run([READELF, "-lW", workload_elf(build)], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            return int(f[2], 16) - int(f[1], 16)
    return 0


# ---------------------------------------------------------------- parsing guest output
def parse(lines):
    """Console lines of one Linux guest (prefix removed) -> dict of what perf printed."""
    info = {"sections": {}, "stat": {}, "stat_pct": {}, "done": None, "init": None,
            "lines": lines, "recordings": [], "cpus": 1}
    cur = cut = None
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
        m = RE_CPUS.search(ln)
        if m:
            info["cpus"] = int(m.group(1))
            continue
        m = RE_SECTION.match(ln)
        if m:
            cur = m.group(1)
            info["sections"][cur] = []
            continue
        if cur is None:
            continue
        info["sections"][cur].append(ln)
        if cur.startswith("perf stat "):
            # the console may cut a line the guest wrote in pieces (docs/linux-guest.md): a
            # count line is taken whole again from its start and the guest's next line
            if cut is not None and RE_STAT_CSV.match(cut + ln):
                ln, cut = cut + ln, None
            elif not RE_STAT_CSV.match(ln) and RE_STAT_CUT.match(ln):
                cut = ln
                continue
            else:
                cut = None
        m = RE_STAT_CSV.match(ln)
        if m and cur.startswith("perf stat "):
            wl = cur.split()[2]
            val = int(m.group(1)) if m.group(1).isdigit() else m.group(1)
            info["stat"][(wl, m.group(2))] = val
            mp = RE_STAT_PCT.match(ln)
            if mp:
                info["stat_pct"][(wl, mp.group(1))] = float(mp.group(2))
        elif cur.startswith("perf script "):
            m = RE_IP.match(ln)
            if m:
                info["sections"][cur + " ips"] = info["sections"].get(cur + " ips", []) + [ln]
    info["recordings"] = recordings(info["sections"])
    return info


def recordings(sections):
    """Every `perf record` of the boot, in order: {title, event, samples, ips, cpus, syms, rel}.
    samples: what perf record said it captured; ips: from the `perf script` section that
    follows (raw IPs), else the addresses `perf report` listed (rel: relative to the mapping,
    see map_base); cpus: the CPUs of the samples perf script named (None: not named); syms:
    symbol names perf report listed instead (perf built with libelf)."""
    out = []
    titles = list(sections)
    for k, title in enumerate(titles):
        if not title.startswith("perf record ") or title.endswith(" ips"):
            continue
        words = title.split()
        rec = {"title": title, "event": words[2] if len(words) > 3 else "instructions:u",
               "workload": words[-1] if not words[-1].startswith("#") else words[-2],
               "samples": None, "ips": None, "cpus": None, "syms": [], "rel": False}
        for ln in sections[title]:
            m = RE_CAPTURED.search(ln)
            if m:
                rec["samples"] = int(m.group(1))
        nxt = titles[k + 1] if k + 1 < len(titles) else ""
        if nxt.startswith("perf script "):
            got = [RE_IP.match(ln).groups() for ln in sections.get(nxt + " ips", [])]
            rec["ips"] = [int(ip, 16) for _, ip in got]
            rec["cpus"] = {int(c) for c, _ in got if c is not None} or None
        elif nxt.startswith("perf report "):
            addrs = []
            for ln in sections[nxt]:
                if ln.startswith("#"):
                    continue
                m = RE_REPORT_IP.search(ln)
                if m and m.group(1).startswith("0x"):
                    addrs.append(int(m.group(1), 16))
                elif m:
                    rec["syms"].append(m.group(1))
            rec["ips"] = addrs
            rec["rel"] = True
        out.append(rec)
    return out


def per_cpu_floor(want, cpus):
    """The fewest samples of a recording due `want` when the task may run on `cpus` CPUs:
    perf record counts on one event per CPU, each with its own period, and each CPU's event
    keeps the partial period the task leaves behind there, so at most one less per further CPU.
    Those perf script names are not all: a CPU the task left before a full period shows none."""
    return want - (max(cpus, 1) - 1)


def judge_recording(rec, lo, hi, want, base=0, cpus=1):
    """Problems of one recording of a user-mode event (empty list: good). base: map_base();
    cpus: the guest's CPUs. Samples: want, down to per_cpu_floor(), never more."""
    bad = []
    if rec["rel"]:
        lo, hi = lo - base, hi - base
    n = rec["samples"]
    ran_on = max(cpus, len(rec["cpus"] or ()))
    if n is None:
        bad.append("perf record printed no sample count")
    elif not per_cpu_floor(want, ran_on) <= n <= want:
        bad.append(f"{n} samples, want {want}" + (
            f" (or down to {per_cpu_floor(want, ran_on)} on {ran_on} CPUs)" if ran_on > 1 else ""))
    outside = [ip for ip in rec["ips"] or [] if not lo <= ip <= hi]
    if outside:
        bad.append(f"{len(outside)} IPs outside loop..loop_end [{lo:#x}, {hi:#x}]: " +
                   ", ".join(f"{ip:#x}" for ip in outside[:6]))
    wrong = [s for s in rec["syms"] if s not in ("loop", "loop_end")]
    if wrong:
        bad.append("samples in " + ", ".join(sorted(set(wrong))[:6]))
    if n and not rec["ips"] and not rec["syms"]:
        bad.append("no sampled IP listed")
    return bad


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
        parts.append("record " + "/".join(f"{r['event']} {r['samples']}"
                                          for r in info["recordings"]) + " samples")
    return "; ".join(parts) + "; " + boot_line(info)


# ---------------------------------------------------------------- native reference
def native_cmd(build, qemu_args, bootargs):
    """QEMU command booting the guest kernel + initramfs natively, same machine shape."""
    return qemu.machine_cmd(os.path.join(build, "linux", "Image"),
                            os.path.join(build, "linux", "initramfs.cpio"), qemu_args, bootargs)


def run_native(build, qemu_args, bootargs, log_path=None, timeout=60):
    r = qemu.run_process(native_cmd(build, qemu_args, bootargs), timeout, log_path)
    info = parse(r.lines)
    info["wall"] = r.seconds
    return info


# ---------------------------------------------------------------- the checks
def parse_words(words):
    spec = {}
    for w in words:
        key, _, val = w.partition("=")
        if key not in ("probe", "exact", "approx", "record", "fw", "fw-all", "symbols"):
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

    # /init says which of its steps exited with a non-zero status
    failed = [ln for ln in lines if RE_STEP_FAILED.match(ln)]
    if failed:
        res.fail(f"{name}:linux:steps", "; ".join(failed[:4]))
    else:
        res.ok(f"{name}:linux:steps", verbose)

    if "probe" in spec:
        probe = PROBE_RES
        if spec["probe"]:  # probe=N: N hardware counters offered (a profiled guest: one less)
            probe = [rx.replace("18 hardware", f"{int(spec['probe'])} hardware") for rx in probe]
        for rx in probe:
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
        # every event of every loop workload the guest ran perf stat on: a count that did not
        # come out whole (a line cut on the console) fails instead of going unchecked
        ran = {sec.split()[2] for sec in info["sections"]
               if sec.startswith("perf stat ") and len(sec.split()) > 2 and sec.split()[2] in analytic}
        for wl in sorted(ran):
            for ev in sorted({e for (_, e) in stats}):
                if (wl, ev) not in stats:
                    lines_of = "; ".join(info["sections"][f"perf stat {wl}"][:4])
                    res.fail(f"{name}:linux:{kind}:{wl}:{ev}",
                             f"no count of {ev} in perf's output: {lines_of}{hint}")
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
        lo, hi = loop_range(build)
        want = analytic_counts()[RECORD_WORKLOAD] // PERIOD
        recs = [r for r in info["recordings"]
                if r["event"].endswith(":u") and r["workload"] == RECORD_WORKLOAD]
        if not recs:
            res.fail(f"{name}:linux:record", "the guest ran no perf record of a :u event" + hint)
        for i, rec in enumerate(recs):
            cname = f"{name}:linux:record-{i + 1}-{rec['event']}"
            bad = judge_recording(rec, lo, hi, want, map_base(build), info["cpus"])
            if bad:
                res.fail(cname, "; ".join(bad) + hint)
            else:
                res.ok(cname, verbose)

    if "fw" in spec:
        for ev in [int(x) for x in spec["fw"].split(",") if x]:
            raw = f"r{(2 << 62) | ev:016x}"
            cname = f"{name}:linux:fw-{FW_NAMES.get(ev, ev)}"
            vals = [v for (wl, e), v in info["stat"].items()
                    if wl == "fw" and e == raw]
            if not vals:
                res.fail(cname, f"no perf stat count of {raw}")
            elif all(isinstance(v, int) and v > 0 for v in vals):
                res.ok(cname, verbose)
            else:
                res.fail(cname, f"{raw} counted {vals[0]}")

    if "fw-all" in spec:
        # what the hypervisor never sees (the host's misaligned and access faults, HFENCE,
        # which a guest without the H extension cannot ask for) reads 0; SET_TIMER counts
        # while counting system-wide
        never = set(range(4)) | set(range(14, 22))
        for wl in ("fw22", "fw22a"):
            for ev in range(22):
                raw = f"r{(2 << 62) | ev:016x}"
                cname = f"{name}:linux:{wl}-{ev}"
                val = info["stat"].get((wl, raw))
                pct = info["stat_pct"].get((wl, raw))
                if val is None:
                    res.fail(cname, f"no perf stat row of {raw}")
                elif not isinstance(val, int):
                    res.fail(cname, f"{raw} read {val}")
                elif pct != 100.0:
                    res.fail(cname, f"{raw} counted {pct}% of the time")
                elif ev in never and val:
                    res.fail(cname, f"{raw} counted {val}, where the hypervisor sees none")
                elif wl == "fw22a" and ev == 5 and not val:
                    res.fail(cname, f"{raw} (SET_TIMER) counted 0 system-wide")
                else:
                    res.ok(cname, verbose)

    if "symbols" in spec:
        recs = [r for r in info["recordings"] if r["workload"] in ("true", "gzip")]
        known = busybox_symbols(build) if recs else set()
        for wl in ("true", "gzip"):
            if not any(r["workload"] == wl for r in recs):
                res.fail(f"{name}:linux:symbols", f"the guest ran no perf record of {wl}")
        nth = {}
        for rec in recs:
            nth[rec["workload"]] = nth.get(rec["workload"], 0) + 1
            cname = f"{name}:linux:symbols-{nth[rec['workload']]}-{rec['workload']}"
            bad = [f"{len(rec['ips'])} samples by address only: " +
                   ", ".join(f"{ip:#x}" for ip in rec["ips"][:4])] if rec["ips"] else []
            if not rec["syms"]:
                bad.append("perf report named no user function")
            elif not set(rec["syms"]) <= known:
                bad.append("not BusyBox functions: " +
                           ", ".join(sorted(set(rec["syms"]) - known)[:6]))
            if bad:
                res.fail(cname, "; ".join(bad))
            else:
                res.ok(cname, verbose)
        # the raw IPs behind that report: a wrong name is then told from a wrong sample
        cname = f"{name}:linux:samples-gzip-in-busybox"
        code = busybox_code(build)
        bad = foreign_user_samples(info["sections"].get("perf script default gzip", []), code)
        if bad is None:
            res.fail(cname, "perf script of the gzip recording printed no user sample")
        elif bad:
            maps = [ln.strip() for ln in info["sections"]["perf script default gzip"]
                    if "PERF_RECORD_MMAP" in ln and "busybox" in ln]
            res.fail(cname, f"{len(bad)} user IPs outside BusyBox's code "
                     f"[{code[0]:#x}, {code[1]:#x}): " + "; ".join(bad[:4] + maps[:2]))
        else:
            res.ok(cname, verbose)

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
