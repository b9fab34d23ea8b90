#!/usr/bin/env bash
# perf/memory_limited.sh: memory-limited runs (issue 31 item 2). Each engine's query phase runs
# in its own process inside a fresh memory cgroup whose limit counts the page cache too
# (cgroup v1 memory.limit_in_bytes + memory.memsw.limit_in_bytes where present, or v2
# memory.max + memory.swap.max = 0); the build phase runs outside any limit, and every file of
# an engine is synced and dropped from the page cache (pbtree-memlim drop: fsync +
# posix_fadvise(POSIX_FADV_DONTNEED)) before each query process, so every process starts cold.
#
# Data: the seed's shapes at $PBTREE_BENCH_ROWS rows (default 10^8; data/seed/README.md):
# unique BIGINT ID at budgets 128/512/2048 MiB; COL (duplicates) and INT128 at 512 MiB.
# Engines (perf/PEERS.md): pbtree-compact (--key-format auto; 8 KiB pages, and 4 KiB pages as
# pbtree-compact-4k), pbtree (Firebird layout, default
# format), lmdb, sqlite, rocksdb (+ sqlite-mmap with PBTREE_MEMLIM_ENGINES). abseil is not
# here: it lives in memory only (about 1.8 GB at 10^8 rows), so no budget can apply to it.
# Workloads: lookup, narrow (100 keys), full (one scan, budget 512 only). Each query process
# runs the same warm-up count of operations per engine (reported as phase=cold: a cold
# start), then the timed phase (phase=steady) for up to PBTREE_MEMLIM_SECONDS seconds.
# Repetitions interleave the engines (the order rotates per repetition).
#
# Output: one line per engine, workload, case, budget, phase and repetition on stdout:
#   ENGINE WORKLOAD budget=MiB ops_per_s=N bytes_read_per_op=N majflt_per_op=N size_bytes=N
#   peak_rss_bytes=N case=... phase=... rep=... checksum=... cgroup_peak_bytes=N
# and all of them in $out/memlim.txt with fio's figures in $out/fio.txt, for perf/report.py.
# Fails (exit 1) if no memory cgroup is available, a query errors, or the engines' checksums
# of the same queries differ.
#
# Environment: PBTREE_BENCH_ROWS (rows, default 100000000), PBTREE_BENCH_BUILD (build dir,
# default <repo>/build-release), PBTREE_MEMLIM_DIR (data, default /tmp/pbtree-memlim; kept
# between runs: builds are reused when the same rows were built), PBTREE_MEMLIM_REPS (3; 0:
# only the builds and fio),
# PBTREE_MEMLIM_ENGINES, PBTREE_MEMLIM_BUDGETS (the ID budgets, "128 512 2048"),
# PBTREE_MEMLIM_MAIN_BUDGET (COL/INT128/full budget, 512), PBTREE_MEMLIM_LOOKUP_WARMUP (5000;
# lookups warm up max(this, budget MiB × PBTREE_MEMLIM_WARMUP_PER_MIB (128)) operations),
# PBTREE_MEMLIM_NARROW_WARMUP (1000; narrow scans warm up like lookups, at least this
# many), PBTREE_MEMLIM_SECONDS (3), PBTREE_MEMLIM_MAX_OPS
# (1000000), PBTREE_MEMLIM_FULL_REPS (repetitions of the full scans, 1),
# PBTREE_MEMLIM_VERIFY=1 (decode and check every key: slow, for the self-test),
# PBTREE_MEMLIM_FIO=0 (skip fio), PBTREE_MEMLIM_OUT (output dir, default $build/memlim),
# PBTREE_MEMLIM_BIN (a built pbtree-memlim: no cmake step), PBTREE_MEMLIM_CASES (subset of
# "id col int128"), PBTREE_MEMLIM_WORKLOADS (subset of "lookup narrow full"), PBTREE_MEMLIM_CACHE=half (every engine's own cache = half the budget: the
# rule before set_cache_bytes, for before/after runs).
set -euo pipefail
# The whole script is one { } group: bash parses it before running it, so editing this file
# while a run is going (a checkout, a merge) cannot change the running script.
{
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${PBTREE_BENCH_BUILD:-$root/build-release}
rows=${PBTREE_BENCH_ROWS:-100000000}
data=${PBTREE_MEMLIM_DIR:-/tmp/pbtree-memlim}
reps=${PBTREE_MEMLIM_REPS:-3}
engines=${PBTREE_MEMLIM_ENGINES:-"pbtree-compact pbtree-compact-4k pbtree lmdb sqlite rocksdb"}
budgets=${PBTREE_MEMLIM_BUDGETS:-"128 512 2048"}
main_budget=${PBTREE_MEMLIM_MAIN_BUDGET:-512}
lookup_warmup=${PBTREE_MEMLIM_LOOKUP_WARMUP:-5000}
narrow_warmup=${PBTREE_MEMLIM_NARROW_WARMUP:-1000}
seconds=${PBTREE_MEMLIM_SECONDS:-3}
max_ops=${PBTREE_MEMLIM_MAX_OPS:-1000000}
cases=${PBTREE_MEMLIM_CASES:-"id col int128"}
workloads=${PBTREE_MEMLIM_WORKLOADS:-"lookup narrow full"}
warmup_per_mib=${PBTREE_MEMLIM_WARMUP_PER_MIB:-128}
full_reps=${PBTREE_MEMLIM_FULL_REPS:-1}
out=${PBTREE_MEMLIM_OUT:-$build/memlim}
verify=""
[ "${PBTREE_MEMLIM_VERIFY:-0}" = 1 ] && verify="--verify"

die() { echo "memory_limited.sh: $*" >&2; exit 1; }

# ---- memory cgroup: v1 or v2, never skipped ------------------------------------------------
cg_kind=""
if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
  cg_kind=v1
  cg_base=/sys/fs/cgroup/memory
elif [ -f /sys/fs/cgroup/cgroup.controllers ] &&
  grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
  cg_kind=v2
  cg_base=/sys/fs/cgroup
  grep -qw memory "$cg_base/cgroup.subtree_control" ||
    echo +memory >"$cg_base/cgroup.subtree_control" ||
    die "cannot enable the v2 memory controller in $cg_base/cgroup.subtree_control"
else
  die "no memory cgroup: neither cgroup v1 (/sys/fs/cgroup/memory/memory.limit_in_bytes)" \
    "nor v2 (memory in /sys/fs/cgroup/cgroup.controllers); cannot run memory-limited queries"
fi
[ -w "$cg_base" ] || die "$cg_base is not writable (run as root): cannot create a memory cgroup"

# cg_run BUDGET_MIB CMD...: runs CMD in a new cgroup limited to BUDGET_MIB (page cache counted),
# prints CMD's stdout followed by " cgroup_peak_bytes=N"; returns CMD's status.
cg_run() {
  local mib=$1
  shift
  local cg="$cg_base/pbtree-memlim-$$-$RANDOM"
  mkdir "$cg" || die "cannot create cgroup $cg"
  local bytes=$((mib * 1024 * 1024))
  if [ "$cg_kind" = v1 ]; then
    echo "$bytes" >"$cg/memory.limit_in_bytes"
    # Swap must not relieve the limit: memory+swap capped at the same figure where accounted.
    [ -f "$cg/memory.memsw.limit_in_bytes" ] && echo "$bytes" >"$cg/memory.memsw.limit_in_bytes"
  else
    echo "$bytes" >"$cg/memory.max"
    [ -f "$cg/memory.swap.max" ] && echo 0 >"$cg/memory.swap.max"
  fi
  local rc=0 line
  line=$(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' cg_run "$cg" "$@") || rc=$?
  local peak=0
  if [ "$cg_kind" = v1 ]; then
    peak=$(cat "$cg/memory.max_usage_in_bytes")
  elif [ -f "$cg/memory.peak" ]; then
    peak=$(cat "$cg/memory.peak")
  fi
  [ "$cg_kind" = v1 ] && echo 0 >"$cg/memory.force_empty" 2>/dev/null || true
  rmdir "$cg" 2>/dev/null || true
  [ -n "$line" ] && printf '%s\n' "$line" | sed "s/\$/ cgroup_peak_bytes=$peak/"
  return $rc
}

if [ -n "${PBTREE_MEMLIM_BIN:-}" ]; then
  ml=$PBTREE_MEMLIM_BIN  # prebuilt (the self-test)
else
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPBTREE_BUILD_TESTS=OFF \
      -DPBTREE_BUILD_BENCH=ON >&2
  fi
  cmake --build "$build" -j2 --target pbtree-memlim >&2
  ml="$build/bin/pbtree-memlim"
fi
mkdir -p "$data" "$out"
: >"$out/memlim.txt"
start=$(date +%s)

# ---- fio: the disk's random 4 KiB read rate (bounds every figure below) ---------------------
if [ "${PBTREE_MEMLIM_FIO:-1}" = 1 ]; then
  command -v fio >/dev/null || die "fio not found (scripts/install-deps.sh --bench installs it)"
  fio --name=randread4k --directory="$data" --size=1G --rw=randread --bs=4k --direct=1 \
    --ioengine=psync --iodepth=1 --runtime=10 --time_based --output-format=json \
    >"$out/fio.json" 2>/dev/null || die "fio failed"
  rm -f "$data"/randread4k.*
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]["read"];
print("fio randread 4KiB direct QD1: iops=%.0f bw_bytes=%.0f lat_mean_us=%.1f"
      % (j["iops"], j["bw_bytes"], j["lat_ns"]["mean"] / 1000))' \
    "$out/fio.json" | tee "$out/fio.txt"
fi

# ---- builds (outside any limit), reused when the same rows were built ----------------------
build_engines=()
for e in $engines; do
  case $e in sqlite-mmap) b=sqlite ;; *) b=$e ;; esac
  [[ " ${build_engines[*]} " == *" $b "* ]] || build_engines+=("$b")
done
store() { case $1 in sqlite-mmap) echo "$data/sqlite-$2" ;; *) echo "$data/$1-$2" ;; esac; }
: >"$out/builds.txt"
for c in $cases; do
  for b in "${build_engines[@]}"; do
    d=$(store "$b" "$c")
    # "$d.built": the rows built, then the build's line (repeated into builds.txt on reuse).
    if [ -f "$d.built" ] && [ "$(head -n 1 "$d.built")" = "$rows" ]; then
      sed -n '2s/$/ (reused)/p' "$d.built" | tee -a "$out/builds.txt" >&2
      continue
    fi
    rm -rf "$d" "$d.built"
    t0=$(date +%s.%N)
    size=$("$ml" build "$b" "$c" "$d" "$rows") || die "build $b $c failed"
    t1=$(date +%s.%N)
    line=$(printf 'build %s %s rows=%s seconds=%.1f size_bytes=%s' "$b" "$c" "$rows" \
      "$(awk "BEGIN{print $t1 - $t0}")" "$size")
    printf '%s\n%s\n' "$rows" "$line" >"$d.built"
    echo "$line" | tee -a "$out/builds.txt" >&2
  done
done
du -s --block-size=1 "$data" >&2

# ---- queries: repetitions interleave engines (rotated order per repetition) ----------------
plan=()
for bud in $budgets; do plan+=("id lookup $bud" "id narrow $bud"); done
plan+=("id full $main_budget" "col lookup $main_budget" "col narrow $main_budget"
  "col full $main_budget" "int128 lookup $main_budget" "int128 narrow $main_budget"
  "int128 full $main_budget")
plan_all=("${plan[@]}")
plan=()
for p in "${plan_all[@]}"; do
  read -r c w _ <<<"$p"
  [[ " $cases " == *" $c "* ]] && [[ " $workloads " == *" $w "* ]] && plan+=("$p")
done
read -r -a eng <<<"$engines"
failed=0
for rep in $(seq 1 "$reps"); do
  for p in "${plan[@]}"; do
    read -r c w bud <<<"$p"
    # Full scans read every file whole (at 10^7 rows 45 of them took 469 s of an 18-minute
    # run): PBTREE_MEMLIM_FULL_REPS (default 1) repetitions.
    [ "$w" = full ] && [ "$rep" -gt "$full_reps" ] && continue
    # The same warm-up count for every engine: at least the configured count, and more for
    # larger budgets (warmup_per_mib operations per MiB), so that the cache has filled.
    case $w in
      lookup)
        warm=$((bud * warmup_per_mib))
        [ "$warm" -ge "$lookup_warmup" ] || warm=$lookup_warmup
        ;;
      narrow)
        # The same rule as lookups: 1000 scans fill a fraction of a budget's pages, so the
        # "steady" phase would still be a cold start.
        warm=$((bud * warmup_per_mib))
        [ "$warm" -ge "$narrow_warmup" ] || warm=$narrow_warmup
        ;;
      full) warm=0 ;;
    esac
    n=${#eng[@]}
    for i in $(seq 0 $((n - 1))); do
      e=${eng[$(((i + rep - 1) % n))]}
      d=$(store "$e" "$c")
      "$ml" drop "$d"
      if ! cg_run "$bud" "$ml" query "$e" "$c" "$d" "$rows" "$w" "$warm" "$max_ops" "$bud" \
        "$rep" "$seconds" $verify >>"$out/memlim.txt"; then
        echo "memory_limited.sh: FAILED: $e $c $w budget=$bud rep=$rep" |
          tee -a "$out/memlim.txt" >&2
        failed=1
      fi
      tail -n 2 "$out/memlim.txt" | grep " rep=$rep " | grep "^$e $w " || true
    done
  done
done
elapsed=$(($(date +%s) - start))
echo "memory_limited.sh: rows=$rows reps=$reps took $elapsed s" | tee "$out/elapsed.txt" >&2

# Same queries, same answers: the cold-phase checksums (a fixed count of the same queries) and
# the full scans' must agree across engines.
if ! python3 - "$out/memlim.txt" <<'EOF'; then failed=1; fi
import sys, collections
sums = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 3 or "=" not in f[2]:
        continue
    kv = dict(x.split("=", 1) for x in f[2:] if "=" in x)
    if kv["phase"] == "cold" or f[1] == "full":
        sums[(kv["case"], f[1], kv["budget"], kv["rep"], kv["phase"])][f[0]] = kv["checksum"]
bad = [(k, v) for k, v in sums.items() if len(set(v.values())) > 1]
for k, v in bad:
    print("memory_limited.sh: checksums differ for %s: %s" % (" ".join(k), v), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
[ "$failed" = 0 ] || die "a case failed (see above); results in $out/memlim.txt"
echo "memory_limited.sh: results in $out/memlim.txt" >&2
exit 0
}
