#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Run pmuvisor's tests and count every check.

1. every executable in build/unit/: cmocka host unit tests (read from their TAP output) and
   libFuzzer targets (corpus replayed, then a short run);
2. every build/bundles/tests/*.bundle booted under QEMU with build/pmuvisor.bin.

Guest images print `TEST PASS|FAIL <image>:<check>` and `TEST DONE <image> <n> passed,
<m> failed`; the hypervisor prefixes guest lines with `[<guest>] `. Per-config options are
comment lines in dts/tests/<name>.dts:
    // test: qemu-args=-icount shift=0 -smp 2    extra QEMU arguments (-smp/-m replace defaults)
    // test: timeout=120                         seconds before QEMU is killed (default 60)
    // test: expect-stopped=<guest> <regex>      the guest must be stopped by the hypervisor, with
                                                 a `pmuvisor: guest <guest> ...` line matching regex
    // test: expect-summary=<k> ok, <j> failed   the final hypervisor line (default: all ok)
    // test: workload=<guest>                    the guest only runs a workload (another guest or
                                                 the profile checks): its TEST DONE counts no check
                                                 (repeatable); any other guest's must count some
    // test: expect-log=<regex>                  some output line must match (repeatable)
    // test: expect-lines=<n> <regex>            exactly n different output lines match regex
                                                 (repeatable): a long output came out whole
    // test: expect-no-log=<regex>               no output line may match (repeatable)
    // test: expect-refused=<regex>              the hypervisor must refuse the machine: a line
                                                 matches regex, QEMU exits on its own, no guest runs
    // test: linux=probe exact record fw=6,7     Linux guests running perf: host-side checks of
                                                 tools/check_linux.py instead of TEST DONE lines
    // test: debug=yes                           run it again with the debug hypervisor
                                                 (build/pmuvisor-debug.bin: the vPMU's invariants
                                                 checked after every PMU call and vCPU switch),
                                                 as <name>+debug
    // test: dialog=<regex> => <text>            console dialog (repeatable, in order): wait until
                                                 the output since the previous step matches regex
                                                 (partial lines too: a prompt), then type text
                                                 (escapes: \n, \x03 = Ctrl-C); no TEST DONE line
The last output line is `N passed, M failed`; the exit status is non-zero when M > 0 or when
nothing ran. Full logs go to build/test-logs/<name>.log.
"""
import argparse
import fnmatch
import os
import re
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_linux  # noqa: E402
import check_profile  # noqa: E402
import mkbundle  # noqa: E402
import qemu  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

RE_GUEST = re.compile(r"^\[([^\]\s]+)\] ?(.*)$")
RE_PASS = re.compile(r"TEST PASS (\S+?):(\S+)\s*$")
RE_FAIL = re.compile(r"TEST FAIL (\S+?):(\S+) (.*)$")
RE_DONE = re.compile(r"TEST DONE (\S+) (\d+) passed, (\d+) failed")
RE_SUMMARY = re.compile(r"pmuvisor: all guests stopped: (\d+) ok, (\d+) failed")
RE_PANIC = re.compile(r"pmuvisor: PANIC")
RE_TAP = re.compile(r"^(not )?ok \d+(?: - (\S+)(.*))?")
RE_TAP_GROUP = re.compile(r"^# (not )?ok - ")
RE_TAP_SKIP = re.compile(r"^not ok \d+ # SKIP (\S+)")


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.failures = []

    def ok(self, name, verbose=False):
        self.passed += 1
        if verbose:
            print(f"  PASS {name}")

    def fail(self, name, detail):
        self.failed += 1
        self.failures.append((name, detail))
        print(f"  FAIL {name}: {detail}")


def bundle_guests(bundle):
    """[(guest, image name)] from a bundle's configuration DTB."""
    out = []
    for name, props in mkbundle.guests(mkbundle.config_fdt(bundle)):
        base = os.path.basename(mkbundle.string(props.get("image", b"")))
        out.append((name, base[:-4] if base.endswith(".bin") else base))
    return out


# ---------------------------------------------------------------- options
def dts_options(dts):
    opts = {"qemu-args": [], "timeout": None, "expect-stopped": {}, "expect-summary": None,
            "workload": set(), "linux": None, "expect-log": [], "expect-no-log": [],
            "expect-lines": [], "dialog": [], "expect-refused": None, "debug": False,
            "profile": [], "profile-overhead": None}
    if not os.path.isfile(dts):
        return opts
    with open(dts) as f:
        for line in f:
            m = re.match(r"\s*//\s*test:\s*([\w-]+)\s*=\s*(.*?)\s*$", line)
            if not m:
                continue
            key, val = m.group(1), m.group(2)
            if key == "qemu-args":
                opts["qemu-args"] += shlex.split(val)
            elif key == "timeout":
                opts["timeout"] = float(val)
            elif key == "expect-stopped":
                guest, _, rx = val.partition(" ")
                opts["expect-stopped"][guest] = re.compile(rx.strip() or ".")
            elif key == "workload":
                opts["workload"].add(val)
            elif key == "expect-summary":
                m2 = re.match(r"(\d+) ok, (\d+) failed", val)
                if not m2:
                    raise ValueError(f"{dts}: bad expect-summary {val!r}")
                opts["expect-summary"] = (int(m2.group(1)), int(m2.group(2)))
            elif key == "debug":
                opts["debug"] = val == "yes"
            elif key in ("expect-log", "expect-no-log"):
                opts[key].append(re.compile(val))
            elif key == "expect-lines":
                n, _, rx = val.partition(" ")
                opts["expect-lines"].append((int(n), re.compile(rx)))
            elif key == "expect-refused":
                opts["expect-refused"] = re.compile(val)
            elif key == "profile-overhead":
                opts["profile-overhead"] = val.split()
            elif key == "profile":
                opts["profile"].append(check_profile.parse_spec(val))
            elif key == "linux":
                opts["linux"] = check_linux.parse_words(val.split())
            elif key == "dialog":
                rx, _, text = val.partition(" => ")
                text = re.sub(r"\\(n|x[0-9a-fA-F]{2})", lambda e: "\n" if e.group(1) == "n"
                              else chr(int(e.group(1)[1:], 16)), text)
                opts["dialog"].append((re.compile(rx), text))
            else:
                raise ValueError(f"{dts}: unknown test option {key!r}")
    return opts


# ---------------------------------------------------------------- running
def run_process(cmd, timeout, log_path, verbose, stop_re=None, dialog=None, env=None):
    """Run cmd, collect output lines; returns (lines, rc, timed_out). A QEMU run that times out
    also gets its harts' state (qemu.hart_report) appended to the lines. dialog: see
    qemu.run_process (each step is replaced by the output it matched, None if none did)."""
    echo = (lambda ln: print("    | " + ln, flush=True)) if verbose else None
    # cwd: anything a test writes (e.g. fuzzer artifacts) lands beside the logs
    r = qemu.run_process(cmd, timeout, log_path, echo, stop_re,
                         elf=os.path.join(REPO, "build", "pmuvisor.elf"),
                         cwd=os.path.dirname(log_path), dialog=dialog, env=env)
    return r.lines + [f"*** {h}" for h in r.harts], r.rc, r.timed_out


def last_lines(lines, n=8):
    return "\n".join("      " + ln for ln in lines[-n:]) or "      (no output)"


def is_fuzzer(path):
    try:
        with open(path, "rb") as f:
            return b"LLVMFuzzerTestOneInput" in f.read()
    except OSError:
        return False


def run_fuzzer(path, res, args):
    """libFuzzer target: replay its corpus (<name>_corpus/), then fuzz briefly."""
    name = "unit/" + os.path.basename(path)
    print(f"== {name} (libFuzzer)")
    corpus = path + "_corpus"
    runs = []
    if os.path.isdir(corpus):
        # -runs=0: execute every corpus input once, add nothing to the corpus
        runs.append(("corpus", [path, "-runs=0", f"-artifact_prefix={args.logs}/", corpus]))
    runs.append(("fuzz", [path, "-runs=20000", "-max_total_time=20", "-seed=1",
                          f"-artifact_prefix={args.logs}/"]))
    for what, cmd in runs:
        log = os.path.join(args.logs, f"unit-{os.path.basename(path)}-{what}.log")
        lines, rc, timed_out = run_process(cmd, args.timeout, log, args.verbose)
        if timed_out:
            res.fail(f"{name}:{what}", f"TIMEOUT after {args.timeout:g} s")
        elif rc != 0:
            res.fail(f"{name}:{what}", f"exit status {rc}; log {os.path.relpath(log, REPO)}; "
                     "last lines:\n" + last_lines([ln for ln in lines if ln.strip()], 12))
        else:
            res.ok(f"{name}:{what}", args.verbose)


def run_unit(path, res, args):
    if is_fuzzer(path):
        run_fuzzer(path, res, args)
        return
    name = "unit/" + os.path.basename(path)
    print(f"== {name}")
    log = os.path.join(args.logs, "unit-" + os.path.basename(path) + ".log")
    lines, rc, timed_out = run_process([path], args.timeout, log, args.verbose,
                                       env={"CMOCKA_MESSAGE_OUTPUT": "TAP"})
    if timed_out:
        res.fail(name, f"TIMEOUT after {args.timeout:g} s; last lines:\n" + last_lines(lines))
        return
    # cmocka's TAP: `1..N` per group, then `ok <i> - <test>` or `not ok <i> - <test> [why]`
    # followed by `# <detail>` lines; a skipped test is `not ok <i> # SKIP <test>`, a failure:
    # make test installs what every test needs
    planned = seen = passed = failed = skipped = 0
    for i, ln in enumerate(lines):
        m = re.match(r"1\.\.(\d+)$", ln)
        if m:
            planned += int(m.group(1))
        m = RE_TAP.match(ln)
        if not m:
            continue
        seen += 1
        if m.group(2) is None:
            m = RE_TAP_SKIP.match(ln)
            if m:  # with the reason the test gave on its next line, if any
                skipped += 1
                failed += 1
                why = lines[i + 1][2:] if i + 1 < len(lines) and lines[i + 1].startswith(
                    "# ") else ""
                res.fail(f"{name}:{m.group(1)}", "skipped" + (f": {why}" if why else ""))
            continue
        if not m.group(1):
            passed += 1
            res.ok(f"{name}:{m.group(2)}", args.verbose)
            continue
        failed += 1
        detail = [m.group(3).strip()] if m.group(3).strip() else []
        for d in lines[i + 1:]:
            if not d.startswith("# ") or RE_TAP_GROUP.match(d):
                break
            detail.append(d[2:])
        res.fail(f"{name}:{m.group(2)}", "cmocka test failed" +
                 "".join("\n      " + d for d in detail))
    if not planned or seen != planned:
        res.fail(name, f"{seen} of {planned} planned cmocka results (exit status {rc}); "
                 "last lines:\n" + last_lines(lines))
    elif rc != 0 and not failed:
        res.fail(name, f"exit status {rc} with no failed test")
    print(f"   {passed} passed, {failed} failed" +
          (f" ({skipped} of them skipped)" if skipped else ""))


def print_counts(res, before_p, before_f, elapsed, log):
    print(f"   {res.passed - before_p} passed, {res.failed - before_f} failed "
          f"({elapsed:.1f} s, log {os.path.relpath(log, REPO)})")


def check_log(cfg, dts, opts, lines, guests, debug, timeout, res, args):
    """The checks on a run's whole log: expect-log lines and the profile windows."""
    check_expect_log(cfg, opts, lines, res, args)
    if opts["profile"]:
        check_profile.check(cfg, lines, opts["profile"], guests, args.build, res, args.verbose)
    if opts["profile-overhead"] and not debug:
        check_profile.overhead(
            cfg, dts, lines, opts["profile-overhead"],
            lambda b: qemu.machine_cmd(args.hv, b, opts["qemu-args"]), timeout, args.logs, res,
            args.verbose)


def check_expect_log(cfg, opts, lines, res, args):
    for i, rx in enumerate(opts["expect-log"]):
        if any(rx.search(ln) for ln in lines):
            res.ok(f"{cfg}:expect-log-{i}", args.verbose)
        else:
            res.fail(f"{cfg}:expect-log-{i}", f"no output line matches /{rx.pattern}/")
    for i, (n, rx) in enumerate(opts["expect-lines"]):
        got = len({ln for ln in lines if rx.search(ln)})
        if got == n:
            res.ok(f"{cfg}:expect-lines-{i}", args.verbose)
        else:
            res.fail(f"{cfg}:expect-lines-{i}", f"{got} different lines match /{rx.pattern}/, "
                     f"not {n}")
    for i, rx in enumerate(opts["expect-no-log"]):
        bad = [ln for ln in lines if rx.search(ln)]
        if not bad:
            res.ok(f"{cfg}:expect-no-log-{i}", args.verbose)
        else:
            res.fail(f"{cfg}:expect-no-log-{i}", f"{len(bad)} output line(s) match "
                     f"/{rx.pattern}/, the first: {bad[0]}")


def check_refused(cfg, opts, lines, rc, timed_out, guests, res, args):
    """The hypervisor refused the machine: it said why, the firmware shut it down (QEMU exits
    by itself; status 0, measured: the reason does not reach it), no guest printed a
    line; expect-log lines too."""
    rx = opts["expect-refused"]
    if any(rx.search(ln) for ln in lines):
        res.ok(f"{cfg}:refused", args.verbose)
    else:
        res.fail(f"{cfg}:refused", f"no output line matches /{rx.pattern}/; last lines:\n" +
                 last_lines(lines))
    if timed_out:
        res.fail(f"{cfg}:exited", "TIMEOUT: QEMU did not exit; last lines:\n" + last_lines(lines))
    elif rc != 0:
        res.fail(f"{cfg}:exited", f"QEMU exit status {rc}, not 0 (the firmware's shutdown)"
                 "; last lines:\n" + last_lines(lines))
    else:
        res.ok(f"{cfg}:exited", args.verbose)
    check_expect_log(cfg, opts, lines, res, args)
    names = {g for g, _ in guests}
    ran = [ln for ln in lines if (m := RE_GUEST.match(ln)) and m.group(1) in names]
    if ran:
        res.fail(f"{cfg}:no-guest-ran", "a guest ran: " + ran[0])
    else:
        res.ok(f"{cfg}:no-guest-ran", args.verbose)


def wants_debug_run(bundle, args):
    rel = os.path.relpath(bundle, os.path.join(args.build, "bundles"))
    try:
        return dts_options(os.path.join(REPO, "dts", rel[:-len(".bundle")] + ".dts"))["debug"]
    except (ValueError, OSError):
        return False


def run_config(bundle, res, args, debug=False):
    rel = os.path.relpath(bundle, os.path.join(args.build, "bundles"))
    cfg = rel[:-len(".bundle")] + ("+debug" if debug else "")
    short = os.path.basename(cfg)
    dts = os.path.join(REPO, "dts", rel[:-len(".bundle")] + ".dts")
    print(f"== {cfg}")
    before_p, before_f = res.passed, res.failed
    try:
        opts = dts_options(dts)
        guests = bundle_guests(bundle)
    except (ValueError, OSError, mkbundle.libfdt.FdtException) as e:
        res.fail(cfg, f"cannot read configuration: {e}")
        return
    timeout = opts["timeout"] or args.timeout
    cmd = qemu.machine_cmd(args.hv_debug if debug else args.hv, bundle, opts["qemu-args"])
    log = os.path.join(args.logs, short + ".log")
    native = (linux_native(cfg, bundle, opts, args)
              if opts["linux"] is not None and not debug else None)
    t0 = time.monotonic()
    dialog = list(opts["dialog"])
    lines, rc, timed_out = run_process(cmd, timeout, log, args.verbose, RE_SUMMARY, dialog)
    elapsed = time.monotonic() - t0
    if opts["expect-refused"] is not None:
        check_refused(cfg, opts, lines, rc, timed_out, guests, res, args)
        print_counts(res, before_p, before_f, elapsed, log)
        return

    per_guest = {g: {"pass": 0, "fail": 0, "done": None, "hv": [], "lines": []}
                 for g, _ in guests}
    summary = None
    for ln in lines:
        m = RE_GUEST.match(ln)
        if m and m.group(1) in per_guest:
            g, text = m.group(1), m.group(2)
            pg = per_guest[g]
            pg["lines"].append(text)
            mp, mf, md = RE_PASS.search(text), RE_FAIL.search(text), RE_DONE.search(text)
            if mp:
                pg["pass"] += 1
                res.ok(f"{cfg}/{g}:{mp.group(1)}:{mp.group(2)}", args.verbose)
            elif mf:
                pg["fail"] += 1
                res.fail(f"{cfg}/{g}:{mf.group(1)}:{mf.group(2)}", mf.group(3))
            elif md:
                pg["done"] = (md.group(1), int(md.group(2)), int(md.group(3)))
            continue
        if RE_PANIC.search(ln):
            res.fail(f"{cfg}:hypervisor", "hypervisor panic: " + ln)
        m = re.match(r"pmuvisor: guest (\S+) (.*)$", ln)
        if m and m.group(1) in per_guest:
            per_guest[m.group(1)]["hv"].append(ln)
        m = RE_SUMMARY.search(ln)
        if m:
            summary = (int(m.group(1)), int(m.group(2)))

    if timed_out:
        res.fail(f"{cfg}:run", f"TIMEOUT after {timeout:g} s; last lines:\n" + last_lines(lines))

    for g, image in guests:
        pg = per_guest[g]
        hv = pg["hv"]
        stop_rx = opts["expect-stopped"].get(g)
        name = f"{cfg}/{g}"
        if stop_rx is not None:
            stops = [ln for ln in hv if re.search(r" stopped: ", ln)]
            if any(stop_rx.search(ln) for ln in stops):
                res.ok(f"{name}:stopped-by-hypervisor", args.verbose)
            else:
                res.fail(f"{name}:stopped-by-hypervisor",
                         f"expected a stop line matching /{stop_rx.pattern}/, got: " +
                         ("; ".join(hv) if hv else "no hypervisor line for this guest"))
            continue
        if opts["linux"] is not None:
            linux_checks(cfg, name, pg, opts, native, res, args)
        elif not opts["dialog"]:
            check_done(name, image, pg, g in opts["workload"], res, args)
        want = "shutdown (reason=failure)" if pg["fail"] else "shutdown (reason=none)"
        if any(ln.endswith(want) for ln in hv):
            res.ok(f"{name}:shutdown", args.verbose)
        else:
            res.fail(f"{name}:shutdown", f"expected 'pmuvisor: guest {g} {want}', got: " +
                     ("; ".join(hv) if hv else "no hypervisor line for this guest"))

    for i, ((rx, text), got) in enumerate(zip(opts["dialog"], dialog)):
        if got is not None:
            res.ok(f"{cfg}:dialog-{i}", args.verbose)
        else:
            res.fail(f"{cfg}:dialog-{i}", f"no output matched /{rx.pattern}/ (so {text!r} was "
                     "not typed); last lines:\n" + last_lines(lines))
            break

    check_log(cfg, dts, opts, lines, guests, debug, timeout, res, args)

    want = opts["expect-summary"] or (len(guests), 0)
    if summary == want:
        res.ok(f"{cfg}:summary", args.verbose)
    elif not timed_out or summary is not None:
        res.fail(f"{cfg}:summary", f"expected 'all guests stopped: {want[0]} ok, {want[1]} failed'"
                 f", got " + (f"{summary[0]} ok, {summary[1]} failed" if summary else "no summary"
                              f" line (QEMU exit status {rc}); last lines:\n" + last_lines(lines)))
    print_counts(res, before_p, before_f, elapsed, log)


def linux_native(cfg, bundle, opts, args):
    """Native boot of the first guest's kernel + initramfs + bootargs, same QEMU shape."""
    if "record" not in opts["linux"]:
        return None
    log = os.path.join(args.logs, os.path.basename(cfg) + "-native.log")
    # `-append` there is the hypervisor's bootargs; natively the guest's are the kernel's
    qargs, words = [], iter(opts["qemu-args"])
    for w in words:
        if w == "-append":
            next(words, None)
        else:
            qargs.append(w)
    info = check_linux.run_native(args.build, qargs, mkbundle.bootargs(bundle), log)
    print(f"   native: {check_linux.summary(info)} ({info['wall']:.1f} s, log "
          f"{os.path.relpath(log, REPO)})")
    return info


def linux_checks(cfg, name, pg, opts, native, res, args):
    info = check_linux.parse(pg["lines"])
    print(f"   {name.split('/')[-1]}: {check_linux.summary(info)}")
    check_linux.check_guest(name, info, opts["linux"], res, args.verbose, native, args.build)


def check_done(name, image, pg, workload, res, args):
    """A bare-metal test image: its TEST DONE line must match the PASS/FAIL lines seen, and
    count at least one, or none for a workload"""
    done = pg["done"]
    if done is None:
        hv = pg["hv"]
        res.fail(f"{name}:done", f"{image}: no TEST DONE line" +
                 (f" (hypervisor: {'; '.join(hv)})" if hv else ""))
    elif done[1] != pg["pass"] or done[2] != pg["fail"]:
        res.fail(f"{name}:done", f"TEST DONE {done[0]} says {done[1]} passed, {done[2]} failed "
                 f"but {pg['pass']} PASS and {pg['fail']} FAIL lines were seen")
    elif done[0] != image:
        res.fail(f"{name}:done", f"TEST DONE names image {done[0]}, configured {image}")
    elif workload != (not done[1] + done[2]):
        res.fail(f"{name}:done", f"TEST DONE {done[0]}: " +
                 ("checks ran in a workload" if workload else "no check ran"))
    else:
        res.ok(f"{name}:done", args.verbose)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", dest="patterns", action="append",
                    help="run only tests whose name contains PATTERN (or matches it as a "
                    "glob), e.g. -k hsm, -k 'unit/*'; repeat for several")
    ap.add_argument("-v", dest="verbose", action="store_true", help="stream logs")
    ap.add_argument("--timeout", type=float, default=60, help="default per-test timeout (s)")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--no-unit", action="store_true", help="skip host unit tests")
    ap.add_argument("--no-qemu", action="store_true", help="skip QEMU tests")
    args = ap.parse_args()
    args.hv = os.path.join(args.build, "pmuvisor.bin")
    args.hv_debug = os.path.join(args.build, "pmuvisor-debug.bin")
    args.logs = os.path.join(args.build, "test-logs")
    os.makedirs(args.logs, exist_ok=True)

    def selected(name):
        if not args.patterns:
            return True
        return any(p in name or fnmatch.fnmatch(name, p) for p in args.patterns)

    res = Results()
    ran = 0
    unit_dir = os.path.join(args.build, "unit")
    if not args.no_unit and os.path.isdir(unit_dir):
        for f in sorted(os.listdir(unit_dir)):
            p = os.path.join(unit_dir, f)
            if os.path.isfile(p) and os.access(p, os.X_OK) and selected("unit/" + f):
                run_unit(p, res, args)
                ran += 1
    bdir = os.path.join(args.build, "bundles", "tests")
    if not args.no_qemu:
        bundles = sorted(os.path.join(bdir, f) for f in os.listdir(bdir)
                         if f.endswith(".bundle")) if os.path.isdir(bdir) else []
        bundles = [b for b in bundles if selected("tests/" + os.path.basename(b)[:-7])]
        if bundles and not os.path.isfile(args.hv):
            res.fail("hypervisor", f"{os.path.relpath(args.hv, REPO)} not built (make hv)")
        else:
            for b in bundles:
                run_config(b, res, args)
                ran += 1
                if wants_debug_run(b, args):
                    run_config(b, res, args, debug=True)
    if res.failures:
        print(f"\n{len(res.failures)} failure(s):")
        for name, detail in res.failures:
            print(f"  {name}: {detail}")
    if ran == 0:
        print("nothing ran" + (f" (no test matches {args.patterns!r})" if args.patterns else ""))
    print(f"{res.passed} passed, {res.failed} failed")
    return 1 if res.failed or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
