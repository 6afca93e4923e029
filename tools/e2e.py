#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""What profiling costs a workload in a guest, next to bare metal (`make bench-linux`).

usage: e2e.py [--update FILE] [--smp 1,2] [--workloads loop,gzip] [--configs C,...]
              [--repeat N] [--jobs N] [--timeout S] [--build DIR] [--json FILE] [--breakdown]

Boots build/linux/Image + initramfs.cpio natively (OpenSBI runs the kernel) and as the only
guest of pmuvisor (as many vCPUs as harts: 1 on 1, 2 on 2; on 2 harts also with exclusive
counting off, NOEXCL), on QEMU `-M virt -cpu max -m 1G -icount shift=0,sleep=off -seed 1`, and
times a fixed workload inside the guest with /bin/timeit (guest-tests/linux/init.c:
CLOCK_MONOTONIC around fork + exec + wait). Under -icount shift=0 a nanosecond of virtual time
is one instruction executed by the machine, hypervisor and firmware included, so elapsed time
is exact and the same in every run of the same boot.

Workloads (WORKLOADS): loop-100m (100,000,000 user instructions) and BusyBox gzip of a 400 kB
text file /bin/mkdata writes (the same bytes every time). Configurations (CONFIGS): perf stat
with 2 and 6 events, perf record with fixed sample periods giving about 1,000 and 10,000
samples, perf record -F 4000, and -g. Every configuration of every workload is its own boot,
which runs the workload once to warm up, once alone, then once under perf: natively on QEMU 10 a
perf record that follows other perf runs in a boot can lose its samples (docs/linux-guest.md),
and a fresh boot makes each row independent of the others. overhead = elapsed / alone - 1 (the
alone run of the same boot); per sample = (elapsed - alone) / samples perf record captured.

Every boot runs --repeat times (default 2); a figure that differs between repeats is flagged in
the table and named on stderr (under -icount with sleep=off and a fixed -seed a boot is
deterministic: repeats are identical). Prints the tables; --update FILE replaces the text
between `<!-- e2e:begin -->` and `<!-- e2e:end -->` in FILE with them (`make bench-linux` does
this to docs/performance.md). The images are copied to BUILD/e2e/inputs first (a rebuild while
the script runs changes nothing). Writes BUILD/e2e/results.json (every run's figures, commands
and status) and the console logs BUILD/e2e/<run>-<repeat>.log. Each QEMU run has a timeout
(--timeout, default 300 s); at most --jobs (default: the host's cores) run at once: 120 boots,
about 8 min on 2 cores. Exit status 1 if a run failed (timeout, no figure, a command that
failed) or a figure varied between repeats.

--breakdown instead boots the loop workload's BREAKDOWN rows once more each, natively and in
the guest, with QEMU's execution trace (tools/tbtrace.py), and prints where the instructions of
the perf run go, per sample, minus those of the alone run (tools/e2e_breakdown.py); --update
replaces the `e2e-breakdown` block. About 20 min on 2 cores.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_linux  # noqa: E402
import mkbundle  # noqa: E402
import qemu  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QARGS = ["-cpu", "max", "-m", "1G", "-icount", "shift=0,sleep=off", "-seed", "1"]
BOOTARGS = "console=hvc0 earlycon=sbi pmuvisor.run=cmds"
GUEST_MEM = "0x0 0x80000000 0x0 0x10000000"  # 256 MiB
TIMEIT = "/bin/timeit"

# name: (what, command timed, commands before it, sample periods (about 1,000 / 10,000))
# The periods are the default event's count (cycles, user + kernel) of the workload alone
# divided by 1,000 and 10,000, rounded: loop-100m 100.7 M, gzip 400 kB 98 M (perf stat).
WORKLOADS = {
    "loop": ("loop-100m", "/bin/loop-100m", [], (100000, 10000)),
    "gzip": ("BusyBox gzip -c of 400 kB", "-q /bin/gzip -c /tmp/data",
             ["/bin/mkdata /tmp/data 400000"], (100000, 10000)),
}
STAT6 = "cycles,instructions,dTLB-load-misses,dTLB-store-misses,iTLB-load-misses,r8000000000000005"
REC = "/bin/perf record -o /tmp/perf.data"
# name: (what, perf command before the timed one; {p1k}/{p10k}: the workload's periods)
CONFIGS = {
    "stat2": ("perf stat, 2 events", "/bin/perf stat -x , -e cycles,instructions"),
    "stat6": ("perf stat, 6 events", f"/bin/perf stat -x , -e {STAT6}"),
    "rec1k": ("perf record -c, ~1,000 samples", REC + " -c {p1k}"),
    "rec10k": ("perf record -c, ~10,000 samples", REC + " -c {p10k}"),
    "recF": ("perf record -F 4000", REC + " -F 4000"),
    "recg": ("perf record -g -c, ~10,000 samples", REC + " -g -c {p10k}"),
}
SIDES = ("native", "guest")
# On more than one hart, the guest again with the core's exclusive counting off (every QEMU
# workaround but other-harts: docs/quirks.md), to show what exclusive counting costs; its
# counts then include the other hart's instructions
NOEXCL = "guest-noexcl"
NOEXCL_QUIRKS = "pmu-quirks=stale-deadline,event-map,bias,tlb-overflow,near-top"


RE_PREFIX = re.compile(r"^\[e2e\] ?")
RE_CMD = re.compile(r"^=== cmd (\d+) ===")
RE_TIME = re.compile(r"^\[timeit\] (\d+) ns, status (\d+):")
RE_THROTTLE = re.compile(r"perf: interrupt took too long .* to (\d+)")
RE_DONE = re.compile(r"^=== done ===")
RE_LCOFI = re.compile(r"^pmuvisor: guest e2e vcpu \d+: (\d+) counter overflows .*?(\d+) LCOFI "
                      r"raised")


def sides(smp):
    return SIDES + ((NOEXCL,) if smp > 1 else ())


def rel(path):
    return os.path.relpath(path, REPO)


def commit_name():
    """HEAD's short hash, and whether the tree differs from it (docs/ aside)."""
    def git(*a):
        return subprocess.run(["git", "-C", REPO] + list(a), capture_output=True,
                              text=True).stdout.strip()
    dirty = git("status", "--porcelain", "--", ".", ":!docs")
    return f"`{git('rev-parse', '--short', 'HEAD')}`" + (" with uncommitted changes" if dirty
                                                         else "")


def encode(command):
    """A command as one pmuvisor.cmd= word for init.c's run_cmds(): ',' for a space."""
    return command.replace("%", "%25").replace(",", "%2C").replace(" ", ",")


def boot_commands(wl, cfg):
    """The commands of one boot: set-up, warm-up, alone, under perf."""
    _, cmd, setup, (p1k, p10k) = WORKLOADS[wl]
    timed = f"{TIMEIT} {cmd}"
    perf = CONFIGS[cfg][1].format(p1k=p1k, p10k=p10k)
    return setup + [timed, timed, f"{perf} {timed}"]


def perf_command(wl, cfg):
    """The configuration's command as a user types it (for the table)."""
    _, cmd, _, (p1k, p10k) = WORKLOADS[wl]
    perf = CONFIGS[cfg][1].format(p1k=p1k, p10k=p10k).replace("/bin/", "")
    return f"{perf} {cmd.replace('-q ', '').replace('/bin/', '')}"


def guest_dts(path, smp, bootargs, inp):
    """The configuration DT of the guest: one guest, smp vCPUs, free to move between harts."""
    with open(path, "w") as f:
        f.write(f"""/dts-v1/;
/* generated by tools/e2e.py */
/ {{
\tcompatible = "pmuvisor,config";
\tguests {{
\t\te2e {{
\t\t\tvcpus = <{smp}>;
\t\t\tmemory = <{GUEST_MEM}>;
\t\t\timage = "{rel(inp['Image'])}";
\t\t\tinitrd = "{rel(inp['initramfs.cpio'])}";
\t\t\tbootargs = "{bootargs}";
\t\t}};
\t}};
}};
""")


# What the runs boot, copied from the build when the script starts, so that a rebuild while it
# runs changes no figure
INPUTS = {"Image": "linux/Image", "initramfs.cpio": "linux/initramfs.cpio",
          "vmlinux": "linux/vmlinux", "pmuvisor.bin": "pmuvisor.bin",
          "pmuvisor.elf": "pmuvisor.elf"}


def copy_inputs(build, out_dir):
    """{name: path} of the copies of INPUTS in out_dir/inputs."""
    dst = os.path.join(out_dir, "inputs")
    os.makedirs(dst, exist_ok=True)
    out = {}
    for name, src in INPUTS.items():
        out[name] = os.path.join(dst, name)
        shutil.copyfile(os.path.join(build, src), out[name])
    return out


def run_command(side, smp, wl, cfg, inp, out_dir):
    """QEMU command line of one boot (the guest's bundle is built here)."""
    bootargs = BOOTARGS + "".join(f" pmuvisor.cmd={encode(c)}" for c in boot_commands(wl, cfg))
    qargs = ["-smp", str(smp)] + QARGS
    if side == "native":
        return qemu.machine_cmd(inp["Image"], inp["initramfs.cpio"], qargs, bootargs)
    name = f"guest{smp}-{wl}-{cfg}"
    dts = os.path.join(out_dir, name + ".dts")
    bundle = os.path.join(out_dir, name + ".bundle")
    guest_dts(dts, smp, bootargs, inp)
    mkbundle.build(dts, bundle)
    return qemu.machine_cmd(inp["pmuvisor.bin"], bundle, qargs,
                            append=NOEXCL_QUIRKS if side == NOEXCL else None)


def parse(lines, ncmds):
    """Figures of one boot's console: the alone and perf runs' elapsed ns, samples, perf stat
    counts, throttling, LCOFIs; 'error' names what is missing."""
    res = {"alone": None, "elapsed": None, "samples": None, "stat": {}, "throttled": None,
           "overflows": 0, "lcofi": 0, "error": None}
    cmd, done, times = 0, False, {}
    for raw in lines:
        m = RE_LCOFI.match(raw)
        if m:
            res["overflows"] += int(m.group(1))
            res["lcofi"] += int(m.group(2))
            continue
        ln = RE_PREFIX.sub("", raw)
        m = RE_CMD.match(ln)
        if m:
            cmd = int(m.group(1))
            continue
        if RE_DONE.match(ln):
            done = True
        m = RE_TIME.match(ln)
        if m:
            times[cmd] = (int(m.group(1)), int(m.group(2)))
        m = check_linux.RE_CAPTURED.search(ln)
        if m and cmd == ncmds:
            res["samples"] = int(m.group(1))
        m = RE_THROTTLE.search(ln)
        if m:
            res["throttled"] = int(m.group(1))
        m = check_linux.RE_STAT_CSV.match(ln)
        if m and cmd == ncmds:
            res["stat"][m.group(2)] = int(m.group(1)) if m.group(1).isdigit() else m.group(1)
    alone, perf = times.get(ncmds - 1), times.get(ncmds)
    if alone and perf:
        res["alone"], res["elapsed"] = alone[0], perf[0]
    if not done:
        res["error"] = "no '=== done ===' from /init"
    elif not alone or not perf:
        res["error"] = "no [timeit] line of the alone or the perf run"
    elif alone[1] or perf[1]:
        res["error"] = f"the workload exited with {alone[1] or perf[1]}"
    elif not res["stat"] and res["samples"] is None:
        res["error"] = "neither perf stat's counts nor perf record's samples"
    elif any(not isinstance(v, int) for v in res["stat"].values()):
        res["error"] = "perf stat counted nothing for " + ", ".join(
            f"{k} ({v})" for k, v in res["stat"].items() if not isinstance(v, int))
    return res


# ---------------------------------------------------------------- the table
def fmt_m(ns):
    return f"{ns / 1e6:,.3f} M"


def overhead(r):
    return r["elapsed"] / r["alone"] - 1


def per_sample(r):
    return (r["elapsed"] - r["alone"]) / r["samples"] if r.get("samples") else None


def side_cells(r, cfg):
    """elapsed, overhead, samples, per sample of one side of a row."""
    if r is None:
        return ["not run"] * 4
    if r.get("error"):
        return ["FAILED"] + [""] * 3
    var = " (varies)" if r.get("varies") else ""
    samples = "-" if cfg.startswith("stat") else (f"{r['samples']:,}" if r["samples"] is not None
                                                  else "none")
    ps = per_sample(r)
    return [fmt_m(r["elapsed"]) + var, f"{overhead(r) * 100:+.2f} %", samples,
            f"{ps:,.0f}" if ps is not None else "-"]


def verdict(nat, gst, cfg):
    """The targets: guest overhead within 1 point of native's; per sample no dearer."""
    if not nat or not gst or nat.get("error") or gst.get("error"):
        return "-", "-"
    diff = (overhead(gst) - overhead(nat)) * 100
    out = [f"{diff:+.2f}"]
    ok = diff <= 1
    ps_n, ps_g = per_sample(nat), per_sample(gst)
    if ps_n is not None and ps_g is not None:
        out.append(f"{ps_g / ps_n:.2f}")
        ok = ok and ps_g <= ps_n
        few = min(nat["samples"], gst["samples"]) * 2 < max(nat["samples"], gst["samples"])
        if few:
            side = "native" if nat["samples"] < gst["samples"] else "guest"
            return " / ".join(out), f"not comparable: {side} lost samples"
    elif not cfg.startswith("stat"):
        out.append("-")
        ok = False
    return " / ".join(out), "met" if ok else "**not met**"


def table(results, smp, workloads, configs):
    """One machine shape's rows: native and guest side by side (and, on more than one hart,
    the guest without exclusive counting)."""
    extra = smp > 1
    head = ("| workload | configuration | native: elapsed | overhead | samples | per sample "
            "| guest: elapsed | overhead | samples | per sample | guest - native: points "
            "(/ per-sample ratio) | target |")
    if extra:
        head += " exclusive counting off: overhead | per sample |"
    rows = [head, "|" + " --- |" * 2 + " ---: |" * 9 + " --- |" + " ---: |" * 2 * extra]
    for wl in workloads:
        rng = []
        for side in sides(smp):
            vals = [r["alone"] for k, r in results.items()
                    if k.startswith(f"{side}{smp}-{wl}-") and not r.get("error")]
            rng.append((fmt_m(min(vals)) + (f" .. {fmt_m(max(vals))}"
                                            if max(vals) != min(vals) else "")) if vals else "-")
        rows.append(f"| {WORKLOADS[wl][0]} | alone | {rng[0]} | | | | {rng[1]} | | | | | |" +
                    (f" {rng[2]} | |" if extra else ""))
        for cfg in configs:
            nat, gst, off = (results.get(f"{side}{smp}-{wl}-{cfg}")
                             for side in SIDES + (NOEXCL,))
            row = (f"| | `{perf_command(wl, cfg)}` | " +
                   " | ".join(side_cells(nat, cfg) + side_cells(gst, cfg)) + " | " +
                   " | ".join(verdict(nat, gst, cfg)) + " |")
            if extra:
                row += " " + " | ".join(side_cells(off, cfg)[1::2]) + " |"
            rows.append(row)
    return "\n".join(rows)


def merge_repeats(runs):
    """{run: result} of one repeat from the repeats of each run; 'varies' where they differ."""
    out = {}
    for name, reps in runs.items():
        ok = [r for r in reps if not r.get("error")]
        if not ok:
            out[name] = reps[0]
            continue
        r = dict(ok[0])
        keys = ("alone", "elapsed", "samples")
        seen = {k: sorted({x[k] for x in ok if x[k] is not None}) for k in keys}
        r["varies"] = {k: v for k, v in seen.items() if len(v) > 1} or None
        r["repeats"] = len(ok)
        if len(ok) < len(reps):
            r["error"] = next(x["error"] for x in reps if x.get("error"))
        out[name] = r
    return out


def notes(results, smp):
    """Facts the table does not show: throttling, variation, failures."""
    out, throttled = [], []
    for name, r in sorted(results.items()):
        if not name.startswith(tuple(f"{side}{smp}-" for side in sides(smp))):
            continue
        if r.get("throttled"):
            throttled.append(f"`{name}` {r['throttled']:,}")
        if r.get("varies"):
            out.append(f"- `{name}` varied between repeats: " + "; ".join(
                f"{k} {', '.join(f'{v:,}' for v in vals)}" for k, vals in r["varies"].items()))
        if r.get("error"):
            out.append(f"- `{name}`: FAILED: {r['error']}")
    if throttled:
        out.append("- perf throttled (`perf: interrupt took too long`, "
                   "kernel.perf_event_max_sample_rate lowered to): " + ", ".join(throttled) +
                   ".")
    return out


def document(results, args, smps, workloads, configs):
    commit = args.commit
    ver = subprocess.run([qemu.QEMU, "--version"], capture_output=True,
                         text=True).stdout.split("\n")[0]
    parts = [f"Generated by `make bench-linux` (tools/e2e.py) on "
             f"{datetime.date.today().isoformat()}, commit {commit}, {ver}, `-M virt "
             f"{' '.join(QARGS)}`; each figure from {args.repeat} boot(s), identical unless "
             "marked. Elapsed time in millions of instructions (= ms); overhead = elapsed / "
             "alone - 1; per sample = (elapsed - alone) / samples, in instructions; target: the "
             "guest's overhead no more than 1 point above native's and, for perf record, its "
             "per-sample cost no higher than native's."]
    for smp in smps:
        shape = "1 hart, the guest 1 vCPU" if smp == 1 else f"{smp} harts, the guest {smp} vCPUs"
        parts.append(f"**-smp {smp}**: {shape}.\n\n" +
                     table(results, smp, workloads, configs))
        n = notes(results, smp)
        if n:
            parts.append("\n".join(n))
    return "\n\n".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--update", help="Markdown file whose e2e block is replaced")
    ap.add_argument("--smp", default="1,2", help="machine shapes: harts (= guest vCPUs)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--repeat", type=int, default=2, help="boots of each run (default 2)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=300, help="seconds per QEMU run")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--json", help="results file (default BUILD/e2e/results.json)")
    ap.add_argument("--breakdown", action="store_true",
                    help="instead: trace where the instructions of some rows go")
    args = ap.parse_args()
    smps = [int(s) for s in args.smp.split(",")]
    workloads = args.workloads.split(",")
    configs = args.configs.split(",")
    for w in workloads:
        if w not in WORKLOADS:
            ap.error(f"unknown workload {w!r} ({', '.join(WORKLOADS)})")
    for c in configs:
        if c not in CONFIGS:
            ap.error(f"unknown configuration {c!r} ({', '.join(CONFIGS)})")
    args.build = os.path.abspath(args.build)
    for need in INPUTS.values():
        if not os.path.isfile(os.path.join(args.build, need)):
            sys.exit(f"e2e.py: {rel(os.path.join(args.build, need))} not found (make all)")
    out_dir = os.path.join(args.build, "e2e")
    os.makedirs(out_dir, exist_ok=True)
    # what the copies are built from (make built them just before): the tree may change while
    # the boots run
    args.commit = commit_name()
    inp = copy_inputs(args.build, out_dir)
    if args.breakdown:
        import e2e_breakdown
        return e2e_breakdown.breakdown(args, inp)

    todo, meta = {}, {}
    for smp in smps:
        for side in sides(smp):
            for wl in workloads:
                for cfg in configs:
                    try:
                        cmd = run_command(side, smp, wl, cfg, inp, out_dir)
                    except mkbundle.BundleError as e:
                        sys.exit(f"e2e.py: mkbundle: {e}")
                    for rep in range(1, args.repeat + 1):
                        name = f"{side}{smp}-{wl}-{cfg}#{rep}"
                        todo[name] = (cmd, os.path.join(out_dir, name.replace("#", "-") + ".log"))
                        meta[name] = (f"{side}{smp}-{wl}-{cfg}", len(boot_commands(wl, cfg)))
    runs = {}

    def done(name, result):
        key, ncmds = meta[name]
        r = parse(result.lines, ncmds)
        if result.timed_out:
            r["error"] = f"timed out after {args.timeout:g} s"
        r.update(seconds=round(result.seconds, 1), command=todo[name][0])
        runs.setdefault(key, []).append(r)
        fig = (f"alone {r['alone']:,}, under perf {r['elapsed']:,}" if r["alone"] else "")
        if r["samples"] is not None:
            fig += f", {r['samples']:,} samples"
        print(f"e2e.py: {name}: {r['error'] or fig} ({result.seconds:.0f} s, log "
              f"{rel(todo[name][1])})", flush=True)

    print(f"e2e.py: {len(todo)} boots, {args.jobs} at a time", flush=True)
    qemu.run_all(todo, args.timeout, args.jobs, on_done=done)
    results = merge_repeats(runs)
    text = document(results, args, smps, workloads, configs)
    print("\n" + text)
    with open(args.json or os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"), "qemu_args": QARGS, "runs": runs}, f, indent=1)
    bad = [k for k, r in results.items() if r.get("error") or r.get("varies")]
    for k in bad:
        r = results[k]
        print(f"e2e.py: {k}: " + (r.get("error") or f"varies between repeats: {r['varies']}"),
              file=sys.stderr)
    if args.update:
        update(args.update, "e2e", text)
    return 1 if bad else 0


def update(path, mark, text):
    """Replace what stands between <!-- MARK:begin --> and <!-- MARK:end --> in path."""
    with open(path) as f:
        doc = f.read()
    new, n = re.subn(rf"(<!-- {mark}:begin -->\n)[\s\S]*?(<!-- {mark}:end -->)",
                     lambda m: m.group(1) + text + "\n" + m.group(2), doc)
    if not n:
        sys.exit(f"e2e.py: no <!-- {mark}:begin --> ... <!-- {mark}:end --> in {path}")
    with open(path, "w") as f:
        f.write(new)
    print(f"e2e.py: {path}: {mark} block updated")


if __name__ == "__main__":
    sys.exit(main())
