# SPDX-License-Identifier: BSD-2-Clause
"""Run QEMU under a timeout with its console in a log file: the QEMU-running part the tools share.

    import qemu_runner
    res = qemu_runner.run_all({"a": (cmd_a, "a.log"), "b": (cmd_b, "b.log")}, timeout=600, jobs=2)
    res["a"].output, res["a"].timed_out, res["a"].seconds, res["a"].returncode

Each log file starts with the command line ("$ qemu-system-riscv64 ..."), then the console;
`output` is the console only. At most `jobs` QEMUs run at once, started in the given order;
each one's timeout counts from its own start, and a QEMU past it is killed.
"""
import os
import shlex
import subprocess
import time

QEMU = os.environ.get("QEMU", "qemu-system-riscv64")


class Result:
    """What one QEMU run left: console output, whether it was killed, wall seconds, exit status."""

    def __init__(self, output, timed_out, seconds, returncode):
        self.output = output
        self.timed_out = timed_out
        self.seconds = seconds
        self.returncode = returncode


class Run:
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
        return Result(out, timed_out, seconds, self.proc.returncode)


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
            running[name] = Run(cmd, log_path, timeout)
        for name, run in list(running.items()):
            if run.proc.poll() is not None or run.expired():
                results[name] = run.finish()
                del running[name]
                if on_done:
                    on_done(name, results[name])
        time.sleep(0.05)
    return {name: results[name] for name in runs}
