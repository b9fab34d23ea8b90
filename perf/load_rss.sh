#!/usr/bin/env bash
# perf/load_rss.sh: wall time, rows/s and peak RSS of `pbtree load` of a generated CSV of N
# random 63-bit bigint values (--key-format decimal128), measured with /usr/bin/time -v, for
# one or more pbtree binaries (A/B interleaved), then the CSV is deleted. Checks issue 11's
# bounded-memory target (peak RSS <= --memory + 64 MiB at the default budget, whatever N).
#
# Usage: perf/load_rss.sh [N rows, default 10^7] [pbtree binary...] (default build/bin/pbtree)
# Environment: PBTREE_LOAD_MEMORY (passed as --memory; default: load's own default),
# PBTREE_BENCH_DIR (where the CSV and index files go, default /tmp), PBTREE_LOAD_ROUNDS
# (rounds over the binaries, default 1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
rows=${1:-10000000}
shift || true
bins=("$@")
[ ${#bins[@]} -eq 0 ] && bins=("$root/build/bin/pbtree")
dir=${PBTREE_BENCH_DIR:-/tmp}
rounds=${PBTREE_LOAD_ROUNDS:-1}
csv="$dir/pbtree-load-rss-$$.csv"
trap 'rm -f "$csv" "$dir"/pbtree-load-rss-$$-*' EXIT

python3 - "$rows" "$csv" <<'EOF'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
r = random.Random(20261201)
with open(path, "w") as out:
    while n > 0:
        k = min(n, 100000)
        out.write("".join(str((r.getrandbits(64) - 2**63) >> 1) + "\n" for _ in range(k)))
        n -= k
EOF
mem=()
[ -n "${PBTREE_LOAD_MEMORY:-}" ] && mem=(--memory "$PBTREE_LOAD_MEMORY")
echo "rows $rows, input $(stat -c %s "$csv") bytes, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((round = 1; round <= rounds; round++)); do
  i=0
  for bin in "${bins[@]}"; do
    i=$((i + 1))
    db="$dir/pbtree-load-rss-$$-$i.pbt"
    rm -f "$db" "$db"-*
    /usr/bin/time -v "$bin" load "$db" --index I --type bigint --key-format decimal128 \
      --input "$csv" "${mem[@]}" 2>"$db.time" >/dev/null
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$db.time")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$db.time")
    secs=$(python3 -c "p='$wall'.split(':'); print(sum(float(x) * 60**i for i, x in enumerate(reversed(p))))")
    python3 -c "print(f'round $round  $bin: wall {$secs:.2f} s, {$rows / $secs / 1e6:.2f} M rows/s, peak RSS {$rss / 1024:.0f} MiB')"
    rm -f "$db" "$db"-* "$db.time"
  done
done
