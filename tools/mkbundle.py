#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Pack a pmuvisor configuration DT and its guest images into one bundle.

usage: mkbundle.py CONFIG.dts OUT.bundle

Layout (docs/configuration.md): the configuration DTB padded to 4 KiB, then
every image/initrd blob 4 KiB aligned and deduplicated by path. Each guest
node gets pmuvisor,image-blob (and pmuvisor,initrd-blob) =
<off-hi off-lo size-hi size-lo>, offsets relative to the bundle start.
Paths in the DT are relative to the repository root.
"""
import os
import struct
import subprocess
import sys
import tempfile

ALIGN = 4096
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_LOAD_OFFSET = 2 << 20


class BundleError(Exception):
    pass


def run(cmd, what):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise BundleError(f"{cmd[0]} not found (install device-tree-compiler)")
    if p.returncode != 0:
        raise BundleError(f"{what} failed:\n{p.stderr.strip()}")
    return p.stdout


def align(n):
    return (n + ALIGN - 1) & ~(ALIGN - 1)


def fdtget(dtb, node, prop, typ=None, default=None):
    cmd = ["fdtget"] + (["-t", typ] if typ else []) + [dtb, node, prop]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        if default is not None:
            return default
        return None
    return p.stdout.strip()


def cells64(text, what):
    vals = [int(v, 0) for v in text.split()]
    if len(vals) % 2:
        raise BundleError(f"{what}: expected pairs of 32-bit cells, got {text!r}")
    return [(vals[i] << 32) | vals[i + 1] for i in range(0, len(vals), 2)]


def put_blob(dtb, node, prop, off, size):
    run(["fdtput", "-t", "u", dtb, node, prop,
         str(off >> 32), str(off & 0xffffffff), str(size >> 32), str(size & 0xffffffff)],
        f"fdtput {node} {prop}")


def dtb_totalsize(path):
    with open(path, "rb") as f:
        hdr = f.read(8)
    magic, size = struct.unpack(">II", hdr)
    if magic != 0xd00dfeed:
        raise BundleError(f"{path}: not a DTB")
    return size


def build(dts, out):
    if not os.path.isfile(dts):
        raise BundleError(f"configuration {dts} not found")
    with tempfile.TemporaryDirectory() as tmp:
        dtb = os.path.join(tmp, "config.dtb")
        run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-i", os.path.dirname(os.path.abspath(dts)),
             "-o", dtb, dts], f"dtc {dts}")
        compat = fdtget(dtb, "/", "compatible", default="")
        if "pmuvisor,config" not in compat:
            raise BundleError(f"{dts}: / compatible must be \"pmuvisor,config\"")
        p = subprocess.run(["fdtget", "-l", dtb, "/guests"], capture_output=True, text=True)
        if p.returncode != 0:
            raise BundleError(f"{dts}: no /guests node")
        guests = p.stdout.split()
        if not guests:
            raise BundleError(f"{dts}: /guests has no guest nodes")

        # collect the blobs, deduplicated by path
        blobs = []          # [(abs path, size)]
        index = {}          # abs path -> blob number
        refs = []           # (node, prop, blob number)
        for g in guests:
            node = f"/guests/{g}"
            for key, prop in (("image", "pmuvisor,image-blob"),
                              ("initrd", "pmuvisor,initrd-blob")):
                rel = fdtget(dtb, node, key, "s")
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
                refs.append((node, prop, index[path]))
            # sanity: the image must fit in the guest's memory
            mem = fdtget(dtb, node, "memory", "u")
            if mem is None:
                raise BundleError(f"{dts}: guest {g} has no 'memory' property")
            m = cells64(mem, f"guest {g} memory")
            if len(m) != 2:
                raise BundleError(f"{dts}: guest {g} memory must be <base-hi base-lo size-hi size-lo>")
            lo = fdtget(dtb, node, "load-offset", "u")
            load_off = cells64(lo, f"guest {g} load-offset")[0] if lo else DEFAULT_LOAD_OFFSET
            img = blobs[index[os.path.realpath(os.path.join(REPO, fdtget(dtb, node, "image", "s")))]]
            if load_off + img[1] > m[1]:
                raise BundleError(f"{dts}: guest {g}: image {img[0]} ({img[1]} bytes) at offset "
                                  f"{load_off:#x} does not fit in {m[1]:#x} bytes of memory")

        # placeholders first so that the DTB size is final
        for node, prop, _ in refs:
            put_blob(dtb, node, prop, 0, 0)
        dtb_size = dtb_totalsize(dtb)
        off = align(dtb_size)
        offsets = []
        for path, size in blobs:
            offsets.append(off)
            off = align(off + size)
        for node, prop, n in refs:
            put_blob(dtb, node, prop, offsets[n], blobs[n][1])
        if dtb_totalsize(dtb) != dtb_size:
            raise BundleError("internal error: DTB size changed while filling in blob offsets")

        with open(dtb, "rb") as f:
            dtb_data = f.read()[:dtb_size]
        tmp_out = out + ".tmp"
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(tmp_out, "wb") as f:
            f.write(dtb_data)
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
        deps = " ".join([dts] + [os.path.relpath(p, REPO) for p, _ in blobs])
        f.write(f"{out}: {deps}\n")
    return guests, blobs, offsets


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        guests, blobs, offsets = build(argv[1], argv[2])
    except BundleError as e:
        print(f"mkbundle: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"mkbundle: error: {e}", file=sys.stderr)
        return 1
    print(f"mkbundle: {argv[2]}: {len(guests)} guest(s) ({', '.join(guests)}), "
          f"{len(blobs)} blob(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
