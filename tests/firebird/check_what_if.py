#!/usr/bin/env python3
"""Part of ctest firebird_stat_compare: `--what-if` and `import` on a real Firebird database
against `pbtree load` of the same rows.

usage: check_what_if.py PBTREE DB.fdb SCRATCH_DIR

For each checked index: (1) `pbtree import` in Firebird's own key format and layout gives
the same leaf figures as fbstat (depth, leaf buckets, nodes, averages, dups, fill);
(2) the entries are exported with `pbtree scan` (value, record number) and loaded with
`pbtree load --recno-column 2` in every key format x layout the what-if lists (I_BCOL;
decimal128/compact for the others); the
prediction's leaf pages, index pages, depth, nodes, total dup and key-length averages must
equal that load's `stat --json` figures, and an `import --key-format F --layout L` must give
the same figures too. Prints one line per check; exit 1 on any difference."""
import json
import os
import subprocess
import sys

pbtree, fdb, scratch = sys.argv[1:4]
os.makedirs(scratch, exist_ok=True)
# index -> pbtree type for `load` (what the catalog says the column is)
CHECKS = {"UI_BID": "bigint", "I_BCOL": "bigint", "I_N": "numeric(18,2)"}
FULL = {"I_BCOL"}  # every format x layout; the others only decimal128/compact
failures = 0


def run(*args, **kw):
    return subprocess.run([pbtree, *args], check=True, capture_output=True, text=True, **kw).stdout


def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)


for index, type_name in CHECKS.items():
    pred = json.loads(run("stat", "--firebird", "--what-if", "--json", "--index", index, fdb))[0]
    rows = pred["what_if"]["predictions"]
    fb = json.loads(run("stat", "--firebird", "--json", "--index", index, fdb))[0]
    db = os.path.join(scratch, index + ".pbt")
    for suffix in ("", "-wal"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    run("import", fdb, db, "--index", index)
    own = json.loads(run("stat", "--json", "--index", index, db))[0]
    keys = ["depth", "leaf_buckets", "nodes", "avg_node_length", "total_dup", "max_dup",
            "avg_key_length", "compression_ratio", "avg_prefix_length", "avg_data_length",
            "clustering_factor", "fill_distribution"]
    diff = [k for k in keys if own[k] != fb[k]]
    if diff:
        fail(f"{index}: import differs from Firebird in {diff}: "
             f"{[(own[k], fb[k]) for k in diff]}")
    else:
        print(f"ok   {index}: import in {own['key_format']}/firebird has Firebird's figures "
              f"({fb['leaf_buckets']} leaves, {fb['nodes']} nodes)")
    csv = os.path.join(scratch, index + ".csv")
    with open(csv, "w") as out:
        out.write(run("scan", db, "--index", index).replace("\t", ","))
    for row in rows:
        if not row["available"]:
            continue
        if index not in FULL and (row["key_format"], row["layout"]) != ("decimal128", "compact"):
            continue
        fmt, layout = row["key_format"], row["layout"]
        name = ("L_" + fmt + "_" + layout).replace("-", "_").upper()
        args = ["load", db, "--index", name, "--type", type_name, "--key-format", fmt,
                "--layout", layout, "--input", csv, "--recno-column", "2"]
        if fb["unique"]:
            args.append("--unique")
        if fb["descending"]:
            args.append("--descending")
        run(*args)
        imp = "I_" + name[2:]
        run("import", fdb, db, "--index", index, "--name", imp, "--key-format", fmt,
            "--layout", layout)
        for what, got in (("load", name), ("import", imp)):
            st = json.loads(run("stat", "--json", "--index", got, db))[0]
            pairs = {"leaf_pages": st["leaf_buckets"], "index_pages": st["index_pages"],
                     "depth": st["depth"], "nodes": st["nodes"], "total_dup": st["total_dup"],
                     "avg_key_length": st["avg_key_length"],
                     "avg_prefix_length": st["avg_prefix_length"],
                     "avg_data_length": st["avg_data_length"]}
            bad = {k: (row[k], v) for k, v in pairs.items() if row[k] != v}
            if bad:
                fail(f"{index} {fmt}/{layout}: what-if vs {what}: {bad}")
            else:
                print(f"ok   {index} {fmt}/{layout}: what-if = {what} ({st['leaf_buckets']} "
                      f"leaves, {st['index_pages']} pages, depth {st['depth']})")
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
