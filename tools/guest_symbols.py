# SPDX-License-Identifier: BSD-2-Clause
"""A guest's samples with symbols: ELF files (64-bit LE), the guest's executables found
through its initramfs list and build ids, the tasks and their resolved call chains."""
import bisect
import collections
import os
import struct

from profile_stream import CHAIN_USER, MODE_VS, SAMPLE_TASK, ProfileError, cstr


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
