#!/usr/bin/env bash
# ctest firebird_real_files: `pbtree stat --firebird` on databases made elsewhere.
#  - ../shared/data/firebird5/*.fdb.zst (Firebird 5.0.4, ODS 13.1): equal to the stored
#    `gstat -r` output, verbatim but for gstat's two clock lines ("Gstat execution time",
#    "Gstat completion time"). While pbtree prints no table lines (Total formats, records,
#    data pages, ...), those lines are left out of both sides; once it prints them, the whole
#    report is compared.
#  - ../shared/data/firebird-real/*: ODS 12.0 files equal to Debian's `fbstat -r` on a
#    scratch copy (fbstat writes to the file it reads) in the same way; ODS 11.x, 13.x and
#    RedDatabase files exit 0 with one index block per active index of RDB$INDICES (the
#    figures themselves are checked by invariants in the GoogleTest suite FdbRealFiles);
#    ODS 10 and InterBase files exit 1 with the message that names them.
# usage: compare_real.sh PBTREE_BINARY DATA_DIR [SCRATCH_DIR]
set -euo pipefail

pbtree=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
data=$(cd "$2" && pwd)
scratch=${3:-$(mktemp -d "${TMPDIR:-/tmp}/pbtree-fbreal.XXXXXX")}
cleanup() { rm -rf "$scratch"; }
trap cleanup EXIT
failures=0
passed=0

# The report without gstat's clock lines; without table lines when pbtree prints none.
view() {
  local tables=$2
  grep -v -E '^Gstat (execution|completion) time' "$1" |
    if [ "$tables" = 1 ]; then cat; else
      awk '
        /^Analyzing database pages/ { body = 1; print; next }
        !body { print; next }
        /^[^ \t]/ { print; next }                      # table name line
        /^    Primary pointer page:/ { print; next }
        /^    Index / { p = 1 }
        p { print }
        /^$/ { p = 0 }'
    fi
}

compare() {  # compare NAME EXPECTED ACTUAL
  local tables=0
  grep -q '^    Total formats:' "$3" && tables=1
  view "$2" "$tables" > "$scratch/a.txt"
  view "$3" "$tables" > "$scratch/b.txt"
  local n
  n=$(grep -c '^    Index ' "$scratch/a.txt" || true)
  if diff -u "$scratch/a.txt" "$scratch/b.txt" > "$scratch/diff.txt"; then
    echo "ok   $1: equal ($n index blocks$([ $tables = 1 ] && echo ', table lines too'))"
    passed=$((passed + 1))
  else
    echo "FAIL $1 differs:"
    head -40 "$scratch/diff.txt"
    failures=$((failures + 1))
  fi
}

# Firebird 5's own gstat -r, stored beside each database (its Database line names the file
# as given: run from the copy's directory with the bare file name).
for z in "$data"/firebird5/fb5_small_*.fdb.zst; do
  base=$(basename "$z" .fdb.zst)
  zstd -q -dc "$z" > "$scratch/$base.fdb"
  (cd "$scratch" && "$pbtree" stat --firebird "$base.fdb") > "$scratch/pb.txt"
  compare "firebird5/$base" "$data/firebird5/$base.gstat-r.txt" "$scratch/pb.txt"
  rm -f "$scratch/$base.fdb"
done

export FIREBIRD_LOCK=$scratch/lock
mkdir -p "$FIREBIRD_LOCK"
for f in "$data"/firebird-real/*.FDB "$data"/firebird-real/*.GDB "$data"/firebird-real/*.fdb; do
  [ -f "$f" ] || continue
  name=$(basename "$f")
  word=$(od -An -tu2 -j18 -N2 "$f" | tr -d ' ')
  major=$((word & 0x7FFF))
  set +e
  "$pbtree" stat --firebird "$f" > "$scratch/pb.txt" 2> "$scratch/err.txt"
  rc=$?
  set -e
  if [ $((word & 0x8000)) = 0 ]; then
    want="an InterBase 6 / Firebird 1.x database (ODS 10.0)"
    [ "$word" -gt 10 ] && want="an InterBase database (ODS $word)"
    if [ $rc = 1 ] && grep -qF "$want; pbtree reads ODS 11.0-11.2" "$scratch/err.txt"; then
      echo "ok   $name: exit 1, '$want'"; passed=$((passed + 1))
    else
      echo "FAIL $name: exit $rc, $(head -1 "$scratch/err.txt")"; failures=$((failures + 1))
    fi
    continue
  fi
  if [ $rc != 0 ]; then
    echo "FAIL $name: exit $rc: $(head -1 "$scratch/err.txt")"; failures=$((failures + 1)); continue
  fi
  if [ "$word" = $((0x800C)) ] && command -v fbstat > /dev/null; then
    cp "$f" "$scratch/copy.fdb"
    chmod u+w "$scratch/copy.fdb"
    "$pbtree" stat --firebird "$scratch/copy.fdb" > "$scratch/pb.txt"
    fbstat -r "$scratch/copy.fdb" > "$scratch/fb.txt" 2>&1
    compare "$name (ODS 12, fbstat -r)" "$scratch/fb.txt" "$scratch/pb.txt"
    rm -f "$scratch/copy.fdb"
    continue
  fi
  blocks=$(grep -c '^    Index ' "$scratch/pb.txt" || true)
  ods=$(sed -n 's/^\tODS version\t\t//p' "$scratch/pb.txt")
  if [ "$blocks" -ge 1 ]; then
    echo "ok   $name: ODS $ods (word $(printf 0x%04x "$word")), exit 0, $blocks index blocks"
    passed=$((passed + 1))
  else
    echo "FAIL $name: no index block"; failures=$((failures + 1))
  fi
done
echo "$passed passed, $failures failure(s)"
[ "$failures" = 0 ]
