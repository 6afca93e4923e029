#!/usr/bin/env python3
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
import shutil
import struct
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, "build")
QEMU = os.environ.get("QEMU", "qemu-system-riscv64")
ALIGN = 4096


# ------------------------------------------------------------ seed corpus
def make_corpus(out_dir):
    """One seed per configuration: the DTB with pmuvisor,*-blob references to small
    blobs right after it, then the 4-byte pad fuzz_config.c appends as zeros."""
    os.makedirs(out_dir, exist_ok=True)
    n = 0
    dts_files = sorted(glob.glob(os.path.join(REPO, "dts", "*.dts")) +
                       glob.glob(os.path.join(REPO, "dts", "*", "*.dts")))
    with tempfile.TemporaryDirectory() as tmp:
        for dts in dts_files:
            dtb = os.path.join(tmp, "c.dtb")
            p = subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", dtb, dts],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f"fuzz: skipping {os.path.relpath(dts, REPO)}: dtc failed", file=sys.stderr)
                continue
            p = subprocess.run(["fdtget", "-l", dtb, "/guests"], capture_output=True, text=True)
            guests = p.stdout.split() if p.returncode == 0 else []
            refs = []
            for g in guests:
                node = f"/guests/{g}"
                refs.append((node, "pmuvisor,image-blob"))
                q = subprocess.run(["fdtget", dtb, node, "initrd"], capture_output=True)
                if q.returncode == 0:
                    refs.append((node, "pmuvisor,initrd-blob"))
            for node, prop in refs:  # placeholders: the DTB size becomes final
                subprocess.run(["fdtput", "-t", "u", dtb, node, prop, "0", "0", "0", "0"],
                               check=True)
            with open(dtb, "rb") as f:
                size = struct.unpack(">I", f.read(8)[4:8])[0]
            off = (size + ALIGN - 1) & ~(ALIGN - 1)
            for i, (node, prop) in enumerate(refs):
                subprocess.run(["fdtput", "-t", "u", dtb, node, prop, "0",
                                str(off + i * ALIGN), "0", str(ALIGN)], check=True)
            with open(dtb, "rb") as f:
                data = f.read()[:size]
            pad = off + len(refs) * ALIGN - len(data)
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
    # it reached the one-line error and the guest console prefix unescaped)
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
def start_fuzzer(name, seconds, logs):
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
    log = os.path.join(logs, f"{name}.log")
    f = open(log, "w")
    f.write("$ " + " ".join(cmd) + "\n")
    f.flush()
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         cwd=work)
    return (p, f, log, cmd), None


def finish_fuzzer(name, handle, seconds):
    p, f, log, _ = handle
    try:
        rc = p.wait(timeout=seconds + 120)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    f.close()
    with open(log, errors="replace") as fh:
        text = fh.read()
    execs = re.search(r"stat::number_of_executed_units:\s*(\d+)", text)
    cov = re.findall(r"cov: (\d+) ft: (\d+)", text)
    corpus = re.findall(r"corp: (\d+)/", text)
    summary = (f"{name}: {int(execs.group(1)) if execs else '?'} runs, "
               f"coverage {cov[-1][0] if cov else '?'} edges, corpus {corpus[-1] if corpus else '?'}"
               f" (log {os.path.relpath(log, REPO)})")
    if rc != 0:
        crash = re.findall(r"Test unit written to (\S+)", text)
        why = [ln for ln in text.splitlines()
               if re.search(r"ERROR: |check failed|runtime error|SUMMARY", ln)][:4]
        return False, summary + f"\n    exit status {rc}; " + \
            (f"input {crash[-1]}" if crash else "no artifact") + \
            "".join("\n    " + w for w in why)
    return True, summary


# ------------------------------------------------------------ guest fuzzer
def guest_run(seed, calls, logs):
    with open(os.path.join(REPO, "dts", "tests", "fuzz-pmu.dts")) as f:
        dts = f.read()
    dts = re.sub(r'bootargs = "seed=[^"]*"', f'bootargs = "seed={seed:#x} calls={calls}"', dts)
    # the victim checks for as long as the fuzzer is expected to run
    secs = max(10, int(calls * 45 / 1000000))
    dts = re.sub(r'bootargs = "seconds=\d+"', f'bootargs = "seconds={secs}"', dts)
    tmpd = os.path.join(BUILD, "fuzz", "guest")
    os.makedirs(tmpd, exist_ok=True)
    path = os.path.join(tmpd, f"fuzz-pmu-{seed:x}.dts")
    with open(path, "w") as f:
        f.write(dts)
    bundle = path[:-4] + ".bundle"
    r = subprocess.run([sys.executable, os.path.join(REPO, "tools", "mkbundle.py"), path, bundle],
                       capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0:
        return False, f"guest seed {seed:#x}: mkbundle failed: {r.stderr.strip()}"
    cmd = [QEMU, "-M", "virt", "-cpu", "max", "-smp", "2", "-m", "1G", "-nographic",
           "-bios", "default", "-kernel", os.path.join(BUILD, "pmuvisor.bin"), "-initrd", bundle]
    log = os.path.join(logs, f"guest-{seed:x}.log")
    t0 = time.monotonic()
    timeout = 120 + calls * 200 / 1000000
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                             timeout=timeout, stdin=subprocess.DEVNULL).stdout
        timed_out = False
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or "")
        timed_out = True
    wall = time.monotonic() - t0
    with open(log, "w") as f:
        f.write(out)
    fails = [ln for ln in out.splitlines() if "TEST FAIL" in ln or "PANIC" in ln
             or re.search(r"fuzz-pmu: hart \d+ call \d+:", ln)]
    summary = re.search(r"all guests stopped: (\d+) ok, (\d+) failed", out)
    stats = [ln.split("] ", 1)[-1] for ln in out.splitlines() if "PMU calls" in ln]
    ok = not timed_out and not fails and summary and summary.group(2) == "0"
    text = (f"guest seed {seed:#x}: {calls} calls, {wall:.0f} s wall"
            f"{' TIMEOUT' if timed_out else ''} (log {os.path.relpath(log, REPO)})" +
            "".join("\n    " + s for s in stats) +
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
    running = {}
    for name in ("config_fuzz", "vpmu_fuzz"):
        if name not in want:
            continue
        h, err = start_fuzzer(name, args.seconds, logs)
        if err:
            print(f"  FAIL {err}")
            failed += 1
        else:
            print(f"== {name}: fuzzing for {args.seconds} s", flush=True)
            running[name] = h
    for name, h in running.items():
        ok, text = finish_fuzzer(name, h, args.seconds)
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
