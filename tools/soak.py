#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Soak test (`make soak`, not part of `make test`).

Boots dts/soak/soak.dts: 4 guests x 2 vCPUs on 2 harts, each vCPU sampling instret with
overflow interrupts (LCOFI) and re-arming from the handler for --minutes (default 5),
plus a probe guest that, after they stopped, checks that every hardware counter of a fresh
vCPU is free and exact. Then compares, per vCPU:
  - the guest's own count of LCOFIs received (`soak: vcpu <n>: <k> LCOFI, ...`) with the
    hypervisor's `pmuvisor: guest <g> vcpu <n>: <o> counter overflows (<u> the platform did not flag),
    <m> LCOFI raised (<d> dropped: cause gone before delivery)`: received == raised - dropped,
    raised <= overflows;
  - every guest's TEST lines (monotonic cycles, inhibited counter holds, exact firmware
    counter, snapshot overflow bit, counters free at the end) and its clean shutdown;
  - the summary line: all guests ok, no panic.
Without icount (the default) guest seconds are wall seconds and QEMU counts host ticks; the
guests also count `silent wraps`: the sampling counter wrapped and no LCOFI came within 50 ms
(see docs/security.md, "overflow robustness"); they re-arm by hand and carry on.
Prints a table and `soak: N passed, M failed`; the log is build/soak/soak.log.
"""
import argparse
import os
import re
import sys

import mkbundle
import qemu

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, "build")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=5)
    ap.add_argument("--period", type=int, default=10000000, help="sampling period (instret)")
    ap.add_argument("--smp", type=int, default=2)
    ap.add_argument("--icount", action="store_true",
                    help="run under -icount shift=0: exact counts, but guest seconds are "
                    "virtual (about 15x slower than wall time with 9 vCPUs on 2 harts)")
    ap.add_argument("--hv", default=os.path.join(BUILD, "pmuvisor.bin"))
    ap.add_argument("-v", dest="verbose", action="store_true", help="stream the log")
    args = ap.parse_args()

    secs = max(5, int(args.minutes * 60))
    out_dir = os.path.join(BUILD, "soak")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(REPO, "dts", "soak", "soak.dts")) as f:
        dts = f.read()
    dts = re.sub(r'"seconds=\d+"', f'"seconds={secs} period={args.period}"', dts)
    dts = re.sub(r'"probe seconds=\d+"', f'"probe seconds={secs + 20}"', dts)
    dts_path = os.path.join(out_dir, "soak.dts")
    with open(dts_path, "w") as f:
        f.write(dts)
    bundle = os.path.join(out_dir, "soak.bundle")
    try:
        mkbundle.build(dts_path, bundle)
    except (mkbundle.BundleError, OSError) as e:
        print(f"soak: mkbundle failed (make guest-images?): {e}")
        return 1
    cmd = qemu.machine_cmd(args.hv, bundle, smp=args.smp,
                           icount="shift=0" if args.icount else None)
    log_path = os.path.join(out_dir, "soak.log")
    print(f"soak: {secs} s, period {args.period}; log {os.path.relpath(log_path, REPO)}",
          flush=True)

    def show(ln):
        if args.verbose or ("TEST PASS" not in ln and ("soak:" in ln or "pmuvisor: guest" in ln)):
            print("  | " + ln, flush=True)

    r = qemu.run_process(cmd, (secs + 20) * (25 if args.icount else 1) + 240, log_path,
                         echo=show, stop_re=re.compile("all guests stopped"),
                         elf=os.path.splitext(args.hv)[0] + ".elf")
    lines, timed_out, wall = r.lines, r.timed_out, r.seconds

    passed = failed = 0
    fails = []

    def check(name, ok, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            fails.append(f"{name}: {detail}")

    guest_cnt = {}   # (g, n) -> dict
    hv_cnt = {}      # (g, n) -> (overflows, raised and not dropped)
    tests = {}
    for ln in lines:
        m = re.match(r"\[(\S+)\] soak: vcpu (\d+): (\d+) LCOFI, (\d+) rearms", ln)
        if m:
            sw = re.search(r"(\d+) silent-wraps", ln)
            guest_cnt[(m.group(1), int(m.group(2)))] = {"lcofi": int(m.group(3)),
                                                        "rearms": int(m.group(4)), "line": ln,
                                                        "silent": int(sw.group(1)) if sw else -1}
        m = re.match(r"pmuvisor: guest (\S+) vcpu (\d+): (\d+) counter overflows \(\d+ [^)]*\), (\d+) LCOFI raised"
                     r" \((\d+) dropped", ln)
        if m:
            hv_cnt[(m.group(1), int(m.group(2)))] = (int(m.group(3)), int(m.group(4)) - int(m.group(5)))
        m = re.match(r"\[(\S+)\] TEST (PASS|FAIL) (\S+)", ln)
        if m:
            tests.setdefault(m.group(1), [0, 0])[m.group(2) == "FAIL"] += 1
            if m.group(2) == "FAIL":
                fails.append(ln)
    check("no-timeout", not timed_out, "QEMU still running at the deadline" +
          "".join(f"; {h}" for h in r.harts))
    check("no-panic", not any("PANIC" in ln for ln in lines), "hypervisor panic")
    summ = [ln for ln in lines if "all guests stopped" in ln]
    check("summary", bool(summ) and summ[-1].endswith("5 ok, 0 failed"),
          summ[-1] if summ else "no summary line")
    for g in ("s0", "s1", "s2", "s3", "probe"):
        p_, f_ = tests.get(g, [0, 0])
        check(f"{g}-tests", p_ > 0 and f_ == 0, f"{p_} passed, {f_} failed")
        check(f"{g}-shutdown", any(ln == f"pmuvisor: guest {g} shutdown (reason=none)"
                                   for ln in lines), "no clean shutdown line")

    print(f"\nsoak: {wall:.0f} s wall{' (-icount shift=0)' if args.icount else ' (no icount)'}")
    print(f"{'guest':6} {'vcpu':>4} {'guest LCOFI':>12} {'rearms':>8} {'hv overflows':>13} "
          f"{'hv raised':>10} {'silent wraps':>13}")
    tot = [0, 0, 0]
    for g in ("s0", "s1", "s2", "s3"):
        for n in (0, 1):
            gc = guest_cnt.get((g, n))
            hc = hv_cnt.get((g, n))
            if gc is None or hc is None:
                check(f"{g}/{n}-counts", False, f"guest line {gc is not None}, "
                      f"hypervisor line {hc is not None}")
                continue
            print(f"{g:6} {n:>4} {gc['lcofi']:>12} {gc['rearms']:>8} {hc[0]:>13} {hc[1]:>10} "
                  f"{gc['silent']:>13}")
            tot[0] += gc["lcofi"]
            tot[1] += hc[0]
            tot[2] += hc[1]
            check(f"{g}/{n}-received-equals-raised", gc["lcofi"] == hc[1],
                  f"guest received {gc['lcofi']}, hypervisor raised {hc[1]}")
            check(f"{g}/{n}-raised-le-overflows", hc[1] <= hc[0],
                  f"raised {hc[1]} > overflows {hc[0]}")
            check(f"{g}/{n}-sampled", gc["lcofi"] > 0, "no interrupt at all")
    print(f"{'total':6} {'':>4} {tot[0]:>12} {'':>8} {tot[1]:>13} {tot[2]:>10}")
    if fails:
        print("\nfailures:")
        for f in fails:
            print("  " + f)
    print(f"soak: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
