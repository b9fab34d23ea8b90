"""The memory-limited section of perf/RESULTS.md (perf/memory_limited.sh's lines), imported by
perf/report.py: per case, workload, budget and engine the median over the repetitions with
its [min–max] range, and issue 31's memory-limited floors from per-repetition ratios
("best pbtree" = the best of pbtree, pbtree-compact and pbtree-compact-4k in that
repetition)."""
import collections
import statistics

ENGINE_ORDER = ["pbtree-compact", "pbtree-compact-4k", "pbtree", "lmdb", "sqlite", "sqlite-mmap", "rocksdb"]
PBTREES = ("pbtree", "pbtree-compact", "pbtree-compact-4k")


def parse(path):
    """Lines "ENGINE WORKLOAD k=v ..." -> list of dicts (numbers as floats); FAILED lines
    -> their text in a second list."""
    rows, failed = [], []
    with open(path) as f:
        for line in f:
            if "FAILED" in line:
                failed.append(line.strip())
                continue
            parts = line.split()
            if len(parts) < 3 or "=" not in parts[2]:
                continue
            d = dict(engine=parts[0], workload=parts[1])
            for kv in parts[2:]:
                k, v = kv.split("=", 1)
                try:
                    d[k] = float(v) if k not in ("case", "phase", "checksum") else v
                except ValueError:
                    d[k] = v
            rows.append(d)
    return rows, failed


def group(rows):
    """(case, workload, budget, phase) -> engine -> {rep: row}."""
    g = collections.defaultdict(lambda: collections.defaultdict(dict))
    for r in rows:
        g[(r["case"], r["workload"], int(r["budget"]), r["phase"])][r["engine"]][int(r["rep"])] = r
    return g


def med_range(xs):
    return statistics.median(xs), min(xs), max(xs)


def fmt_num(x):
    if x is None:
        return "—"
    if x >= 1e9:
        return f"{x / 1e9:.2f} G"
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e4:
        return f"{x / 1e3:.1f} k"
    if x >= 100:
        return f"{x:.0f}"
    if 0 < x < 1:
        return f"{x:.3g}"
    return f"{x:.2f}"


def fmt_mr(t):
    m, lo, hi = t
    return f"{fmt_num(m)} [{fmt_num(lo)}–{fmt_num(hi)}]"


def best_pbtree(by_engine, rep, key, higher_is_better):
    vals = [by_engine[e][rep][key] for e in PBTREES if rep in by_engine.get(e, {})]
    if not vals:
        return None
    return max(vals) if higher_is_better else min(vals)


# (label, case, workload, budget, key, peer, bound, goal, kind): kind "min" = ratio must be >=
# bound (ops/s), "max" = ratio must be <= bound (bytes read per op).
FLOORS = [
    ("lookups, 512 MiB, best pbtree vs LMDB, ops/s", "id", "lookup", 512, "ops_per_s", "lmdb",
     5.0, 20.0, "min"),
    ("lookups, 512 MiB, vs RocksDB, ops/s", "id", "lookup", 512, "ops_per_s", "rocksdb", 2.0,
     5.0, "min"),
    ("lookups, 512 MiB, vs SQLite, ops/s", "id", "lookup", 512, "ops_per_s", "sqlite", 2.0, 5.0,
     "min"),
    ("bytes read per lookup, 512 MiB, vs LMDB", "id", "lookup", 512, "bytes_read_per_op", "lmdb",
     0.25, 0.05, "max"),
    ("bytes read per lookup, 128 MiB, vs LMDB", "id", "lookup", 128, "bytes_read_per_op", "lmdb",
     1.0, 0.5, "max"),
    ("narrow scans (100 keys), ID, 512 MiB, vs LMDB", "id", "narrow", 512, "ops_per_s", "lmdb",
     2.0, 5.0, "min"),
    ("narrow scans (100 keys), ID, 512 MiB, vs RocksDB", "id", "narrow", 512, "ops_per_s",
     "rocksdb", 2.0, 5.0, "min"),
    ("narrow scans (100 keys), COL, 512 MiB, vs LMDB", "col", "narrow", 512, "ops_per_s", "lmdb",
     2.0, 5.0, "min"),
    ("narrow scans (100 keys), COL, 512 MiB, vs RocksDB", "col", "narrow", 512, "ops_per_s",
     "rocksdb", 2.0, 5.0, "min"),
]


def verdict(lo, hi, bound, kind):
    ok = (lambda x: x >= bound) if kind == "min" else (lambda x: x <= bound)
    if ok(lo) and ok(hi):
        return "met"
    if not ok(lo) and not ok(hi):
        return "not met"
    return "within noise"


def floors(g, main_budget=512, small_budget=128):
    """[(label, bound text, verdict, ratio (median, lo, hi) or None)]. The issue's budgets are
    512 and 128 MiB at 10^8 rows; runs at fewer rows scale them (main_budget, small_budget)."""
    out = []
    for label, case, wl, budget, key, peer, bound, goal, kind in FLOORS:
        budget = main_budget if budget == 512 else small_budget
        label = label.replace("512 MiB", f"{main_budget} MiB").replace("128 MiB",
                                                                         f"{small_budget} MiB")
        by_engine = g.get((case, wl, budget, "steady"), {})
        xs = []
        for rep, pr in sorted(by_engine.get(peer, {}).items()):
            b = best_pbtree(by_engine, rep, key, kind == "min")
            if b is None:
                continue
            p = pr[key]
            if p > 0:
                xs.append(b / p)
            elif b == 0:
                xs.append(1.0)
            else:
                xs.append(float("inf"))
        op = "≥" if kind == "min" else "≤"
        btxt = f"floor {op} {bound:g}× (goal {op} {goal:g}×)"
        if not xs:
            out.append((label, btxt, "not measured", None))
            continue
        m = med_range(xs)
        out.append((label, btxt, verdict(m[1], m[2], bound, kind), m))
    return out


def section(path, fio_text="", elapsed_text="", builds_text="", main_budget=512,
            small_budget=128):
    """Markdown lines of the memory-limited section, the floor lines for stdout, and the
    failures (lines of failed queries)."""
    rows, failed = parse(path)
    g = group(rows)
    L = ["## Memory-limited runs (perf/memory_limited.sh)", ""]
    if rows:
        r0 = rows[0]
        L.append(f"Rows: {int(r0['rows']):,}; repetitions: "
                 f"{len({int(r['rep']) for r in rows})}, engines interleaved (order rotated per "
                 "repetition). Each query process runs alone in a fresh memory cgroup whose "
                 "limit (the budget) counts the page cache; every engine's files are fsynced and "
                 "dropped from the page cache (POSIX_FADV_DONTNEED) before each process. "
                 "phase=cold is the warm-up (the same operation count for every engine, from a "
                 "cold start); phase=steady the timed phase after it. bytes read/op = "
                 "/proc/self/io read_bytes per operation (storage reads, readahead included); "
                 "majflt/op = major page faults per operation (mmap engines). Cells: median "
                 "[min–max] over the repetitions. abseil is not here: it lives in memory only "
                 "(about 1.8 GB at 10^8 rows), so a memory limit can only kill it.")
        L.append("")
    if fio_text:
        L += [f"Disk: `{fio_text.strip()}` (fio, 4 KiB random reads, O_DIRECT, queue depth 1): "
              "an upper bound for every lookup rate that needs one read from storage.", ""]
    if elapsed_text:
        L += [f"Duration: `{elapsed_text.strip()}`.", ""]
    if builds_text:
        L += ["Builds (outside the limit): " + "; ".join(
            f"`{x}`" for x in builds_text.strip().splitlines()), ""]
    fl = floors(g, main_budget, small_budget)
    L += ["### Memory-limited floors", "",
          "Ratio = best pbtree ÷ peer per repetition (steady phase); verdict from the range.", "",
          "| target | bound | verdict | ratio [min–max] |", "|---|---|---|---|"]
    lines = []
    for label, btxt, v, m in fl:
        L.append(f"| {label} | {btxt} | {v} | {fmt_mr(m) if m else '—'} |")
        lines.append(f"memory-limited {label}: {v}" + (f" ({fmt_mr(m)})" if m else ""))
    L.append("")
    L += ["### Per engine", "",
          "| case | workload | budget MiB | phase | engine | ops/s | bytes read/op | majflt/op | "
          "size on disk (bytes) | peak RSS | cgroup peak |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (case, wl, budget, phase) in sorted(g, key=lambda k: (["id", "col", "int128"].index(k[0])
                                                                if k[0] in ("id", "col", "int128")
                                                                else 9, k[1], k[2], k[3])):
        by_engine = g[(case, wl, budget, phase)]
        for e in sorted(by_engine, key=lambda e: ENGINE_ORDER.index(e)
                        if e in ENGINE_ORDER else 99):
            reps = list(by_engine[e].values())

            def mr(k):
                return med_range([r[k] for r in reps if k in r])

            L.append(f"| {case} | {wl} | {budget} | {phase} | {e} | {fmt_mr(mr('ops_per_s'))} | "
                     f"{fmt_mr(mr('bytes_read_per_op'))} | {fmt_mr(mr('majflt_per_op'))} | "
                     f"{int(reps[0]['size_bytes']):,} | {fmt_num(mr('peak_rss_bytes')[0])} | "
                     f"{fmt_num(mr('cgroup_peak_bytes')[0]) if 'cgroup_peak_bytes' in reps[0] else '—'} |")
    L.append("")
    if failed:
        L += ["Failed queries:", ""] + [f"- `{x}`" for x in failed] + [""]
    return L, lines, failed, g
