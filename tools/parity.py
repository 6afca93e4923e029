#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""perf in a guest next to perf natively: the same commands, the same kernel and initramfs.

usage: parity.py [--update FILE] [--smp N] [--build DIR]

Boots build/linux/Image + initramfs.cpio with the linux-shell configuration's bootargs twice on the
same QEMU shape (`-M virt -cpu max -smp 2 -icount shift=0`, `-m 1G`): natively (OpenSBI runs the
kernel) and as the only guest of pmuvisor (2 vCPUs, 1 GiB: QEMU gets the configuration's
`-m 3G`), types each command of COMMANDS at the BusyBox
prompt and compares what perf printed. Prints a Markdown table; --update FILE replaces the text
between `<!-- parity:begin -->` and `<!-- parity:end -->` in FILE with it (`make parity` does this
to docs/linux-guest.md). Exit status 1 if a row is "broken" (perf failed or printed nothing usable
on either side). Every QEMU run has a timeout: 120 s for the boot and for each command (--timeout);
after a command timed out, the rest of that side is not run.
"""
import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_linux  # noqa: E402
import mkbundle  # noqa: E402
import qemu  # noqa: E402
import run  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPT = re.compile(r"# (?:\x1b\[6n)?$")
RE_PREFIX = re.compile(r"^\[shell\] ", re.M)
FW = "r8000000000000005,r8000000000000006,r8000000000000007"

# (what a user wants, command, kind): "stat" compares the counts of `perf stat -x ,`, "stat~" too
# but small counts that vary from boot to boot natively are only asked to be counted on both
# sides; "record" compares the sample count and the top symbols of `perf report`, "record-k"
# wants kernel symbols. Recordings come first: natively on QEMU 10 a perf record that follows
# other perf runs in the same boot often loses samples (docs/linux-guest.md, sampling).
COMMANDS = [
    ("sampling user instructions, perf report",
     "perf record -e instructions:u -c 100000 -o /tmp/p.data /bin/loop-5m", "record"),
    ("sampling with the default event (cycles), perf report",
     "perf record -o /tmp/p.data /bin/loop-5m", "record"),
    ("sampling user + kernel, kernel symbols",
     "perf record -e instructions -c 20000 -o /tmp/p.data /bin/loop-1m", "record-k"),
    ("user cycles and instructions (loop-1m: 3,000,004)",
     "perf stat -x , -e cycles:u,instructions:u /bin/loop-1m", "stat"),
    ("user instructions, tiny workload (loop-1k: 3,004)",
     "perf stat -x , -e instructions:u /bin/loop-1k", "stat"),
    ("kernel cycles and instructions of a process",
     "perf stat -x , -e cycles:k,instructions:k /bin/loop-1m", "stat"),
    ("default perf stat events", "perf stat -x , /bin/loop-1m", "stat"),
    ("DTLB / ITLB misses (counting)",
     "perf stat -x , -e dTLB-load-misses,dTLB-store-misses,iTLB-load-misses /bin/loop-1m",
     "stat~"),
    ("SBI firmware events, all CPUs", f"perf stat -x , -a -e {FW} /bin/nsleep", "stat~"),
]
# user instructions of the loop workloads (guest-tests/linux/linux.mk)
ANALYTIC = check_linux.analytic_counts()
REPORT = "perf report -i /tmp/p.data --stdio --sort sym 2>/dev/null | grep -v '^#' | grep -m 3 %"


def parse_stat(lines):
    """{event: count or '<not supported>'...} of perf stat -x , output."""
    out = {}
    for ln in lines:
        m = check_linux.RE_STAT_CSV.match(ln)
        if m:
            out[m.group(2)] = int(m.group(1)) if m.group(1).isdigit() else m.group(1)
    return out


def parse_record(lines):
    """(samples, [symbols of perf report, most first]) of a perf record + report."""
    samples = None
    syms = []
    for ln in lines:
        m = re.search(r"\((\d+) samples\)", ln)
        if m:
            samples = int(m.group(1))
        m = re.match(r"\s*[0-9.]+%\s+(\[[.k]\]\s+\S+)", ln)
        if m:
            syms.append(re.sub(r"\s+", " ", m.group(1)))
    return samples, syms


def fmt(v):
    return f"{v:,}" if isinstance(v, int) else str(v)


def stat_cell(stats):
    return "<br>".join(f"{e} {fmt(v)}" for e, v in stats.items()) or "no count"


def compare_stat(kind, ns, gs, want=None):
    """want: the analytic count of every event (user-mode events of a loop workload)."""
    counted = {e: v for e, v in ns.items() if isinstance(v, int)}
    if not counted:
        return "not counted natively either"
    if not all(isinstance(gs.get(e), int) for e in counted):
        return "broken"
    if want is not None:
        off = lambda c: max((abs(v - want) / want * 100 for v in c.values()), default=0)
        g, n = off({e: gs[e] for e in counted}), off(counted)
        if g == 0 or n > 0:
            side = lambda x: "exact" if x == 0 else f"up to {x:+.1f} %"
            return f"analytic {want:,}: guest {side(g)}, native {side(n)}"
    if kind == "stat~":
        return "counted on both" if all(gs[e] > 0 for e, v in counted.items() if v > 0) \
            else "broken"
    # software counts (context switches, page faults: 0 to 2) are not compared in percent
    big = {e: v for e, v in counted.items() if v >= 1000} or counted
    worst = max(abs(gs[e] - v) / max(v, 1) * 100 for e, v in big.items())
    if worst == 0:
        return "same"
    return f"within {worst:.1f} %" if worst <= 5 else f"differs (up to {worst:.0f} %)"


def record_cell(samples, syms):
    return (f"{samples} samples" if samples is not None else "no samples") + \
        "".join(f"<br>`{x}`" for x in syms)


def compare_record(kind, nat, gst):
    (nsamp, nsyms), (gsamp, gsyms) = nat, gst
    if not gsamp or not gsyms:
        return "broken" if nsamp else "no samples natively either"
    if kind == "record-k" and not any(x.startswith("[k]") for x in gsyms):
        return "broken (no kernel symbol)"
    top = "same top symbol" if nsyms and gsyms[0] == nsyms[0] else "top symbol differs"
    return "same" if top == "same top symbol" and gsamp == nsamp else \
        f"{top}; {gsamp} vs {nsamp} samples"


def compare(kind, command, nat, gst):
    """(native cell, guest cell, verdict) of one row."""
    if nat is None or gst is None:
        side = "native" if nat is None else "guest"
        cells = [("timeout / not run" if x is None else
                  stat_cell(parse_stat(x[0])) if kind.startswith("stat") else
                  record_cell(*parse_record(x[0]))) for x in (nat, gst)]
        return cells[0], cells[1], f"broken ({side} timed out)"
    if kind.startswith("stat"):
        ns, gs = parse_stat(nat[0]), parse_stat(gst[0])
        want = None
        workload = command.split("/")[-1]
        if workload in ANALYTIC and ns and all(e.endswith(":u") for e in ns):
            want = ANALYTIC[workload]
        return stat_cell(ns), stat_cell(gs), compare_stat(kind, ns, gs, want)
    nr, gr = parse_record(nat[0]), parse_record(gst[0])
    return record_cell(*nr), record_cell(*gr), compare_record(kind, nr, gr)


def marker(n):
    """What `echo @@@n; command; echo @@@n end rc=$?` prints: the command's output and status."""
    return re.compile(rf"(?m)^(?:\[shell\] )?@@@{n}\n([\s\S]*?)"
                      rf"^(?:\[shell\] )?@@@{n} end rc=(\d+)\n")


def session(what, cmd, args):
    """Boot cmd, type every command of COMMANDS at the shell prompt, one after the other's
    end marker; [(output lines, exit status) or None if it timed out or did not run]."""
    lines = []
    for i, (_, command, kind) in enumerate(COMMANDS):
        if kind.startswith("record"):
            grep = "'\\[k\\]'" if kind == "record-k" else "'%'"
            command += " && " + REPORT.replace("grep -m 3 %", "grep -m 3 " + grep)
        lines.append(f"echo @@@{i}; {command}; echo @@@{i} end rc=$?\n")
    # the prompt, then each command's end: type the next line (the last: exit)
    dialog = list(zip([PROMPT] + [marker(i) for i in range(len(COMMANDS))], lines + ["exit\n"]))

    def progress(ln):
        m = re.match(r"(?:\[shell\] )?@@@(\d+) end rc=(\d+)$", ln)
        if m:
            print(f"parity: {what}: {COMMANDS[int(m.group(1))][1]}: rc {m.group(2)}", flush=True)

    log = os.path.join(args.build, "test-logs", f"parity-{what}.log")
    # a hung guest runs nothing more: each step (the boot, each command) has args.timeout
    qemu.run_process(cmd, args.timeout * (len(dialog) + 1), log, echo=progress,
                     stop_re=re.compile(rf"^(?:\[shell\] )?@@@{len(COMMANDS) - 1} end rc=\d"),
                     dialog=dialog,
                     step_timeout=args.timeout,
                     # natively there is no hypervisor whose hart table could be read
                     elf=None if what == "native" else os.path.join(args.build, "pmuvisor.elf"))
    if dialog[0] is None:
        sys.exit(f"parity: no shell prompt from the {what} boot (log {log})")
    results = []
    for i, got in enumerate(dialog[1:]):
        m = got and marker(i).search(got)
        if not m and None not in results:
            print(f"parity: {what}: {COMMANDS[i][1]}: timeout", flush=True)
        results.append(m and (RE_PREFIX.sub("", m.group(1)).splitlines(), int(m.group(2))))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--update", help="Markdown file whose parity block is replaced")
    ap.add_argument("--smp", default="2")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds for the boot, and for each command")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    args = ap.parse_args()
    os.makedirs(os.path.join(args.build, "test-logs"), exist_ok=True)
    qargs = ["-smp", args.smp, "-icount", "shift=0"]
    bundle = os.path.join(args.build, "bundles", "linux-shell.bundle")
    native_cmd = check_linux.native_cmd(args.build, qargs, mkbundle.bootargs(bundle))
    native = session("native", native_cmd, args)
    guest = session("pmuvisor", qemu.machine_cmd(os.path.join(args.build, "pmuvisor.bin"), bundle,
                                                 qargs + run.dts_mem_args("linux-shell")), args)

    rows = ["| what | command | native | pmuvisor guest | verdict |",
            "| --- | --- | --- | --- | --- |"]
    broken = 0
    for (what, command, kind), nat, gst in zip(COMMANDS, native, guest):
        ncell, gcell, verdict = compare(kind, command, nat, gst)
        broken += verdict.startswith("broken")
        rows.append(f"| {what} | `{command}` | {ncell} | {gcell} | {verdict} |")
    table = "\n".join(rows)
    head = (f"Generated by `make parity` (tools/parity.py) on {time.strftime('%Y-%m-%d')}: QEMU "
            f"`-M virt -cpu max -smp {args.smp} -icount shift=0`, the same Image and "
            "initramfs, natively (`-m 1G`) and as pmuvisor's only guest (2 vCPUs, 1 GiB; "
            f"`{' '.join(run.dts_mem_args('linux-shell'))}`).\n\n")
    print(head + table)
    if args.update:
        with open(args.update) as f:
            doc = f.read()
        new, n = re.subn(r"(<!-- parity:begin -->\n)[\s\S]*?(<!-- parity:end -->)",
                         lambda m: m.group(1) + head + table + "\n" + m.group(2), doc)
        if not n:
            sys.exit(f"parity: no <!-- parity:begin --> ... <!-- parity:end --> in {args.update}")
        with open(args.update, "w") as f:
            f.write(new)
        print(f"parity: {args.update} updated")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
