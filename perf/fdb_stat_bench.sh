#!/usr/bin/env bash
# `pbtree stat --firebird` against Debian's Firebird 3 `fbstat -r` on one database (made by
# perf/make_big_fdb.sh): wall time and peak RSS (/usr/bin/time -v) of RUNS interleaved runs
# with the file in the page cache (median), then RUNS runs each after dropping the file's
# pages from the cache (posix_fadvise POSIX_FADV_DONTNEED on the file, no root needed, other
# users' cache untouched). Not run in CI. Prints one line per run and a summary.
#
# usage: fdb_stat_bench.sh PBTREE_BINARY DB.fdb [RUNS]    (RUNS: 5)
# The embedded Firebird needs FIREBIRD (a root with firebird.conf) and FIREBIRD_LOCK: the
# ones make_big_fdb.sh leaves beside the database are used.
set -euo pipefail
pbtree=$1; db=$2; runs=${3:-5}
dir=$(cd "$(dirname "$db")" && pwd)
export FIREBIRD=$dir/root FIREBIRD_LOCK=$dir/lock
out=$(mktemp -d "${TMPDIR:-/tmp}/fdb-bench.XXXXXX")
trap 'rm -rf "$out"' EXIT
drop() { sync "$db"; python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$db"; }
one() {  # TOOL MODE -> "wall_s rss_kib"
  local tool=$1
  if [ "$tool" = pbtree ]; then
    /usr/bin/time -v "$pbtree" stat --firebird "$db" > "$out/pbtree.txt" 2> "$out/time.txt"
  else
    /usr/bin/time -v fbstat -r "$db" > "$out/fbstat.txt" 2> "$out/time.txt"
  fi
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s }' "$out/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$out/time.txt")
  echo "$wall $rss"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "file: $db ($(stat -c %s "$db") bytes); load: $(uptime | sed 's/.*load average: //')"
cat "$db" > /dev/null  # warm
for mode in cached uncached; do
  : > "$out/p.$mode"; : > "$out/f.$mode"
  for i in $(seq "$runs"); do
    for tool in pbtree fbstat; do
      [ $mode = uncached ] && drop
      r=$(one $tool)
      echo "$r" >> "$out/${tool:0:1}.$mode"
      echo "$mode run $i $tool: wall ${r% *} s, peak RSS ${r#* } KiB"
    done
  done
  pw=$(cut -d' ' -f1 "$out/p.$mode" | median); fw=$(cut -d' ' -f1 "$out/f.$mode" | median)
  pr=$(cut -d' ' -f2 "$out/p.$mode" | sort -n | tail -1); fr=$(cut -d' ' -f2 "$out/f.$mode" | sort -n | tail -1)
  echo "SUMMARY $mode: pbtree median wall $pw s (max RSS $pr KiB), fbstat -r median wall $fw s (max RSS $fr KiB), ratio $(awk -v a="$pw" -v b="$fw" 'BEGIN { printf "%.2f", a / b }')"
done
echo "load after: $(uptime | sed 's/.*load average: //')"
# The two reports' bodies must be equal (a benchmark of a wrong answer is no benchmark).
sed -n '/^Analyzing database pages/,/^Gstat completion time/p' "$out/fbstat.txt" | sed '1d;$d' > "$out/a.txt"
sed -n '/^Analyzing database pages/,/^Gstat completion time/p' "$out/pbtree.txt" | sed '1d;$d' > "$out/b.txt"
if diff -q "$out/a.txt" "$out/b.txt" > /dev/null; then echo "reports equal"; else echo "REPORTS DIFFER"; diff "$out/a.txt" "$out/b.txt" | head -20; fi
