# SPDX-License-Identifier: BSD-2-Clause
"""Checks of what the hypervisor's profiler recorded in a test run (docs/profiling.md).

A test configuration asks for them with lines `// test: profile=GUEST WINDOW CHECK ARGS...`:
the samples of guest GUEST (by its configuration name), taken between the image's console lines
`PROF WINDOW start T` and `PROF WINDOW end T` (guest rdtime ticks; WINDOW `all`: every sample
of the run), symbolized with the guest image's ELF (build/guest-tests/IMAGE.elf). CHECK is:

  only-guest                 every sample of the run is GUEST's (no other guest's appear)
  count N                    at least N samples in the window
  inside F...                every sample's pc is in one of the functions F
  ratio A B PCT TOL          A's share of the samples in A or B is PCT +- TOL percent
  share F PCT TOL            F's share of the window's samples is PCT +- TOL percent
  chain F C1 C2...           every sample in F has the return addresses C1, C2, ... first
  at-least F N               at least N samples in F
  truncated F                every sample in F has a chain cut short or none (bad frames)
  lost N                     at most N samples lost in the whole run
  chain-max F N              every sample in F has at most N return addresses (bad frames)

For a Linux guest (symbols from build/linux/vmlinux and the initramfs' executables):

  task COMM SYM N            at least N samples of task COMM (its pid read from the guest) in
                             user space at symbol SYM of its executable
  kernel N                   at least N samples in the guest kernel with its MMU on, every one
                             of them at a symbol of vmlinux
  perf-report COMM:SYM...    tools/profile.py's perf.data, opened by the host's `perf report`,
                             has a row for each COMM and symbol SYM

`// test: profile-overhead=GUEST WINDOW MAXPCT` boots the configuration a second time with every
profile property removed and compares how long the window took in the guest (its rdtime):
profiled at most MAXPCT percent longer. Under -icount shift=0 guest time is instructions
executed on the hart, the hypervisor's included, so the difference is what sampling cost.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mkbundle  # noqa: E402
import profile as prof  # noqa: E402
import qemu  # noqa: E402

RE_WINDOW = re.compile(r"^\[(\S+)\] PROF (\S+) (start|end) (\d+)$")
RE_TIMEBASE = re.compile(r"timebase (\d+) Hz")


def parse_spec(val):
    words = val.split()
    if len(words) < 3:
        raise ValueError(f"profile check needs GUEST WINDOW CHECK: {val!r}")
    return words


class Functions:
    """pc -> the function (a sized symbol) holding it, from the image's ELF."""

    def __init__(self, path):
        self.funcs = sorted((a, e, n) for a, e, n in prof.load_elf(path).symbols() if e - a > 1)

    def of(self, pc):
        for a, e, n in self.funcs:
            if a <= pc < e:
                return n
        return None


def windows(lines, timebase):
    """{(guest, window): (start_ns, end_ns)} from the images' PROF lines."""
    out, starts = {}, {}
    for ln in lines:
        m = RE_WINDOW.match(ln.rstrip())
        if not m:
            continue
        key, t = (m.group(1), m.group(2)), int(m.group(4)) * 10**9 // timebase
        if m.group(3) == "start":
            starts[key] = t
        elif key in starts:
            out[key] = (starts[key], t)
    return out


def check(cfg, lines, specs, guests, build, res, verbose):
    """Run every check of specs on the run's console lines; guests: [(name, image)]."""
    text = "\n".join(lines).encode()
    try:
        st = prof.parse_stream(prof.console_stream(text), "console")
    except prof.ProfileError as e:
        res.fail(f"{cfg}:profile", str(e))
        return
    m = RE_TIMEBASE.search(text.decode(errors="replace"))
    timebase = int(m.group(1)) if m else 10_000_000
    wins = windows(lines, timebase)
    ids = {name: gid for gid, (name, _) in st.guests.items()}
    images = dict(guests)
    funcs, linux = {}, {}
    print(f"   profile: {len(st.samples)} samples, "
          f"{sum(lo.count for lo in st.lost)} lost, guests {sorted(ids)}")
    for words in specs:
        guest, win, what, args = words[0], words[1], words[2], words[3:]
        name = f"{cfg}:profile:{guest}:{win}:{what}" + (f":{args[0]}" if args else "")
        if guest not in ids:
            res.fail(name, f"no GUEST record for {guest} in the stream")
            continue
        samples = [s for s in st.samples if s.guest == ids[guest]]
        if what in LINUX_CHECKS:
            if guest not in linux:
                linux[guest] = LinuxGuest(ids[guest], guest, samples)
            err = LINUX_CHECKS[what](linux[guest], args, lines, st)
            if err:
                res.fail(name, err)
            else:
                res.ok(name, verbose)
            continue
        if guest not in funcs and what not in ("only-guest", "lost", "count"):
            funcs[guest] = Functions(os.path.join(build, "guest-tests", images[guest] + ".elf"))
        fn = funcs.get(guest)
        if win != "all":
            if (guest, win) not in wins:
                res.fail(name, f"no PROF {win} start/end lines from {guest}")
                continue
            lo, hi = wins[(guest, win)]
            samples = [s for s in samples if lo <= s.time <= hi]
        err = judge(what, args, samples, st, ids[guest], fn)
        if err:
            res.fail(name, err)
        else:
            res.ok(name, verbose)


def judge(what, args, samples, st, gid, fn):
    """None if the check holds, else why not."""
    if what == "only-guest":
        other = [s for s in st.samples if s.guest != gid]
        return f"{len(other)} samples of other guests" if other else None
    if what == "lost":
        lost = sum(lo.count for lo in st.lost)
        return f"{lost} samples lost" if lost > int(args[0]) else None
    if what == "count":
        return f"{len(samples)} samples" if len(samples) < int(args[0]) else None
    if not samples:
        return "no samples in the window"
    where = [fn.of(s.pc) for s in samples]
    if what == "inside":
        out = [f"{s.pc:#x} ({w})" for s, w in zip(samples, where) if w not in args]
        return f"{len(out)} of {len(samples)} outside: {', '.join(out[:5])}" if out else None
    if what == "ratio":
        a, b, pct, tol = args[0], args[1], float(args[2]), float(args[3])
        na, nb = where.count(a), where.count(b)
        got = 100.0 * na / (na + nb) if na + nb else 0.0
        return None if abs(got - pct) <= tol else \
            f"{a} {na}, {b} {nb}: {got:.1f}% not {pct}% +- {tol}"
    if what == "share":
        f, pct, tol = args[0], float(args[1]), float(args[2])
        got = 100.0 * where.count(f) / len(samples)
        return None if abs(got - pct) <= tol else \
            f"{where.count(f)} of {len(samples)}: {got:.1f}% not {pct}% +- {tol}"
    if what == "at-least":
        n = where.count(args[0])
        return f"{n} samples in {args[0]}" if n < int(args[1]) else None
    if what == "chain":
        f, want = args[0], args[1:]
        bad = []
        for s, w in zip(samples, where):
            if w != f:
                continue
            got = [fn.of(ra) for ra in s.chain[:len(want)]]
            if got != list(want):
                bad.append(f"{s.pc:#x}: {got}")
        n = where.count(f)
        if not n:
            return f"no samples in {f}"
        return f"{len(bad)} of {n} chains differ: {'; '.join(bad[:3])}" if bad else None
    if what == "chain-max":
        f, most = args[0], int(args[1])
        mine = [s for s, w in zip(samples, where) if w == f]
        bad = [s for s in mine if len(s.chain) > most]
        if not mine:
            return f"no samples in {f}"
        return f"{len(bad)} of {len(mine)} longer: {bad[0].chain}" if bad else None
    if what == "truncated":
        f = args[0]
        mine = [s for s, w in zip(samples, where) if w == f]
        bad = [s for s in mine if s.chain and not s.flags & prof.SAMPLE_TRUNCATED]
        if not mine:
            return f"no samples in {f}"
        return f"{len(bad)} of {len(mine)} with a whole chain: {bad[0].chain}" if bad else None
    return f"unknown profile check {what!r}"


PROFILE_PROPS = ("profile", "profile-period", "profile-depth", "profile-vmlinux")


def unprofiled_bundle(dts, out):
    """dts bundled with every guest's profile properties removed."""
    def edit(fdt):
        for g, gp in mkbundle.guests(fdt):
            node = fdt.path_offset(f"/guests/{g}")
            for p in PROFILE_PROPS:
                if p in gp:
                    fdt.delprop(node, p)

    mkbundle.build(dts, out, edit)


def overhead(cfg, dts, lines, spec, run_cmd, timeout, logs, res, verbose):
    """spec = [GUEST, WINDOW, MAXPCT]: the window's guest time, profiled (lines) against a
    run of the same configuration unprofiled (run_cmd(bundle) is its QEMU command)."""
    guest, win, maxpct = spec[0], spec[1], float(spec[2])
    name = f"{cfg}:profile-overhead:{guest}:{win}"
    with tempfile.TemporaryDirectory() as tmp:
        bundle = os.path.join(tmp, "unprofiled.bundle")
        try:
            unprofiled_bundle(dts, bundle)
        except (mkbundle.BundleError, OSError) as e:
            res.fail(name, f"cannot bundle the unprofiled twin: {e}")
            return
        log = os.path.join(logs, os.path.basename(cfg) + "-unprofiled.log")
        r = qemu.run_process(run_cmd(bundle), timeout, log_path=log,
                             stop_re=re.compile(r"pmuvisor: all guests stopped"))
    on = windows(lines, 10**9).get((guest, win))
    off = windows(r.lines, 10**9).get((guest, win))
    if r.timed_out or on is None or off is None:
        res.fail(name, f"no {win} window in the {'profiled' if on is None else 'unprofiled'} "
                 f"run (log {log})")
        return
    t_on, t_off = on[1] - on[0], off[1] - off[0]
    pct = 100.0 * (t_on - t_off) / t_off
    print(f"   profile overhead: {win} {t_off} ticks unprofiled, {t_on} profiled: {pct:+.3f}%")
    if pct <= maxpct:
        res.ok(name, verbose)
    else:
        res.fail(name, f"{pct:.3f}% more guest time than unprofiled ({t_on} vs {t_off} ticks),"
                 f" more than {maxpct}%")


# ---------------------------------------------------------------- Linux guests
class LinuxGuest:
    """A Linux guest's samples, symbolized as tools/profile.py does."""

    def __init__(self, gid, name, samples):
        files = prof.GuestFiles(prof.DEFAULT_INITRAMFS, prof.DEFAULT_DEBUG_DIRS, lambda m: None)
        self.gp = prof.GuestProfile(gid, name, samples, prof.DEFAULT_KERNEL, files)
        self.rows = list(self.gp.resolved())


def check_task(lg, args, lines, st):
    comm, sym, least = args[0], args[1], int(args[2])
    ids = set()
    n = 0
    for s, (c, frames) in zip(lg.gp.samples, lg.rows):
        if c == comm and s.mode == prof.MODE_VU and s.flags & prof.SAMPLE_TASK and \
                frames[0][1] == sym:
            n += 1
            ids.add((s.pid, s.tid))
    if n < least:
        return f"{n} samples of {comm} at {sym}, not {least}"
    # a single-threaded workload: the pid of a process started by /init, its own tid
    if any(pid <= 1 or pid != tid for pid, tid in ids):
        return f"{comm}'s samples carry (pid, tid) {sorted(ids)}"
    return None


def check_kernel(lg, args, lines, st):
    # with the MMU on (vsatp not Bare): early boot runs at physical addresses
    kern = [frames[0] for s, (_, frames) in zip(lg.gp.samples, lg.rows)
            if s.mode == prof.MODE_VS and s.vsatp >> 60]
    unknown = [f for f in kern if f[1] is None]
    if len(kern) < int(args[0]):
        return f"{len(kern)} kernel samples, not {args[0]}"
    return f"{len(unknown)} kernel pcs at no vmlinux symbol: {hex(unknown[0][2])}" \
        if unknown else None


def check_perf_report(lg, args, lines, st):
    """Convert the stream the way `make profile` does and ask the host's perf."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "console.log")
        with open(log, "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.devnull, "w") as null:
            old = sys.stdout
            sys.stdout = null
            try:
                rc = prof.main([log, "-o", os.path.join(tmp, "out")])
            finally:
                sys.stdout = old
        if rc:
            return f"tools/profile.py failed ({rc})"
        gdir = os.path.join(tmp, "out", lg.gp.name)
        try:
            p = subprocess.run(["perf", "report", "-i", os.path.join(gdir, "perf.data"),
                                "--symfs", os.path.join(gdir, "root"), "--stdio",
                                "--no-children", "--sort", "comm,sym", "-g", "none"],
                               capture_output=True, text=True, timeout=120)
        except FileNotFoundError:
            return "perf not found (Debian's linux-perf: make deps)"
    rows = set()
    for ln in p.stdout.splitlines():
        m = re.match(r"\s+[\d.]+%\s+(\S+)\s+\[[.k]\]\s+(\S+)", ln)
        if m:
            rows.add(f"{m.group(1)}:{m.group(2)}")
    missing = [a for a in args if a not in rows]
    return f"perf report has no row {', '.join(missing)} (rc {p.returncode}; " \
        f"{len(rows)} rows)" if missing else None


LINUX_CHECKS = {"task": check_task, "kernel": check_kernel, "perf-report": check_perf_report}
