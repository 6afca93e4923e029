#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Host test of tools/check_linux.py's judgement of a `perf record` of loop-5m (and of gzip's
raw user IPs).

usage: test_check_linux.py

perf record counts a task on one event per CPU, each with its own period, so a recording of
the 5,000,002-instruction loop at -c 100000 holds 50 samples, or down to one less for each
further CPU of the guest (a CPU the task left before a full period shows no sample, so the
CPUs perf script names are not all it ran on), never more. Feeds parse() console lines as a
guest prints them and checks what judge_recording() makes of them. Prints TAP as cmocka does
(build/unit/check-linux runs it).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_linux  # noqa: E402

LO, HI = 0x100b8, 0x100c0
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def boot(cpus, samples, script):
    """A guest's lines: its CPUs, one recording with `samples` and its perf script lines"""
    lines = [f"smp: Brought up 1 node, {cpus} CPU{'s' if cpus > 1 else ''}",
             "=== perf record instructions:u loop-5m ===",
             f"[ perf record: Captured and wrote 0.002 MB /tmp/perf.data ({samples} samples) ]",
             "=== perf script instructions:u loop-5m ==="] + script + ["=== uptime ==="]
    info = check_linux.parse(lines)
    assert len(info["recordings"]) == 1, info["recordings"]
    return info, info["recordings"][0]


def judge(info, rec):
    return check_linux.judge_recording(rec, LO, HI, 50, 0, info["cpus"])


def on(cpu, n, ip=0x100bc):
    return [f"[{cpu:03d}]          {ip:x}"] * n


@check
def parses_cpus_and_sampled_cpus():
    info, rec = boot(2, 50, on(0, 20) + on(1, 30))
    assert info["cpus"] == 2 and rec["cpus"] == {0, 1}, (info["cpus"], rec["cpus"])
    assert rec["ips"] == [0x100bc] * 50 and rec["samples"] == 50


@check
def one_cpu_guest_holds_every_sample():
    info, rec = boot(1, 50, on(0, 50))
    assert judge(info, rec) == []
    info, rec = boot(1, 49, on(0, 49))
    assert judge(info, rec) == ["49 samples, want 50"], judge(info, rec)


@check
def a_move_may_leave_one_partial_period():
    info, rec = boot(2, 49, on(0, 28) + on(1, 21))
    assert judge(info, rec) == []
    # 60,000 instructions on CPU 0 first: no sample there, 49 on CPU 1
    info, rec = boot(2, 49, on(1, 49))
    assert judge(info, rec) == []
    info, rec = boot(2, 48, on(0, 28) + on(1, 20))
    assert judge(info, rec) == ["48 samples, want 50 (or down to 49 on 2 CPUs)"], \
        judge(info, rec)
    info, rec = boot(4, 47, on(0, 10) + on(1, 10) + on(2, 10) + on(3, 17))
    assert judge(info, rec) == []


@check
def never_more_than_the_analytic_count():
    info, rec = boot(2, 51, on(0, 25) + on(1, 26))
    assert judge(info, rec) == ["51 samples, want 50 (or down to 49 on 2 CPUs)"], \
        judge(info, rec)


@check
def cpus_not_named_count_the_guest_cpus():
    info, rec = boot(2, 49, ["         100bc"] * 49)
    assert rec["cpus"] is None and judge(info, rec) == []
    info, rec = boot(1, 49, ["         100bc"] * 49)
    assert judge(info, rec) == ["49 samples, want 50"], judge(info, rec)


@check
def a_missed_cpu_line_counts_the_named_cpus():
    info, rec = boot(2, 49, on(0, 28) + on(1, 21))
    info["cpus"] = 1
    assert judge(info, rec) == [], judge(info, rec)


@check
def ips_outside_the_loop_are_named():
    info, rec = boot(1, 50, on(0, 49) + on(0, 1, 0x100c8))
    assert judge(info, rec) == [
        f"1 IPs outside loop..loop_end [{LO:#x}, {HI:#x}]: 0x100c8"], judge(info, rec)


GZIP = ["      0 [000]     0.000000: PERF_RECORD_MMAP -1/0: [0xffffffff80002000(0x1811c2) @ "
        "0xffffffff80002000]: x [kernel.kallsyms]_text",
        "     49 [000]     1.378821:          1  ffffffff8006f330 perf_event_exec+0x14c",
        "     49 [000]     1.378887: PERF_RECORD_MMAP2 49/49: [0x10000(0x15a000) @ 0 00:02 17 "
        "4275481270]: r-xp /bin/busybox",
        "     49 [001]     1.380012:     238187            90efa crc32_block_endian0+0x22"]


@check
def gzip_user_ips_inside_busybox_code():
    code = (0x10000, 0x169bbf)
    assert check_linux.foreign_user_samples(GZIP, code) == []
    bad = "     49 [001]     1.381000:      70044           16a5c8 Arg1Opt+0x8"
    assert check_linux.foreign_user_samples(GZIP + [bad], code) == [bad.strip()]
    # kernel samples only, or the section missing: no user sample to judge
    assert check_linux.foreign_user_samples(GZIP[:3], code) is None
    assert check_linux.foreign_user_samples([], code) is None
    # a line the console cut within its IP is not taken for a sample
    cut = ["     49 [001]     1.382000:     238187            9", "0efa crc32_block_endian0+0x22"]
    assert check_linux.foreign_user_samples(GZIP + cut, code) == []


def main():
    print(f"1..{len(CHECKS)}", flush=True)
    failed = 0
    for i, fn in enumerate(CHECKS, 1):
        try:
            fn()
            print(f"ok {i} - {fn.__name__}")
        except AssertionError as e:
            failed += 1
            print(f"not ok {i} - {fn.__name__}\n# {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
