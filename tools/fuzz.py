#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Run pmuvisor's fuzzers for longer than `make test` does (`make fuzz`).

Host side (libFuzzer, ASan + UBSan):
  build/unit/config_fuzz   config_parse() on malformed configuration DTBs
  build/unit/vpmu_fuzz     the vPMU SBI dispatcher on random guest registers
each for --seconds (default 300), both at once (one per core), each growing its own
corpus in build/fuzz/<name>/ from the seeds in build/unit/<name>_corpus/.
Guest side: --guest-runs (default 1) runs of the fuzz-pmu guest image beside the
fuzz-victim guest under QEMU (dts/tests/fuzz-pmu.dts) with fresh random seeds, each
--guest-calls SBI PMU calls (default 1,000,000).

Crash inputs land in build/fuzz/artifacts/; logs in build/fuzz/*.log.
The last line is `fuzz: N passed, M failed`; exit status 1 if anything failed.

  --make-corpus DIR    write config_fuzz seeds (every dts/**/*.dts compiled, with
                       small blob references and the matching bundle padding) and exit
"""
import argparse
import glob
import os
import random
import re
import struct
import subprocess
import sys

import mkbundle
import qemu

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, "build")
ALIGN = mkbundle.ALIGN


# ------------------------------------------------------------ seed corpus
def make_corpus(out_dir):
    """One seed per configuration: the DTB with pmuvisor,*-blob references to small
    blobs right after it, then the 4-byte pad fuzz_config.c appends as zeros."""
    os.makedirs(out_dir, exist_ok=True)
    n = 0
    dts_files = sorted(glob.glob(os.path.join(REPO, "dts", "*.dts")) +
                       glob.glob(os.path.join(REPO, "dts", "*", "*.dts")))
    for dts in dts_files:
        try:
            fdt = mkbundle.compile_dts(dts)
            guests = mkbundle.guests(fdt)
        except mkbundle.BundleError:
            print(f"fuzz: skipping {os.path.relpath(dts, REPO)}: dtc failed", file=sys.stderr)
            continue
        refs = []
        for g, props in guests:
            refs.append((g, "pmuvisor,image-blob", len(refs)))
            if "initrd" in props:
                refs.append((g, "pmuvisor,initrd-blob", len(refs)))
        data, _ = mkbundle.place_blobs(fdt, refs, [ALIGN] * len(refs))
        pad = mkbundle.align(len(data)) + len(refs) * ALIGN - len(data)
        name = os.path.relpath(dts, os.path.join(REPO, "dts")).replace("/", "_")[:-4]
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data + struct.pack(">I", pad))
        n += 1
    # a few hand-made edge cases: empty, a bare header, a truncated real DTB
    with open(os.path.join(out_dir, "edge_empty"), "wb") as f:
        f.write(b"")
    with open(os.path.join(out_dir, "edge_header"), "wb") as f:
        f.write(struct.pack(">10I", 0xd00dfeed, 40, 40, 40, 40, 17, 16, 0, 0, 0) +
                struct.pack(">I", 0))
    seeds = sorted(os.listdir(out_dir))
    real = [s for s in seeds if not s.startswith("edge_") and not s.startswith(".")]
    if real:
        with open(os.path.join(out_dir, real[0]), "rb") as f:
            d = f.read()
        with open(os.path.join(out_dir, "edge_truncated"), "wb") as f:
            f.write(d[:len(d) // 2] + struct.pack(">I", 0))
    # regression: a guest node name with a newline and a non-ASCII byte (found by config_fuzz:
    # it reached the one-line error and the guest console prefix unescaped); bytes libfdt's
    # set_name() would not write, so the node's FDT_BEGIN_NODE token is edited in place
    base = os.path.join(out_dir, "tests_base")
    if os.path.isfile(base):
        with open(base, "rb") as f:
            d = f.read()
        tok = b"\x00\x00\x00\x01base\x00"
        if tok in d:
            with open(os.path.join(out_dir, "edge_guest_name_bytes"), "wb") as f:
                f.write(d.replace(tok, b"\x00\x00\x00\x01b\n\x8be\x00", 1))
    print(f"fuzz: {n} configuration seeds in {os.path.relpath(out_dir, REPO)}")
    return 0


# ------------------------------------------------------------ host fuzzers
def fuzzer_run(name, seconds, logs):
    """(command, log, working directory) of one host fuzzer, or None and why not"""
    exe = os.path.join(BUILD, "unit", name)
    if not os.access(exe, os.X_OK):
        r = subprocess.run(["make", "--no-print-directory", "-C", REPO, f"build/unit/{name}"])
        if r.returncode != 0 or not os.access(exe, os.X_OK):
            return None, f"{name}: not built"
    work = os.path.join(BUILD, "fuzz", name)
    os.makedirs(work, exist_ok=True)
    arts = os.path.join(BUILD, "fuzz", "artifacts")
    os.makedirs(arts, exist_ok=True)
    cmd = [exe, f"-max_total_time={seconds}", "-print_final_stats=1", "-timeout=10",
           "-rss_limit_mb=4096", f"-artifact_prefix={arts}/{name}-", work]
    seeds = exe + "_corpus"
    if os.path.isdir(seeds):
        cmd.append(seeds)
    return (cmd, os.path.join(logs, f"{name}.log"), work), None


def fuzzer_verdict(name, r, log):
    text = r.output
    execs = re.search(r"stat::number_of_executed_units:\s*(\d+)", text)
    cov = re.findall(r"cov: (\d+) ft: (\d+)", text)
    corpus = re.findall(r"corp: (\d+)/", text)
    summary = (f"{name}: {int(execs.group(1)) if execs else '?'} runs, "
               f"coverage {cov[-1][0] if cov else '?'} edges, corpus {corpus[-1] if corpus else '?'}"
               f" (log {os.path.relpath(log, REPO)})")
    if r.rc != 0:
        crash = re.findall(r"Test unit written to (\S+)", text)
        why = [ln for ln in r.lines
               if re.search(r"ERROR: |check failed|runtime error|SUMMARY", ln)][:4]
        return False, summary + f"\n    exit status {r.rc}; " + \
            (f"input {crash[-1]}" if crash else "no artifact") + \
            "".join("\n    " + w for w in why)
    return True, summary


# ------------------------------------------------------------ guest fuzzer
def guest_run(seed, calls, logs):
    with open(os.path.join(REPO, "dts", "tests", "fuzz-pmu.dts")) as f:
        dts = f.read()
    dts, n = re.subn(r'bootargs = "seed=\S+ calls=\d+ ',
                     f'bootargs = "seed={seed:#x} calls={calls} ', dts)
    # the victim checks for as long as the fuzzer is expected to run
    secs = max(10, int(calls * 45 / 1000000))
    dts, m = re.subn(r'bootargs = "seconds=\d+"', f'bootargs = "seconds={secs}"', dts)
    if (n, m) != (1, 1):
        return False, f"guest seed {seed:#x}: dts/tests/fuzz-pmu.dts's bootargs changed shape"
    tmpd = os.path.join(BUILD, "fuzz", "guest")
    os.makedirs(tmpd, exist_ok=True)
    path = os.path.join(tmpd, f"fuzz-pmu-{seed:x}.dts")
    with open(path, "w") as f:
        f.write(dts)
    bundle = path[:-4] + ".bundle"
    try:
        mkbundle.build(path, bundle)
    except (mkbundle.BundleError, OSError) as e:
        return False, f"guest seed {seed:#x}: mkbundle failed: {e}"
    log = os.path.join(logs, f"guest-{seed:x}.log")
    r = qemu.run_process(qemu.machine_cmd(os.path.join(BUILD, "pmuvisor.bin"), bundle),
                         120 + calls * 200 / 1000000, log,
                         elf=os.path.join(BUILD, "pmuvisor.elf"))
    fails = [ln for ln in r.lines if "TEST FAIL" in ln or "PANIC" in ln
             or re.search(r"fuzz-pmu: hart \d+ call \d+:", ln)]
    summary = re.search(r"all guests stopped: (\d+) ok, (\d+) failed", r.output)
    stats = [ln.split("] ", 1)[-1] for ln in r.lines if "PMU calls" in ln]
    # every guest ran its checks: one TEST DONE each, with checks and no failure
    done = re.findall(r"TEST DONE \S+ (\d+) passed, (\d+) failed", r.output)
    ok = (not r.timed_out and not fails and summary and summary.group(2) == "0" and
          len(done) == int(summary.group(1)) and all(int(p) and not int(f) for p, f in done))
    text = (f"guest seed {seed:#x}: {calls} calls, {r.seconds:.0f} s wall"
            f"{' TIMEOUT' if r.timed_out else ''} (log {os.path.relpath(log, REPO)})" +
            "".join("\n    " + s for s in stats + r.harts) +
            "".join("\n    " + s for s in fails[:8]))
    return bool(ok), text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=300, help="per host fuzzer (default 300)")
    ap.add_argument("--only", choices=["config_fuzz", "vpmu_fuzz", "guest"], action="append",
                    help="run only this fuzzer (repeatable)")
    ap.add_argument("--guest-runs", type=int, default=1)
    ap.add_argument("--guest-calls", type=int, default=1000000)
    ap.add_argument("--seed", type=lambda s: int(s, 0), help="first guest seed (default: random)")
    ap.add_argument("--make-corpus", metavar="DIR")
    args = ap.parse_args()
    if args.make_corpus:
        return make_corpus(args.make_corpus)

    logs = os.path.join(BUILD, "fuzz")
    os.makedirs(logs, exist_ok=True)
    want = set(args.only or ["config_fuzz", "vpmu_fuzz", "guest"])
    passed = failed = 0
    runs = {}
    for name in ("config_fuzz", "vpmu_fuzz"):
        if name not in want:
            continue
        run, err = fuzzer_run(name, args.seconds, logs)
        if err:
            print(f"  FAIL {err}")
            failed += 1
        else:
            runs[name] = run

    def started(name, cmd):
        print(f"== {name}: fuzzing for {args.seconds} s", flush=True)

    # both at once, one per core
    results = qemu.run_all(runs, args.seconds + 120, len(runs), on_start=started)
    for name, r in results.items():
        ok, text = fuzzer_verdict(name, r, runs[name][1])
        print(("  PASS " if ok else "  FAIL ") + text, flush=True)
        passed += ok
        failed += not ok
    if "guest" in want and args.guest_runs > 0:
        seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
        for i in range(args.guest_runs):
            print(f"== guest fuzz-pmu, seed {seed + i:#x}", flush=True)
            ok, text = guest_run(seed + i, args.guest_calls, logs)
            print(("  PASS " if ok else "  FAIL ") + text, flush=True)
            passed += ok
            failed += not ok
    print(f"fuzz: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
