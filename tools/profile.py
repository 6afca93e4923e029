#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Turn a guest profile stream into perf.data, flame graphs and a text report, per guest.

usage: profile.py STREAM [-o OUTDIR] [--kernel [GUEST=]ELF] [--initramfs [GUEST=]LIST]
                  [--exe [GUEST:]COMM=PATH] [--debug-dir DIR] [--cpu vcpu|hart] [--top N]
       profile.py --dump STREAM

STREAM is what the hypervisor's sampler wrote (core/profile_format.h), as a file or as the
"!P " lines of the run's console log (core/profile.c writes them). For every guest in it,
OUTDIR (default STREAM.out) gets a directory named after the guest with:
  perf.data    for the host's perf (Debian's linux-perf); open it with the line printed,
               e.g. `perf report -i OUT/alpha/perf.data --symfs OUT/alpha/root`
  root/        what perf's --symfs reads: the guest's executables, at their guest paths, as links
               to host ELF files with symbols, and `vmlinux`, the guest kernel
  stacks.folded  one line per distinct call chain: `comm;outer;...;leaf count`
  flame.svg    the flame graph of those stacks
  report.txt   the top symbols with their share of the guest's samples (also printed)

Symbols: VS-mode PCs with the guest kernel's ELF (--kernel, default build/linux/vmlinux);
VU-mode PCs with the executable that the sample's comm names in the guest's initramfs
(--initramfs, a gen_init_cpio list, default build/linux/initramfs.list: `file` entries and the
`slink` names pointing to them, so BusyBox applets map to /bin/busybox), or an explicit
--exe COMM=PATH (a guest path or a host ELF). A stripped executable is replaced by the ELF
with its build-id found in a --debug-dir (default: the BusyBox and perf build directories).
Static, non-PIE executables only: the stream carries no load address. docs/profiling.md.
"""
import argparse
import collections
import html
import os
import shutil
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the stream and symbol names check_profile.py, profile_run.py and test_profile.py use as prof.*
from guest_symbols import GuestFiles, GuestProfile, load_elf  # noqa: E402,F401
from perf_data import event_attr, write_perf_data  # noqa: E402
from profile_stream import (CONSOLE_PREFIX, GUEST_ANY, MODE_VS, MODE_VU,  # noqa: E402,F401
                            SAMPLE_TASK, SAMPLE_TRUNCATED, ProfileError, Sample,
                            console_stream, dump, parse_stream, read_stream)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, "build")
DEFAULT_KERNEL = os.path.join(BUILD, "linux", "vmlinux")
DEFAULT_INITRAMFS = os.path.join(BUILD, "linux", "initramfs.list")
DEFAULT_DEBUG_DIRS = [os.path.join(BUILD, "debsrc", "busybox-obj"),
                      os.path.join(BUILD, "linux", "perf-obj")]


# ---------------------------------------------------------------- folded stacks, flame graph
def folded(gp):
    """{stack: count}: `comm;outermost;...;leaf`, kernel functions marked `_[k]`."""
    out = collections.Counter()
    for comm, frames in gp.resolved():
        names = [(n or "[unknown]") + ("_[k]" if k else "") for _, n, _, k in reversed(frames)]
        out[";".join([comm] + names)] += 1
    return out


def frame_color(name, depth):
    h = zlib.crc32(name.encode())
    v1, v2 = (h & 0xFF) / 255, ((h >> 8) & 0xFF) / 255
    if depth <= 1:
        g = int(180 + 40 * v1)
        return f"rgb({g},{g},{g + 10})"
    if name.endswith("_[k]"):
        return f"rgb({int(60 + 60 * v1)},{int(150 + 50 * v2)},{int(200 + 55 * v1)})"
    return f"rgb({int(205 + 50 * v1)},{int(80 + 150 * v2)},{int(55 * v2)})"


def flame_svg(stacks, title, width=1200):
    """An SVG flame graph (root at the bottom, children sorted by name) of {stack: count}."""
    root = {"n": 0, "c": {}}
    for stack, count in stacks.items():
        node = root
        node["n"] += count
        for frame in stack.split(";"):
            node = node["c"].setdefault(frame, {"n": 0, "c": {}})
            node["n"] += count
    total = root["n"] or 1
    depth = max((s.count(";") + 2 for s in stacks), default=1)
    fh, pad, top = 16, 10, 44
    height = top + depth * fh + 2 * pad
    per = (width - 2 * pad) / total
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="Verdana, sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="#f8f8f8"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="16">'
           f'{html.escape(title)}</text>',
           f'<text x="{width / 2}" y="36" text-anchor="middle" font-size="11" fill="#555">'
           'guest kernel (VS) frames blue, marked _[k]; user (VU) frames red to yellow; '
           'the process (comm) above "all"</text>']

    def draw(name, node, x, d):
        w = node["n"] * per
        if w < 0.1:
            return
        y = height - pad - (d + 1) * fh
        tip = f"{name} ({node['n']} samples, {100 * node['n'] / total:.2f}%)"
        out.append(f'<g><title>{html.escape(tip)}</title><rect x="{x:.2f}" y="{y}" '
                   f'width="{w:.2f}" height="{fh - 1}" rx="2" '
                   f'fill="{frame_color(name, d)}"/>')
        fit = int((w - 6) / 7)
        if fit >= 3:
            label = name if len(name) <= fit else name[:fit - 2] + ".."
            out.append(f'<text x="{x + 3:.2f}" y="{y + fh - 4}">{html.escape(label)}</text>')
        out.append("</g>")
        for child in sorted(node["c"]):
            draw(child, node["c"][child], x, d + 1)
            x += node["c"][child]["n"] * per

    draw("all", root, pad, 0)
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- text report
def report(gp, st, top):
    """The guest's top symbols by self samples, perf report's way."""
    n = len(gp.samples)
    _, _, ev_name = event_attr(st)
    vcpus = st.guests.get(gp.gid, ("", 0))[1]
    lines = [f"guest {gp.name}: {n} samples of {ev_name} every {st.period} events"
             f"{f', {vcpus} vCPUs' if vcpus else ''}"
             f"{f', {gp.lost} samples lost on its harts' if gp.lost else ''}"]
    counts = collections.Counter()
    for comm, frames in gp.resolved():
        dso, name, addr, kernel = frames[0]
        counts[(comm, dso, ("[k] " if kernel else "[.] ") + (name or f"{addr:#018x}"))] += 1
    lines.append(f"  {'overhead':>8}  {'command':<16} {'object':<20} symbol")
    for (comm, dso, sym), c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
        lines.append(f"  {100 * c / n:7.2f}%  {comm:<16} {dso:<20} {sym}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- command line
def per_guest(values, default, what):
    """[GUEST=]VALUE options -> ({guest: value}, value for the others)."""
    table, other = {}, default
    for v in values or []:
        g, sep, rest = v.partition("=")
        if sep and "/" not in g and not os.path.exists(v):
            table[g] = rest
        else:
            other = v
    for p in list(table.values()) + [other]:
        if p and not os.path.isfile(p):
            raise ProfileError(f"{what} {p}: no such file")
    return table, other


def perf_view(path, cache):
    """path, or its copy in cache without mapping symbols' names when it has any."""
    elf = load_elf(path)
    cleaned = elf.without_mapping_symbols()
    if cleaned is None:
        return os.path.abspath(path)
    key = elf.build_id.hex() or f"{zlib.crc32(cleaned):08x}"
    dst = os.path.abspath(os.path.join(cache, f"{os.path.basename(path)}-{key}"))
    if not os.path.isfile(dst) or os.path.getsize(dst) != len(cleaned):
        os.makedirs(cache, exist_ok=True)
        with open(dst + ".tmp", "wb") as f:
            f.write(cleaned)
        os.replace(dst + ".tmp", dst)
    return dst


def make_root(root, cache, gp, used):
    """The --symfs directory: vmlinux and every executable used, at its guest path, as
    links to the host files with symbols (perf_view's copies)."""
    if os.path.isdir(root):
        shutil.rmtree(root)
    os.makedirs(root)
    links = {"/vmlinux": gp.kernel_path} if gp.kernel_path else {}
    for exe in used:
        links[exe] = gp.files.symbols_of(exe)
    for guest_path, host in links.items():
        dst = os.path.join(root, guest_path.lstrip("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.symlink(perf_view(host, cache), dst)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stream")
    ap.add_argument("-o", dest="out", help="output directory (default STREAM.out)")
    ap.add_argument("--kernel", action="append", metavar="[GUEST=]ELF",
                    help="the guest kernel's ELF (default build/linux/vmlinux)")
    ap.add_argument("--initramfs", action="append", metavar="[GUEST=]LIST",
                    help="the guest's gen_init_cpio list (default build/linux/initramfs.list)")
    ap.add_argument("--exe", action="append", default=[], metavar="[GUEST:]COMM=PATH",
                    help="the executable samples with this comm run")
    ap.add_argument("--debug-dir", action="append", metavar="DIR",
                    help="where to find unstripped ELF files by build-id")
    ap.add_argument("--cpu", choices=("vcpu", "hart"), default="vcpu",
                    help="what perf's CPU column shows (default vcpu)")
    ap.add_argument("--top", type=int, default=15, help="symbols in the text report")
    ap.add_argument("--dump", action="store_true", help="print the stream's records, nothing else")
    args = ap.parse_args(argv)
    try:
        st = read_stream(args.stream)
        if args.dump:
            dump(st)
            return 0
        for w in st.warnings:
            print(f"profile: warning: {w}", file=sys.stderr)
        kernels, kernel = per_guest(args.kernel, DEFAULT_KERNEL if os.path.isfile(DEFAULT_KERNEL)
                                    else None, "--kernel")
        lists, listing = per_guest(args.initramfs, DEFAULT_INITRAMFS
                                   if os.path.isfile(DEFAULT_INITRAMFS) else None, "--initramfs")
        debug_dirs = args.debug_dir if args.debug_dir is not None else DEFAULT_DEBUG_DIRS
        out = args.out or args.stream + ".out"
        by_guest = collections.defaultdict(list)
        for s in st.samples:
            by_guest[s.guest].append(s)
        truncated = sum(1 for s in st.samples if s.flags & SAMPLE_TRUNCATED)
        print(f"profile: {args.stream}: {len(st.samples)} samples of {len(by_guest)} guest(s), "
              f"{sum(lo.count for lo in st.lost)} lost"
              + (f", {truncated} with a call chain cut short" if truncated else ""))
        for lo in st.lost:
            if lo.count:
                who = "any guest" if lo.guest == GUEST_ANY else st.guest_name(lo.guest)
                print(f"  hart {lo.hart}: {lo.count} samples lost ({who})")

        def warn(msg):
            print(f"profile: {msg}", file=sys.stderr)

        guest_names = {st.guest_name(gid) for gid in by_guest}
        for gid in sorted(by_guest):
            name = st.guest_name(gid)
            files = GuestFiles(lists.get(name, listing), debug_dirs, warn)
            for e in args.exe:
                spec, _, path = e.partition("=")
                g, sep, comm = spec.partition(":")
                if not sep or g not in guest_names:  # a comm may hold a colon (kworker/0:1)
                    g, comm = name, spec
                if g == name:
                    files.add(comm, path)
            gp = GuestProfile(gid, name, by_guest[gid], kernels.get(name, kernel), files,
                              args.cpu)
            harts = {s.hart for s in gp.samples}
            gp.lost_records = [(lo.time, lo.count) for lo in st.lost if lo.count and (
                lo.guest == gid or (lo.guest == GUEST_ANY and lo.hart in harts))]
            gp.lost = sum(c for _, c in gp.lost_records)
            gdir = os.path.join(out, name)
            os.makedirs(gdir, exist_ok=True)
            used = {gp.exe_for(gp.task_of(s)[2]) for s in gp.samples} - {None}
            make_root(os.path.join(gdir, "root"), os.path.join(out, "symbols"), gp, sorted(used))
            data = os.path.join(gdir, "perf.data")
            write_perf_data(gp, st, data, ["profile.py"] + (argv or sys.argv[1:]))
            stacks = folded(gp)
            with open(os.path.join(gdir, "stacks.folded"), "w") as f:
                f.writelines(f"{k} {v}\n" for k, v in sorted(stacks.items()))
            with open(os.path.join(gdir, "flame.svg"), "w") as f:
                f.write(flame_svg(stacks, f"guest {name}: {len(gp.samples)} samples"))
            text = report(gp, st, args.top)
            with open(os.path.join(gdir, "report.txt"), "w") as f:
                f.write(text)
            print()
            print(text, end="")
            root = os.path.join(gdir, "root")
            print(f"  perf report -i {data} --symfs {root}\n"
                  f"  perf script -i {data} --symfs {root}\n"
                  f"  flame graph: {os.path.join(gdir, 'flame.svg')}")
    except (ProfileError, OSError, struct.error) as e:
        print(f"profile: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
