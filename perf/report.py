#!/usr/bin/env python3
"""Rewrites perf/RESULTS.md from pbtree-bench JSON output (Google Benchmark --benchmark_out).

Usage: report.py --out perf/RESULTS.md --command "<exact command>" run1.json [run2.json ...]

Each benchmark is named <workload>/<contender>/<type>[.<key format>]/<rows>[/<variant>]. A
case with repetitions is taken at its `median` aggregate; a case run once at its single
iteration row; the spread column is the coefficient of variation (stddev / mean) over the
repetitions (Google Benchmark's `cv` aggregate). Time is CPU time of the benchmark thread
(robust on a shared machine), except bulk_build, whose multi-threaded build is timed on the
wall clock (counters wall_ns_per_op / wall_items_per_second), and the insert cases, which run
with UseRealTime so that the final commit's fsync counts. Ratios are pbtree / peer on the same
data, queries and run.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
PEERS = ["absl", "vector", "sqlite", "lmdb", "rocksdb"]
# Headline metric per workload: "time" (ns/op, lower is better) or "rate" (keys/s, higher).
HEADLINE = {
    "unique_scan": "time",
    "cold_lookup": "time",
    "key_encode": "time",
}
ORDER = ["unique_scan", "cold_lookup", "narrow_scan", "wide_scan", "full_scan", "key_encode",
         "bulk_build", "random_insert", "increasing_insert"]
# Workloads timed on the wall clock (real_time): the commit's fsync is part of the work.
REAL_TIME = {"random_insert", "increasing_insert"}
WHAT = {
    "unique_scan": "point lookup of a random existing ID on the unique ID index "
                   "(pbtree: build_key + BTree::find)",
    "cold_lookup": "unique_scan through a 16-frame buffer pool (file reopened after the bulk "
                   "load): nearly every lookup reads its leaf from the file (OS cache); counter "
                   "misses_per_op = pages read per lookup",
    "narrow_scan": "seek to a random COL value on the COL index (duplicates) and read 100 "
                   "entries, seek included (pbtree: build_key + BTree::scan cursor)",
    "wide_scan": "every entry with COL in [rows/4+1, 3·rows/4] (half the keys) on the COL index",
    "full_scan": "every entry of the COL index in order",
    "key_encode": "build_key of one exact value (small: 1..1000; large: top decades of the "
                  "type, random sign); rows field = distinct values cycled",
    "bulk_build": "index over COL (unsorted input, record number = ID): pbtree "
                  "IndexFile::bulk_load of pre-encoded keys (sort + pages + fsync) with 1 or 2 TBB "
                  "threads; vector std::sort; absl btree_multimap from the unsorted range; "
                  "sqlite CREATE INDEX; wall clock",
    "random_insert": "insert every ID in a random order into an empty unique index/table, "
                     "then the durable commit, all timed on the wall clock (pbtree: build_key + "
                     "BTree::insert, all pages in the buffer pool, then IndexFile::commit and "
                     "checkpoint; lmdb: one write transaction and its fsyncing commit, variants "
                     "lmdb-writemap (MDB_WRITEMAP) and lmdb-nosync (MDB_NOSYNC: no fsync); "
                     "sqlite: one transaction, rollback journal, synchronous=FULL, variants "
                     "sqlite-wal-normal / sqlite-wal-full (commit + wal_checkpoint(TRUNCATE)); "
                     "rocksdb: Put per row, SyncWAL, Flush; absl: no commit; perf/PEERS.md says "
                     "what each commit guarantees); at 10^7 pbtree runs bigint.decimal128 on the "
                     "Firebird layout only",
    "increasing_insert": "as random_insert, IDs in increasing order (lmdb: MDB_APPEND)",
}


def parse_name(name):
    parts = name.split("/")
    if len(parts) < 4:
        return None
    workload, contender, typ, rows = parts[:4]
    # UseRealTime() appends "/real_time" to the name: not a variant.
    variant = "/".join(p for p in parts[4:] if p != "real_time")
    fmt = ""
    if "." in typ:
        typ, fmt = typ.split(".", 1)
    return dict(workload=workload, contender=contender, type=typ, format=fmt,
                rows=int(rows), variant=variant)


def load(paths):
    rows = {}
    cvs = {}
    singles = {}
    context = None
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        context = context or data.get("context", {})
        for b in data.get("benchmarks", []):
            rn = b.get("run_name", b["name"])
            if b.get("error_occurred"):
                rows[rn] = dict(error=b.get("error_message", "error"))
                continue
            if b.get("run_type") == "aggregate":
                if b.get("aggregate_name") == "median":
                    rows[rn] = b
                elif b.get("aggregate_name") == "cv":
                    cvs[rn] = b
            else:
                singles.setdefault(rn, []).append(b)
    for rn, runs in singles.items():
        if rn in rows:
            continue
        if len(runs) == 1:
            rows[rn] = runs[0]
        else:  # repetitions without aggregates: median by CPU time, cv over the runs
            runs = sorted(runs, key=lambda r: r["cpu_time"])
            rows[rn] = runs[len(runs) // 2]
            ts = [r["cpu_time"] for r in runs]
            cvs[rn] = dict(cpu_time=statistics.pstdev(ts) / statistics.mean(ts),
                           real_time=0.0)
    out = []
    for rn, b in rows.items():
        meta = parse_name(rn)
        if meta is None:
            continue
        meta["name"] = rn
        if "error" in b:
            meta["error"] = b["error"]
            out.append(meta)
            continue
        scale = UNIT_NS.get(b.get("time_unit", "ns"), 1.0)
        cv = cvs.get(rn)
        # Every repetition's (time, rate), by repetition index: the ratio ranges pair them.
        reps = sorted(singles.get(rn, []), key=lambda x: x.get("repetition_index", 0))
        meta["reps"] = [metric(x, meta["workload"]) for x in reps]
        if meta["workload"] == "bulk_build" and "wall_ns_per_op" in b:
            meta["time"] = b["wall_ns_per_op"]
            meta["rate"] = b.get("wall_items_per_second")
            meta["cv"] = cv.get("wall_ns_per_op") if cv else None
        elif meta["workload"] in REAL_TIME:
            meta["time"] = b["real_time"] * scale
            meta["rate"] = b.get("items_per_second")
            meta["cv"] = cv.get("real_time") if cv else None
        else:
            meta["time"] = b["cpu_time"] * scale
            meta["rate"] = b.get("items_per_second")
            meta["cv"] = cv.get("cpu_time") if cv else None
        meta["bpe"] = b.get("bytes_per_entry")
        meta["counters"] = {k: b[k] for k in ("dir_share", "dir_builds_per_insert",
                                              "allocs_per_insert", "dir_bytes") if k in b}
        out.append(meta)
    return out, context


def metric(b, workload):
    """(time in ns per op, rate in items/s) of one benchmark row, as load() takes them."""
    scale = UNIT_NS.get(b.get("time_unit", "ns"), 1.0)
    if workload == "bulk_build" and "wall_ns_per_op" in b:
        return b["wall_ns_per_op"], b.get("wall_items_per_second")
    if workload in REAL_TIME:
        return b["real_time"] * scale, b.get("items_per_second")
    return b["cpu_time"] * scale, b.get("items_per_second")


def fmt_time(ns):
    if ns is None:
        return "—"
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.1f} ns"


def fmt_rate(r):
    if r is None:
        return "—"
    if r >= 1e9:
        return f"{r / 1e9:.2f} G/s"
    if r >= 1e6:
        return f"{r / 1e6:.2f} M/s"
    if r >= 1e3:
        return f"{r / 1e3:.1f} k/s"
    return f"{r:.0f} /s"


def find_peer(results, r, peer):
    cands = [x for x in results if x["workload"] == r["workload"] and x["contender"] == peer
             and x["rows"] == r["rows"] and "error" not in x]
    same = [x for x in cands if x["variant"] == r["variant"]]
    if same:
        return same[0]
    plain = [x for x in cands if x["variant"] == ""]
    return plain[0] if plain else None


def ratio(results, r, peer):
    p = find_peer(results, r, peer)
    if p is None or "error" in r:
        return None
    if HEADLINE.get(r["workload"], "rate") == "time":
        return r["time"] / p["time"] if p["time"] else None
    if r.get("rate") and p.get("rate"):
        return r["rate"] / p["rate"]
    return None


def ratio_range(results, r, peer):
    """(median, min, max) of pbtree ÷ peer over the repetitions, repetition i against
    repetition i (both ran interleaved in the same run); the median aggregate's ratio when
    the repetitions are missing. None without a peer."""
    p = find_peer(results, r, peer)
    if p is None or "error" in r:
        return None
    kind = HEADLINE.get(r["workload"], "rate")
    xs = []
    for (rt, rr), (pt, pr) in zip(r.get("reps", []), p.get("reps", [])):
        if kind == "time" and pt:
            xs.append(rt / pt)
        elif kind == "rate" and rr and pr:
            xs.append(rr / pr)
    x = ratio(results, r, peer)
    if not xs:
        return (x, x, x) if x is not None else None
    return (x if x is not None else statistics.median(xs), min(xs), max(xs))


def floor_verdict(kind, lo, hi, bound):
    """"met" when every per-repetition ratio meets the bound, "not met" when none does,
    "within noise" when the range straddles it."""
    ok_lo = (lo >= bound) if kind == "rate" else (lo <= bound)
    ok_hi = (hi >= bound) if kind == "rate" else (hi <= bound)
    if ok_lo and ok_hi:
        return "met"
    if not ok_lo and not ok_hi:
        return "not met"
    return "within noise"


def combine(verdicts):
    """One verdict over many cases: any "not met" wins, then "within noise"."""
    if not verdicts:
        return "not measured"
    for v in ("not met", "within noise"):
        if v in verdicts:
            return v
    return "met"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_text(load):
    if isinstance(load, list):
        return ", ".join(f"{x:.2f}" for x in load)
    return str(load if load is not None else "?")


def git_rev(root):
    try:
        # "-dirty" when the working tree differs from HEAD (the run's code is not HEAD's).
        return subprocess.check_output(["git", "-C", root, "describe", "--always", "--dirty",
                                        "--abbrev=7"], text=True).strip()
    except Exception:
        return "unknown"


def sort_key(r):
    contender_rank = 0 if r["contender"] == "pbtree" else 0.5 if r["contender"] == "pbtree-compact" \
        else 1 + PEERS.index(r["contender"]) if r["contender"] in PEERS else 9
    fmts = ["double", "rescaled-double", "decimal128", "bcd"]
    f = fmts.index(r["format"]) if r["format"] in fmts else 9
    return (r["rows"], contender_rank, f, r["variant"])


def sel(results, workload, contender="pbtree", rows=None, fmt=None, variant=None):
    return [r for r in results if r["workload"] == workload and r["contender"] == contender
            and (rows is None or r["rows"] == rows) and (fmt is None or r["format"] == fmt)
            and (variant is None or r["variant"] == variant) and "error" not in r]


def verdict(oks):
    if not oks:
        return "not measured"
    return "MET" if all(oks) else ("partly met" if any(oks) else "NOT met")


def spread(r):
    return f"±{r['cv'] * 100:.1f}%" if r.get("cv") is not None else "±?"


# Cached floors (issue 31's last row, against the tuned peers; goals from issue 15): (workload,
# peer, floor, goal). For "time" workloads a ratio must be <= the bound, for "rate" workloads
# >= the bound.
VS_PEERS = [
    ("unique_scan", "lmdb", 1.0, None), ("unique_scan", "absl", None, 1.0),
    ("narrow_scan", "lmdb", 1.0, None), ("narrow_scan", "absl", None, 0.7),
    ("wide_scan", "absl", 1.0, 2.0), ("full_scan", "absl", None, 2.0),
    ("random_insert", "lmdb", 0.7, None), ("random_insert", "absl", None, 1.0),
    ("increasing_insert", "lmdb", 1.0, None), ("increasing_insert", "absl", None, 0.5),
]
FLOOR_LINES = []  # "floor: verdict" lines report.py prints on stdout


def vs_peers_section(results):
    """pbtree against the tuned peers: every pbtree case (both layouts, every key format and
    size) as a ratio to the peer on the same workload and rows, with the range of its
    per-repetition ratios, and a verdict per bound: met / not met / within noise."""
    L = ["## pbtree against LMDB and abseil", "",
         "Each ratio is pbtree ÷ peer on the same workload, rows and run: the median's ratio, "
         "then [min–max] of the per-repetition ratios (repetition i of pbtree against "
         "repetition i of the peer; repetitions ran interleaved in random order). unique_scan "
         "(lookup) compares **times** (the bound is a maximum); the other workloads compare "
         "**rates** (the bound is a minimum). Verdict: **met** when every per-repetition ratio "
         "of every case meets the bound, **not met** when some case misses it in every "
         "repetition, **within noise** otherwise. pbtree = Firebird node layout, "
         "pbtree-compact = compact layout.", "",
         "| workload | peer | bound | verdict | cases | worst range | ratios (contender type.format@rows: ratio [min–max]) |",
         "|---|---|---|---|---|---|---|"]
    summary = []
    for w, peer, floor, goal in VS_PEERS:
        kind = HEADLINE.get(w, "rate")
        cases = []
        for contender in ("pbtree", "pbtree-compact"):
            for r in sel(results, w, contender):
                rr = ratio_range(results, r, peer)
                if rr is not None and rr[0] is not None:
                    cases.append((r, rr))
        cases.sort(key=lambda c: sort_key(c[0]))
        for what, bound in (("floor", floor), ("goal", goal)):
            if bound is None:
                continue
            vs = [floor_verdict(kind, lo, hi, bound) for _, (x, lo, hi) in cases]
            v = combine(vs)
            worst = None
            if cases:
                worst = (max if kind == "time" else min)(cases, key=lambda c: c[1][0])[1]
            ev = ", ".join(f"{r['contender']} {r['type']}.{r['format']}@{r['rows']:.0e}: "
                           f"{x:.2f} [{lo:.2f}–{hi:.2f}]" for r, (x, lo, hi) in cases)
            op = "≤" if kind == "time" else "≥"
            wtxt = f"{worst[0]:.2f} [{worst[1]:.2f}–{worst[2]:.2f}]" if worst else "—"
            L.append(f"| {w} | {peer} | {what} {op} {bound:g}× | {v} | {len(cases)} | {wtxt} | "
                     f"{ev} |")
            if what == "floor":
                summary.append((w, peer, v))
                FLOOR_LINES.append(f"cached {w} vs {peer} {op} {bound:g}x: {v} (worst {wtxt})")
    # decimal128 vs rescaled-double BIGINT unique lookup: <= +5% (floor), <= 0% (goal)
    ev, oks5, oks0 = [], [], []
    for contender in ("pbtree", "pbtree-compact"):
        for n in sorted({r["rows"] for r in sel(results, "unique_scan", contender)}):
            d = sel(results, "unique_scan", contender, rows=n, fmt="decimal128")
            rd = sel(results, "unique_scan", contender, rows=n, fmt="rescaled-double")
            if d and rd:
                over = d[0]["time"] / rd[0]["time"] - 1
                oks5.append(over <= 0.05)
                oks0.append(over <= 0.0)
                ev.append(f"{contender}@{n:.0e}: {over * 100:+.1f}%")
    L.append(f"| unique_scan decimal128 vs rescaled-double | — | floor ≤ +5% | {verdict(oks5)} | "
             f"{len(oks5)} | | {', '.join(ev)} |")
    L.append(f"| unique_scan decimal128 vs rescaled-double | — | goal ≤ 0% | {verdict(oks0)} | "
             f"{len(oks0)} | | |")
    summary.append(("decimal128 vs rescaled-double", "", verdict(oks5)))
    # compact within 1.05x the Firebird layout's time on every scan and lookup
    ev, oks = [], []
    for r in sorted(results, key=sort_key):
        if r["contender"] != "pbtree-compact" or "error" in r or r["workload"] not in (
                "unique_scan", "narrow_scan", "wide_scan", "full_scan"):
            continue
        f = sel(results, r["workload"], "pbtree", rows=r["rows"], fmt=r["format"],
                variant=r["variant"])
        if f and f[0]["time"]:
            x = r["time"] / f[0]["time"]
            oks.append(x <= 1.05)
            ev.append(f"{r['workload']} {r['type']}.{r['format']}@{r['rows']:.0e}: {x:.2f}")
    L.append(f"| compact ÷ Firebird layout, time of every scan and lookup | — | ≤ 1.05× | "
             f"{verdict(oks)} | {len(oks)} | {max([float(e.rsplit(': ', 1)[1]) for e in ev], default=0):.2f} | "
             f"{', '.join(ev)} |")
    summary.append(("compact vs firebird", "", verdict(oks)))
    # counters: directory memory share and rebuilds, allocations per insert
    ev = []
    for r in sorted([x for x in results if x["contender"].startswith("pbtree")
                     and x["workload"] in ("unique_scan", "random_insert", "increasing_insert")
                     and "error" not in x], key=sort_key):
        c = r.get("counters", {})
        bits = []
        if "dir_share" in c:
            bits.append(f"dir {c['dir_share'] * 100:.1f}% of cached bytes")
        if "dir_builds_per_insert" in c:
            bits.append(f"{c['dir_builds_per_insert']:.4f} dir builds/insert")
        if "allocs_per_insert" in c:
            bits.append(f"{c['allocs_per_insert']:.2f} allocs/insert")
        if bits:
            ev.append(f"{r['workload']} {r['contender']} {r['type']}.{r['format']}@{r['rows']:.0e}: "
                      + ", ".join(bits))
    L.append("")
    met = sum(1 for _, _, v in summary if v in ("met", "MET"))
    L.insert(2, f"Floors met: {met} of {len(summary)}. " +
             "; ".join(f"{w}{' vs ' + p if p else ''}: {v}" for w, p, v in summary) + ".")
    L.insert(3, "")
    if ev:
        L += ["Counters (directory memory ≤ 25% of the cached bytes, directory builds < 0.01 "
              "per insert):", ""] + [f"- {e}" for e in ev] + [""]
    return L


def build_section(results, load_lines, budget_mib):
    """Issue 11's targets: bulk build rate and its ratio to std::sort of the same pairs, and
    `pbtree load` of a 10^7-row CSV (perf/load_rss.sh: wall rows/s and peak RSS)."""
    L = ["## Build at sort speed", ""]
    L += ["| target | verdict | measured |", "|---|---|---|"]
    ev, oks, ev2 = [], [], []
    for r in sorted(sel(results, "bulk_build", variant="threads2"), key=sort_key):
        oks.append((r["rate"] or 0) >= 10e6)
        x = ratio(results, r, "vector")
        ev.append(f"{r['type']}.{r['format']}@{r['rows']:.0e} {fmt_rate(r['rate'])} ({spread(r)})")
        if x is not None:
            ev2.append(f"{r['type']}.{r['format']}@{r['rows']:.0e} {x:.2f}×")
    L.append(f"| bulk build, unsorted input, 2 threads ≥ 10 M keys/s wall | {verdict(oks)} | "
             f"{', '.join(ev)} |")
    L.append(f"| goal: ≥ 2× std::sort of the same pairs (vector) | "
             f"{verdict([float(e.rsplit(' ', 1)[1][:-1]) >= 2 for e in ev2])} | {', '.join(ev2)} |")
    import re
    for line in load_lines:
        m = re.search(r"wall ([0-9.]+) s, ([0-9.]+) M rows/s, peak RSS ([0-9]+) MiB", line)
        if not m:
            continue
        rate, rss = float(m.group(2)), int(m.group(3))
        L.append(f"| `pbtree load` of a 10^7-row CSV ≥ 5 M rows/s wall | "
                 f"{'MET' if rate >= 5 else 'NOT met'} | {m.group(1)} s, {rate:.2f} M rows/s |")
        L.append(f"| peak RSS ≤ budget ({budget_mib} MiB) + 64 MiB | "
                 f"{'MET' if rss <= budget_mib + 64 else 'NOT met'} | {rss} MiB |")
    L.append("")
    return L


# Firebird 3.0.11, 8 KiB pages, the seed data (Dmitry Yemanov's
# firebird-devel post "INT64 and index keys", Feb 2022): (index, depth, leaf buckets, nodes).
FIREBIRD3_SEED = {
    "ID": [("BIGINT (rescaled double)", 3, 1475, 1000000),
           ("BIGINT as idx_decimal (patched engine)", 3, 739, 1000000)],
    "COL": [("BIGINT (rescaled double)", 3, 1157, 1000000),
            ("BIGINT as idx_decimal (patched engine)", 2, 697, 1000000)],
}


def seed_section(seed_stats, command):
    """Bytes per entry of the seed data's BIGINT indexes: pbtree (from `pbtree stat --json`)
    next to Firebird 3's published figures."""
    if not seed_stats:
        return []
    L = ["## Seed data: BIGINT index size next to Firebird 3", "",
         "The proposal's data (data/seed/t_int.csv.zst, 10^6 rows; ID unique, COL with "
         "duplicates), 8 KiB pages, record numbers = 0-based row ordinals (pbtree) or the "
         "engine's (Firebird). bytes/entry = leaf buckets × page size / nodes. Target of the "
         "compact layout with `--key-format auto`: ID ≤ 3.0 at depth 2, COL ≤ 4.5.", ""]
    if command:
        L += [f"Command: `{command}`", ""]
    L += ["| index | store | layout | key format | depth | leaf buckets | nodes | "
          "avg node length | bytes/entry |", "|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for spec in seed_stats:
        label, path = spec.split("=", 1)
        with open(path) as f:
            for ix in json.load(f):
                bpe = ix["leaf_buckets"] * ix["page_size"] / ix["nodes"] if ix["nodes"] else 0
                fmt = ix["key_format"] + (" (auto)" if "key_format_auto" in ix else "")
                rows.append((ix["name"], f"| {ix['name']} | {label} | {ix['layout']} | {fmt} | "
                             f"{ix['depth']} | {ix['leaf_buckets']} | {ix['nodes']} | "
                             f"{ix['avg_node_length']:.2f} | {bpe:.2f} |"))
    for name in ("ID", "COL"):
        L += [r for n, r in rows if n == name]
        for what, depth, leaves, nodes in FIREBIRD3_SEED[name]:
            L.append(f"| {name} | Firebird 3.0.11 (published) | ODS 12 | {what} | {depth} | "
                     f"{leaves} | {nodes} | | {leaves * 8192 / nodes:.2f} |")
    L += [r for n, r in rows if n not in ("ID", "COL")]
    L.append("")
    return L


def compact_section(results):
    """pbtree-compact / pbtree (Firebird layout) on the same workload, format and rows."""
    pairs = []
    for r in sorted([x for x in results if x["contender"] == "pbtree-compact"], key=sort_key):
        f = [x for x in results if x["contender"] == "pbtree" and x["workload"] == r["workload"]
             and x["type"] == r["type"] and x["format"] == r["format"]
             and x["rows"] == r["rows"] and x["variant"] == r["variant"]]
        if f and "error" not in r and "error" not in f[0]:
            pairs.append((r, f[0]))
    if not pairs:
        return []
    L = ["## Compact layout vs Firebird layout (same run)", "",
         "Time per operation of the same case on an index built with `--layout compact` "
         "(contender pbtree-compact) over the one built with Firebird's nodes (contender "
         "pbtree): < 1 means the compact layout is faster. bytes/entry of both.", "",
         "| workload | type.format | rows | compact ns/op | firebird ns/op | "
         "time ratio compact/firebird | compact bytes/entry | firebird bytes/entry |",
         "|---|---|---|---|---|---|---|---|"]
    for w in ORDER:
        for c, f in [p for p in pairs if p[0]["workload"] == w]:
            x = c["time"] / f["time"] if f["time"] else None
            L.append(f"| {w} | {c['type']}.{c['format']} | {c['rows']} | {fmt_time(c['time'])} | "
                     f"{fmt_time(f['time'])} | {x:.3f} | "
                     f"{c.get('bpe') or 0:.2f} | {f.get('bpe') or 0:.2f} |")
    L.append("")
    return L


# stat --firebird against fbstat -r is measured by perf/fdb_stat_bench.sh, not by this
# report; its figures live in their own file, which a regeneration leaves alone.
FIREBIRD_STAT_LINK = ("Firebird: `pbtree stat --firebird` against `fbstat -r` on a 2.3 GB Firebird 3 "
                      "database (perf/fdb_stat_bench.sh, not run by this report): "
                      "[perf/FIREBIRD_STAT.md](FIREBIRD_STAT.md)")


def firebird_stat_table(path):
    """The figures table of perf/FIREBIRD_STAT.md (its first markdown table) and the line that
    says when and at which commit it was measured, so RESULTS.md holds those figures too."""
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError:
        return []
    measured, in_para = [], False
    for x in lines:
        if x.startswith("Measured "):
            in_para = True
        if in_para:
            if not x.strip():
                break
            measured.append(x.strip())
    measured = " ".join(measured)
    table, started = [], False
    for x in lines:
        if x.startswith("|"):
            table.append(x)
            started = True
        elif started:
            break
    if not table:
        return []
    out = [""]
    if measured:
        out += [measured, ""]
    return out + table


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", required=True, help="the exact command(s) that ran the suite")
    ap.add_argument("--repetitions", default="3 (median aggregate)")
    ap.add_argument("--elapsed", default="")
    ap.add_argument("--seed-stat", action="append", default=[],
                    help="LABEL=FILE: `pbtree stat --json` of the seed data (repeatable)")
    ap.add_argument("--seed-command", default="", help="the commands that built the seed files")
    ap.add_argument("--load-rss", default="", help="output of perf/load_rss.sh")
    ap.add_argument("--load-command", default="")
    ap.add_argument("--load-budget-mib", type=int, default=256)
    ap.add_argument("--note", default="", help="a paragraph put under the title (e.g. what run "
                    "this is, when it is not the full perf/run.sh)")
    ap.add_argument("--git", default="", help="the code the runs used, when not the checkout's "
                    "(a report written again later from the same runs)")
    ap.add_argument("--html", default="", help="also write this HTML page with SVG charts")
    ap.add_argument("--memlim", default="", help="perf/memory_limited.sh's memlim.txt")
    ap.add_argument("--memlim-fio", default="", help="its fio.txt")
    ap.add_argument("--memlim-elapsed", default="", help="its elapsed.txt")
    ap.add_argument("--memlim-builds", default="", help="its builds.txt")
    ap.add_argument("--memlim-main-budget", type=int, default=512,
                    help="budget (MiB) of the issue's 512 MiB floors (scaled runs: less)")
    ap.add_argument("--memlim-small-budget", type=int, default=128,
                    help="budget (MiB) of the issue's 128 MiB floor")
    ap.add_argument("json", nargs="*")
    a = ap.parse_args()
    results, context = load(a.json) if a.json else ([], {})
    if not results and not a.memlim:
        sys.exit("report.py: no benchmark results in " + " ".join(a.json))
    errors = [r for r in results if "error" in r]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    L = []
    L.append("# pbtree performance results")
    L.append("")
    L.append("Generated by `perf/run.sh` (perf/report.py); do not edit by hand.")
    L.append("")
    if a.note:
        L += [f"**{a.note}**", ""]
    L.append(f"- Date: run started {context.get('date', '?')}, report written "
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}"
             + (f" (suite took {a.elapsed})" if a.elapsed else ""))
    load_avg = context.get('load_avg')
    quiet = isinstance(load_avg, list) and load_avg and load_avg[0] < 1.0
    shared = ("quiet: nothing else ran, the benchmark's own thread is the 1 of the load"
              if quiet else
              "machine shared with other jobs: with a load above the core count, absolute "
              "numbers are inflated and noisy — CPU time counts cache misses caused by the "
              "neighbours; compare ratios, and treat differences under ~20% between pbtree key "
              "formats as noise")
    L.append(f"- Machine: {cpu_model()}, {os.cpu_count()} cores "
             f"({context.get('num_cpus', '?')} seen by the benchmark at "
             f"{context.get('mhz_per_cpu', '?')} MHz), load average at start "
             f"{load_text(load_avg)} ({shared})")
    L.append(f"- Build: Release (-O3); Google Benchmark library package built as "
             f"{context.get('library_build_type', '?')} (timing harness only); "
             f"git {a.git or git_rev(root)}")
    L.append(f"- Repetitions: {a.repetitions}")
    L.append(f"- Command: `{a.command}`")
    L.append("")
    L.append("Data: ID = 1..rows (unique index), COL uniform in [1, rows] (index with "
             "duplicates, record number = ID); seeds fixed in perf/bench_main.cc. pbtree: 8 KiB "
             "pages, every page in the buffer pool. Time = CPU time of the benchmark thread "
             "(bulk_build: wall clock). ns/op is the time of one benchmark iteration: one "
             "lookup, one scan, one key, or one whole build of `rows` entries. Ratios are pbtree/peer from the same run: for "
             "unique_scan and key_encode a **time** ratio (< 1 means pbtree is faster); for all "
             "other workloads a **rate** ratio (> 1 means pbtree is faster). Every scan folds "
             "each entry's key bytes (as the contender hands them out; int64 peers: 8 "
             "big-endian bytes) and record number into a checksum the case checks, 8 key bytes "
             "per multiply (perf/bench_common.h fold_entry; byte by byte before 2026-12-02).")
    L.append("")
    L.append("bytes/entry: pbtree = index pages × 8192 / entries (IndexFile::analyze; inserts: "
             "pages allocated); sqlite = dbstat bytes of the b-tree (table `t` for ID, index "
             "`t_col` for COL); lmdb = pages × 4096 (mdb_stat for `id`; environment's used pages "
             "minus `id`'s for the DUPSORT `col`); absl = bytes requested through a counting "
             "allocator (malloc overhead excluded); vector = capacity × 16 bytes (estimate); "
             "rocksdb = total SST file bytes. Peer settings and their sources: perf/PEERS.md.")
    L.append("")
    memlim = None
    if a.memlim:
        import memlim_report

        def text(p):
            try:
                with open(p) as f:
                    return f.read()
            except OSError:
                return ""
        memlim = memlim_report.section(a.memlim, text(a.memlim_fio), text(a.memlim_elapsed),
                                       text(a.memlim_builds), a.memlim_main_budget,
                                       a.memlim_small_budget)
    L += vs_peers_section(results) if results else []
    if memlim:
        L += memlim[0]
    load_lines = []
    if a.load_rss:
        with open(a.load_rss) as f:
            load_lines = f.read().splitlines()
        L_cmd = a.load_command or "perf/load_rss.sh"
    L += build_section(results, load_lines, a.load_budget_mib)
    if load_lines:
        L[-1:-1] = ["", f"Load command: `{L_cmd}`; output: " +
                    "; ".join(f"`{x}`" for x in load_lines)]
    L += seed_section(a.seed_stat, a.seed_command)
    L += compact_section(results)
    for w in ORDER + sorted({r["workload"] for r in results} - set(ORDER)):
        rs = sorted([r for r in results if r["workload"] == w], key=sort_key)
        if not rs:
            continue
        kind = HEADLINE.get(w, "rate")
        L.append(f"## {w}")
        L.append("")
        L.append(WHAT.get(w, ""))
        L.append("")
        peers = [p for p in PEERS if any(r["contender"] == p for r in rs)]
        head = ["contender", "type.format", "rows", "variant", "ns/op", "keys/s", "spread (cv)",
                "bytes/entry"]
        head += [f"{'time' if kind == 'time' else 'rate'} ratio vs {p}" for p in peers]
        L.append("| " + " | ".join(head) + " |")
        L.append("|" + "---|" * len(head))
        for r in rs:
            tf = r["type"] + (f".{r['format']}" if r["format"] else "")
            if "error" in r:
                cells = [r["contender"], tf, str(r["rows"]), r["variant"] or "",
                         "error: " + r["error"], "", "", ""] + [""] * len(peers)
            else:
                cells = [r["contender"], tf, str(r["rows"]), r["variant"] or "",
                         fmt_time(r["time"]), fmt_rate(r.get("rate")),
                         f"±{r['cv'] * 100:.1f}%" if r.get("cv") is not None else "—",
                         f"{r['bpe']:.2f}" if r.get("bpe") else "—"]
                for p in peers:
                    x = ratio(results, r, p) if r["contender"].startswith("pbtree") else None
                    cells.append(f"{x:.3f}" if x is not None else "")
            L.append("| " + " | ".join(cells) + " |")
        L.append("")
    L.append(FIREBIRD_STAT_LINK)
    L += firebird_stat_table(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                          "FIREBIRD_STAT.md"))
    if errors:
        L.insert(2, "**FAILED cases (the run fails):** " + "; ".join(
            f"{r['name']}: {r['error']}" for r in errors))
        L.insert(3, "")
    with open(a.out, "w") as f:
        f.write("\n".join(L) + "\n")
    if a.html:
        try:
            import report_html
        except ImportError as e:
            sys.exit(f"report.py: --html needs matplotlib (Debian: python3-matplotlib, run with "
                     f"/usr/bin/python3): {e}")
        charts = [
            ("pbtree ÷ each peer, per workload (bars: median; whiskers: per-repetition range)",
             report_html.ratio_chart(results, ratio_range,
                                     ["unique_scan", "narrow_scan", "wide_scan", "full_scan",
                                      "random_insert", "increasing_insert"],
                                     ["lmdb", "absl", "sqlite", "rocksdb"], HEADLINE)),
            ("Bytes per entry against lookups per second", report_html.size_speed_chart(results)),
        ]
        if memlim:
            charts.append(("Memory-limited: ops/s and bytes read per op against the budget "
                           "(unique BIGINT ID)", report_html.memlim_chart(memlim[3])))
        report_html.write(a.html, L, charts)
    for line in FLOOR_LINES + (memlim[1] if memlim else []):
        print(line)
    failed = [f"{r['name']}: {r['error']}" for r in errors] + (memlim[2] if memlim else [])
    if failed:
        for f_ in failed:
            print("report.py: FAILED " + f_, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
