#!/usr/bin/env bash
# ctest firebird_stat_compare: builds real Firebird 3 databases (make_dbs.sh) at 4, 8 and
# 16 KiB pages, runs `fbstat -r` (and `fbstat -r -s` for the system tables) on each and
# compares the whole report body (table lines and index blocks), character for character, with
# `pbtree stat --firebird` (and `--system`); then check_what_if.py compares --what-if and
# import with `pbtree load` of the same rows, and corrupt_check.py runs damaged copies. Fails (exit 1) on any difference and when
# Firebird is missing (run scripts/install-deps.sh).
#
# usage: compare_stat.sh PBTREE_BINARY [SCRATCH_DIR]
# Rows: 10^6 in the 8 KiB database and 2*10^5 in the others (about 60 s in all);
# PBTREE_FIREBIRD_FULL=1 loads 10^6 rows at every page size (about 90 s).
set -euo pipefail

pbtree=$1
# Scratch in /dev/shm (RAM) when it has room: the databases take about 350 MB.
shm_free=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
if [ -z "${2:-}" ] && [ -w /dev/shm ] && [ "${shm_free:-0}" -gt 2000000 ]; then
  scratch=$(mktemp -d /dev/shm/pbtree-fb.XXXXXX)
else
  scratch=${2:-$(mktemp -d "${TMPDIR:-/tmp}/pbtree-fb.XXXXXX")}
fi
here=$(cd "$(dirname "$0")" && pwd)
cleanup() { rm -rf "$scratch"; }
trap cleanup EXIT

small=200000
[ "${PBTREE_FIREBIRD_FULL:-0}" = 1 ] && small=1000000
"$here/make_dbs.sh" "$scratch/big" 1000000 8192
"$here/make_dbs.sh" "$scratch/small" "$small" 4096 16384
export FIREBIRD_LOCK=$scratch/big/lock FIREBIRD=$scratch/big/root

# The report body: every table line and index block, from the line after "Analyzing database
# pages ..." to the one before "Gstat completion time" (pbtree prints only the body).
blocks() {
  if grep -q '^Analyzing database pages' "$1"; then
    sed -n '/^Analyzing database pages/,/^Gstat completion time/p' "$1" | sed '1d;$d'
  else
    cat "$1"
  fi
}

failures=0
for db in "$scratch/big/db8192.fdb" "$scratch/small/db4096.fdb" "$scratch/small/db16384.fdb"; do
  for mode in user system; do
    sw=(); [ $mode = system ] && sw=(-s)
    pw=(); [ $mode = system ] && pw=(--system)
    fbstat -r "${sw[@]}" "$db" > "$scratch/fbstat.txt"
    "$pbtree" stat --firebird "${pw[@]}" "$db" > "$scratch/pbtree.txt"
    blocks "$scratch/fbstat.txt" > "$scratch/a.txt"
    blocks "$scratch/pbtree.txt" > "$scratch/b.txt"
    n=$(grep -c '^    Index ' "$scratch/a.txt" || true)
    if [ "$n" -lt 1 ]; then
      echo "FAIL $db ($mode): fbstat printed no index block"; failures=$((failures + 1)); continue
    fi
    if diff -u "$scratch/a.txt" "$scratch/b.txt" > "$scratch/diff.txt"; then
      echo "ok   $(basename "$db") ($mode tables): every table line and $n index blocks equal to fbstat -r"
    else
      echo "FAIL $(basename "$db") ($mode tables): pbtree stat --firebird differs from fbstat -r:"
      head -60 "$scratch/diff.txt"
      failures=$((failures + 1))
    fi
  done
done
# One figure check that does not depend on the diff: the seed's unique 10^6-row index.
"$pbtree" stat --firebird --index UI_BID "$scratch/big/db8192.fdb" | grep -q 'nodes: 1000000$' ||
  { echo "FAIL UI_BID does not have 10^6 nodes"; failures=$((failures + 1)); }
# Progress lines (tools/progress.h): with --progress, the count-0 line and the final figure on
# stderr; without it (stderr a file, not a terminal), nothing.
"$pbtree" stat --firebird --progress --index UI_BID "$scratch/big/db8192.fdb" \
  2> "$scratch/progress.txt" > /dev/null
# Pages read: every page once, the descent may read the first page of a level once more.
read -r depth pages < <("$pbtree" stat --firebird --json --index UI_BID "$scratch/big/db8192.fdb" |
  sed -n 's/.*"depth":\([0-9]*\).*"index_pages":\([0-9]*\).*/\1 \2/p')
last=$(tr '\r' '\n' < "$scratch/progress.txt" | sed 's/ *$//' | tail -1)
first=$(tr '\r' '\n' < "$scratch/progress.txt" | head -1)
if [[ "$first" =~ ^"stat: index UI_BID: 0 / "[0-9,]+" pages (0%)"$ ]] &&
   [[ "$last" =~ ^"stat: index UI_BID: "[0-9,]+" / "[0-9,]+" pages ("[0-9]+"%)"$ ]] &&
   got=$(echo "$last" | sed 's/.*: \([0-9,]*\) \/.*/\1/' | tr -d ,) &&
   [ "$got" -ge "$pages" ] && [ "$got" -le $((pages + depth)) ]; then
  echo "ok   stat --firebird --progress: '$last' ($pages index pages)"
else
  echo "FAIL stat --firebird --progress: '$first' ... '$last' ($pages index pages)"; failures=$((failures + 1))
fi
"$pbtree" stat --firebird --what-if --progress --index UI_BID "$scratch/big/db8192.fdb" \
  2> "$scratch/progress.txt" > /dev/null
last=$(tr '\r' '\n' < "$scratch/progress.txt" | sed 's/ *$//' | tail -1)
if [ "$last" = "what-if: index UI_BID: 1,000,000 entries" ]; then
  echo "ok   stat --firebird --what-if --progress: '$last'"
else
  echo "FAIL stat --firebird --what-if --progress: '$last'"; failures=$((failures + 1))
fi
"$pbtree" stat --firebird --index UI_BID "$scratch/big/db8192.fdb" 2> "$scratch/progress.txt" > /dev/null
if [ ! -s "$scratch/progress.txt" ]; then echo "ok   stat --firebird without --progress: stderr empty"
else echo "FAIL stat --firebird without --progress wrote to stderr"; failures=$((failures + 1)); fi
# --levels: NULL entries of the COL indexes (ascending and descending) = the rows with NULL.
nulls=$(echo "select count(*) from t_seed where col is null;" |
  isql-fb -user SYSDBA -q "$scratch/big/db8192.fdb" | awk '$1 ~ /^[0-9]+$/ { print $1 }')
for ix in I_COL I_COL_DESC; do
  got=$("$pbtree" stat --firebird --levels --index $ix "$scratch/big/db8192.fdb" |
    sed -n 's/.*NULL entries: \([0-9]*\)$/\1/p')
  if [ "$got" = "$nulls" ]; then echo "ok   $ix --levels: $got NULL entries = isql count";
  else echo "FAIL $ix --levels: $got NULL entries, isql counts $nulls"; failures=$((failures + 1)); fi
done
# report: one section per index with a root, the leaf buckets fbstat printed.
"$pbtree" report "$scratch/small/db4096.fdb" -o "$scratch/report.html"
"$pbtree" stat --firebird "$scratch/small/db4096.fdb" > "$scratch/pbtree.txt"
want=$(grep -c 'Root page: [1-9]' "$scratch/pbtree.txt")
have=$(grep -c '<section class="index">' "$scratch/report.html")
leaves=$(sed -n 's/.*Root page: [1-9][0-9]*, depth: [0-9]*, leaf buckets: \([0-9]*\),.*/\1/p' "$scratch/pbtree.txt" | sort -n | tr '\n' ' ')
rleaves=$(sed -n 's|<tr><td>leaf buckets</td><td>\([0-9]*\)</td></tr>|\1|p' "$scratch/report.html" | sort -n | tr '\n' ' ')
if [ "$want" = "$have" ] && [ "$leaves" = "$rleaves" ] && ! grep -q '<script' "$scratch/report.html"; then
  echo "ok   report: $have index sections, leaf buckets as stat"
else
  echo "FAIL report: $have sections for $want indexes; leaves '$rleaves' vs '$leaves'"; failures=$((failures + 1))
fi
# --what-if and import against `pbtree load` of the same rows (BIGINT and NUMERIC indexes).
python3 "$here/check_what_if.py" "$pbtree" "$scratch/big/db8192.fdb" "$scratch/whatif" ||
  failures=$((failures + 1))
# Damaged copies of a small database: clean errors, never a crash.
"$here/make_dbs.sh" "$scratch/tiny" 20000 4096
python3 "$here/corrupt_check.py" "$pbtree" "$scratch/tiny/db4096.fdb" "$scratch/corrupt" ||
  failures=$((failures + 1))
echo "$failures failure(s)"
[ "$failures" = 0 ]
