# SPDX-License-Identifier: BSD-2-Clause
"""perf.data for the host's perf: one guest's samples as a perf record file (the layout
of tools/perf/util/header.c: header, attrs, data, features)."""
import struct

from guest_symbols import Task, load_elf
from profile_stream import CHAIN_USER, MODE_VS


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
