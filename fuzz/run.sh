#!/usr/bin/env bash
# Builds the libFuzzer targets (build-fuzz/, clang, -fsanitize=fuzzer,address,undefined) and
# runs each one from its committed seed corpus (fuzz/corpus/<target>/) for a bounded time.
# New inputs go to a scratch corpus in build-fuzz/, not into the repository. Fails (exit 1)
# if any target crashes, leaks, times out on one input or runs out of memory; the reproducer
# is left in build-fuzz/artifacts/.
# Usage: fuzz/run.sh [seconds per target (a cap), default 30] [target ...]
# fuzz_wal's cap is twice that (60 s by default): each of its inputs replays a log through
# real files, about 100 runs/s on a CI machine, so CI tries the first ~5,000 of its 10^5 runs.
# The targets run FUZZ_JOBS at a time (default: the CPUs, 2 on CI), one core each, so the
# whole stage takes about 2.5 minutes
# (CI's budget for the fuzzers: 6 of its 30 minutes).
# Env: FUZZ_SEED (default 20261130; 0 = random), FUZZ_RUNS (default per target; 0 = no limit).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-30}"
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(fuzz_page fuzz_node fuzz_key fuzz_open fuzz_wal fuzz_firebird fuzz_csv fuzz_build fuzz_packed)
fi

# build-fuzz is also .ci/run's ASan+UBSan tree for the whole suite (PBTREE_BUILD_TESTS=ON
# there): configuring here leaves that setting as it is and builds only the fuzz targets.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DPBTREE_FUZZ=ON \
  -DPBTREE_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j2 --target "${TARGETS[@]}"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p build-fuzz/artifacts
run_target() {  # run_target T: fuzzes T; its log is build-fuzz/T.log, its exit status build-fuzz/T.rc
  local t="$1" work cap log runs extra extra_dir real db rc
  work="build-fuzz/corpus-work/$t"
  rm -rf "$work"  # start from the committed corpus only, as a fresh clone does
  mkdir -p "$work"
  cap="$SECONDS_PER_TARGET"
  if [ "$t" = fuzz_wal ]; then cap=$((SECONDS_PER_TARGET * 2)); fi
  log="build-fuzz/$t.log"
  # A fixed seed and a fixed number of runs make a run repeatable: CI tries exactly the inputs
  # tried here (the time limit still bounds it on a slower machine). FUZZ_RUNS=0 or
  # FUZZ_SEED=0 (a random seed) explore beyond that, for as long as the time allows.
  case "$t" in
    fuzz_page) runs=40000 ;;
    fuzz_node) runs=1500000 ;;
    fuzz_key) runs=80000 ;;
    fuzz_wal) runs=100000 ;;
    fuzz_firebird) runs=20000 ;;
    fuzz_csv) runs=10000 ;;  # about 200 runs/s on a loaded 2-core machine (a pipeline per input)
    fuzz_build) runs=3000 ;;  # ten indexes built and read back per input: 131 runs/60 s (load 12)
    *) runs=15000 ;;
  esac
  runs="${FUZZ_RUNS:-$runs}"
  if [ "$runs" = 0 ]; then runs=-1; fi
  extra=()
  if [ "$t" = fuzz_firebird ]; then
    # ODS 11.2 and 13.0 seeds from the real files in ../shared/data/firebird-real (made by
    # other people: pages taken at run time, not committed); ODS 12 and 13.1 seeds are.
    extra_dir=build-fuzz/corpus-extra/$t
    rm -rf "$extra_dir"
    mkdir -p "$extra_dir"
    real=../shared/data/firebird-real
    [ -d "$real" ] || real=../../shared/data/firebird-real  # a worktree at /work/wt/<x>
    for db in Andrew-6676__chickenPrinter__DATABASE.FDB Lurbano1995__Api__DATABASE.FDB; do
      if [ -f "$real/$db" ]; then
        python3 fuzz/make_firebird_corpus.py "$real/$db" "$extra_dir" >/dev/null
      fi
    done
    extra=("$extra_dir")
  fi
  rc=0
  build-fuzz/bin/"$t" -seed="${FUZZ_SEED:-20261130}" -runs="$runs" \
    -max_total_time="$cap" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/"$t"- \
    "$work" "fuzz/corpus/$t" "${extra[@]}" >"$log" 2>&1 || rc=$?
  echo "$rc" >"build-fuzz/$t.rc"
}

# FUZZ_JOBS targets at a time (default: the number of CPUs), each on one core; the results
# are printed in target order once all have run.
jobs_max="${FUZZ_JOBS:-$(nproc)}"
for t in "${TARGETS[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  rm -f "build-fuzz/$t.rc"
  run_target "$t" &
done
wait
failed=()
for t in "${TARGETS[@]}"; do
  log="build-fuzz/$t.log"
  if [ "$(cat "build-fuzz/$t.rc" 2>/dev/null || echo missing)" = 0 ]; then
    echo "== fuzz: $t"
    grep -E '^stat::number_of_executed_units|^stat::average_exec_per_sec|^Done ' "$log" || true
  else
    echo "fuzz: $t FAILED; last lines of $log:"
    tail -60 "$log"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: failed targets: ${failed[*]}"
  exit 1
fi
echo "fuzz: all ${#TARGETS[@]} targets ran ${SECONDS_PER_TARGET}s without a crash"
