#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Wall-clock time of a perf user's shell session, natively and in a pmuvisor guest.

usage: walltime.py [--rounds N] [--prompt-boots N] [--only native,guest,guest-sbi] [--hv BIN]
                   [--check]

Boots build/linux/Image + initramfs.cpio with the linux-shell configuration's bootargs on QEMU `-M
virt,aia=aplic-imsic,aia-guests=1 -smp 2 -m 1G -icount shift=0`: natively (OpenSBI runs the kernel,
`-cpu max`), as the guest of the linux-shell configuration (2 vCPUs pinned to the 2 harts, each
with a guest interrupt file) with pmuvisor's counter-delegation backend (`-cpu max`), and with its
SBI backend (`-cpu max,smcdeleg=false,ssccfg=false`). Each round boots the sessions one after
another, each while the others wait at their prompt, and then runs each command in every session in
turn before the next (the order rotating from command to command): the host's speed drifts by tens
of percent over minutes, and so a command meets the same host in every session. Each session types
the same commands at the BusyBox prompt, timed on the host by the console's own markers: the
prompt; a set of everyday commands (BEFORE); the system-wide perf commands (`perf stat -a`, `perf
record -a`, `perf top`); the same set again (AFTER). Each round then boots every session
--prompt-boots more times to the prompt only: the host time of the same boot varies by up to 40 %
from one boot to the next, natively as in a guest, and the prompt row is the median of all of them.
It prints two tables: wall-clock seconds (or the guest's own figure where a row says so) and the
CPU seconds QEMU used meanwhile (other work on the host is not in them), each the median of the
rounds (min-max when they differ), per session, before and after, with the ratios the targets are
about (guest / native, guest after / guest before). --check: exit 1 when a wall-clock ratio misses
its target. Every QEMU run has a timeout: --timeout for the boot and for each command. Logs:
build/test-logs/walltime-<session>-<round>.log and walltime-<session>-prompt-<n>.log.
"""
import argparse
import functools
import os
import re
import signal
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_linux  # noqa: E402
import mkbundle  # noqa: E402
import qemu  # noqa: E402
import run  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPT = re.compile(r"# (?:\x1b\[6n)?$")
SESSIONS = {  # name: (pmuvisor guest?, -cpu)
    "native": (False, "max"),
    "guest": (True, "max"),
    "guest-sbi": (True, "max,smcdeleg=false,ssccfg=false"),
}
# as dts/linux-shell.dts, for both: natively Linux sends its IPIs through the IMSIC as well
MACHINE = "virt,aia=aplic-imsic,aia-guests=1"
PIPE_RUNS = 3
PIPE_LOOPS = 20000


def pipe(prefix=""):
    """perf bench sched pipe, PIPE_RUNS runs of PIPE_LOOPS round trips. At -l 2000 (22 ms in
    all) a run read its ping-pong's 11 us/op or up to 4 times that, natively too and with
    -icount sleep=off: what else ran in those few ms, on either CPU, counted per op. At 20,000
    the same CPU reads 11-15 us/op in every run; across CPUs a run still reads 21-48 (natively
    25-44), as the scheduler places the two tasks, so a row reads the median of every run of
    every round."""
    return (f"for i in $(seq {PIPE_RUNS}); do {prefix}perf bench sched pipe -l {PIPE_LOOPS}; "
            "done 2>&1 | grep usecs/op")


# (key, what, command, unit): "s" the host's seconds from the command's start marker to its end
# marker (a perf bench row's "-wall": each run's, to its result line); "guest s" the guest's own
# seconds (/proc/uptime) between them; "us/op" what perf bench prints (a round keeps every run's);
# "samples" what perf record says it wrote. Rows without a command are read from the output of
# the row above.
MEASURES = [
    # with perf's throttling on the interrupt's time off: natively it can cut a recording to a
    # tenth of its samples from one boot to the next, which would make the two incomparable
    ("record", "`perf record -e instructions -c 10000` of `sha256sum /bin/perf` (high rate; "
     "`perf_cpu_time_max_percent` 0)",
     "echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent; perf record -e instructions -c 10000 "
     "-o /tmp/h.data -- sha256sum /bin/perf 2>&1 | tail -n 1", "s"),
    ("record-samples", "... its samples", None, "samples"),
    ("sleep", "`sleep 2`", "sleep 2", "s"),
    ("nsleep", "`/bin/nsleep` (ten 10 ms sleeps)", "/bin/nsleep", "guest s"),
    ("pipe1", f"`taskset 1 perf bench sched pipe -l {PIPE_LOOPS}` (both tasks on CPU 0), "
     f"{PIPE_RUNS} runs a round", pipe("taskset 1 "), "us/op"),
    ("pipe1-wall", "... the wall time of a run", None, "s"),
    ("pipe", f"`perf bench sched pipe -l {PIPE_LOOPS}` (tasks on either CPU), {PIPE_RUNS} runs a "
     "round", pipe(), "us/op"),
    ("pipe-wall", "... the wall time of a run", None, "s"),
    # last: they are system-wide themselves. While perf stat -a counts, the guest's vCPUs count
    # too: under -icount they run one at a time (exclusive counting, docs/vpmu.md)
    ("pipe-a", f"`perf stat -a -e instructions -- perf bench sched pipe -l {PIPE_LOOPS}` (while "
     "counting system-wide)",
     f"perf stat -a -e instructions -- perf bench sched pipe -l {PIPE_LOOPS} 2>&1 | "
     "grep usecs/op", "us/op"),
    ("interval", "`perf stat -a -I 1000 -e instructions -- sleep 3`",
     "perf stat -a -I 1000 -e instructions -- sleep 3 2>&1 | tail -n 1", "s"),
]
# what a perf user runs system-wide, between BEFORE and AFTER: (key, what, command, unit) as
# above, "count" the first count perf stat prints
SYSTEM_WIDE = [
    ("sw-stat", "`perf stat -a -e cycles -- sleep 1`: cycles of both CPUs",
     "perf stat -a -e cycles -- sleep 1 2>&1 | grep cycles", "count"),
    ("sw-record", "`perf record -a -- sleep 1`: samples",
     "perf record -a -o /tmp/a.data -- sleep 1 2>&1 | tail -n 1", "samples"),
    ("sw-top", "`perf top` for 3 s", "timeout -s INT 3 perf top --stdio -e instructions -d 1 "
     ">/dev/null 2>&1", "s"),
]
UNIT = {k: u for k, _, _, u in MEASURES + SYSTEM_WIDE}


def target(key, ratio):
    """the target of a ratio ("after": guest after / guest before, "before" and "after"
    guest / native in that phase), None: none"""
    if key == "record-samples":
        return None
    return 1.3 if key in ("prompt", "record") and ratio != "growth" else 1.2


def session_steps():
    """[(tag, command)] of one session, in order"""
    out = []
    for phase in ("before", "after"):
        if phase == "after":
            out += [(f"sw:{k}", c) for k, _, c, _ in SYSTEM_WIDE]
        out += [(f"{phase}:{k}", c) for k, _, c, _ in MEASURES if c]
    return out


def qemu_cpu(pid):
    """CPU seconds (user + system) the process has used so far"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def session_cmd(name, args):
    """(QEMU command line, the ELF a hang report symbolizes or None) of a session"""
    guest, cpu = SESSIONS[name]
    qargs = ["-M", MACHINE, "-cpu", cpu, "-smp", "2", "-icount", "shift=0"]
    bundle = os.path.join(args.build, "bundles", "linux-shell.bundle")
    if guest:  # the host memory the configuration asks for (its guest's 1 GiB on one leaf)
        return (qemu.machine_cmd(args.hv, bundle, qargs + run.dts_mem_args("linux-shell")),
                os.path.join(args.build, "pmuvisor.elf"))
    return check_linux.native_cmd(args.build, qargs, mkbundle.bootargs(bundle)), None


def prompt_clock(pid, shown=None):
    """(raw, at): raw is run_process's callback for the console's chunks; at gets (wall s since
    now, QEMU CPU s) when the shell prompt first shows, and shown (a threading.Event) is set.
    pid: [QEMU's pid], once it runs"""
    at, seen, t0 = [], [""], time.monotonic()

    def raw(chunk):
        if not at:
            seen[0] += chunk.decode("utf-8", "replace").replace("\r", "")
            if PROMPT.search(seen[0]):
                at.append((time.monotonic() - t0, qemu_cpu(pid[0])))
                if shown:
                    shown.set()
    return raw, at


def prompt_boot(name, rnd, args):
    """{"prompt": wall s, "prompt#cpu": QEMU CPU s} of a boot that ends at the shell prompt
    ({} if it never came)"""
    pid = [None]
    cmd, elf = session_cmd(name, args)
    raw, at = prompt_clock(pid)
    log = os.path.join(args.build, "test-logs", f"walltime-{name}-prompt-{rnd}.log")
    r = qemu.run_process(cmd, args.timeout * 2, log, raw=raw,
                         dialog=[(PROMPT, "echo @@@prompt; exit\n")],
                         stop_re=re.compile(r"^(?:\[shell\] )?@@@prompt$"),
                         step_timeout=args.timeout, started=lambda p: pid.__setitem__(0, p),
                         elf=elf)
    if not at:
        print(f"walltime: {name} prompt boot {rnd}: no prompt" +
              (" (TIMEOUT" if r.timed_out else f" (QEMU exit status {r.rc}") +
              f": log {os.path.relpath(log, REPO)})",
              flush=True)
        return {}
    print(f"walltime: {name} prompt boot {rnd}: prompt {at[0][0]:.2f}", flush=True)
    return {"prompt": at[0][0], "prompt#cpu": at[0][1]}


def rotated(names, k):
    """names, starting at its k-th (modulo): no session always boots first, alone on the
    host, or always right after the same other session"""
    return names[k % len(names):] + names[:k % len(names)]


class Turns:
    """Whose turn it is to run a step: every session runs step 0, in turn, then step 1, ...
    (the order rotates from step to step), so that the host's speed, which drifts over minutes,
    is the same for a step in every session. Each session's console dialog asks wait(name,
    step) before it types the step; that call also says the session finished the step before.
    A session that ended (gone()) loses its turns."""

    def __init__(self, names, nsteps):
        self.sessions, self.steps = len(names), nsteps
        self.order = [(i, names[(j + i) % len(names)]) for i in range(nsteps)
                      for j in range(len(names))]
        self.pos, self.dead = 0, set()
        self.cv = threading.Condition()

    def _skip(self):
        while self.pos < len(self.order) and self.order[self.pos][1] in self.dead:
            self.pos += 1

    def wait(self, name, step, text):
        """text, once it is name's turn to run step (step == steps: after its last one)"""
        with self.cv:
            if step > 0 and self.pos < len(self.order) and self.order[self.pos] == (step - 1,
                                                                                      name):
                self.pos += 1
            self._skip()
            self.cv.notify_all()
            while (step < self.steps and self.pos < len(self.order) and
                   self.order[self.pos] != (step, name)):
                self.cv.wait()
        return text

    def gone(self, name):
        with self.cv:
            self.dead.add(name)
            self._skip()
            self.cv.notify_all()


def run_session(name, rnd, args, turns, at_prompt):
    """{tag: value} of one boot: "prompt", "<phase>:<key>", and "<tag>#cpu" (QEMU's CPU
    seconds) for the rows in seconds; a step that did not finish has no entry. Each step waits
    for its turn (turns: Turns); at_prompt (threading.Event) is set once the shell prompts."""
    cmd, elf = session_cmd(name, args)
    steps = session_steps()
    typed = [f"echo @@@{i} $(cut -d' ' -f1 /proc/uptime); {c}; "
             f"echo @@@{i} end rc=$? $(cut -d' ' -f1 /proc/uptime)\n" for i, (_, c) in
             enumerate(steps)] + ["exit\n"]
    ends = [re.compile(rf"(?m)^(?:\[shell\] )?@@@{i} end rc=\d+ [\d.]+\n[\s\S]*?# "
                       rf"(?:\x1b\[6n)?$") for i in range(len(steps))]
    dialog = [(rx, functools.partial(turns.wait, name, i, text))
              for i, (rx, text) in enumerate(zip([PROMPT] + ends, typed))]
    marks = {}  # (step, end?) -> (host time, QEMU CPU, guest uptime, line)
    runs_at = {}  # step -> [(host time, QEMU CPU)] as each perf bench run printed its result
    pid = [None]

    def echo(ln):
        m = re.match(r"(?:\[shell\] )?@@@(\d+)( end rc=\d+)? ([\d.]+)$", ln)
        if m:
            marks[(int(m.group(1)), bool(m.group(2)))] = (
                time.monotonic(), qemu_cpu(pid[0]), float(m.group(3)), ln)
        elif marks and re.match(r"(?:\[shell\] )?\s*[\d.]+ usecs/op", ln):
            runs_at.setdefault(max(marks)[0], []).append((time.monotonic(), qemu_cpu(pid[0])))

    log = os.path.join(args.build, "test-logs", f"walltime-{name}-{rnd}.log")
    raw, at = prompt_clock(pid, at_prompt)
    # each command may wait for every session's, once
    r = qemu.run_process(cmd, args.timeout * (len(dialog) + 1) * turns.sessions, log, echo=echo,
                         raw=raw, stop_re=re.compile(rf"^(?:\[shell\] )?@@@{len(steps) - 1} "
                                                     r"end rc=\d"),
                         dialog=dialog, step_timeout=args.timeout,
                         started=lambda p: pid.__setitem__(0, p), elf=elf)
    out = {"prompt": at[0][0], "prompt#cpu": at[0][1]} if at else {}
    text = "\n".join(r.lines)
    for i, (tag, _) in enumerate(steps):
        a, b = marks.get((i, False)), marks.get((i, True))
        if not (a and b) or ":" not in tag:
            continue
        phase, key = tag.split(":")
        body = text[text.find(a[3]):text.find(b[3])]
        wall, cpu_s = b[0] - a[0], (b[1] - a[1]) if None not in (a[1], b[1]) else None
        if UNIT[key] == "s":
            out[tag], out[tag + "#cpu"] = wall, cpu_s
        elif UNIT[key] == "guest s":
            out[tag] = b[2] - a[2]
        elif UNIT[key] == "us/op":
            runs = [float(v) for v in re.findall(r"([\d.]+) usecs/op", body)]
            if runs:
                out[tag] = statistics.median(runs)
                out[tag + "#runs"] = runs
            # each run's wall time: from the start (or the run before) to its result line
            at = [a[:2]] + runs_at.get(i, [])
            out[f"{tag}-wall#runs"] = [y[0] - x[0] for x, y in zip(at, at[1:])]
            if None not in (p[1] for p in at):
                out[f"{tag}-wall#cpu#runs"] = [y[1] - x[1] for x, y in zip(at, at[1:])]
        elif UNIT[key] == "count":
            m = re.search(r"^(?:\[shell\] )?\s*([\d,]+)\s", body, re.M)
            if m:
                out[tag] = int(m.group(1).replace(",", ""))
        elif UNIT[key] == "samples":
            m = re.search(r"\((\d+) samples\)", body)
            if m:
                out[tag] = int(m.group(1))
        if key == "record":
            m = re.search(r"\((\d+) samples\)", body)
            if m:
                out[f"{phase}:record-samples"] = int(m.group(1))
    print(f"walltime: {name} round {rnd}: " +
          ", ".join(f"{k} {v:.2f}" for k, v in out.items() if v is not None and "#" not in k) +
          "".join(f"; {k[:-5]} runs " + " ".join(f"{v:.1f}" for v in vs)
                  for k, vs in out.items() if k.endswith("#runs") and "#cpu" not in k) +
          ("" if not r.timed_out else " (TIMEOUT: log " + os.path.relpath(log, REPO) + ")"),
          flush=True)
    return out


def run_round(names, rnd, args):
    """{session: run_session()} of one round: the sessions boot one after another, each while
    the others wait at their prompt (which session boots first rotates from round to round),
    then take their commands in turn (Turns)"""
    got, turns, threads = {}, Turns(names, len(session_steps())), []

    def session(n, shown):
        try:
            got[n] = run_session(n, rnd, args, turns, shown)
        finally:  # its turns go to the others
            turns.gone(n)
            shown.set()
    for n in rotated(names, rnd):
        shown = threading.Event()
        threads.append(threading.Thread(target=session, args=(n, shown)))
        threads[-1].start()
        shown.wait()
    for t in threads:
        t.join()
    return got


def summary(vals):
    """(median or None, cell text)"""
    vals = [v for v in vals if v is not None]
    if not vals:
        return None, "-"
    med = statistics.median(vals)
    ints = all(isinstance(v, int) for v in vals)

    def f(v):
        return f"{v:,.0f}" if ints else f"{v:.2f}"
    cell = f(med)
    if len(vals) > 1 and f(min(vals)) != f(max(vals)):
        cell += f" ({f(min(vals))}-{f(max(vals))})"
    return med, cell


def ratio(a, b, limit):
    """(cell, over the target?)"""
    if a is None or b is None or b == 0:
        return "-", False
    r = a / b
    over = limit is not None and r > limit
    return f"{r:.2f}" + (" **over**" if over else ""), over


def whole_recording(r, phase, got):
    """Did this round's high-rate recording take its samples? Natively a recording sometimes
    stops taking samples partway (1 to 14,625 of about 25,650 seen, with perf's throttling off
    too; not traced, and not seen in a guest): such a run is shorter for doing less, and is
    left out."""
    most = max((x.get(f"{phase}:record-samples") or 0) for rs in got.values() for x in rs)
    return (r.get(f"{phase}:record-samples") or 0) >= 0.9 * most


def table(names, got, prompts, cpu):
    """Markdown rows of one table (wall or QEMU CPU) and how many target ratios it misses;
    prompts: {session: [prompt_boot()]}, boots beyond the rounds' for the prompt row"""
    suffix = "#cpu" if cpu else ""
    guests = [n for n in names if SESSIONS[n][0]]
    head = ["what", "unit"]
    for n in names:
        head += [f"{n} before", f"{n} after"]
    for g in guests:
        head += [f"{g} after / before"]
        if "native" in names:
            head += ["/ native before", "/ native after"]
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    missed = 0
    keys = [("prompt", "time to the shell prompt", "s")] + [(k, w, u) for k, w, _, u in MEASURES]
    for key, what, unit in keys:
        if cpu and unit != "s":
            continue
        med = {}
        cells = [what, "QEMU CPU s" if cpu else unit]
        for n in names:
            for phase in ("before", "after"):
                tag = key if key == "prompt" else f"{phase}:{key}"
                rounds = got[n] + prompts[n] if key == "prompt" else got[n]
                if key == "record":
                    rounds = [r for r in rounds if whole_recording(r, phase, got)]
                if (UNIT.get(key) == "us/op" and not cpu) or key.endswith("-wall"):
                    # every run of every round
                    vals = [v for r in rounds for v in r.get(tag + suffix + "#runs", [])]
                else:
                    vals = [r.get(tag + suffix) for r in rounds]
                med[(n, phase)], cell = summary(vals)
                if key == "prompt":
                    booted = sum(v is not None for v in vals)
                    cell += f" [{booted} boots]" if phase == "before" else ""
                elif len(rounds) < len(got[n]):
                    cell += f" [{len(rounds)} of {len(got[n])} rounds]"
                cells.append(cell if key != "prompt" or phase == "before" else "")
        for g in guests:
            if key == "prompt":
                cells.append("")
            else:
                c, over = ratio(med[(g, "after")], med[(g, "before")],
                                None if cpu else target(key, "growth"))
                missed += over
                cells.append(c)
            if "native" not in names:
                continue
            for phase in ("before", "after"):
                if key == "prompt" and phase == "after":
                    cells.append("")
                    continue
                c, over = ratio(med[(g, phase)], med[("native", phase)],
                                None if cpu else target(key, phase))
                missed += over
                cells.append(c)
        rows.append("| " + " | ".join(cells) + " |")
    return rows, missed


def table_sw(names, got):
    """The system-wide views, natively and in the guests (median of the rounds)"""
    rows = ["| what | " + " | ".join(names) + " |", "|" + " --- |" * (len(names) + 1)]
    for key, what, _, unit in SYSTEM_WIDE:
        cells = [what + (" (s)" if unit == "s" else "")]
        for n in names:
            cells.append(summary([r.get(f"sw:{key}") for r in got[n]])[1])
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", default=",".join(SESSIONS),
                    help="sessions, comma-separated: " + ", ".join(SESSIONS))
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--hv", help="hypervisor binary (default BUILD/pmuvisor.bin)")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds for the boot, and for each command")
    ap.add_argument("--prompt-boots", type=int, default=4,
                    help="boots to the prompt only, each round, for the prompt row")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when a wall-clock ratio misses its target")
    args = ap.parse_args()
    # killed: unwind, so that run_process kills its QEMU
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.hv = args.hv or os.path.join(args.build, "pmuvisor.bin")
    names = [n for n in args.only.split(",") if n]
    for n in names:
        if n not in SESSIONS:
            sys.exit(f"walltime: unknown session {n!r}")
    os.makedirs(os.path.join(args.build, "test-logs"), exist_ok=True)
    got = {n: [] for n in names}
    prompts = {n: [] for n in names}
    for rnd in range(args.rounds):
        got_rnd = run_round(names, rnd, args)
        for n in names:
            got[n].append(got_rnd.get(n, {}))
        for i in range(args.prompt_boots):
            for n in rotated(names, rnd * args.prompt_boots + i):
                prompts[n].append(prompt_boot(n, rnd * args.prompt_boots + i, args))

    wall, missed = table(names, got, prompts, False)
    cpu, _ = table(names, got, prompts, True)
    mem = " ".join(run.dts_mem_args("linux-shell"))
    print(f"\nwalltime: {args.rounds} round(s) on {time.strftime('%Y-%m-%d')}, QEMU -M {MACHINE} "
          f"-smp 2 -icount shift=0, -m 1G natively and {mem} under pmuvisor (for its guest's 1 "
          "GiB); medians (min-max) of the rounds, of every run for perf bench, "
          "of every boot for the prompt. "
          "Targets: guest / native "
          "<= 1.3 for the prompt and the high-rate recording, <= 1.2 otherwise; guest after / "
          "before <= 1.2.\n")
    print("\n".join(wall))
    print("\nThe CPU seconds QEMU used for the rows in seconds (other work on the host is not "
          "in them):\n")
    print("\n".join(cpu))
    print("\nThe system-wide commands between BEFORE and AFTER (a guest's CPUs count only while "
          "its vCPUs run: its idle time is not in them):\n")
    print("\n".join(table_sw(names, got)))
    if missed:
        print(f"\nwalltime: {missed} wall-clock ratio(s) over target")
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
