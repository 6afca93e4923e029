#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Boot a pmuvisor configuration under QEMU.

usage: run.py [CONFIG] [--timeout S] [--interactive] [--icount] [--smp N]

CONFIG names build/bundles/CONFIG.bundle (default: default; e.g. tests/hsm), or is a path to a
.bundle file. Output is streamed; the exit status is 0 iff the hypervisor's final line
`pmuvisor: all guests stopped: N ok, 0 failed` appears. --interactive attaches stdin (exit
QEMU with Ctrl-A x) and has no timeout; without a CONFIG it boots linux-shell, a Linux guest
with a shell where perf can be typed. A configuration with a guest booted with
`pmuvisor.run=shell` is always interactive (so `make run CONFIG=linux-shell` works).
A `// run: qemu-args=...` line in dts/CONFIG.dts adds QEMU arguments (dts/default.dts asks for
`-icount shift=0`: without icount QEMU's cycle/instret counters follow host time).
"""
import argparse
import os
import re
import shlex
import struct
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QEMU = os.environ.get("QEMU", "qemu-system-riscv64")
RE_SUMMARY = re.compile(r"pmuvisor: all guests stopped: (\d+) ok, (\d+) failed")


def wants_shell(bundle):
    """True if a guest of the bundle's configuration DTB boots Linux with the shell script."""
    try:
        with open(bundle, "rb") as f:
            head = f.read(8)
            magic, size = struct.unpack(">II", head)
            if magic != 0xd00dfeed:
                return False
            return b"pmuvisor.run=shell" in head + f.read(size - 8)
    except (OSError, struct.error):
        return False


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config", nargs="?")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--interactive", action="store_true")
    ap.add_argument("--icount", action="store_true", help="add -icount shift=0")
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--mem", default="1G")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    args = ap.parse_args()
    if args.config is None:
        args.config = "linux-shell" if args.interactive else "default"

    if args.config.endswith(".bundle") or os.path.sep in args.config and os.path.isfile(args.config):
        bundle = args.config
    else:
        bundle = os.path.join(args.build, "bundles", args.config + ".bundle")
    hv = os.path.join(args.build, "pmuvisor.bin")
    if not args.interactive and wants_shell(bundle):
        args.interactive = True
        print("run.py: a guest runs the Linux shell: console input is attached "
              "(`exit` powers the guest off; Ctrl-A x quits QEMU)", flush=True)
    for p, hint in ((bundle, "make bundles"), (hv, "make hv")):
        if not os.path.isfile(p):
            print(f"run.py: {p} not found ({hint})", file=sys.stderr)
            return 2
    cmd = [QEMU, "-M", "virt", "-cpu", "max", "-smp", str(args.smp), "-m", args.mem,
           "-nographic", "-bios", "default", "-kernel", hv, "-initrd", bundle]
    extra = dts_run_args(args.config)
    if args.icount and "-icount" not in extra:
        extra += ["-icount", "shift=0"]
    cmd += extra
    print("run.py: " + " ".join(cmd), flush=True)

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=None if args.interactive else subprocess.DEVNULL)
    result = [None]
    done_at = [None]

    def reader():
        buf = b""
        while True:
            chunk = proc.stdout.read1(4096) if hasattr(proc.stdout, "read1") else \
                proc.stdout.read(1)
            if not chunk:
                break
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                m = RE_SUMMARY.search(line.decode("utf-8", "replace"))
                if m:
                    result[0] = (int(m.group(1)), int(m.group(2)))
                    done_at[0] = time.monotonic()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    deadline = None if args.interactive else time.monotonic() + args.timeout
    timed_out = False
    try:
        while proc.poll() is None:
            now = time.monotonic()
            if deadline is not None and now > deadline:
                timed_out = True
                break
            if done_at[0] is not None and now > done_at[0] + 5:
                break
            time.sleep(0.05)
    except KeyboardInterrupt:
        pass
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    t.join(timeout=5)
    if timed_out:
        print(f"\nrun.py: TIMEOUT after {args.timeout:.0f} s: QEMU killed", file=sys.stderr)
    if result[0] is None:
        print("run.py: no 'pmuvisor: all guests stopped' line", file=sys.stderr)
        return 1
    ok, failed = result[0]
    return 0 if failed == 0 and ok > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
