# SPDX-License-Identifier: BSD-2-Clause
"""Single-step profile of one hypervisor function call (or one round trip), per function.

Run inside gdb-multiarch (Debian package gdb-multiarch, not installed by `make deps`) against a
QEMU started with `-gdb tcp::PORT -S`:

    qemu-system-riscv64 -M virt -cpu max -smp 1 -m 1G -nographic -bios default \\
        -kernel build/pmuvisor.bin -initrd build/bench/bench.bundle -icount shift=0 \\
        -gdb tcp::12346 -S &
    FN=vpmu_counter_start END=ret COND="int(gdb.parse_and_eval('mask')) == 1" \\
        gdb-multiarch -batch -x tools/prof.py
    pkill -f 'gdb tcp::12346'      # always: a stray QEMU slows every later run

It breaks at FN (after SKIP hits, or at the first hit where the Python expression COND is
true), then executes `stepi` until FN's return address (END=ret) or FN's next hit, and prints
how many instructions each function executed (each pc mapped to its symbol with
riscv64-unknown-elf-nm). FOCUS=<function> also prints its per-pc counts; TRACE=1 every pc.
Environment: ELF (default build/pmuvisor.elf), PORT (12346), FN, SKIP (300), COND, END, FOCUS,
TRACE. Instructions the guest executes are not stepped (gdb resumes the guest until the next
breakpoint), so a round trip shows the hypervisor's share only. docs/performance.md has the
profiles this made.
"""
import bisect
import collections
import os
import subprocess

import gdb  # pylint: disable=import-error

ELF = os.environ.get("ELF", "build/pmuvisor.elf")
SKIP = int(os.environ.get("SKIP", "300"))
FN = os.environ.get("FN", "vpmu_counter_start")
LIMIT = 20000

syms = []
nm = subprocess.run(["riscv64-unknown-elf-nm", "-n", ELF], capture_output=True, text=True,
                    check=True)
for line in nm.stdout.splitlines():
    p = line.split()
    if len(p) == 3 and p[1] in "tTwW":
        syms.append((int(p[0], 16), p[2]))
addrs = [a for a, _ in syms]


def name(pc):
    """The function pc is in; guest and firmware addresses lie below the hypervisor."""
    if pc < addrs[0]:
        return "<guest/opensbi>"
    return syms[bisect.bisect_right(addrs, pc) - 1][1]


gdb.execute("set pagination off")
gdb.execute("file " + ELF)
gdb.execute("target remote :" + os.environ.get("PORT", "12346"))
gdb.execute("break " + FN)
cond = os.environ.get("COND")
if cond:
    while True:
        gdb.execute("continue")
        if eval(cond):  # pylint: disable=eval-used
            break
else:
    gdb.execute("ignore 1 %d" % SKIP)
    gdb.execute("continue")
target = int(gdb.parse_and_eval("$pc"))
if os.environ.get("END") == "ret":
    target = int(gdb.parse_and_eval("$ra")) & 0xffffffffffffffff
counts = collections.Counter()
focus = []
n = 0
while True:
    gdb.execute("stepi", to_string=True)
    pc = int(gdb.parse_and_eval("$pc")) & 0xffffffffffffffff
    n += 1
    counts[name(pc)] += 1
    if name(pc) == os.environ.get("FOCUS", "-"):
        focus.append(pc)
    if os.environ.get("TRACE"):
        print("T %x %s" % (pc, name(pc)))
    if pc == target or n > LIMIT:
        break
print("TOTAL", n)
for k, v in counts.most_common(40):
    print("%6d %s" % (v, k))
for pc, v in sorted(collections.Counter(focus).items()):
    print("PC %x %d" % (pc, v))
gdb.execute("kill")
