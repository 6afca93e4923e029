# SPDX-License-Identifier: BSD-2-Clause
"""The tables of tools/bench.py and its comparison of two results files: which rows and columns
there are, how a figure is printed, and which rows of a new run are worse than an old one's
(bench.py's docstring says what each table holds and what --compare flags)."""
import json
import sys

ROWS = [
    ("base_get_spec_version", "BASE get_spec_version (null call)"),
    ("pmu_num_counters", "PMU num_counters"),
    ("pmu_counter_get_info", "PMU counter_get_info"),
    ("pmu_cfg_match_stop_reset", "PMU config_matching + stop(RESET), Linux-style mask"),
    ("pmu_cfg_match_stop_reset_ctr3", "PMU config_matching + stop(RESET), counter 3 only"),
    ("pmu_start_stop", "PMU start(SET_INIT_VALUE) + stop, one counter"),
    ("pmu_start_stop_mask1", "PMU start + stop, one counter, no initial value"),
    ("pmu_start_stop_mask8", "PMU start + stop, 8 counters, one masked call each"),
    ("pmu_fw_read", "PMU fw_read"),
    ("pmu_snapshot_set_shmem", "PMU snapshot_set_shmem (4 KiB area)"),
    ("pmu_event_get_info_1", "PMU event_get_info, 1 entry"),
    ("pmu_event_get_info_4", "PMU event_get_info, 4 entries"),
    ("csr_read_hpmcounter_started", "hpmcounter3 read, counter started"),
    ("csr_read_hpmcounter_stopped", "hpmcounter3 read, counter stopped by the guest"),
    ("csr_read_hpmcounter_configured", "hpmcounter3 read, configured never started"),
    ("csr_read_cycle_started", "cycle read, counter 0 started"),
    ("csr_read_instret_started", "instret read, counter 2 started"),
    ("csr_read_time", "time read"),
]
# The steady state (bench_steady(), bench/steady.c): the rows again, figure names prefixed,
# after the vCPU took an overflow ("ovf_") and with counters running too ("busy_"); the snapshot
# area's own row is not taken again (the area must stay); two rows "sie_" with sstatus.SIE set,
# after the overflow only. Each is shown against its fresh row (the key without a prefix or "sie_").
STEADY_SETS = [("ovf_", "after ovf"), ("busy_", "running")]
STEADY_ROWS = [(k, label) for k, label in ROWS if k != "pmu_snapshot_set_shmem"] + [
    ("sie_base_get_spec_version", "BASE get_spec_version, sstatus.SIE set"),
    ("sie_pmu_start_stop", "PMU start(SET_INIT_VALUE) + stop, sstatus.SIE set")]
# (run, label) of the value columns, then the ratio columns (numerator run, denominator run)
COLUMNS = [("native", "OpenSBI native"), ("kvm", "KVM 6.12"), ("pmuvisor", "pmuvisor"),
           ("pmuvisor-sbi", "pmuvisor no Smcdeleg")]
RATIOS = [("pmuvisor", "kvm", "pmuvisor / KVM"), ("pmuvisor-sbi", "kvm", "no Smcdeleg / KVM")]
# (run, figure prefix, label) of the vCPU switch table
SWITCH_COLUMNS = [("pmuvisor", "switch_live_", "one guest, same counters"),
                  ("pmuvisor-sbi", "switch_live_", "same, no Smcdeleg"),
                  ("pmuvisor", "switch_ovf_live_", "same, one sampling"),
                  ("pmuvisor-sbi", "switch_ovf_live_", "sampling, no Smcdeleg"),
                  ("partition", "switch_part_live_", "two guests, partitioned"),
                  ("partition-sbi", "switch_part_live_", "partitioned, no Smcdeleg"),
                  ("shared", "switch_part_live_", "two guests, same counters")]


def fmt(v, err=0):
    if v is None:
        return "-"
    s = f"{v:,.0f}" if abs(v - round(v)) < 0.0005 else f"{v:,.2f}"
    if err == -2:
        s += " (n/s)"  # SBI_ERR_NOT_SUPPORTED: the call did nothing
    elif err:
        s += f" (err {err})"
    return s


def ratio(num, den):
    """num / den of two figures, "-" if either is missing or answered NOT_SUPPORTED"""
    if not num or not den or -2 in (num["error"], den["error"]) or not den["instructions"]:
        return "-"
    q = num["instructions"] / den["instructions"]
    return f"{q:.2f}" if q >= 0.1 else f"{q:.4f}"


def figure(runs, name, key):
    """(cell text, figure or None) of one figure of one run"""
    r = runs[name]
    f = r["figures"].get(key)
    if f:
        return fmt(f["instructions"], f["error"]) + (" *" if "ev" in f else ""), f
    return ("-" if r["ok"] else "FAILED"), None


def table(runs):
    """The call and CSR table: a column per requested run, the ratios where both ran."""
    cols = [(n, label) for n, label in COLUMNS if n in runs]
    ratios = [x for x in RATIOS if x[0] in runs and x[1] in runs]
    head = ["operation"] + [label for _, label in cols] + [label for _, _, label in ratios]
    rows = []
    for key, label in ROWS:
        cells = {n: figure(runs, n, key) for n, _ in cols}
        rows.append([label] + [cells[n][0] for n, _ in cols] +
                    [ratio(cells[a][1], cells[b][1]) for a, b, _ in ratios])
    return head, rows


def live_figures(run, prefix):
    """{live counters: figure} of one switch configuration, in increasing order"""
    return dict(sorted((int(k[len(prefix):]), f) for k, f in run["figures"].items()
                       if k.startswith(prefix)))


def switch_table(runs):
    """Rows 0, 1, 4, all: per setup, the switch cost with its PMU share in parentheses (cost
    minus the 0-counter cost of the same setup)."""
    cols = [(n, live_figures(runs[n], prefix), label)
            for n, prefix, label in SWITCH_COLUMNS if n in runs]
    head = ["live counters per vCPU"] + [label for _, _, label in cols] + ["switches measured"]
    rows = []
    for key in ("0", "1", "4", "all"):
        row, tops, sw = [], [], []
        for n, c, _ in cols:
            k = int(key) if key != "all" else (max(c) if c else 0)
            if key == "all":
                if k <= 4:
                    k = None
                tops.append(str(k) if k else "-")
            f = c.get(k)
            if not f:
                row.append("-" if runs[n]["ok"] else "FAILED")
                sw.append("-")
                continue
            cell = fmt(round(f["instructions"]))
            if c.get(0):
                cell += f" (+{fmt(round(f['instructions'] - c[0]['instructions']))})"
            row.append(cell)
            sw.append(str(f.get("switches", "?")))
        label = key if key != "all" else f"all ({' / '.join(tops)})"
        rows.append([label] + row + [" / ".join(sw)])
    return head, rows


def steady_table(runs):
    """The steady-state rows: per run of COLUMNS and per set, the figure and its change from the
    fresh row of the same run"""
    cols = [(n, label) for n, label in COLUMNS if n in runs]
    head = ["operation (steady state)"] + [f"{label}, {set_label}" for _, label in cols
                                           for _, set_label in STEADY_SETS]
    rows = []
    for key, label in STEADY_ROWS:
        fresh_key = key[len("sie_"):] if key.startswith("sie_") else key
        row = [label]
        for n, _ in cols:
            fresh = runs[n]["figures"].get(fresh_key)
            for prefix, _ in STEADY_SETS:
                cell, f = figure(runs, n, prefix + key)
                if f and fresh:
                    cell += f" ({signed(f['instructions'] - fresh['instructions'])})"
                row.append(cell)
        rows.append(row)
    return head, rows


def signed(d):
    """a difference with its sign: +3, -2, 0, +0.25"""
    if abs(d) < 0.0005:
        return "0"
    return ("+" if d > 0 else "-") + fmt(abs(d))


def compare_rows(old, new, tol_sbi, tol_switch):
    """[(section, row label, [(run, column label, old figure, new figure, tolerance)])] for every
    row of the three tables (calls and CSR reads, steady state, vCPU switch), over the runs of
    `new` (old, new: the "runs" of two results files)"""
    def pick(runs, n, key):
        return runs.get(n, {}).get("figures", {}).get(key)

    def cells(cols, key_of, tol):
        return [(n, lab, pick(old, n, key_of(n)), pick(new, n, key_of(n)), tol)
                for n, lab in cols]

    out = []
    cols = [(n, label) for n, label in COLUMNS if n in new]
    for key, label in ROWS:
        out.append(("calls", label, cells(cols, lambda n: key, tol_sbi)))
    for prefix, set_label in STEADY_SETS:
        for key, label in STEADY_ROWS:
            c = cells(cols, lambda n: prefix + key, tol_sbi)
            if any(o or f for _, _, o, f, _ in c):
                out.append(("steady", f"{set_label}: {label}", c))
    scols = [(n, prefix, label) for n, prefix, label in SWITCH_COLUMNS if n in new]
    lives = sorted({int(k[len(p):]) for n, p, _ in scols for runs in (old, new)
                    for k in runs.get(n, {}).get("figures", {}) if k.startswith(p)})
    for live in lives:
        out.append(("switch", f"{live} live counters per vCPU",
                    [(n, label, pick(old, n, p + str(live)), pick(new, n, p + str(live)),
                      tol_switch) for n, p, label in scols]))
    return out


def compare_cell(old, new, tol, new_ok):
    """(cell text, why it is worse or None)"""
    def val(f):
        return fmt(f["instructions"], f["error"]) if f else "-"

    if not new:
        text = f"{val(old)} / {'-' if new_ok else 'FAILED'}"
        return text, (("gone" if new_ok else "run failed") if old else None)
    if not old:
        return f"- / {val(new)}", None
    d = new["instructions"] - old["instructions"]
    text = f"{val(old)} / {val(new)} / {signed(d)}"
    if new["error"] != old["error"]:
        return text + " !", f"SBI error {old['error']} -> {new['error']}"
    if d > tol:
        return text + " !", f"{signed(d)} > +{fmt(tol)}"
    return text, None


def compare(old_res, new_res, tol_sbi, tol_switch, old_name, new_name):
    """Print every row of both results as old / new / difference; returns the rows worse than
    tolerance, as text"""
    old, new = old_res.get("runs", {}), new_res.get("runs", {})
    worse = []
    print(f"\nCompared: old = {old_name} (commit {old_res.get('commit', '?')[:12]}, "
          f"{old_res.get('date', '?')}), new = {new_name} (commit "
          f"{new_res.get('commit', '?')[:12]}, {new_res.get('date', '?')})")
    print(f"cells: old / new / new - old; ! = worse than tolerance (calls and CSR reads +"
          f"{fmt(tol_sbi)}, vCPU switch +{fmt(tol_switch)}), a changed SBI error, or a figure "
          "gone")
    titles = {"calls": "operation", "steady": "operation (steady state)",
              "switch": "vCPU switch, instructions per switch"}
    rows = compare_rows(old, new, tol_sbi, tol_switch)
    for section in ("calls", "steady", "switch"):
        sec = [r for r in rows if r[0] == section]
        if not sec:
            continue
        head = [titles[section]] + [lab for _, lab, _, _, _ in sec[0][2]]
        body = []
        for _, label, cells in sec:
            row = [label]
            for run, lab, o, f, tol in cells:
                text, why = compare_cell(o, f, tol, new[run].get("ok", False))
                row.append(text)
                if why:
                    worse.append(f"{lab}: {label}: {why}")
            body.append(row)
        print()
        print_table(head, body)
    return worse


def show_table(results, key, title, head_rows):
    """print a table under its title, and keep it in the results as results[key]"""
    head, rows = head_rows
    print(title)
    print_table(head, rows)
    results[key] = {"head": head, "rows": rows}


def print_table(head, rows):
    w = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]

    def line(r):
        return "  ".join(str(c).ljust(w[i]) if i == 0 else str(c).rjust(w[i])
                         for i, c in enumerate(r))
    print(line(head))
    print("  ".join("-" * x for x in w))
    for r in rows:
        print(line(r))


def load_results(path):
    """a results file as bench.py writes it, or None (said why)"""
    try:
        with open(path) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        print(f"bench.py: {path}: {e}", file=sys.stderr)
        return None
    if not isinstance(res, dict) or not isinstance(res.get("runs"), dict):
        print(f"bench.py: {path}: not a bench.py results file (no \"runs\")", file=sys.stderr)
        return None
    return res


def compare_verdict(worse, status):
    """the exit status after a comparison: 3 if a row is worse, else the run's status"""
    if worse:
        print(f"\nbench.py: {len(worse)} row(s) worse than tolerance:")
        for w in worse:
            print(f"  {w}")
        return 3 if not status else status
    print("\nbench.py: no row worse than tolerance")
    return status
