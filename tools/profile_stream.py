# SPDX-License-Identifier: BSD-2-Clause
"""The guest profile stream (core/profile_format.h): its records, read from a file or from
the "!P " lines of a console log."""
import base64
import binascii
import collections
import struct


class ProfileError(Exception):
    pass


# ---------------------------------------------------------------- the stream (profile_format.h)
MAGIC = 0x464f525056554d50
VERSION = 1
FILE_HEADER = struct.Struct("<QHHHHIIQQ")
RECORD = struct.Struct("<HH")
SAMPLE = struct.Struct("<HHHHQHBBIIIQQ16s")
GUEST = struct.Struct("<HHHH")
LOST = struct.Struct("<HHHHQQ")
REC_SAMPLE, REC_GUEST, REC_LOST = 1, 2, 3
MODE_VU, MODE_VS = 0, 1
SAMPLE_TASK, SAMPLE_TRUNCATED = 1, 2
CHAIN_USER = (1 << 64) - 512
GUEST_ANY = 0xFFFF

Sample = collections.namedtuple(
    "Sample", "time guest vcpu hart mode flags pid tid pc vsatp comm chain")
Lost = collections.namedtuple("Lost", "hart guest time count")


class Stream:
    def __init__(self):
        self.harts = 0
        self.event_idx = 0
        self.event_data = 0
        self.period = 0
        self.guests = {}  # id -> (name, vcpus)
        self.samples = []
        self.lost = []
        self.warnings = []

    def guest_name(self, gid):
        return self.guests.get(gid, (f"guest{gid}", 0))[0]


def cstr(raw):
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


CONSOLE_PREFIX = b"!P "


def console_stream(data):
    """The stream in a pmuvisor console log: the "!P " lines' base64, in order. Each line
    holds whole records (core/profile.c); no guest can write such a line (guest lines
    start with "[name] ")."""
    out = bytearray()
    for line in data.splitlines():
        line = line.rstrip(b"\r")
        if line.startswith(CONSOLE_PREFIX):
            try:
                out += base64.b64decode(line[len(CONSOLE_PREFIX):], validate=True)
            except binascii.Error as e:
                raise ProfileError(f"a profile line of the console log is damaged: {e}")
    return bytes(out)


def read_stream(path):
    """A stream file, or the console log of a run (its "!P " lines)."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(struct.pack("<Q", MAGIC)):
        data = console_stream(data)
        if not data:
            raise ProfileError(f"{path}: neither a profile stream nor a console log with "
                               "profile lines")
    return parse_stream(data, path)


def parse_stream(data, path):
    st = Stream()
    if len(data) < FILE_HEADER.size:
        raise ProfileError(f"{path}: {len(data)} bytes, shorter than the stream header")
    magic, version, hsize, st.harts, _, st.event_idx, _, st.event_data, st.period = \
        FILE_HEADER.unpack_from(data)
    if magic != MAGIC:
        raise ProfileError(f"{path}: not a profile stream (magic {magic:#x})")
    if version != VERSION:
        raise ProfileError(f"{path}: stream version {version}, this tool reads {VERSION}")
    if hsize < FILE_HEADER.size or hsize % 8:
        raise ProfileError(f"{path}: header size {hsize}")
    off = hsize
    while off < len(data):
        if off + RECORD.size > len(data):
            st.warnings.append(f"{len(data) - off} bytes of a truncated record at the end")
            break
        rtype, size = RECORD.unpack_from(data, off)
        if size < 8 or size % 8:
            raise ProfileError(f"{path}: record of size {size} at offset {off}")
        if off + size > len(data):
            st.warnings.append(f"truncated record (type {rtype}, {size} bytes) at the end")
            break
        rec = data[off:off + size]
        if rtype == REC_SAMPLE:
            f = SAMPLE.unpack_from(rec)
            nr = f[7]
            if size != SAMPLE.size + 8 * nr:
                raise ProfileError(f"{path}: sample of size {size} with {nr} chain entries "
                                   f"at offset {off}")
            chain = struct.unpack_from(f"<{nr}Q", rec, SAMPLE.size)
            st.samples.append(Sample(time=f[4], guest=f[2], vcpu=f[3], hart=f[5], mode=f[6],
                                     flags=f[10], pid=f[8], tid=f[9], pc=f[11], vsatp=f[12],
                                     comm=cstr(f[13]), chain=chain))
        elif rtype == REC_GUEST:
            _, _, gid, vcpus = GUEST.unpack_from(rec)
            st.guests[gid] = (cstr(rec[GUEST.size:]) or f"guest{gid}", vcpus)
        elif rtype == REC_LOST:
            if size < LOST.size:
                raise ProfileError(f"{path}: LOST record of size {size} at offset {off}")
            _, _, hart, gid, time, count = LOST.unpack_from(rec)
            st.lost.append(Lost(hart, gid, time, count))
        off += size  # unknown types are skipped: their size says how far
    st.samples.sort(key=lambda s: s.time)
    return st


def dump(st):
    print(f"harts {st.harts} event_idx {st.event_idx:#x} event_data {st.event_data:#x} "
          f"period {st.period}")
    for gid, (name, vcpus) in sorted(st.guests.items()):
        print(f"guest {gid} {name} vcpus {vcpus}")
    for s in st.samples:
        print(f"sample t={s.time} {st.guest_name(s.guest)} vcpu {s.vcpu} hart {s.hart} "
              f"{'VS' if s.mode == MODE_VS else 'VU'} pid {s.pid} tid {s.tid} "
              f"comm {s.comm!r} pc {s.pc:#x} vsatp {s.vsatp:#x} flags {s.flags:#x} chain "
              + " ".join("USER" if a == CHAIN_USER else f"{a:#x}" for a in s.chain))
    for lo in st.lost:
        who = "any guest" if lo.guest == GUEST_ANY else st.guest_name(lo.guest)
        print(f"lost t={lo.time} hart {lo.hart} ({who}) {lo.count}")
    for w in st.warnings:
        print(f"warning: {w}")
