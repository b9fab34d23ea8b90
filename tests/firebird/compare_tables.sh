#!/usr/bin/env bash
# ctest firebird_table_compare: `pbtree stat --firebird` against the real gstat on databases
# other people made, every line of the report body (table lines and index blocks, from the
# line after "Analyzing database pages ..." to the one before "Gstat completion time"):
#   - each ODS 12.0 file of DATA/firebird-real (header word 0x800c, minor 0) against Debian's
#     Firebird 3 `fbstat -r` and `fbstat -r -s` run on a scratch copy (fbstat writes to the
#     file it reads);
#   - each DATA/firebird5/*.fdb.zst (ODS 13.1) against its stored `gstat -r` and `gstat -r -s`
#     output of Firebird 5.0.4 (FB5=0 leaves them out).
# Fails (exit 1) on any difference and when fbstat is missing (scripts/install-deps.sh).
#
# usage: compare_tables.sh PBTREE_BINARY DATA_DIR      (DATA_DIR: ../shared/data)
set -euo pipefail
pbtree=$1; data=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/pbtree-real.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
command -v fbstat >/dev/null || { echo "compare_tables.sh: fbstat not found (run scripts/install-deps.sh)" >&2; exit 1; }
lib=/usr/lib/x86_64-linux-gnu/firebird/3.0
mkdir -p "$scratch/root" "$scratch/lock"
for f in plugins intl firebird.msg plugins.conf lib UDF; do ln -sfn "$lib/$f" "$scratch/root/$f"; done
printf 'Providers = Engine12\n' > "$scratch/root/firebird.conf"
export FIREBIRD=$scratch/root FIREBIRD_LOCK=$scratch/lock

body() { sed -n '/^Analyzing database pages/,/^Gstat completion time/p' "$1" | sed '1d;$d'; }
failures=0; checked=0
compare() {  # NAME MODE EXPECTED_REPORT PBTREE_ARGS...
  local name=$1 mode=$2 want=$3; shift 3
  body "$want" > "$scratch/a.txt"
  if ! "$pbtree" stat --firebird "$@" > "$scratch/out.txt" 2> "$scratch/err.txt"; then
    echo "FAIL $name ($mode): pbtree: $(cat "$scratch/err.txt")"; failures=$((failures + 1)); return
  fi
  body "$scratch/out.txt" > "$scratch/b.txt"
  local tables indexes
  tables=$(grep -c '^    Primary pointer page' "$scratch/a.txt" || true)
  indexes=$(grep -c '^    Index ' "$scratch/a.txt" || true)
  if [ "$tables" -lt 1 ]; then
    echo "FAIL $name ($mode): the reference lists no table"; failures=$((failures + 1)); return
  fi
  if diff -u "$scratch/a.txt" "$scratch/b.txt" > "$scratch/diff.txt"; then
    echo "ok   $name ($mode): $tables table blocks, $indexes index blocks equal"
    checked=$((checked + 1))
  else
    echo "FAIL $name ($mode): differs:"; head -40 "$scratch/diff.txt"; failures=$((failures + 1))
  fi
}

for f in "$data"/firebird-real/*; do
  case $f in *.md) continue ;; esac
  word=$(od -An -tx2 -j18 -N2 "$f" | tr -d ' '); minor=$(od -An -tu2 -j64 -N2 "$f" | tr -d ' ')
  [ "$word" = 800c ] && [ "$minor" = 0 ] || continue
  copy=$scratch/$(basename "$f"); cp "$f" "$copy"; chmod u+w "$copy"
  fbstat -r "$copy" > "$scratch/fb.txt" 2>&1
  fbstat -r -s "$copy" > "$scratch/fbs.txt" 2>&1
  compare "$(basename "$f")" "fbstat -r" "$scratch/fb.txt" "$copy"
  compare "$(basename "$f")" "fbstat -r -s" "$scratch/fbs.txt" --system "$copy"
done
if [ "${FB5:-1}" = 1 ]; then
  for z in "$data"/firebird5/*.fdb.zst; do
    base=${z%.fdb.zst}; db=$scratch/$(basename "$base").fdb
    zstd -qdc "$z" > "$db"
    compare "$(basename "$base")" "gstat -r" "$base.gstat-r.txt" "$db"
    compare "$(basename "$base")" "gstat -r -s" "$base.gstat-r-s.txt" --system "$db"
    rm -f "$db"
  done
fi
# Progress lines (tools/progress.h) of the data pass and the index walks with --progress: the
# data pages the pointer pages list (13 in EMPLOYEE.FDB), then the index pages walked.
emp=$data/firebird-real/jvelilla__eiffel_firebird__EMPLOYEE.FDB
"$pbtree" stat --firebird --progress "$emp" 2> "$scratch/progress.txt" > /dev/null
lines=$(tr '\r' '\n' < "$scratch/progress.txt" | sed 's/ *$//' | grep -v '^$' | sort -u | tr '\n' '|')
if [ "$lines" = "stat: data pages: 0 / 13 pages (0%)|stat: data pages: 13 / 13 pages (100%)|stat: index pages: 0 pages|stat: index pages: 76 pages|" ]; then
  echo "ok   --progress: data pages 13 / 13, index pages 76"
else
  echo "FAIL --progress: '$lines'"; failures=$((failures + 1))
fi
echo "$checked report(s) equal, $failures failure(s)"
[ "$failures" = 0 ] && [ "$checked" -gt 0 ]
