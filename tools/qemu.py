# SPDX-License-Identifier: BSD-2-Clause
"""Running QEMU for pmuvisor's tools: the machine command line, and a runner that streams and
collects the console, stops at a timeout and then says where every hart was.

Every QEMU command line of the tools is built by machine_cmd(), and every QEMU (and host test
or fuzzer) run goes through run_process() (one run, its console streamed, parsed and logged) or
run_all() (several run_process() runs in parallel): each has a timeout, and when a QEMU run hangs
run_process() asks QEMU's monitor for each hart's registers before killing it, so a hang is
reported with the hart, its mode and the hypervisor function it was in (symbolized with
addr2line against build/pmuvisor.elf), not as silence.

    res = qemu.run_all({"a": (cmd_a, "a.log"), "b": (cmd_b, "b.log")}, timeout=600, jobs=2)
    res["a"].output, res["a"].timed_out, res["a"].seconds, res["a"].rc
"""
import concurrent.futures
import os
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
import time

QEMU = os.environ.get("QEMU", "qemu-system-riscv64")
ADDR2LINE = os.environ.get("ADDR2LINE", "riscv64-unknown-elf-addr2line")
NM = os.environ.get("NM_RV", "riscv64-unknown-elf-nm")
# core/hart.h struct hart_status: 64 bytes per hart
STATUS_WORDS = 8
DOING = {0: "idle", 1: "in guest", 2: "handling an exit", 3: "parked"}


def machine_cmd(kernel, initrd=None, extra=(), append=None, *, smp=2, mem="1G", cpu="max",
                machine="virt", icount=None):
    """QEMU `machine` with OpenSBI (-bios default) booting kernel (and initrd, with -append);
    icount: the -icount value (None: none). -M, -cpu, -smp and -m in extra replace these
    defaults; the rest of extra is added at the end."""
    base = {"-M": machine, "-cpu": cpu, "-smp": str(smp), "-m": mem}
    rest = []
    i = 0
    while i < len(extra):
        a = extra[i]
        if a in base and i + 1 < len(extra):
            base[a] = extra[i + 1]
            i += 2
            continue
        rest.append(a)
        i += 1
    cmd = [QEMU]
    for k, v in base.items():
        cmd += [k, v]
    cmd += ["-nographic", "-bios", "default", "-kernel", kernel]
    for opt, val in (("-initrd", initrd), ("-icount", icount), ("-append", append)):
        if val is not None:
            cmd += [opt, val]
    return cmd + list(rest)


def _monitor(path, command, wait=1.0):
    """One HMP command on QEMU's monitor socket; its output ('' if QEMU does not answer)."""
    out = b""
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(wait)
            s.connect(path)
            time.sleep(0.2)
            try:
                s.recv(65536)  # banner and prompt
            except socket.timeout:
                pass
            s.sendall(command.encode() + b"\n")
            end = time.monotonic() + wait * 3
            while time.monotonic() < end:
                try:
                    chunk = s.recv(65536)
                except socket.timeout:
                    break
                if not chunk:
                    break
                out += chunk
    except OSError:
        return ""
    return out.decode("utf-8", "replace")


def _symbol(elf, pc):
    if not elf or not os.path.isfile(elf):
        return ""
    try:
        r = subprocess.run([ADDR2LINE, "-f", "-e", elf, hex(pc)], capture_output=True,
                           text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    parts = r.stdout.split()
    return parts[0] if parts and parts[0] != "??" else ""


def _status_addr(elf):
    try:
        out = subprocess.run([NM, elf], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == "hart_status":
            return int(f[0], 16)
    return None


def status_report(monitor_path, elf, nharts):
    """The hypervisor's own view of each hart (core/hart.h hart_status), read with `xp`."""
    addr = _status_addr(elf) if elf and os.path.isfile(elf) else None
    if addr is None:
        return []
    out = []
    for h in range(nharts):
        text = _monitor(monitor_path, f"xp /{STATUS_WORDS}gx {addr + 64 * h:#x}")
        words = [int(w, 16) for w in re.findall(r"0x([0-9a-f]{16})", text)]
        if len(words) < STATUS_WORDS:
            break
        name = b"".join(w.to_bytes(8, "little") for w in words[:2]).split(b"\0")[0]
        vcpu, doing, entries, cause, pc, since = words[2:8]
        who = f"guest {name.decode('utf-8', 'replace')} vcpu {vcpu}" if name else "no vCPU yet"
        out.append(f"hart {h} (hypervisor's view): {DOING.get(doing, doing)}, {who}, "
                   f"{entries} guest entries, last exit scause={cause:#x} sepc={pc:#x}, "
                   f"idle/parked since tick {since}")
    return out


def hart_report(monitor_path, elf):
    """Lines describing every hart (mode, pc and the function it is in), from the monitor, then
    the hypervisor's own status board."""
    text = _monitor(monitor_path, "info registers -a")
    if not text:
        return ["(QEMU's monitor did not answer: no hart state)"]
    out = []
    for block in re.split(r"(?=CPU#\d+)", text):
        m = re.match(r"CPU#(\d+)", block)
        if not m:
            continue
        regs = dict(re.findall(r"\b(pc|V|mstatus|scause|sepc|vsepc|vscause|priv)\s*=?\s+"
                               r"([0-9a-fx]+)", block))
        pc = int(regs.get("pc", "0"), 16)
        virt = regs.get("V", "?")
        where = "guest (V=1)" if virt == "1" else "hypervisor/firmware (V=0)"
        sym = _symbol(elf, pc) if virt != "1" else ""
        out.append(f"hart {m.group(1)}: {where} pc={pc:#x}" + (f" in {sym}" if sym else "") +
                   f" scause={regs.get('scause', '?')} sepc={regs.get('sepc', '?')}"
                   f" vscause={regs.get('vscause', '?')} vsepc={regs.get('vsepc', '?')}")
    return (out or ["(no CPU in the monitor's answer)"]) + status_report(monitor_path, elf,
                                                                         len(out))


class Result:
    """What one run left: its output lines, exit status, whether it was killed (and why), wall
    seconds, and hart_report() lines when a QEMU was killed."""

    def __init__(self):
        self.lines = []
        self.rc = None
        self.timed_out = False
        self.stalled = False
        self.seconds = 0.0
        self.harts = []

    @property
    def output(self):
        return "\n".join(self.lines)


def run_process(cmd, timeout, log_path=None, echo=None, stop_re=None, elf=None, cwd=None,
                stall=None, dialog=None, step_timeout=None, raw=None, interactive=False,
                env=None, started=None):
    """Run cmd (QEMU or any program), collecting output lines.

    timeout: seconds before it is killed (None: never); stall: seconds without output before it
    is declared hung and killed (None: only the timeout). stop_re: a line that ends the run
    (QEMU gets 5 s to power off by itself). echo: callable(line) for streaming; raw:
    callable(bytes) for every chunk as it comes (prompts that end no line too).
    interactive: stdin is this process's (and QEMU keeps its Ctrl-A monitor); otherwise a QEMU
    command gets a monitor socket: on a timeout or stall the hart states go to the log and to
    .harts. dialog: [(regex, text)]: type each text on cmd's stdin once the output since the
    previous step matches its regex (partial lines too: a prompt); a text may be a callable
    that returns it (called then, it may wait: the step's timeout starts after it); dialog[i]
    is replaced by the output it matched, or by None if it never did. step_timeout: seconds
    each dialog step may wait for its regex before the run is killed as hung. started:
    callable(pid), called once the process runs.
    """
    res = Result()
    mon = None
    if os.path.basename(cmd[0]).startswith("qemu-system") and not interactive:
        mon = os.path.join(tempfile.mkdtemp(prefix="pmuvisor-mon-"), "monitor.sock")
        cmd = cmd + ["-monitor", f"unix:{mon},server,nowait"]
    log = open(log_path, "w") if log_path else None
    if log:
        log.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        log.flush()
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd,
                            env=None if env is None else {**os.environ, **env},
                            stdin=None if interactive else
                            subprocess.PIPE if dialog else subprocess.DEVNULL)
    if started:
        started(proc.pid)
    done_at = [None]
    last_out = [t0]
    steps = list(dialog or [])
    at_step = [0, t0]  # the dialog step waited for, and since when
    if dialog:
        dialog[:] = [None] * len(steps)

    def line_out(raw_line):
        line = raw_line.decode("utf-8", "replace").rstrip("\r\n").replace("\r", "")
        res.lines.append(line)
        if log:
            log.write(line + "\n")
            log.flush()  # long runs (soak) are followed with tail -f
        if echo:
            echo(line)
        if stop_re and stop_re.search(line) and done_at[0] is None:
            done_at[0] = time.monotonic()

    def type_text(step, text):
        if log:
            log.write(f"*** dialog {step}: matched, typing {text!r}\n")
        try:
            proc.stdin.write(text.encode())
            proc.stdin.flush()
        except OSError:
            pass

    def reader():
        # chunks, not lines: a dialog waits for prompts that end no line
        buf = b""
        pending = ""  # output not yet matched by the next dialog step
        while True:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            last_out[0] = time.monotonic()
            if raw:
                raw(chunk)
            *whole, buf = (buf + chunk).split(b"\n")
            for raw_line in whole:
                line_out(raw_line)
            step = at_step[0]
            if step < len(steps):
                pending += chunk.decode("utf-8", "replace").replace("\r", "")
            while step < len(steps):
                m = steps[step][0].search(pending)
                if not m:
                    break
                dialog[step] = m.group(0)
                pending = pending[m.end():]
                text = steps[step][1]
                if callable(text):  # it may wait: on the caller, not on the guest
                    at_step[1] = float("inf")
                    text = text()
                type_text(step, text)
                step += 1
                at_step[:] = [step, time.monotonic()]
        if buf:
            line_out(buf)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    why = None
    try:
        while proc.poll() is None:
            now = time.monotonic()
            if timeout is not None and now > t0 + timeout:
                why = f"TIMEOUT after {timeout:g} s"
            elif stall and now > last_out[0] + stall:
                why, res.stalled = f"no output for {stall:g} s", True
            elif step_timeout and at_step[0] < len(steps) and now > at_step[1] + step_timeout:
                why = f"dialog step {at_step[0]} unmatched after {step_timeout:g} s"
            elif done_at[0] is not None and now > done_at[0] + 5:
                break
            if why:
                res.timed_out = True
                if mon:
                    res.harts = hart_report(mon, elf)
                break
            time.sleep(0.05)
    finally:  # also on Ctrl-C: no QEMU is left behind
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    t.join(timeout=5)
    res.rc = proc.returncode
    res.seconds = time.monotonic() - t0
    if log:
        if why:
            log.write(f"*** {why}: killed" + ("; harts:\n" if mon else "\n") +
                      "".join(f"***   {h}\n" for h in res.harts))
        log.close()
    if mon:  # QEMU may have removed its socket already: the folder goes either way
        shutil.rmtree(os.path.dirname(mon), ignore_errors=True)
    return res


def run_all(runs, timeout, jobs=2, on_start=None, on_done=None):
    """run_process() of every {name: (cmd, log_path[, cwd])}, at most `jobs` at a time, each
    with its console in its log; returns {name: Result}. on_start(name, cmd) and
    on_done(name, result) are called as runs start and end."""
    def one(name):
        cmd, log_path, *cwd = runs[name]
        if on_start:
            on_start(name, cmd)
        r = run_process(cmd, timeout, log_path, cwd=cwd[0] if cwd else None)
        if on_done:
            on_done(name, r)
        return r

    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        return dict(zip(runs, pool.map(one, runs)))
