#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Check that the sources keep the layering docs/architecture.md draws (run by `make lint`).

  vpmu/     the virtual PMU: its logic (vpmu/*.c, vpmu/*.h) includes only vpmu/ headers, the
            SBI specification's constants (arch/riscv/sbi_spec.h), the index clamp
            (arch/riscv/nospec.h) and the per-hart base (arch/riscv/percpu.h), all plain C or
            one register; it reaches the rest through vpmu/phys.h (the physical layer,
            vpmu/phys/, which may include arch/) and vpmu_host.h (implemented by core/)
  core/     VMs, vCPUs, scheduling, SBI dispatch: may include arch/ and vpmu/; no inline asm
  arch/     the CPU: includes from core/ only core/lib.h, nothing from vpmu/, also through
            other headers, and calls no vpmu_* function
  guest-tests/  guest images: nothing from core/ or vpmu/

Speculation: in vpmu/, an index into a vCPU's ctr[] that a guest chose (named idx or computed
from base, as the SBI functions name them) goes through ctr_of(), which clamps it to the array
(arch/riscv/nospec.h); a plain ctr[idx] would let a mispredicted bounds check read past it.

Every quoted include of the hypervisor names its folder ("core/vcpu.h"), so that the includes
are the dependency graph; among the headers it must have no cycle. Exit status 1, with one line
per violation, if a rule is broken.
"""
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RE_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
RE_ASM = re.compile(r"\b(asm|__asm__)\b")
RE_VPMU_CALL = re.compile(r"\bvpmu_\w+\s*\(")
RE_CTR_GUEST_INDEX = re.compile(r"->ctr\[[^\]]*\b(idx|base)\b[^\]]*\]")
PURE = ("arch/riscv/sbi_spec.h", "arch/riscv/nospec.h", "arch/riscv/percpu.h")
ARCH_MAY = ("core/lib.h",)  # all arch/ may reach of core/ (freestanding helpers)


def sources(folder, exts=(".c", ".h", ".S")):
    for root, _, files in os.walk(os.path.join(REPO, folder)):
        if os.sep + "test" in root[len(REPO):]:
            continue  # host unit tests and their fakes
        for f in sorted(files):
            if f.endswith(exts):
                yield os.path.relpath(os.path.join(root, f), REPO)


def code(text):
    """The text without comments (so that prose may name anything)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def walk(graph, chain, seen, loops):
    """Depth first from chain[-1]: seen gets each file first reached, with the include chain to
    it; loops gets each chain that comes back to one of its own files (a cycle)."""
    for inc in graph.get(chain[-1], ()):
        if inc in chain:
            loops.append(chain[chain.index(inc):] + (inc,))
        elif inc not in seen:
            seen[inc] = chain + (inc,)
            walk(graph, seen[inc], seen, loops)


def main():
    bad, graph = [], {}
    for folder in ("arch", "core", "vpmu"):
        for path in sources(folder):
            text = code(open(os.path.join(REPO, path)).read())
            graph[path] = [i for i in RE_INCLUDE.findall(text) if i.split("/")[0] in (
                "arch", "core", "vpmu")]
            for inc in RE_INCLUDE.findall(text):
                top = inc.split("/")[0]
                if top not in ("arch", "core", "vpmu"):
                    bad.append(f"{path}: include \"{inc}\" does not name its folder")
                if folder == "arch" and top == "vpmu":
                    bad.append(f"{path}: arch includes the vPMU (\"{inc}\")")
                if (folder == "vpmu" and not path.startswith("vpmu" + os.sep + "phys" + os.sep)
                        and top != "vpmu" and inc not in PURE):
                    bad.append(f"{path}: the vPMU's logic includes \"{inc}\" (only vpmu/ and "
                               f"{', '.join(PURE)}; the rest through vpmu_host.h and vpmu/phys.h)")
            if folder == "vpmu":
                for m in RE_CTR_GUEST_INDEX.finditer(text):
                    bad.append(f"{path}: {m.group(0)}: a guest-chosen index into ctr[] goes "
                               "through ctr_of() (no speculative read past the array)")
            if folder == "core" and RE_ASM.search(text):
                bad.append(f"{path}: inline assembly in core (arch/riscv offers the function)")
            if folder == "arch":
                for m in RE_VPMU_CALL.finditer(text):
                    bad.append(f"{path}: arch calls {m.group(0).rstrip('(').strip()} (the core "
                               "routes PMU exits: core/exit.c)")
    seen, loops = {}, []
    for path in sorted(graph):
        if path not in seen:
            seen[path] = (path,)
            walk(graph, (path,), seen, loops)
    bad += [f"{loop[0]}: header include cycle {' -> '.join(loop)}" for loop in loops]
    for path in sorted(p for p in graph if p.startswith("arch/")):
        reached = {}
        walk(graph, (path,), reached, [])
        for inc, chain in sorted(reached.items()):
            if inc.startswith("vpmu/") or (inc.startswith("core/") and inc not in ARCH_MAY):
                bad.append(f"{path}: arch reaches \"{inc}\" ({' -> '.join(chain)}; from core/ "
                           f"only {', '.join(ARCH_MAY)} and nothing from vpmu/)")
    for path in sources("guest-tests", (".c", ".h", ".S")):
        for inc in RE_INCLUDE.findall(code(open(os.path.join(REPO, path)).read())):
            norm = os.path.normpath(os.path.join(os.path.dirname(path), inc))
            if inc.split("/")[0] in ("core", "vpmu") or norm.split(os.sep)[0] in ("core", "vpmu"):
                bad.append(f"{path}: a guest image includes the hypervisor's \"{inc}\"")
    for line in bad:
        print("layering: " + line)
    print(f"layering: {len(bad)} violation(s)" if bad else "layering: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
