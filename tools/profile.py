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
import base64
import binascii
import bisect
import collections
import html
import os
import shutil
import struct
import sys
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, "build")
DEFAULT_KERNEL = os.path.join(BUILD, "linux", "vmlinux")
DEFAULT_INITRAMFS = os.path.join(BUILD, "linux", "initramfs.list")
DEFAULT_DEBUG_DIRS = [os.path.join(BUILD, "debsrc", "busybox-obj"),
                      os.path.join(BUILD, "linux", "perf-obj")]


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


# ---------------------------------------------------------------- ELF files (64-bit LE)
EM_RISCV = 243
ET_EXEC = 2
PT_LOAD, PT_NOTE = 1, 4
PF_X = 1
SHT_SYMTAB, SHT_NOTE, SHT_NOBITS = 2, 7, 8
SHF_EXECINSTR = 4
STT_NOTYPE, STT_FUNC, STT_GNU_IFUNC = 0, 2, 10
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
SHN_UNDEF, SHN_LORESERVE = 0, 0xFF00


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def is_mapping_symbol(name):
    """RISC-V (and Arm) mapping symbols: `$x`, `$d`, `$x<isa string>` mark code/data spans
    and name no function."""
    return name.startswith("$") and name[1:2] in ("x", "d", "a", "t")


class Elf:
    """The parts of an ELF file a profile needs: type, segments, build-id, function symbols."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise ProfileError(f"{path}: not a 64-bit little-endian ELF file")
        (self.type, self.machine, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum,
         shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", d, 16)
        self.segments = [struct.unpack_from("<IIQQQQQQ", d, phoff + i * phentsize)
                         for i in range(phnum)]
        self.sections = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)
                         for i in range(shnum)]
        self.build_id = self._build_id()
        self.exec_segments = [(p[3], p[6], p[2]) for p in self.segments
                              if p[0] == PT_LOAD and p[1] & PF_X]
        self._symbols = None
        self._starts = []

    def _notes(self, off, size):
        end = off + size
        while off + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", self.data, off)
            name = self.data[off + 12:off + 12 + namesz]
            doff = off + 12 + (namesz + 3) // 4 * 4
            yield name, ntype, self.data[doff:doff + descsz]
            off = doff + (descsz + 3) // 4 * 4

    def _build_id(self):
        areas = [(p[2], p[5]) for p in self.segments if p[0] == PT_NOTE]
        areas += [(s[4], s[5]) for s in self.sections if s[1] == SHT_NOTE]
        for off, size in areas:
            for name, ntype, desc in self._notes(off, size):
                if name.rstrip(b"\0") == b"GNU" and ntype == 3:
                    return desc
        return b""

    def load_range(self):
        loads = [(p[3], p[3] + p[6]) for p in self.segments if p[0] == PT_LOAD]
        return (min(a for a, _ in loads), max(b for _, b in loads)) if loads else (0, 0)

    def has_symtab(self):
        return any(s[1] == SHT_SYMTAB for s in self.sections)

    def _symtab(self):
        """(entry offset, name, info, section index, value, size) of every .symtab entry."""
        data = self.data
        for sh in self.sections:
            if sh[1] != SHT_SYMTAB:
                continue
            strtab = self.sections[sh[6]][4]
            for i in range(sh[5] // 24):
                at = sh[4] + 24 * i
                name_off, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", data, at)
                o = strtab + name_off
                name = data[o:data.index(b"\0", o)].decode("utf-8", "replace")
                yield at, name, info, shndx, value, size

    def symbols(self):
        """Sorted [(start, end, name)] of the functions and code labels in executable
        sections (what perf resolves to), the best name kept at each address; a symbol without
        size ends at the next one or at its section's end."""
        if self._symbols is not None:
            return self._symbols
        found = {}
        for _, name, info, shndx, value, size in self._symtab():
            typ, bind = info & 15, info >> 4
            if shndx == SHN_UNDEF or shndx >= SHN_LORESERVE or shndx >= len(self.sections):
                continue
            sec = self.sections[shndx]
            if typ not in (STT_FUNC, STT_GNU_IFUNC) and not (
                    typ == STT_NOTYPE and sec[2] & SHF_EXECINSTR):
                continue
            if not name or is_mapping_symbol(name):
                continue
            rank = (size > 0, bind == STB_GLOBAL, bind != STB_WEAK,
                    -(len(name) - len(name.lstrip("_"))), len(name))
            best = found.get(value)
            if best is None or rank > best[0]:
                found[value] = (rank, size, name, sec[3] + sec[5])
        starts = sorted(found)
        out = []
        for i, a in enumerate(starts):
            _, size, name, sec_end = found[a]
            end = a + size if size else min(starts[i + 1] if i + 1 < len(starts) else sec_end,
                                            sec_end)
            out.append((a, max(end, a + 1), name))
        self._symbols = out
        self._starts = [s[0] for s in out]
        return out

    def lookup(self, addr):
        """The innermost symbol containing addr (a label inside a function wins), or None."""
        syms = self.symbols()
        i = bisect.bisect_right(self._starts, addr) - 1
        for j in range(i, max(i - 64, -1), -1):
            if addr < syms[j][1]:
                return syms[j][2]
        return None

    def without_mapping_symbols(self):
        """The file's bytes with the names of its mapping symbols cleared: perf (6.1 to 6.12
        at least) drops them on Arm only, and on RISC-V would show `$x...` as a function."""
        data = bytearray(self.data)
        changed = False
        for at, name, _, _, _, _ in self._symtab():
            if is_mapping_symbol(name):
                struct.pack_into("<I", data, at, 0)
                changed = True
        return bytes(data) if changed else None

    def symbol_address(self, name):
        """The address of the first symbol called name, or None."""
        return next((value for _, n, _, _, value, _ in self._symtab() if n == name), None)

    def read_vaddr(self, addr, size):
        for p in self.segments:
            if p[0] == PT_LOAD and p[3] <= addr and addr + size <= p[3] + p[5]:
                o = p[2] + addr - p[3]
                return self.data[o:o + size]
        return b""

    def os_release(self):
        """A Linux kernel's release (`uname -r`) from its linux_banner, or ''."""
        at = self.symbol_address("linux_banner")
        words = cstr(self.read_vaddr(at, 256)).split() if at is not None else []
        return words[2] if len(words) > 2 and words[0] == "Linux" else ""


_elf_cache = {}


def load_elf(path):
    path = os.path.abspath(path)
    if path not in _elf_cache:
        _elf_cache[path] = Elf(path)
    return _elf_cache[path]


# ---------------------------------------------------------------- the guest's files
class GuestFiles:
    """The guest's executables, from a gen_init_cpio list: guest path -> host file, and the
    comm (first 15 characters of a file or link name) each one runs under."""

    def __init__(self, listing=None, debug_dirs=(), warn=print):
        self.files = {}     # guest path -> host ELF as listed
        self.links = {}     # guest path -> link target
        self.by_comm = {}   # comm -> guest path
        self.symfile = {}   # guest path -> host ELF with symbols
        self.warn = warn
        self.debug_dirs = list(debug_dirs)
        self._debug_index = None
        if listing:
            self._read(listing)

    def _read(self, listing):
        base = os.path.dirname(os.path.abspath(listing))
        with open(listing) as f:
            for line in f:
                w = line.split()
                if len(w) >= 3 and w[0] == "file":
                    src = w[2] if os.path.isabs(w[2]) else os.path.join(base, w[2])
                    if is_elf(src):
                        self.files[os.path.normpath(w[1])] = src
                elif len(w) >= 3 and w[0] == "slink":
                    self.links[os.path.normpath(w[1])] = w[2]
        names = collections.defaultdict(set)
        for path in self.files:
            names[os.path.basename(path)[:15]].add(path)
        for path in self.links:
            target = self.resolve(path)
            if target in self.files:
                names[os.path.basename(path)[:15]].add(target)
        for comm, paths in names.items():
            if len(paths) == 1:
                self.by_comm[comm] = paths.pop()
            else:
                self.warn(f"comm {comm!r} names {len(paths)} files ({', '.join(sorted(paths))}):"
                          " its samples stay unresolved")

    def resolve(self, path):
        """path with every link in it followed, as the guest's kernel would."""
        for _ in range(40):
            parts = path.strip("/").split("/")
            for i in range(1, len(parts) + 1):
                prefix = "/" + "/".join(parts[:i])
                if prefix in self.links:
                    t = self.links[prefix]
                    t = t if t.startswith("/") else os.path.join(os.path.dirname(prefix), t)
                    path = os.path.normpath("/".join([t] + parts[i:]))
                    break
            else:
                return path
        return path

    def add(self, comm, where):
        """--exe COMM=PATH: a guest path of the list, or a host ELF (shown as /<name>)."""
        guest = self.resolve(os.path.normpath(where)) if where.startswith("/") else None
        if guest in self.files:
            self.by_comm[comm[:15]] = guest
        elif is_elf(where):
            guest = "/" + os.path.basename(where)
            self.files[guest] = os.path.abspath(where)
            self.by_comm[comm[:15]] = guest
        else:
            raise ProfileError(f"--exe {comm}={where}: neither a file of the guest's list nor "
                               "a host ELF file")

    def _debug_files(self):
        if self._debug_index is None:
            self._debug_index = {}
            for d in self.debug_dirs:
                if not os.path.isdir(d):
                    continue
                for name in sorted(os.listdir(d)):
                    p = os.path.join(d, name)
                    if os.path.isfile(p) and is_elf(p):
                        try:
                            e = load_elf(p)
                        except (ProfileError, struct.error):
                            continue
                        if e.build_id and e.has_symtab():
                            self._debug_index.setdefault(e.build_id, p)
        return self._debug_index

    def symbols_of(self, guest_path):
        """The host ELF with the symbols of guest_path (itself unless stripped)."""
        if guest_path not in self.symfile:
            src = self.files[guest_path]
            elf = load_elf(src)
            if not elf.has_symtab() and elf.build_id:
                src = self._debug_files().get(elf.build_id, src)
            self.symfile[guest_path] = src
        return self.symfile[guest_path]


# ---------------------------------------------------------------- one guest's view
class Task:
    """A process as the perf.data written so far describes it: the executable mapped."""

    def __init__(self):
        self.exe = None


class GuestProfile:
    """The samples of one guest with the guest's kernel and files: symbolizes them and keeps
    the per-process state perf's records describe."""

    def __init__(self, gid, name, samples, kernel, files, cpu="vcpu"):
        self.gid = gid
        self.name = name
        self.samples = samples
        self.kernel = load_elf(kernel) if kernel else None
        self.kernel_path = os.path.abspath(kernel) if kernel else None
        self.files = files
        self.cpu = cpu
        self.lost_records = []  # [(time, count)] of the LOST records that concern it
        self.lost = 0
        self._fake_pids = {}

    def task_of(self, s):
        """(pid, tid, comm) of a sample: the guest's own when read (PROFILE_SAMPLE_TASK),
        otherwise one pseudo-process per address space (vsatp)."""
        if s.flags & SAMPLE_TASK:
            return s.pid, s.tid, s.comm or f"pid{s.pid}"
        ppn = s.vsatp & ((1 << 44) - 1)
        if ppn == 0:
            return 0, 0, self.name
        pid = self._fake_pids.setdefault(ppn, 0x40000000 + len(self._fake_pids))
        return pid, pid, f"as-{ppn:x}"

    def exe_for(self, comm):
        return self.files.by_comm.get(comm[:15]) if self.files else None

    def cpu_of(self, s):
        return s.vcpu if self.cpu == "vcpu" else s.hart

    def frames(self, s):
        """[(address, kernel?)] from leaf to root: pc, the chain, user part after the mark."""
        kernel = s.mode == MODE_VS
        out = [(s.pc, kernel)]
        for a in s.chain:
            if a == CHAIN_USER:
                kernel = False
                continue
            out.append((a, kernel))
        return out

    def symbol(self, addr, kernel, exe):
        """(dso, name) of addr: the kernel ELF or the executable's; None for a name not
        found, '[unknown]' for a dso."""
        if kernel:
            if self.kernel:
                return "[kernel.kallsyms]", self.kernel.lookup(addr)
            return "[unknown]", None
        if exe:
            elf = load_elf(self.files.symbols_of(exe))
            if any(v <= addr < v + n for v, n, _ in elf.exec_segments):
                return os.path.basename(exe), elf.lookup(addr)
        return "[unknown]", None

    def resolved(self):
        """Per sample: (comm, [(dso, name or None, address, kernel?)] leaf first)."""
        for s in self.samples:
            _, _, comm = self.task_of(s)
            exe = self.exe_for(comm)
            yield comm, [self.symbol(a, k, exe) + (a, k) for a, k in self.frames(s)]


# ---------------------------------------------------------------- perf.data
PERF_RECORD_MMAP, PERF_RECORD_COMM, PERF_RECORD_SAMPLE, PERF_RECORD_MMAP2 = 1, 3, 9, 10
PERF_RECORD_LOST_SAMPLES = 13
MISC_KERNEL, MISC_USER, MISC_COMM_EXEC, MISC_BUILD_ID_SIZE = 1, 2, 1 << 13, 1 << 15
SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME, SAMPLE_CALLCHAIN = 1 << 0, 1 << 1, 1 << 2, 1 << 5
SAMPLE_CPU, SAMPLE_PERIOD = 1 << 7, 1 << 8
CONTEXT_KERNEL, CONTEXT_USER = (1 << 64) - 128, (1 << 64) - 512
PERF_TYPE_HARDWARE, PERF_TYPE_RAW = 0, 4
ATTR_SIZE = 128  # PERF_ATTR_SIZE_VER7
ATTR_FLAGS = (1 << 8) | (1 << 9) | (1 << 18) | (1 << 23) | (1 << 24)  # mmap comm id_all mmap2 exec
FEAT_BUILD_ID, FEAT_HOSTNAME, FEAT_OSRELEASE, FEAT_VERSION, FEAT_ARCH = 2, 3, 4, 5, 6
FEAT_NRCPUS, FEAT_CMDLINE, FEAT_EVENT_DESC = 7, 11, 12
EVENT_ID = 1


def name_field(s, align=8):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % align)


def perf_string(s):
    b = name_field(s, 64)
    return struct.pack("<I", len(b)) + b


def event_attr(st):
    """(perf type, config, name) of the sampled SBI PMU event."""
    if st.event_idx == 0x1:
        return PERF_TYPE_HARDWARE, 0, "cycles"
    if st.event_idx == 0x2:
        return PERF_TYPE_HARDWARE, 1, "instructions"
    if st.event_idx >> 16 == 2:
        return PERF_TYPE_RAW, st.event_data, f"sbi-raw-{st.event_data:#x}"
    return PERF_TYPE_RAW, st.event_idx, f"sbi-event-{st.event_idx:#x}"


class PerfData:
    """Writes one perf.data: a file header, one attr, the records, the feature sections."""

    SAMPLE_TYPE = (SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_CALLCHAIN | SAMPLE_CPU |
                   SAMPLE_PERIOD)

    def __init__(self):
        self.records = []

    def record(self, rtype, misc, body, pid=0, tid=0, time=0, cpu=0):
        """A non-sample record with its sample_id trailer (TID, TIME, CPU: sample_id_all)."""
        body += struct.pack("<IIQII", pid & 0xFFFFFFFF, tid & 0xFFFFFFFF, time, cpu, 0)
        self.records.append(struct.pack("<IHH", rtype, misc, 8 + len(body)) + body)

    def comm(self, pid, tid, comm, time, cpu, exec_=False):
        self.record(PERF_RECORD_COMM, MISC_COMM_EXEC if exec_ else 0,
                    struct.pack("<II", pid, tid) + name_field(comm), pid, tid, time, cpu)

    def kernel_mmap(self, start, end, ref_name, ref_addr):
        """The kernel's map; perf finds ref_name in the kernel ELF and relocates its symbols
        by ref_addr minus its address there (0: the stream's addresses are the ELF's)."""
        body = struct.pack("<IIQQQ", 0xFFFFFFFF, 0, start, end - start, ref_addr)
        self.record(PERF_RECORD_MMAP, MISC_KERNEL,
                    body + name_field("[kernel.kallsyms]" + ref_name), -1, 0)

    def mmap2(self, pid, vaddr, size, offset, filename, time, cpu):
        page = 4096
        start, pgoff = vaddr & ~(page - 1), offset & ~(page - 1)
        end = vaddr + size
        body = struct.pack("<IIQQQIIQQII", pid, pid, start, end - start, pgoff, 0, 0, 0, 0,
                           5, 2)  # PROT_READ | PROT_EXEC, MAP_PRIVATE
        self.record(PERF_RECORD_MMAP2, MISC_USER, body + name_field(filename), pid, pid, time,
                    cpu)

    def lost_samples(self, count, time):
        self.record(PERF_RECORD_LOST_SAMPLES, 0, struct.pack("<Q", count), time=time)

    def sample(self, misc, ip, pid, tid, time, cpu, period, chain):
        body = struct.pack("<QIIQIIQQ", ip, pid, tid, time, cpu, 0, period, len(chain))
        body += struct.pack(f"<{len(chain)}Q", *chain)
        self.records.append(struct.pack("<IHH", PERF_RECORD_SAMPLE, misc, 8 + len(body)) + body)

    def write(self, path, attr, features):
        """The file: header, the attr's one id, the attr, the records, the feature sections
        (a table of (offset, size), one per feature bit set, then their bodies)."""
        header_size = 104
        ids_off = header_size
        attrs_off = ids_off + 8
        attrs = attr + struct.pack("<QQ", ids_off, 8)
        data_off = attrs_off + len(attrs)
        data = b"".join(self.records)
        off = data_off + len(data) + 16 * len(features)
        table = b""
        bits = 0
        for bit, body in sorted(features.items()):
            bits |= 1 << bit
            table += struct.pack("<QQ", off, len(body))
            off += len(body)
        head = b"PERFILE2" + struct.pack("<QQQQQQQQ", header_size, len(attrs), attrs_off,
                                         len(attrs), data_off, len(data), 0, 0)
        head += bits.to_bytes(32, "little")
        with open(path, "wb") as f:
            f.write(head + struct.pack("<Q", EVENT_ID) + attrs + data + table +
                    b"".join(body for _, body in sorted(features.items())))


def perf_attr(attr_type, config, period):
    """struct perf_event_attr (PERF_ATTR_SIZE_VER7): the event, its period, what samples
    hold; mmap, comm, sample_id_all, mmap2 and comm_exec set as perf record would."""
    return struct.pack("<IIQQQQQIIQQQQIiQIHHIIQ", attr_type, ATTR_SIZE, config, period,
                       PerfData.SAMPLE_TYPE, 0, ATTR_FLAGS, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                       0, 0, 0)


def build_id_entry(misc, filename, build_id):
    name = name_field(filename, 64)
    return struct.pack("<IHHi20sBBH", 0, misc | MISC_BUILD_ID_SIZE, 36 + len(name), -1,
                       build_id[:20], len(build_id[:20]), 0, 0) + name


def write_perf_data(gp, st, path, cmdline):
    """gp's samples as perf.data at path, with COMM/MMAP2 records for the processes, the
    kernel's MMAP, LOST_SAMPLES and the header features perf reads."""
    pd = PerfData()
    build_ids = []
    if gp.kernel:
        lo, hi = gp.kernel.load_range()
        for ref in ("_text", "_stext", "_start", ""):
            addr = gp.kernel.symbol_address(ref) if ref else 0
            if addr is not None:
                break
        pd.kernel_mmap(lo, hi, ref, addr)
        if gp.kernel.build_id:
            build_ids.append(build_id_entry(MISC_KERNEL, "[kernel.kallsyms]",
                                            gp.kernel.build_id))
    threads = {}   # tid -> comm announced
    procs = {}     # pid -> Task
    seen_exe = set()
    lost = sorted(gp.lost_records)
    li = 0
    cpus = 1
    for s in gp.samples:
        while li < len(lost) and lost[li][0] <= s.time:
            pd.lost_samples(lost[li][1], lost[li][0])
            li += 1
        pid, tid, comm = gp.task_of(s)
        cpu = gp.cpu_of(s)
        cpus = max(cpus, cpu + 1)
        proc = procs.setdefault(pid, Task())
        exe = gp.exe_for(comm)
        exec_ = exe is not None and proc.exe is not None and exe != proc.exe
        if threads.get(tid) != comm or exec_:
            pd.comm(pid, tid, comm, s.time, cpu, exec_)
            threads[tid] = comm
        if exe is not None and exe != proc.exe:
            elf = load_elf(gp.files.symbols_of(exe))
            for vaddr, size, offset in elf.exec_segments:
                pd.mmap2(pid, vaddr, size, offset, exe, s.time, cpu)
            proc.exe = exe
            if exe not in seen_exe and elf.build_id:
                build_ids.append(build_id_entry(MISC_USER, exe, elf.build_id))
            seen_exe.add(exe)
        chain = [CONTEXT_KERNEL if s.mode == MODE_VS else CONTEXT_USER, s.pc]
        chain += [CONTEXT_USER if a == CHAIN_USER else a for a in s.chain]
        pd.sample(MISC_KERNEL if s.mode == MODE_VS else MISC_USER, s.pc, pid, tid, s.time, cpu,
                  st.period, chain)
    for time, count in lost[li:]:
        pd.lost_samples(count, time)
    attr_type, config, ev_name = event_attr(st)
    features = {
        FEAT_BUILD_ID: b"".join(build_ids),
        FEAT_HOSTNAME: perf_string(gp.name),
        FEAT_OSRELEASE: perf_string(gp.kernel.os_release() if gp.kernel else ""),
        FEAT_VERSION: perf_string("pmuvisor profile.py 1"),
        FEAT_ARCH: perf_string("riscv64"),
        FEAT_NRCPUS: struct.pack("<II", cpus, cpus),
        FEAT_CMDLINE: struct.pack("<I", len(cmdline)) + b"".join(perf_string(a)
                                                                 for a in cmdline),
    }
    attr = perf_attr(attr_type, config, st.period)
    features[FEAT_EVENT_DESC] = (struct.pack("<II", 1, ATTR_SIZE) + attr +
                                 struct.pack("<I", 1) + perf_string(ev_name) +
                                 struct.pack("<Q", EVENT_ID))
    pd.write(path, attr, features)


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
