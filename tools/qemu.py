# SPDX-License-Identifier: BSD-2-Clause
"""Running QEMU for pmuvisor's tools: the machine command line, and a runner that streams and
collects the console, stops at a timeout and then says where every hart was.

Every QEMU run of the tools goes through run_process() (one run, its console streamed) or
run_all() (several runs in parallel, consoles in log files): each has a timeout, and when a
run_process() run hangs it asks QEMU's monitor for each hart's registers before killing it, so a
hang is reported with the hart, its mode and the hypervisor function it was in (symbolized with
addr2line against build/pmuvisor.elf), not as silence.

    res = qemu.run_all({"a": (cmd_a, "a.log"), "b": (cmd_b, "b.log")}, timeout=600, jobs=2)
    res["a"].output, res["a"].timed_out, res["a"].seconds, res["a"].returncode
"""
import os
import re
import shlex
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


def machine_cmd(kernel, initrd, extra, append=None):
    """QEMU virt with -bios default: the defaults (-smp 2, -m 1G) unless extra overrides them."""
    base = {"-M": "virt", "-cpu": "max", "-smp": "2", "-m": "1G"}
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
    cmd += ["-nographic", "-bios", "default", "-kernel", kernel, "-initrd", initrd]
    if append is not None:
        cmd += ["-append", append]
    return cmd + rest


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
    def __init__(self):
        self.lines = []
        self.rc = None
        self.timed_out = False
        self.stalled = False
        self.harts = []  # hart_report() lines when the run timed out


def run_process(cmd, timeout, log_path=None, echo=None, stop_re=None, elf=None, cwd=None,
                stall=None):
    """Run cmd (QEMU or any program), collecting output lines.

    timeout: seconds before it is killed; stall: seconds without output before it is declared
    hung and killed (None: only the timeout). stop_re: a line that ends the run (QEMU gets 5 s
    to power off by itself). echo: callable(line) for streaming. For a QEMU command a monitor
    socket is added: on a timeout or stall the hart states go to the log and to .harts.
    """
    res = Result()
    mon = None
    if os.path.basename(cmd[0]).startswith("qemu-system"):
        mon = os.path.join(tempfile.mkdtemp(prefix="pmuvisor-mon-"), "monitor.sock")
        cmd = cmd + ["-monitor", f"unix:{mon},server,nowait"]
    log = open(log_path, "w") if log_path else None
    if log:
        log.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        log.flush()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, cwd=cwd)
    done_at = [None]
    last_out = [time.monotonic()]

    def reader():
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\r\n").replace("\r", "")
            res.lines.append(line)
            last_out[0] = time.monotonic()
            if log:
                log.write(line + "\n")
            if echo:
                echo(line)
            if stop_re and stop_re.search(line) and done_at[0] is None:
                done_at[0] = time.monotonic()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        now = time.monotonic()
        if now > deadline:
            res.timed_out = True
            break
        if stall and now > last_out[0] + stall:
            res.timed_out = res.stalled = True
            break
        if done_at[0] is not None and now > done_at[0] + 5:
            break
        time.sleep(0.05)
    if res.timed_out and mon and proc.poll() is None:
        res.harts = hart_report(mon, elf)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    t.join(timeout=5)
    res.rc = proc.returncode
    if log:
        if res.timed_out:
            why = (f"no output for {stall:g} s" if res.stalled else f"TIMEOUT after {timeout:g} s")
            log.write(f"*** {why}: QEMU killed; harts:\n" +
                      "".join(f"***   {h}\n" for h in res.harts))
        log.close()
    if mon:
        try:
            os.unlink(mon)
            os.rmdir(os.path.dirname(mon))
        except OSError:
            pass
    return res


# ---------------------------------------------------------------- several runs at once
class BatchResult:
    """What one QEMU run of run_all left: console output, whether it was killed, wall seconds, exit status."""

    def __init__(self, output, timed_out, seconds, returncode):
        self.output = output
        self.timed_out = timed_out
        self.seconds = seconds
        self.returncode = returncode


class BatchRun:
    """One QEMU started with stdin closed and stdout + stderr going to log_path."""

    def __init__(self, cmd, log_path, timeout):
        self.log_path = log_path
        self.timeout = timeout
        self.log = open(log_path, "wb")
        self.log.write(("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n").encode())
        self.log.flush()
        self.header = self.log.tell()
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)

    def expired(self):
        return time.monotonic() > self.t0 + self.timeout

    def finish(self):
        """Wait for QEMU (killing it at its deadline) and return its Result."""
        timed_out = False
        try:
            self.proc.wait(timeout=max(0.0, self.t0 + self.timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            self.proc.kill()
            self.proc.wait()
        seconds = time.monotonic() - self.t0
        if timed_out:
            self.log.write(f"\n*** TIMEOUT after {self.timeout:g} s: QEMU killed\n".encode())
        self.log.close()
        with open(self.log_path, "rb") as f:
            f.seek(self.header)
            out = f.read().decode("utf-8", "replace").replace("\r", "")
        return BatchResult(out, timed_out, seconds, self.proc.returncode)


def run_all(runs, timeout, jobs=2, on_start=None, on_done=None):
    """Run {name: (cmd, log_path)}, at most `jobs` at a time; returns {name: Result}.

    on_start(name, cmd) and on_done(name, result) are called as runs start and end."""
    pending = list(runs.items())
    running, results = {}, {}
    while pending or running:
        while pending and len(running) < max(1, jobs):
            name, (cmd, log_path) = pending.pop(0)
            if on_start:
                on_start(name, cmd)
            running[name] = BatchRun(cmd, log_path, timeout)
        for name, run in list(running.items()):
            if run.proc.poll() is not None or run.expired():
                results[name] = run.finish()
                del running[name]
                if on_done:
                    on_done(name, results[name])
        time.sleep(0.05)
    return {name: results[name] for name in runs}
