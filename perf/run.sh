#!/usr/bin/env bash
# perf/run.sh: builds pbtree-bench (Release) if needed, runs the whole suite with JSON output
# (--benchmark_format=json, --benchmark_out) and rewrites perf/RESULTS.md with perf/report.py.
#
# Passes: (A) every case but the inserts and bulk builds, once per scan size, (B) the bulk builds
# and insert cases (10^6 every key format, 10^7 bigint.decimal128 on the Firebird layout, with
# LMDB and abseil but not SQLite, whose 10^7 inserts no target compares with; wall clock, final
# commit and checkpoint timed), all with $PBTREE_BENCH_REPS repetitions (default 5)
# interleaved across contenders in random order; report.py gives each ratio with the range of
# its per-repetition ratios and fails (exit 1, after writing the report) if a case errored. Most of pass A is building the fixtures (10^6 and 10^7 rows per
# key format and peer), not timing loops. Pass B's length is set by pbtree's insert rate:
# 3 × (random + increasing) × 10^7 inserts at today's ~0.1 M/s is ~10 min alone, so at
# f5369bc's insert speed the whole run exceeds 15 min; PBTREE_BENCH_INSERT_ROWS=1000000
# drops the 10^7 cases. Each pass's wall time is printed. Pass (C) loads the seed data
# (data/seed/t_int.csv.zst) with the pbtree CLI in both layouts and passes `pbtree stat --json`
# to report.py for the seed table (bytes per entry next to Firebird 3's published figures).
# Pass (D) runs perf/load_rss.sh: `pbtree load` of a generated 10^7-row CSV (PBTREE_LOAD_ROWS).
#
# If perf/memory_limited.sh ran first with the same build dir, its results join the report.
# Environment: PBTREE_BENCH_BUILD (build dir, default <repo>/build-release), PBTREE_BENCH_REPS,
# PBTREE_BENCH_MIN_TIME (seconds per case, default 0.05), PBTREE_BENCH_LARGE=1 (bulk build
# at 10^7 rows), PBTREE_BENCH_SCAN_ROWS (scan sizes, default "1000000 10000000"),
# PBTREE_BENCH_BUILD_ROWS (bulk/insert rows), PBTREE_BENCH_INSERT_ROWS (one insert size, every format),
# PBTREE_BENCH_DIR (temp files, default /tmp).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${PBTREE_BENCH_BUILD:-$root/build-release}
reps=${PBTREE_BENCH_REPS:-5}
min_time=${PBTREE_BENCH_MIN_TIME:-0.05}
scan_sizes=${PBTREE_BENCH_SCAN_ROWS:-"1000000 10000000"}

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPBTREE_BUILD_TESTS=OFF \
    -DPBTREE_BUILD_BENCH=ON
fi
cmake --build "$build" -j2 --target pbtree-bench pbtree_cli
bin="$build/bin/pbtree-bench"
out="$build/bench-results"
mkdir -p "$out"
rm -f "$out"/*.json

# Every repetition is its own run, in a random order across all contenders of the pass
# (--benchmark_enable_random_interleaving): pbtree, LMDB, abseil, pbtree ... so a noisy minute
# hits every contender alike; the per-repetition rows stay in the JSON (report.py pairs
# repetition i of pbtree with repetition i of each peer and reports the range of the ratios).
common="--benchmark_min_time=$min_time --benchmark_repetitions=$reps --benchmark_enable_random_interleaving=true --benchmark_format=json --benchmark_out_format=json"
start=$(date +%s)
cmds=""
jsons=()
for n in $scan_sizes; do
  # Pass A (per scan size, so that every fixture of that size stays built while repetitions
  # interleave): lookups, scans, cold lookups, key encoding.
  cmd="$bin --benchmark_filter=-(_insert|bulk_build)/ $common --benchmark_out=$out/suite-$n.json"
  echo "run.sh: pass A ($n rows): PBTREE_BENCH_SCAN_ROWS=$n $cmd" >&2
  t0=$(date +%s)
  PBTREE_BENCH_SCAN_ROWS=$n $cmd >"$out/suite-$n.stdout.json"
  echo "run.sh: pass A ($n rows) took $(($(date +%s) - t0)) s" >&2
  cmds="${cmds}PBTREE_BENCH_SCAN_ROWS=$n ${cmd#$root/} ; "
  jsons+=("$out/suite-$n.json")
done
mid=$(date +%s)
# Pass B: bulk builds and inserts (each iteration builds its own structure).
cmd_b="$bin --benchmark_filter=(_insert|bulk_build)/ $common --benchmark_out=$out/inserts.json"
echo "run.sh: pass B: $cmd_b" >&2
$cmd_b >"$out/inserts.stdout.json"
elapsed=$(($(date +%s) - start))
echo "run.sh: pass B took $(($(date +%s) - mid)) s" >&2
cmds="${cmds}${cmd_b#$root/}"
jsons+=("$out/inserts.json")

# Pass C: the seed data's BIGINT indexes, Firebird layout (default key format) and compact layout
# with --key-format auto; record numbers = 0-based row ordinals (load's default).
cli="$build/bin/pbtree"
seed="$root/data/seed/t_int.csv.zst"
seed_cmd=""
seed_args=()
for layout in firebird compact; do
  db="$out/seed-$layout.pbt"
  rm -f "$db" "$db"-*
  fmt=""
  [ "$layout" = compact ] && fmt="--key-format auto"
  for ix in "ID 1 --unique" "COL 2"; do
    set -- $ix
    c="pbtree load seed-$layout.pbt --index $1 --type bigint --layout $layout $fmt --input data/seed/t_int.csv.zst --column $2 ${3:-}"
    "$cli" load "$db" --index "$1" --type bigint --layout "$layout" $fmt --input "$seed" --column "$2" ${3:-} >/dev/null
    seed_cmd="$seed_cmd$c; "
  done
  "$cli" stat "$db" --json >"$out/seed-$layout.json"
  seed_args+=(--seed-stat "pbtree=$out/seed-$layout.json")
done
seed_cmd="${seed_cmd}pbtree stat seed-<layout>.pbt --json"

# Pass D: `pbtree load` of a generated CSV of 10^7 random bigint rows (perf/load_rss.sh, default
# --memory): wall time, rows/s and peak RSS (issue 11's load targets).
load_rows=${PBTREE_LOAD_ROWS:-10000000}
dstart=$(date +%s)
"$here/load_rss.sh" "$load_rows" "$cli" >"$out/load_rss.txt"
echo "run.sh: pass D (load of $load_rows rows) took $(($(date +%s) - dstart)) s" >&2

env_note=""
for v in PBTREE_BENCH_BUILD PBTREE_BENCH_REPS PBTREE_BENCH_MIN_TIME PBTREE_BENCH_LARGE PBTREE_BENCH_SCAN_ROWS PBTREE_BENCH_BUILD_ROWS PBTREE_BENCH_INSERT_ROWS PBTREE_LOAD_ROWS; do
  if [ -n "${!v:-}" ]; then env_note="$env_note$v=${!v} "; fi
done
memlim_args=()
if [ -f "$build/memlim/memlim.txt" ]; then
  memlim_args=(--memlim "$build/memlim/memlim.txt" --memlim-fio "$build/memlim/fio.txt"
    --memlim-elapsed "$build/memlim/elapsed.txt" --memlim-builds "$build/memlim/builds.txt"
    --memlim-main-budget "${PBTREE_MEMLIM_MAIN_BUDGET:-512}"
    --memlim-small-budget "${PBTREE_MEMLIM_SMALL_BUDGET:-128}")
fi
# Debian's python3 (python3-matplotlib draws the charts), not a python3 earlier on PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" "$here/report.py" --out "$here/RESULTS.md" --html "$here/results.html" \
  --repetitions "$reps repetitions per case, interleaved across contenders in random order; median, ratio ranges over the repetitions" \
  --elapsed "$((elapsed / 60)) min $((elapsed % 60)) s" \
  --command "${env_note}perf/run.sh  =>  $cmds" "${memlim_args[@]}" \
  --seed-command "$seed_cmd" "${seed_args[@]}" \
  --load-rss "$out/load_rss.txt" --load-command "perf/load_rss.sh $load_rows build-release/bin/pbtree" \
  "${jsons[@]}"
echo "run.sh: wrote $here/RESULTS.md in ${elapsed}s" >&2
