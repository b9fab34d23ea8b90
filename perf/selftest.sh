#!/usr/bin/env bash
# perf/selftest.sh BIN_DIR: the benchmark harness tests itself at tiny sizes (ctest
# bench_selftest; issue 31 item 5), in well under 2 minutes:
#  1. pbtree-memlim's generator reproduces the seed's COL column (data/seed/t_int.csv.zst);
#  2. perf/memory_limited.sh at 20,000 rows, one repetition, every engine, with --verify (every
#     key decoded and checked against its record number) under a 64 MiB memory cgroup: every
#     engine gives the same checksums for the same queries, none errors. Where no memory
#     cgroup exists the script fails with its message (never skipped);
#  3. pbtree-bench's scan and insert cases at 5,000 rows (every contender, abseil included):
#     none reports an error (each checks its count and checksum against the model first).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bin=$(cd "${1:?usage: perf/selftest.sh BIN_DIR}" && pwd)
tmp=$(mktemp -d /tmp/pbtree-selftest-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
t0=$(date +%s)

# 1. generator against the seed file (first 1000 rows at 10^6 rows)
want=$({ zstd -dc "$root/data/seed/t_int.csv.zst" 2>/dev/null || true; } | head -n 1000 |
  cut -d, -f2 | md5sum)
got=$("$bin/pbtree-memlim" col 1000 1000000 | md5sum)
if [ "$want" != "$got" ]; then
  echo "selftest: pbtree-memlim col differs from t_int.csv.zst" >&2
  exit 1
fi
echo "selftest: generator matches data/seed/t_int.csv.zst (1000 rows)"

# 2. memory-limited runner, tiny
engines="pbtree-compact pbtree-compact-4k pbtree lmdb sqlite sqlite-mmap rocksdb"
PBTREE_MEMLIM_BIN="$bin/pbtree-memlim" PBTREE_BENCH_ROWS=20000 PBTREE_MEMLIM_DIR="$tmp/data" \
  PBTREE_MEMLIM_OUT="$tmp/out" PBTREE_MEMLIM_REPS=1 PBTREE_MEMLIM_BUDGETS=64 \
  PBTREE_MEMLIM_MAIN_BUDGET=64 PBTREE_MEMLIM_LOOKUP_WARMUP=300 PBTREE_MEMLIM_WARMUP_PER_MIB=4 \
  PBTREE_MEMLIM_NARROW_WARMUP=50 \
  PBTREE_MEMLIM_SECONDS=0.2 PBTREE_MEMLIM_MAX_OPS=2000 PBTREE_MEMLIM_VERIFY=1 PBTREE_MEMLIM_FIO=0 \
  PBTREE_MEMLIM_ENGINES="${PBTREE_SELFTEST_ENGINES:-$engines}" \
  bash "$here/memory_limited.sh" >"$tmp/memlim.stdout"
lines=$(grep -c ' phase=' "$tmp/out/memlim.txt")
[ "$lines" -gt 0 ] || { echo "selftest: memory_limited.sh printed no result lines" >&2; exit 1; }
grep -q "cgroup_peak_bytes=[1-9]" "$tmp/out/memlim.txt" ||
  { echo "selftest: the queries did not run inside a memory cgroup" >&2; exit 1; }
echo "selftest: memory_limited.sh OK ($lines result lines, checksums agree)"

# 3. pbtree-bench's cases at tiny sizes: no errors
filter='(unique_scan|narrow_scan|wide_scan|full_scan|_insert)/'
if [ -x "$bin/pbtree-bench" ]; then
  PBTREE_BENCH_DIR="$tmp" PBTREE_BENCH_SCAN_ROWS=5000 PBTREE_BENCH_BUILD_ROWS=5000 \
    "$bin/pbtree-bench" --benchmark_filter="$filter" \
    --benchmark_min_time=0.001 --benchmark_format=json >"$tmp/bench.json" 2>"$tmp/bench.err" ||
    { cat "$tmp/bench.err" >&2; echo "selftest: pbtree-bench failed" >&2; exit 1; }
  python3 - "$tmp/bench.json" <<'EOF'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
bad = [(b["name"], b.get("error_message", "")) for b in runs if b.get("error_occurred")]
for name, msg in bad:
    print("selftest: %s: %s" % (name, msg), file=sys.stderr)
contenders = sorted({b["name"].split("/")[1] for b in runs})
print("selftest: pbtree-bench %d cases, contenders %s" % (len(runs), " ".join(contenders)))
sys.exit(1 if bad or not runs else 0)
EOF
else
  echo "selftest: $bin/pbtree-bench not built (Google Benchmark missing)" >&2
  exit 1
fi
echo "selftest: OK in $(($(date +%s) - t0)) s"
