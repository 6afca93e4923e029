#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Profile a guest from the hypervisor: boot a configuration with one guest profiled, then
turn the samples into perf.data, a flame graph and a report (`make profile`).

usage: profile_run.py [--config NAME] --guest NAME [--event EV] [--period N | --freq HZ]
                      [--depth N] [--timeout S] [--build DIR]

The configuration is dts/NAME.dts (default: default); the guest node named by --guest gets
profile = EV (cycles, instructions or an SBI event_idx), profile-period and profile-depth
(docs/profiling.md); a guest booting build/linux/Image also gets profile-vmlinux, so that its
samples carry pid, tid and comm (mkbundle reads task_struct's offsets from the vmlinux DWARF).
--freq HZ sets the period to 10^9 / HZ: under -icount shift=0 (Linux configurations always run
so) QEMU counts 10^9 cycles and instructions per second of guest time, so that is HZ samples
per second of the guest's own run time.

Writes build/profile/CONFIG-GUEST.log (the console, with the sampler's "!P " lines) and the
directory build/profile/CONFIG-GUEST/ (tools/profile.py: GUEST/perf.data, flame.svg,
report.txt, stacks.folded, root/ for perf's --symfs). The console shown omits the "!P " lines.
"""
import argparse
import os
import shlex
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mkbundle  # noqa: E402
import profile as prof  # noqa: E402
import qemu  # noqa: E402
import run  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINUX_IMAGE = "build/linux/Image"
LINUX_VMLINUX = "build/linux/vmlinux"


def profiled_bundle(dts, out, guest, event, period, depth):
    """The configuration's bundle with guest profiled; its guests' properties."""
    def edit(fdt):
        node = fdt.path_offset(f"/guests/{guest}", mkbundle.libfdt.QUIET_NOTFOUND)
        if node < 0:
            raise mkbundle.BundleError(f"{dts}: no guest named {guest}")
        fdt.resize(fdt.totalsize() + 256)
        fdt.setprop_str(node, "profile", event)
        fdt.setprop(node, "profile-period", struct.pack(">Q", period))
        fdt.setprop_u32(node, "profile-depth", depth)
        image = mkbundle.string(mkbundle.props(fdt, node).get("image"))
        if image == LINUX_IMAGE:
            fdt.setprop_str(node, "profile-vmlinux", LINUX_VMLINUX)

    mkbundle.build(dts, out, edit)
    return run.guest_props(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="default")
    ap.add_argument("--guest", required=True)
    ap.add_argument("--event", default="cycles")
    rate = ap.add_mutually_exclusive_group()
    rate.add_argument("--period", type=int)
    rate.add_argument("--freq", type=int)
    ap.add_argument("--depth", type=int, default=32)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    args = ap.parse_args()
    period = args.period or (10**9 // args.freq if args.freq else 100000)
    dts = os.path.join(REPO, "dts", args.config + ".dts")
    name = f"{args.config.replace('/', '-')}-{args.guest}"
    outdir = os.path.join(args.build, "profile")
    bundle = os.path.join(outdir, name + ".bundle")
    log = os.path.join(outdir, name + ".log")
    os.makedirs(outdir, exist_ok=True)
    try:
        guests = profiled_bundle(dts, bundle, args.guest, args.event, period, args.depth)
    except (mkbundle.BundleError, OSError, mkbundle.libfdt.FdtException) as e:
        print(f"profile: {e}", file=sys.stderr)
        return 2
    extra = run.dts_run_args(args.config)
    if run.boots_linux(guests) and run.without_icount(extra) == extra:
        extra += ["-icount", "shift=0"]
    cmd = qemu.machine_cmd(os.path.join(args.build, "pmuvisor.bin"), bundle, extra)
    print(f"profile: guest {args.guest} of {args.config}: {args.event} every {period}\n"
          f"profile: {' '.join(shlex.quote(c) for c in cmd)}", flush=True)

    def out(line):
        if not line.startswith(prof.CONSOLE_PREFIX.decode()):
            print(line, flush=True)

    r = qemu.run_process(cmd, args.timeout, log_path=log, echo=out, stop_re=run.RE_SUMMARY,
                         elf=os.path.join(args.build, "pmuvisor.elf"))
    if r.timed_out:
        print(f"profile: TIMEOUT after {args.timeout:.0f} s: QEMU killed (samples so far are "
              "converted)", file=sys.stderr)
    print(f"profile: console log {os.path.relpath(log, REPO)}")
    return prof.main([log, "-o", os.path.join(outdir, name)])


if __name__ == "__main__":
    sys.exit(main())
