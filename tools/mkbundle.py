#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Pack a pmuvisor configuration DT and its guest images into one bundle.

usage: mkbundle.py CONFIG.dts OUT.bundle

Layout (docs/configuration.md): the configuration DTB padded to 4 KiB, then
every image/initrd blob 4 KiB aligned and deduplicated by path. Each guest
node gets pmuvisor,image-blob (and pmuvisor,initrd-blob) =
<off-hi off-lo size-hi size-lo>, offsets relative to the bundle start.
Paths in the DT are relative to the repository root. A guest profiled by the hypervisor
with profile-vmlinux = "PATH" gets profile-task-offsets = <pid tgid comm>, read from that
kernel's DWARF with pahole (docs/profiling.md).
"""
import os
import re
import struct
import subprocess
import sys

try:
    import libfdt
except ImportError:
    sys.exit("pmuvisor's tools need pylibfdt: Debian's python3-libfdt (make deps), run by the "
             "interpreter that sees it, /usr/bin/python3 (the Makefile's PYTHON)")

ALIGN = 4096
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_LOAD_OFFSET = 2 << 20


class BundleError(Exception):
    pass


def align(n):
    return (n + ALIGN - 1) & ~(ALIGN - 1)


# ---------------------------------------------------------------- configuration DTBs (pylibfdt)
def compile_dts(dts):
    """The DTB dtc compiles dts into, as a libfdt.Fdt."""
    try:
        p = subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-i",
                            os.path.dirname(os.path.abspath(dts)), dts], capture_output=True)
    except FileNotFoundError:
        raise BundleError("dtc not found (install device-tree-compiler)")
    if p.returncode != 0:
        raise BundleError(f"dtc {dts} failed:\n{p.stderr.decode(errors='replace').strip()}")
    return libfdt.Fdt(p.stdout)


def config_fdt(bundle):
    """The configuration DTB a bundle starts with (raises libfdt.FdtException if none)."""
    with open(bundle, "rb") as f:
        return libfdt.Fdt(f.read(1 << 20))


def props(fdt, node):
    """{name: bytes} of a node's properties. Read one by one: pylibfdt 1.6's getprop() of a
    missing property drops a reference to None, which crashes Python after some calls."""
    out = {}
    p = fdt.first_property_offset(node, libfdt.QUIET_NOTFOUND)
    while p >= 0:
        pr = fdt.get_property_by_offset(p)
        out[pr.name] = bytes(pr)
        p = fdt.next_property_offset(p, libfdt.QUIET_NOTFOUND)
    return out


def guests(fdt):
    """[(name, {property: bytes})] of the guest nodes, the children of /guests."""
    out = []
    node = fdt.path_offset("/guests", libfdt.QUIET_NOTFOUND)
    node = fdt.first_subnode(node, libfdt.QUIET_NOTFOUND) if node >= 0 else node
    while node >= 0:
        out.append((fdt.get_name(node), props(fdt, node)))
        node = fdt.next_subnode(node, libfdt.QUIET_NOTFOUND)
    return out


def bootargs(bundle):
    """The bootargs of a bundle's first guest: a native boot of its kernel takes the same."""
    return string(guests(config_fdt(bundle))[0][1].get("bootargs", b""))


def string(value):
    """A string property's text (None for None)."""
    return None if value is None else value.rstrip(b"\0").decode()


def place_blobs(fdt, refs, sizes):
    """Lay the blobs of sizes out 4 KiB aligned after the DTB and point each (guest, property,
    blob number) of refs at its blob with <off-hi off-lo size-hi size-lo>; returns (the DTB
    bytes, the blobs' offsets)."""
    def put(guest, name, off, size):
        fdt.setprop(fdt.path_offset(f"/guests/{guest}"), name, struct.pack(">QQ", off, size))

    fdt.resize(fdt.totalsize() + 64 * (len(refs) + 1))
    for guest, name, _ in refs:  # placeholders first, so that the DTB size is final
        put(guest, name, 0, 0)
    fdt.pack()
    offsets, off = [], align(fdt.totalsize())
    for size in sizes:
        offsets.append(off)
        off = align(off + size)
    for guest, name, n in refs:  # same sizes: written in place
        put(guest, name, offsets[n], sizes[n])
    return bytes(fdt.as_bytearray()), offsets


def cells64(data, what):
    if data is None or len(data) % 8:
        raise BundleError(f"{what}: expected pairs of 32-bit cells")
    return [int.from_bytes(data[i:i + 8], "big") for i in range(0, len(data), 8)]


# ---------------------------------------------------------------- profiling a Linux guest
TASK_FIELDS = ("pid", "tgid", "comm")


def task_offsets(vmlinux):
    """[pid, tgid, comm]: the byte offsets of those members of struct task_struct, from
    vmlinux's DWARF (pahole, Debian's dwarves), for the hypervisor's profiler."""
    try:
        p = subprocess.run(["pahole", "-C", "task_struct", vmlinux], capture_output=True,
                           text=True)
    except FileNotFoundError:
        raise BundleError("pahole not found (install dwarves: make deps)")
    if p.returncode != 0 or "struct task_struct {" not in p.stdout:
        raise BundleError(f"{vmlinux}: no struct task_struct in its DWARF (a kernel built with "
                          f"CONFIG_DEBUG_INFO?): {p.stderr.strip()}")
    found = {}
    # top-level members only: one tab of indentation, "type name[...];  /* offset size */"
    for m in re.finditer(r"^\t[^\t\n][^\n]*?\b(\w+)(?:\[\d+\])?;\s*/\*\s*(\d+)\s+\d+\s*\*/",
                         p.stdout, re.M):
        if m.group(1) in TASK_FIELDS and m.group(1) not in found:
            found[m.group(1)] = int(m.group(2))
    missing = [f for f in TASK_FIELDS if f not in found]
    if missing:
        raise BundleError(f"{vmlinux}: task_struct has no {', '.join(missing)} (pahole)")
    return [found[f] for f in TASK_FIELDS]


def profile_task(fdt, nodes, dts):
    """Guests with profile-vmlinux = "PATH" get profile-task-offsets = <pid tgid comm> from
    that kernel's DWARF; returns the vmlinux files read (the bundle depends on them)."""
    used = []
    for g, gp in nodes:
        rel = string(gp.get("profile-vmlinux"))
        if rel is None:
            continue
        path = os.path.realpath(os.path.join(REPO, rel))
        if not os.path.isfile(path):
            raise BundleError(f"{dts}: guest {g}: profile-vmlinux {rel} not found")
        offs = task_offsets(path)
        fdt.resize(fdt.totalsize() + 64)
        fdt.setprop(fdt.path_offset(f"/guests/{g}"), "profile-task-offsets",
                    struct.pack(">III", *offs))
        used.append(path)
    return used


# ---------------------------------------------------------------- the bundle
def build(dts, out, edit=None):
    """Bundle dts into out; edit(fdt), if given, may change the compiled DT first."""
    if not os.path.isfile(dts):
        raise BundleError(f"configuration {dts} not found")
    fdt = compile_dts(dts)
    if edit:
        edit(fdt)
    if b"pmuvisor,config" not in props(fdt, 0).get("compatible", b""):
        raise BundleError(f"{dts}: / compatible must be \"pmuvisor,config\"")
    if fdt.path_offset("/guests", libfdt.QUIET_NOTFOUND) < 0:
        raise BundleError(f"{dts}: no /guests node")
    nodes = guests(fdt)
    if not nodes:
        raise BundleError(f"{dts}: /guests has no guest nodes")

    # collect the blobs, deduplicated by path
    blobs = []          # [(abs path, size)]
    index = {}          # abs path -> blob number
    refs = []           # (guest, prop, blob number)
    for g, gp in nodes:
        for key, pname in (("image", "pmuvisor,image-blob"), ("initrd", "pmuvisor,initrd-blob")):
            rel = string(gp.get(key))
            if rel is None:
                if key == "image":
                    raise BundleError(f"{dts}: guest {g} has no 'image' property")
                continue
            path = os.path.realpath(os.path.join(REPO, rel))
            if not os.path.isfile(path):
                raise BundleError(f"{dts}: guest {g}: {key} {rel} not found "
                                  f"(looked for {path}; built by 'make guest-images'?)")
            if path not in index:
                index[path] = len(blobs)
                blobs.append((path, os.path.getsize(path)))
            refs.append((g, pname, index[path]))
        # sanity: the image must fit in the guest's memory
        mem = gp.get("memory")
        if mem is None:
            raise BundleError(f"{dts}: guest {g} has no 'memory' property")
        m = cells64(mem, f"{dts}: guest {g} memory")
        if len(m) != 2:
            raise BundleError(f"{dts}: guest {g} memory must be <base-hi base-lo size-hi size-lo>")
        lo = gp.get("load-offset")
        load_off = cells64(lo, f"{dts}: guest {g} load-offset")[0] if lo else DEFAULT_LOAD_OFFSET
        img = blobs[index[os.path.realpath(os.path.join(REPO, string(gp["image"])))]]
        if load_off + img[1] > m[1]:
            raise BundleError(f"{dts}: guest {g}: image {img[0]} ({img[1]} bytes) at offset "
                              f"{load_off:#x} does not fit in {m[1]:#x} bytes of memory")

    kernels = profile_task(fdt, nodes, dts)
    dtb, offsets = place_blobs(fdt, refs, [size for _, size in blobs])
    tmp_out = out + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(tmp_out, "wb") as f:
        f.write(dtb)
        for (path, size), boff in zip(blobs, offsets):
            f.write(b"\0" * (boff - f.tell()))
            with open(path, "rb") as b:
                data = b.read()
            if len(data) != size:
                raise BundleError(f"{path} changed size while bundling")
            f.write(data)
        f.write(b"\0" * (align(f.tell()) - f.tell()))
    os.replace(tmp_out, out)
    # make's view: the bundle depends on the configuration and every blob
    with open(os.path.splitext(out)[0] + ".d", "w") as f:
        deps = " ".join([dts] + [os.path.relpath(p, REPO) for p, _ in blobs] +
                        [os.path.relpath(p, REPO) for p in kernels])
        f.write(f"{out}: {deps}\n")
    return [g for g, _ in nodes], blobs, offsets


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        names, blobs, offsets = build(argv[1], argv[2])
    except (BundleError, OSError, libfdt.FdtException) as e:
        print(f"mkbundle: error: {e}", file=sys.stderr)
        return 1
    print(f"mkbundle: {argv[2]}: {len(names)} guest(s) ({', '.join(names)}), "
          f"{len(blobs)} blob(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
