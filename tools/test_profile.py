#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Host test of the guest profiler's host side: stream -> tools/profile.py -> host perf.

usage: test_profile.py --build BUILD --synth PROFILE-SYNTH

profile-synth (core/test/profile_synth.c) writes a stream with the C structs of
core/profile_format.h: samples at PCs inside known functions of the guest kernel
(build/linux/vmlinux; a 3-deep call chain), of a workload (loop-5m, loop-1m) and of BusyBox
(/bin/busybox, which keeps its symbol table), one with no task,
and LOST records. tools/profile.py converts it; the checks read its report, folded stacks and
SVG, and what Debian's perf (linux-perf) makes of the perf.data files: `perf report --stdio`
rows and percentages, `perf script` call chains, the header. One check symbolizes a sample of the
stripped /bin/perf through the build-id lookup in a --debug-dir. Prints TAP as cmocka does, so
tools/run-tests.py counts every check (build/unit/profile-host runs this script). Without
perf on PATH the perf checks are skipped, with the reason, which tools/run-tests.py counts
as failures.
"""
import argparse
import base64
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

# tools/profile.py under another name: `import profile` may find the standard library's
_spec = importlib.util.spec_from_file_location(
    "pmuvisor_profile", os.path.join(os.path.dirname(os.path.abspath(__file__)), "profile.py"))
prof = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prof)

PERIOD = 100000
VSATP_A = 0x8000000000012345
VSATP_B = 0x8000000000022222

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


class Failed(Exception):
    pass


class Skipped(Exception):
    pass


def expect(cond, why):
    if not cond:
        raise Failed(why)


class Env:
    """The files of one run: the stream, the tool's output, perf's answers."""

    def __init__(self, build, synth, tmp):
        self.build = build
        self.synth = synth
        self.tmp = tmp
        self.stream = os.path.join(tmp, "run.profile")
        self.out = os.path.join(tmp, "out")
        self.perf = shutil.which("perf")
        self.lines = []
        self.expect = {}
        self.tool_stdout = ""
        self.converted = False

    def elf_symbol(self, path, name, off):
        """An address off bytes into function name of ELF path, which must resolve to it."""
        elf = prof.load_elf(path)
        for start, end, sym in elf.symbols():
            if sym == name:
                expect(start + off < end, f"{path}: {name} is shorter than {off + 1} bytes")
                expect(elf.lookup(start + off) == name,
                       f"{path}: {name}+{off:#x} resolves to {elf.lookup(start + off)}")
                return start + off
        raise Failed(f"{path} has no function {name} (rebuilt differently?)")

    def run_perf(self, *args):
        if not self.perf:
            raise Skipped("perf not found: install Debian's linux-perf (make deps)")
        expect(self.converted, "no perf.data: the conversion failed")
        env = dict(os.environ, HOME=self.tmp, PAGER="cat")
        p = subprocess.run([self.perf] + list(args), capture_output=True, text=True, env=env,
                           timeout=120)
        expect(p.returncode == 0, f"perf {' '.join(args)}: exit status {p.returncode}\n"
               + p.stderr[-2000:])
        return p.stdout

    def perf_report(self, guest, *extra):
        d = os.path.join(self.out, guest)
        return self.run_perf("report", "-i", os.path.join(d, "perf.data"), "--symfs",
                             os.path.join(d, "root"), "--stdio", *extra)

    def perf_rows(self, guest):
        """{(comm, dso, symbol): percent} of perf report's self overheads."""
        text = self.perf_report(guest, "--no-children", "-g", "none", "--sort", "comm,dso,sym")
        rows = {}
        for ln in text.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+(\S+)\s+(\[.\] \S+)\s*$", ln)
            if m:
                rows[(m.group(2), m.group(3), m.group(4))] = m.group(1)
        return rows, text


def describe(env):
    """The stream's text description and what each guest's report must show."""
    build = env.build
    vmlinux = os.path.join(build, "linux", "vmlinux")
    busybox = os.path.join(build, "debsrc", "busybox-obj", "busybox_unstripped")
    loop5 = os.path.join(build, "linux", "workloads", "loop-5m.elf")
    loop1 = os.path.join(build, "linux", "workloads", "loop-1m.elf")
    for f in (vmlinux, busybox, loop5, loop1, os.path.join(build, "linux", "initramfs.list")):
        expect(os.path.isfile(f), f"{f} missing: build the Linux guest first (make linux-guest)")
    k = {n: env.elf_symbol(vmlinux, n, o) for n, o in (
        ("arch_cpu_idle", 2), ("default_idle_call", 0x14), ("do_idle", 0x62),
        ("cpu_startup_entry", 0x14), ("schedule", 0xc))}
    u = {n: env.elf_symbol(busybox, n, o) for n, o in (
        ("evaltree", 0xc), ("ash_main", 0x10), ("run_applet_and_exit", 0x10),
        ("busybox_main", 0x3c))}
    loop = env.elf_symbol(loop5, "loop", 0)
    loop_1m = env.elf_symbol(loop1, "loop", 4)
    lines = [f"header 2 0x1 0 {PERIOD}", "guest 0 2 alpha", "guest 1 1 beta"]
    t = 1000

    def sample(guest, vcpu, hart, mode, flags, pid, comm, pc, vsatp, chain=()):
        nonlocal t
        t += 1000
        lines.append(f"sample {t} {guest} {vcpu} {hart} {mode} {flags} {pid} {pid} {pc:#x} "
                     f"{vsatp:#x} {comm} " + " ".join(f"{a:#x}" for a in chain))

    # alpha: 10 samples of loop-5m in loop, 6 of the idle task 4 frames deep (3 return
    # addresses), 4 of sh (BusyBox) in evaltree; 20 in all
    for i in range(10):
        sample(0, 0, 0, 0, 1, 42, "loop-5m", loop + 4 * (i % 3), VSATP_A)
    for i in range(6):
        sample(0, 1, 1, 1, 1, 0, "swapper/1", k["arch_cpu_idle"], 0,
               [k["default_idle_call"], k["do_idle"], k["cpu_startup_entry"]])
        if i == 2:
            lines.append("lost 0 0xffff 9000 3")   # hart 0 ran only alpha
    for _ in range(4):
        sample(0, 0, 0, 0, 1, 50, "sh", u["evaltree"], VSATP_B,
               [u["ash_main"], u["run_applet_and_exit"], u["busybox_main"]])
    # beta: 4 in the kernel, 4 in loop-1m, 2 with no task read (a pseudo-process per vsatp)
    for _ in range(4):
        sample(1, 0, 1, 1, 1, 7, "kworker/0:1", k["schedule"], 0)
    for _ in range(4):
        sample(1, 0, 1, 0, 1, 77, "loop-1m", loop_1m, VSATP_A)
    for _ in range(2):
        sample(1, 0, 1, 0, 0, 0, "-", 0x10000, VSATP_A)
    lines.append(f"lost 1 1 {t + 1} 2")
    env.lines = lines
    env.expect = {
        "alpha": {("loop-5m", "loop-5m", "[.] loop"): "50.00",
                  ("swapper/1", "[kernel.kallsyms]", "[k] arch_cpu_idle"): "30.00",
                  ("sh", "busybox", "[.] evaltree"): "20.00"},
        "beta": {("kworker/0:1", "[kernel.kallsyms]", "[k] schedule"): "40.00",
                 ("loop-1m", "loop-1m", "[.] loop"): "40.00",
                 ("as-12345", "[unknown]", "[.] 0x0000000000010000"): "20.00"},
    }


@check
def stream_written(env):
    describe(env)
    with open(os.path.join(env.tmp, "run.txt"), "w") as f:
        f.write("\n".join(env.lines) + "\n")
    with open(os.path.join(env.tmp, "run.txt")) as f:
        p = subprocess.run([env.synth, env.stream], stdin=f, capture_output=True, text=True)
    expect(p.returncode == 0, f"profile-synth: exit status {p.returncode}: {p.stderr}")
    # 40-byte header, 2 guests (16 each), 30 samples, 7 with 3 entries of chain... by size
    size = os.path.getsize(env.stream)
    expect(size == 40 + 2 * 16 + 30 * 64 + 10 * 3 * 8 + 2 * 24, f"stream of {size} bytes")


@check
def stream_read_back(env):
    """Python's reading of the C layout: every field of one sample, the guests, LOST."""
    st = prof.read_stream(env.stream)
    expect(len(st.samples) == 30, f"{len(st.samples)} samples read, 30 written")
    expect(st.guests == {0: ("alpha", 2), 1: ("beta", 1)}, f"guests {st.guests}")
    expect(st.period == PERIOD and st.event_idx == 1 and st.harts == 2,
           f"header: period {st.period}, event {st.event_idx:#x}, harts {st.harts}")
    s = st.samples[12]
    words = [ln.split() for ln in env.lines if ln.startswith(f"sample {s.time} ")][0]
    expect(words[0] == "sample" and s.time == int(words[1]) and s.mode == 1 and s.vcpu == 1
           and s.hart == 1 and s.comm == "swapper/1" and s.pc == int(words[9], 16)
           and s.chain == tuple(int(w, 16) for w in words[12:]) and len(s.chain) == 3,
           f"sample {s} read from {' '.join(words)}")
    expect([tuple(lo) for lo in st.lost] == [(0, 0xFFFF, 9000, 3), (1, 1, st.lost[1].time, 2)],
           f"LOST records {st.lost}")


@check
def tool_converts(env):
    p = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "profile.py"),
                        env.stream, "-o", env.out,
                        "--kernel", os.path.join(env.build, "linux", "vmlinux"),
                        "--initramfs", os.path.join(env.build, "linux", "initramfs.list"),
                        "--debug-dir", os.path.join(env.build, "debsrc", "busybox-obj")],
                       capture_output=True, text=True, timeout=120)
    env.tool_stdout = p.stdout
    expect(p.returncode == 0, f"profile.py: exit status {p.returncode}: {p.stderr}")
    for g in ("alpha", "beta"):
        for f in ("perf.data", "stacks.folded", "flame.svg", "report.txt", "root/vmlinux"):
            expect(os.path.exists(os.path.join(env.out, g, f)), f"no {g}/{f}")
    env.converted = True


@check
def tool_report(env):
    """The tool's own text report: the same rows and percentages perf must show."""
    for g, rows in env.expect.items():
        with open(os.path.join(env.out, g, "report.txt")) as f:
            text = f.read()
        expect(text in env.tool_stdout, f"{g}'s report was not printed")
        for (comm, dso, sym), pct in rows.items():
            rx = rf"^\s+{re.escape(pct)}%\s+{re.escape(comm)}\s+{re.escape(dso)}\s+" \
                 rf"{re.escape(sym)}$"
            expect(re.search(rx, text, re.M), f"{g}: no row {pct}% {comm} {dso} {sym} in\n{text}")
    expect("3 samples lost" in open(os.path.join(env.out, "alpha", "report.txt")).read(),
           "alpha's report does not count the 3 samples lost on hart 0")


@check
def folded_stacks(env):
    with open(os.path.join(env.out, "alpha", "stacks.folded")) as f:
        stacks = dict(ln.rsplit(" ", 1) for ln in f.read().splitlines())
    want = {
        "loop-5m;loop": "10",
        "swapper/1;cpu_startup_entry_[k];do_idle_[k];default_idle_call_[k];arch_cpu_idle_[k]":
        "6",
        "sh;busybox_main;run_applet_and_exit;ash_main;evaltree": "4",
    }
    expect(stacks == want, f"alpha's folded stacks {stacks}, expected {want}")


@check
def flame_graph(env):
    tree = ET.parse(os.path.join(env.out, "alpha", "flame.svg"))
    titles = [t.text for t in tree.iter("{http://www.w3.org/2000/svg}title")]
    for frame, n, pct in (("all", 20, "100.00"), ("cpu_startup_entry_[k]", 6, "30.00"),
                          ("do_idle_[k]", 6, "30.00"), ("arch_cpu_idle_[k]", 6, "30.00"),
                          ("busybox_main", 4, "20.00"), ("evaltree", 4, "20.00"),
                          ("loop", 10, "50.00")):
        want = f"{frame} ({n} samples, {pct}%)"
        expect(want in titles, f"flame.svg has no frame {want!r}: {titles}")
    rects = {r.get("y") for r in tree.iter("{http://www.w3.org/2000/svg}rect")}
    expect(len(rects) >= 7, f"frames on {len(rects)} rows: the 6 levels of the deepest stack")


@check
def perf_report_alpha(env):
    rows, text = env.perf_rows("alpha")
    expect(rows == env.expect["alpha"], f"perf report rows {rows}\n{text}")
    expect("# Samples: 20  of event 'cycles'" in text, f"perf counts no 20 cycles samples:\n{text}")
    expect(f"# Event count (approx.): {20 * PERIOD}" in text, "event count")
    expect("# Total Lost Samples: 3" in text, f"perf shows no 3 lost samples:\n{text}")


@check
def perf_report_beta(env):
    rows, text = env.perf_rows("beta")
    expect(rows == env.expect["beta"], f"perf report rows {rows}\n{text}")
    expect("# Total Lost Samples: 2" in text, f"perf shows no 2 lost samples:\n{text}")


@check
def perf_callchain(env):
    """perf report's call graphs, caller to callee. Not with --sort sym: perf then leaves
    out a graph's first line, taking it for the entry's own symbol (true only callee first)."""
    text = env.perf_report("alpha", "--no-children", "-g", "caller", "--sort", "comm,dso,sym")
    chains = re.findall(r"---(\S+)\s*\n\s+(\S+)\s*\n\s+(\S+)\s*\n\s+(\S+)", text)
    for want in (("cpu_startup_entry", "do_idle", "default_idle_call", "arch_cpu_idle"),
                 ("busybox_main", "run_applet_and_exit", "ash_main", "evaltree")):
        expect(want in chains, f"no call graph {' -> '.join(want)} in\n{text}")


@check
def perf_script(env):
    d = os.path.join(env.out, "alpha")
    text = env.run_perf("script", "-i", os.path.join(d, "perf.data"), "--symfs",
                        os.path.join(d, "root"))
    blocks = text.strip().split("\n\n")
    expect(len(blocks) == 20, f"perf script shows {len(blocks)} samples, not 20")
    frames = [re.findall(r"^\s+[0-9a-f]+ (\S+?)\+0x[0-9a-f]+ \((\S+)\)$", b, re.M)
              for b in blocks]
    idle = [("arch_cpu_idle", "[kernel.kallsyms]"), ("default_idle_call", "[kernel.kallsyms]"),
            ("do_idle", "[kernel.kallsyms]"), ("cpu_startup_entry", "[kernel.kallsyms]")]
    sh = [("evaltree", "/bin/busybox"), ("ash_main", "/bin/busybox"),
          ("run_applet_and_exit", "/bin/busybox"), ("busybox_main", "/bin/busybox")]
    expect(frames.count(idle) == 6, f"{frames.count(idle)} idle call chains of 6:\n{text}")
    expect(frames.count(sh) == 4, f"{frames.count(sh)} sh call chains of 4:\n{text}")
    expect(frames.count([("loop", "/bin/loop-5m")]) == 10, f"loop-5m samples:\n{text}")
    expect(re.search(r"^\s*loop-5m\s+42 \[000\]\s+0\.000002:\s+100000 cycles:", text, re.M),
           f"no sample line `loop-5m 42 [000] 0.000002: 100000 cycles:` in\n{text}")


@check
def perf_header(env):
    text = env.run_perf("report", "-i", os.path.join(env.out, "alpha", "perf.data"),
                        "--header-only")
    for want in ("# arch : riscv64", "# hostname : alpha", "# nrcpus avail : 2",
                 "sample_type = IP|TID|TIME|CALLCHAIN|CPU|PERIOD"):
        expect(want in text, f"perf's header has no {want!r}:\n{text}")


@check
def truncated_stream(env):
    """A stream cut inside its last record (a run that stopped while draining): the complete
    records convert, with a warning; a file that is not a stream is refused."""
    with open(env.stream, "rb") as f:
        data = f.read()
    cut = os.path.join(env.tmp, "cut.profile")
    with open(cut, "wb") as f:
        f.write(data[:-10])
    st = prof.read_stream(cut)
    expect(len(st.samples) == 30 and len(st.lost) == 1 and st.warnings,
           f"{len(st.samples)} samples, {len(st.lost)} LOST, warnings {st.warnings}")
    bad = os.path.join(env.tmp, "bad.profile")
    with open(bad, "wb") as f:
        f.write(b"PERFILE2" + data[8:])
    p = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "profile.py"),
                        bad, "-o", os.path.join(env.tmp, "bad")], capture_output=True, text=True)
    expect(p.returncode == 1 and "neither a profile stream nor a console log" in p.stderr,
           f"a bad magic: exit status {p.returncode}, {p.stderr!r}")


@check
def console_log(env):
    """The stream as the hypervisor sends it: "!P " lines of base64, whole records each, among
    guest and hypervisor lines (and a guest line that only looks like one): the same records."""
    with open(env.stream, "rb") as f:
        data = f.read()
    lines = ["pmuvisor: RISC-V hypervisor with a virtual PMU", "[alpha] !P QUFBQQ=="]
    off = 40
    lines.append("!P " + base64.b64encode(data[:off]).decode())
    while off < len(data):
        size = int.from_bytes(data[off + 2:off + 4], "little")
        lines.append("!P " + base64.b64encode(data[off:off + size]).decode())
        lines.append("[beta] some output")
        off += size
    log = os.path.join(env.tmp, "console.log")
    with open(log, "w") as f:
        f.write("\r\n".join(lines) + "\r\n")
    st = prof.read_stream(log)
    ref = prof.read_stream(env.stream)
    expect(st.samples == ref.samples and st.lost == ref.lost and st.guests == ref.guests,
           f"{len(st.samples)} samples, {len(st.lost)} LOST from the console log; "
           f"{len(ref.samples)}, {len(ref.lost)} from the stream")


@check
def stripped_exe_by_build_id(env):
    """A stripped executable of the guest's list (/bin/perf) is named by the ELF with its
    build-id in a --debug-dir (build/linux/perf-obj/perf); with no such directory its samples
    keep the address only, as perf's would."""
    listing = os.path.join(env.build, "linux", "initramfs.list")
    obj_dir = os.path.join(env.build, "linux", "perf-obj")
    stripped = prof.load_elf(os.path.join(env.build, "linux", "perf"))
    full = prof.load_elf(os.path.join(obj_dir, "perf"))
    expect(not stripped.has_symtab() and stripped.build_id and
           stripped.build_id == full.build_id and full.has_symtab(),
           f"/bin/perf stripped with build-id {stripped.build_id.hex()}, perf-obj/perf "
           f"{full.build_id.hex()} with symbols: not the pair this check needs")
    pc = full.symbol_address("cmd_record") + 8
    sample = prof.Sample(time=1, guest=0, vcpu=0, hart=0, mode=prof.MODE_VU,
                         flags=prof.SAMPLE_TASK, pid=42, tid=42, pc=pc, vsatp=0, comm="perf",
                         chain=())
    for dirs, want in (([obj_dir], ("perf", "cmd_record")), ([], ("perf", None))):
        files = prof.GuestFiles(listing, dirs, warn=lambda msg: None)
        got = list(prof.GuestProfile(0, "alpha", [sample], None, files).resolved())
        expect(got == [("perf", [want + (pc, False)])],
               f"debug dirs {dirs}: {pc:#x} in /bin/perf resolved as {got}, expected {want}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="profile-test-")
    env = Env(os.path.abspath(args.build), os.path.abspath(args.synth), tmp)
    print(f"1..{len(CHECKS)}", flush=True)
    failed = 0
    for i, fn in enumerate(CHECKS, 1):
        try:
            fn(env)
            print(f"ok {i} - {fn.__name__}")
        except Skipped as e:
            print(f"not ok {i} # SKIP {fn.__name__}\n# {e}")
        except Failed as e:
            failed += 1
            print(f"not ok {i} - {fn.__name__}")
            print("\n".join("# " + ln for ln in str(e).splitlines()))
        except Exception as e:  # pylint: disable=broad-except
            failed += 1
            print(f"not ok {i} - {fn.__name__} {type(e).__name__}: {e}")
        sys.stdout.flush()
    if args.keep:
        print(f"# kept {tmp}")
    else:
        shutil.rmtree(tmp)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
