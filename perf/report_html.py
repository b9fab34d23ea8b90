"""perf/results.html: the report of perf/report.py as one HTML page with SVG charts drawn by
matplotlib (Debian's python3-matplotlib): pbtree ÷ each peer per workload with the range of
the per-repetition ratios; bytes/entry against lookups/s per engine; memory-limited ops/s and
bytes read per operation against the budget. The page also carries RESULTS.md's text."""
import html
import io
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams["svg.fonttype"] = "none"  # text stays text in the SVG

COLORS = {"pbtree": "#1f77b4", "pbtree-compact": "#17becf", "pbtree-compact-4k": "#9467bd", "lmdb": "#d62728",
          "sqlite": "#2ca02c", "sqlite-mmap": "#98df8a", "rocksdb": "#ff7f0e", "absl": "#9467bd",
          "vector": "#7f7f7f"}


def svg(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def ratio_chart(results, ratio_range, workloads, peers, headline):
    """One panel per workload: horizontal bars = median ratio of pbtree (Firebird layout and
    compact, bigint.decimal128, largest rows) ÷ each peer, error bars = per-repetition range,
    a line at 1."""
    panels = []
    for w in workloads:
        rows = [r for r in results if r["workload"] == w and "error" not in r
                and r["contender"] in ("pbtree", "pbtree-compact")
                and r["type"] == "bigint" and r["format"] == "decimal128"]
        if not rows:
            continue
        n = max(r["rows"] for r in rows)
        bars = []
        for r in sorted((r for r in rows if r["rows"] == n), key=lambda r: r["contender"]):
            for p in peers:
                rr = ratio_range(results, r, p)
                if rr and rr[0] is not None:
                    bars.append((f"{r['contender']} ÷ {p}", rr, r["contender"]))
        if bars:
            panels.append((w, n, bars))
    if not panels:
        return ""
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 1.2 + 0.45 * sum(
        len(b) for _, _, b in panels)), squeeze=False)
    for ax, (w, n, bars) in zip(axes[:, 0], panels):
        ys = range(len(bars))
        med = [b[1][0] for b in bars]
        err = [[b[1][0] - b[1][1] for b in bars], [b[1][2] - b[1][0] for b in bars]]
        ax.barh(list(ys), med, xerr=err, color=[COLORS.get(b[2], "#888") for b in bars],
                capsize=3)
        ax.set_yticks(list(ys))
        ax.set_yticklabels([b[0] for b in bars], fontsize=8)
        ax.axvline(1.0, color="black", lw=0.8)
        kind = headline.get(w, "rate")
        ax.set_title(f"{w} @ {n:,} rows, bigint.decimal128: pbtree ÷ peer "
                     f"({'time: < 1 is faster' if kind == 'time' else 'rate: > 1 is faster'})",
                     fontsize=9)
        ax.set_xscale("log")
    fig.tight_layout()
    return svg(fig)


def size_speed_chart(results):
    """bytes/entry (ID index) against lookups/s (1 / unique_scan time), every contender and
    key format at the largest rows."""
    rows = [r for r in results if r["workload"] == "unique_scan" and "error" not in r
            and r.get("bpe") and r.get("time")]
    if not rows:
        return ""
    n = max(r["rows"] for r in rows)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in rows:
        if r["rows"] != n:
            continue
        label = r["contender"] + (f" {r['format']}" if r["format"] else "")
        ax.scatter(r["bpe"], 1e9 / r["time"], color=COLORS.get(r["contender"], "#888"), s=30)
        ax.annotate(label, (r["bpe"], 1e9 / r["time"]), fontsize=7, xytext=(3, 3),
                    textcoords="offset points")
    ax.set_xlabel("bytes per entry (ID index)")
    ax.set_ylabel("lookups/s (CPU time, cached)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(f"Size against lookup speed, unique ID, {n:,} rows", fontsize=9)
    ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    return svg(fig)


def memlim_chart(g, case="id", workloads=("lookup", "narrow")):
    """ops/s and bytes read per op (steady phase, median with range) against the budget."""
    import statistics
    panels = [w for w in workloads if any(k[0] == case and k[1] == w for k in g)]
    if not panels:
        return ""
    fig, axes = plt.subplots(len(panels), 2, figsize=(10, 3.6 * len(panels)), squeeze=False)
    for row, w in zip(axes, panels):
        budgets = sorted({k[2] for k in g if k[0] == case and k[1] == w and k[3] == "steady"})
        engines = sorted({e for k in g if k[0] == case and k[1] == w for e in g[k]})
        for col, key, label in ((0, "ops_per_s", "ops/s"),
                                (1, "bytes_read_per_op", "bytes read from storage per op")):
            ax = row[col]
            for e in engines:
                xs, ys, lo, hi = [], [], [], []
                for b in budgets:
                    reps = g.get((case, w, b, "steady"), {}).get(e, {})
                    vals = [r[key] for r in reps.values()]
                    if not vals:
                        continue
                    m = statistics.median(vals)
                    xs.append(b)
                    ys.append(m)
                    lo.append(m - min(vals))
                    hi.append(max(vals) - m)
                if xs:
                    ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=e,
                                color=COLORS.get(e, None))
            ax.set_xscale("log", base=2)
            ax.set_xticks(budgets)
            ax.set_xticklabels([str(b) for b in budgets])
            if key == "bytes_read_per_op":  # 0 happens (everything cached): linear near 0
                ax.set_yscale("symlog", linthresh=1000)
                ax.set_ylim(bottom=0)
            else:
                ax.set_yscale("log")
            ax.set_xlabel("memory budget (MiB, cgroup limit incl. page cache)")
            ax.set_ylabel(label)
            ax.set_title(f"{case} {w}: {label}", fontsize=9)
            ax.grid(True, which="both", lw=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    return svg(fig)


def md_to_html(lines):
    """The small Markdown subset RESULTS.md uses: headings, tables, lists, paragraphs, code."""
    out, table = [], []

    def inline(t):
        t = html.escape(t)
        t = re.sub(r"`([^`]+)`", r"<code>\1</code>", t)
        t = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", t)
        return t

    def flush():
        if table:
            out.append("<table>")
            for i, row in enumerate(table):
                if i == 1 and set(row.replace("|", "").strip()) <= set("-: "):
                    continue
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                tag = "th" if i == 0 else "td"
                out.append("<tr>" + "".join(f"<{tag}>{inline(c)}</{tag}>" for c in cells) + "</tr>")
            out.append("</table>")
            table.clear()

    for line in lines:
        if line.startswith("|"):
            table.append(line)
            continue
        flush()
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{inline(line.lstrip('#').strip())}</h{level}>")
        elif line.startswith("- "):
            out.append(f"<li>{inline(line[2:])}</li>")
        elif line.strip():
            out.append(f"<p>{inline(line)}</p>")
    flush()
    return "\n".join(out)


def write(path, md_lines, charts):
    """charts: [(title, svg text)]."""
    body = []
    for title, s in charts:
        if s:
            body.append(f"<h2>{html.escape(title)}</h2>\n<div class='chart'>{s}</div>")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>pbtree performance results</title>
<style>
body {{ font-family: sans-serif; max-width: 1200px; margin: 1em auto; font-size: 14px; }}
table {{ border-collapse: collapse; font-size: 12px; margin: 0.5em 0; }}
td, th {{ border: 1px solid #ccc; padding: 2px 5px; vertical-align: top; }}
th {{ background: #eee; }}
.chart svg {{ max-width: 100%; height: auto; }}
code {{ font-size: 12px; }}
</style></head><body>
<h1>pbtree performance results: charts</h1>
<p>Generated by perf/report.py from the runs described below (perf/RESULTS.md holds the same
text). Ratios are pbtree ÷ peer; error bars span the per-repetition ratios.</p>
{chr(10).join(body)}
<hr>
{md_to_html(md_lines)}
</body></html>
"""
    with open(path, "w") as f:
        f.write(page)
