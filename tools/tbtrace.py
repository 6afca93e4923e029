# SPDX-License-Identifier: BSD-2-Clause
"""Where a QEMU run's instructions go, from QEMU's own execution trace (tools/e2e.py --breakdown).

QEMU started with `-d exec,in_asm,nochain -dfilter RANGES -D FIFO` prints every translation
block it translates (in_asm: its instructions) and every execution of one (exec: `Trace <cpu>:
<host address> [<cs_base>/<pc>/<flags>/<cflags>]`; nochain makes every execution print) whose pc
lies in RANGES. Under -icount a block runs whole unless an exception ends it, so the executions
times the blocks' lengths are the instructions executed in those ranges, per hart. No file is
written: QEMU writes into a named pipe that run() reads as QEMU goes.

A *window* opens at each execution of `start` (a pc: the workload's first block) and closes at
`end` (its exit block); run() returns, for each window, instructions per hart, per region
(REGIONS, by pc) and per function (symbols of the ELF files given), the number of calls of
each function (executions of the block at its symbol's address) and, for the regions that
trap_regions names, *episodes*: the runs of consecutive blocks of one hart in that region,
each classified by the first rule of `classify` whose function it executed; an episode also
ends where a function of `split` (a trap vector) is entered.
"""
import bisect
import collections
import os
import subprocess
import tempfile
import threading

NM = os.environ.get("NM", "riscv64-linux-gnu-nm")


class Symbols:
    """pc -> function name, from `nm -n` of ELF files (each covers its own address range)."""

    def __init__(self, elfs):
        self.tables = []
        self.starts = {}
        for elf in elfs:
            out = subprocess.run([NM, "-n", elf], capture_output=True, text=True,
                                 check=True).stdout
            syms = [(int(p[0], 16), p[2]) for p in (ln.split() for ln in out.splitlines())
                    if len(p) == 3 and p[1] in "tTwW"]
            if syms:
                self.tables.append((syms[0][0], syms[-1][0] + 0x10000, [a for a, _ in syms],
                                    [n for _, n in syms]))
                self.starts.update({a: n for a, n in syms})
        self.cache = {}

    def name(self, pc):
        n = self.cache.get(pc)
        if n is None:
            n = "?"
            for lo, hi, addrs, names in self.tables:
                if lo <= pc < hi:
                    n = names[bisect.bisect_right(addrs, pc) - 1]
                    break
            self.cache[pc] = n
        return n


class Window:
    def __init__(self):
        self.insns = collections.Counter()     # (cpu, region) -> instructions
        self.funcs = collections.Counter()     # (region, function) -> instructions
        self.calls = collections.Counter()     # function -> executions of its first block
        self.episodes = collections.Counter()  # (region, kind) -> episodes
        self.ep_insns = collections.Counter()  # (region, kind) -> instructions


def region_of(regions, pc):
    for name, lo, hi in regions:
        if lo <= pc < hi:
            return name
    return "other"


def parse(stream, regions, syms, start, end, trap_regions=(), classify=(), split=()):
    """[Window] of a trace read from stream (see the module's docstring); an episode also ends
    where a function of split (a trap vector) is entered."""
    split_pcs = {a for a, n in syms.starts.items() if n in split}
    windows, win = [], None
    tb_len, pc_len = {}, {}
    pending = None           # (pc, length) of the block in_asm printed last
    block = None             # [first pc, instructions] while reading an in_asm block
    ep = {}                  # cpu -> [region, instructions, functions] of its open episode
    region_cache = {}

    def close(cpu):
        e = ep.pop(cpu, None)
        if e and win is not None:
            kind = next((k for k, fns in classify if e[2] & fns), "other")
            win.episodes[(e[0], kind)] += 1
            win.ep_insns[(e[0], kind)] += e[1]

    for line in stream:
        if block is not None:
            if line.startswith("0x"):
                if block[0] is None:
                    block[0] = int(line[:line.index(":")], 16)
                block[1] += 1
                continue
            if not line.strip():
                if block[0] is not None:
                    pending = (block[0], block[1])
                    pc_len[block[0]] = block[1]
                block = None
            continue
        if line.startswith("IN:"):
            block = [None, 0]
            continue
        if not line.startswith("Trace "):
            continue
        colon = line.index(":")
        cpu = int(line[6:colon])
        host = line[colon + 2:line.index(" ", colon + 2)]
        fields = line[line.index("[") + 1:].split("/")
        pc = int(fields[1], 16)
        if pending is not None and pending[0] == pc:
            tb_len[host] = pending[1]
            pending = None
        n = tb_len.get(host) or pc_len.get(pc, 1)
        if pc == start:
            for c in list(ep):
                close(c)
            win = Window()
            windows.append(win)
            continue
        if pc == end:
            for c in list(ep):
                close(c)
            win = None
            continue
        if win is None:
            continue
        reg = region_cache.get(pc)
        if reg is None:
            reg = region_cache[pc] = region_of(regions, pc)
        fn = syms.name(pc)
        win.insns[(cpu, reg)] += n
        win.funcs[(reg, fn)] += n
        if pc in syms.starts:
            win.calls[fn] += 1
        e = ep.get(cpu)
        if e is not None and (e[0] != reg or pc in split_pcs):
            close(cpu)
            e = None
        if reg in trap_regions:
            if e is None:
                e = ep[cpu] = [reg, 0, set()]
            e[1] += n
            e[2].add(fn)
    return windows


def run(cmd, dfilter, regions, elfs, start, end, trap_regions=(), classify=(), split=(),
        runner=None):
    """Run QEMU command cmd (a list) with its execution trace of dfilter's ranges going through
    a named pipe into parse(); returns (windows, runner's result). runner(cmd) runs QEMU
    (default: subprocess.run)."""
    syms = Symbols(elfs)
    tmp = tempfile.mkdtemp(prefix="pmuvisor-trace-")
    fifo = os.path.join(tmp, "trace")
    os.mkfifo(fifo)
    out = {}

    def reader():
        with open(fifo, errors="replace") as f:
            out["windows"] = parse(f, regions, syms, start, end, trap_regions, classify, split)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    full = cmd + ["-d", "exec,in_asm,nochain", "-dfilter", dfilter, "-D", fifo]
    try:
        res = (runner or subprocess.run)(full)
    finally:
        # a QEMU that never opened the pipe leaves the reader waiting: open it to end that
        if t.is_alive():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)
            except OSError:
                pass
        t.join()
        os.unlink(fifo)
        os.rmdir(tmp)
    return out.get("windows", []), res
