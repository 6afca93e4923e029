#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Boot a pmuvisor configuration under QEMU.

usage: run.py [CONFIG] [--timeout S] [--interactive] [--icount | --no-icount] [--smp N]
              [--qemu-args "ARGS"]

CONFIG names build/bundles/CONFIG.bundle (default: default; e.g. tests/hsm), or is a path to a
.bundle file. Output is streamed; the exit status is 0 iff the hypervisor's final line
`pmuvisor: all guests stopped: N ok, 0 failed` appears. --interactive attaches stdin (exit
QEMU with Ctrl-A x) and has no timeout; without a CONFIG it boots linux-shell, a Linux guest
with a shell where perf can be typed. A configuration with a guest booted with
`pmuvisor.run=shell` is always interactive (so `make run CONFIG=linux-shell` works).
A `// run: qemu-args=...` line in dts/CONFIG.dts adds QEMU arguments, and so does --qemu-args
(`make run QEMU_ARGS="..."`); -M, -cpu, -smp and -m there replace the defaults.
A configuration that boots Linux runs under `-icount shift=0` unless told otherwise (--no-icount,
`make run ICOUNT=0`): exact counts are the product, and without icount QEMU's cycle/instret
counters follow host time (`perf stat` of loop-1m then reads millions too many). --icount adds it
to any configuration.
"""
import argparse
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mkbundle  # noqa: E402
import qemu  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RE_SUMMARY = re.compile(r"pmuvisor: all guests stopped: (\d+) ok, (\d+) failed")


def guest_props(bundle):
    """[{property: bytes}] of the configuration's guests ([] if the bundle cannot be read)."""
    try:
        return [props for _, props in mkbundle.guests(mkbundle.config_fdt(bundle))]
    except (OSError, mkbundle.libfdt.FdtException):
        return []


def wants_shell(guests):
    """True if a guest of the configuration boots Linux with the shell script."""
    return any(b"pmuvisor.run=shell" in g.get("bootargs", b"") for g in guests)


def boots_linux(guests):
    """True if a guest of the configuration boots the Linux guest kernel."""
    return any(mkbundle.string(g.get("image")) == "build/linux/Image" for g in guests)


def without_icount(args):
    """QEMU arguments less any -icount option and its value."""
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "-icount":
            skip = True
        elif not a.startswith("-icount="):
            out.append(a)
    return out


def dts_run_args(config):
    """QEMU arguments from `// run: qemu-args=...` lines of dts/<config>.dts."""
    out = []
    dts = os.path.join(REPO, "dts", config + ".dts")
    if os.path.isfile(dts):
        with open(dts) as f:
            for line in f:
                m = re.match(r"\s*//\s*run:\s*qemu-args\s*=\s*(.*?)\s*$", line)
                if m:
                    out += shlex.split(m.group(1))
    return out


def dts_mem_args(config):
    """["-m", size] of dts/<config>.dts's run line (its guests' memory needs it), or []."""
    a = dts_run_args(config)
    return next((["-m", v] for k, v in reversed(list(zip(a, a[1:]))) if k == "-m"), [])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config", nargs="?")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--interactive", action="store_true")
    icount = ap.add_mutually_exclusive_group()
    icount.add_argument("--icount", action="store_true", default=None,
                        help="add -icount shift=0 (the default for Linux configurations)")
    icount.add_argument("--no-icount", dest="icount", action="store_false",
                        help="no -icount, even where the configuration asks for it")
    ap.add_argument("--qemu-args", default="", help="more QEMU arguments (one string)")
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--mem", default="1G")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--debug", action="store_true",
                    help="boot the debug hypervisor (pmuvisor-debug.bin: make DEBUG=1)")
    args = ap.parse_args()
    if args.config is None:
        args.config = "linux-shell" if args.interactive else "default"

    if args.config.endswith(".bundle") or os.path.sep in args.config and os.path.isfile(args.config):
        bundle = args.config
    else:
        bundle = os.path.join(args.build, "bundles", args.config + ".bundle")
    hv = os.path.join(args.build, "pmuvisor-debug.bin" if args.debug else "pmuvisor.bin")
    guests = guest_props(bundle)
    if not args.interactive and wants_shell(guests):
        args.interactive = True
        print("run.py: a guest runs the Linux shell: console input is attached "
              "(`exit` powers the guest off; Ctrl-A x quits QEMU)", flush=True)
    for p, hint in ((bundle, "make bundles"), (hv, "make DEBUG=1 hv-debug" if args.debug else "make hv")):
        if not os.path.isfile(p):
            print(f"run.py: {p} not found ({hint})", file=sys.stderr)
            return 2
    extra = dts_run_args(args.config) + shlex.split(args.qemu_args)
    if args.icount is False:
        extra = without_icount(extra)
    elif (args.icount or boots_linux(guests)) and without_icount(extra) == extra:
        extra += ["-icount", "shift=0"]
    cmd = qemu.machine_cmd(hv, bundle, extra, smp=args.smp, mem=args.mem)
    print("run.py: " + " ".join(cmd), flush=True)

    def out(chunk):
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()

    found = []  # (ok, failed) of the hypervisor's final line; kept on Ctrl-C too
    try:
        r = qemu.run_process(cmd, None if args.interactive else args.timeout, raw=out,
                             echo=lambda ln: found.extend(RE_SUMMARY.findall(ln)),
                             stop_re=RE_SUMMARY, interactive=args.interactive,
                             elf=os.path.join(args.build, "pmuvisor.elf"))
        if r.timed_out:
            print(f"\nrun.py: TIMEOUT after {args.timeout:.0f} s: QEMU killed" +
                  "".join(f"\nrun.py:   {h}" for h in r.harts), file=sys.stderr)
    except KeyboardInterrupt:
        pass
    if not found:
        print("run.py: no 'pmuvisor: all guests stopped' line", file=sys.stderr)
        return 1
    ok, failed = map(int, found[-1])
    return 0 if failed == 0 and ok > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
