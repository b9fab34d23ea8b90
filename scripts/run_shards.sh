#!/usr/bin/env bash
# Runs a GoogleTest binary as N shards in parallel (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX),
# one process per shard: .ci/run's sanitizer pass, where one process per test (ctest) spends
# about as long starting processes as running tests. Each shard's output goes to a log; a
# shard that fails, crashes or passes its time limit has its failed tests and last lines
# printed, and the script exits 1.
# Usage: scripts/run_shards.sh BINARY [SHARDS (default 2)] [SECONDS per shard (default 1500)]
set -euo pipefail
bin="$1"
shards="${2:-2}"
limit="${3:-1500}"
[ -x "$bin" ] || { echo "run_shards: $bin: not an executable" >&2; exit 2; }
logs="$(mktemp -d "${TMPDIR:-/tmp}/run_shards.XXXXXX")"
pids=()
for ((i = 0; i < shards; ++i)); do
  GTEST_TOTAL_SHARDS="$shards" GTEST_SHARD_INDEX="$i" \
    timeout --signal=KILL "$limit" "$bin" --gtest_brief=1 >"$logs/shard$i.log" 2>&1 &
  pids+=("$!")
done
failed=0
for ((i = 0; i < shards; ++i)); do
  rc=0
  wait "${pids[$i]}" || rc=$?
  summary="$(grep -E '^\[==========\] .* ran\.' "$logs/shard$i.log" | tail -n 1 || true)"
  if [ "$rc" -eq 0 ]; then
    echo "run_shards: shard $i of $shards passed: ${summary#\[==========\] }"
  else
    failed=1
    if [ "$rc" -eq 137 ]; then
      echo "run_shards: shard $i of $shards killed after ${limit} s (exit $rc)"
    else
      echo "run_shards: shard $i of $shards FAILED (exit $rc)"
    fi
    grep -E '^\[  FAILED  \]' "$logs/shard$i.log" | sort -u || true
    echo "run_shards: last lines of shard $i:"
    tail -n 80 "$logs/shard$i.log"
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "run_shards: logs kept in $logs"
  exit 1
fi
rm -rf "$logs"
