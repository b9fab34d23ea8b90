#!/usr/bin/env bash
# Firebird 3's depth for one-by-one inserts (issue 30 item 3's oracle): inserts the keys of
# KEYS (one hex string per line, in file order, each its own INSERT) into a VARCHAR(LENGTH)
# CHARACTER SET OCTETS column whose ascending index exists before the first row, in a new
# database of PAGE_SIZE bytes (isql-fb embedded, as make_dbs.sh drives it), then prints the
# depth `fbstat -r` reports for that index (one number on stdout).
#
# usage: insert_depth.sh KEYS LENGTH PAGE_SIZE SCRATCH_DIR
# Exit 3 when Firebird is missing (run scripts/install-deps.sh), 1 on any other failure.
set -euo pipefail
keys=$1; length=$2; ps=$3; out=$4
lib=/usr/lib/x86_64-linux-gnu/firebird/3.0
for tool in isql-fb fbstat gfix; do
  command -v $tool >/dev/null || { echo "insert_depth.sh: $tool not found (run scripts/install-deps.sh)" >&2; exit 3; }
done
[ -e "$lib/plugins/libEngine12.so" ] || { echo "insert_depth.sh: $lib/plugins/libEngine12.so missing (run scripts/install-deps.sh)" >&2; exit 3; }
mkdir -p "$out/root" "$out/lock"
for f in plugins intl firebird.msg plugins.conf lib UDF; do ln -sfn "$lib/$f" "$out/root/$f"; done
printf 'Providers = Engine12\n' > "$out/root/firebird.conf"
export FIREBIRD=$out/root FIREBIRD_LOCK=$out/lock
db=$out/depth.fdb
rm -f "$db"
echo "create database '$db' page_size $ps; commit;" > "$out/create.sql"
isql-fb -user SYSDBA -q -i "$out/create.sql" >&2
gfix -user SYSDBA -write async "$db" >&2
{
  echo "set bail on;"
  echo "connect '$db';"
  echo "create table t (k varchar($length) character set octets);"
  echo "create index i_k on t (k);"
  echo "commit;"
  awk '{ printf "insert into t values (x'"'"'%s'"'"');\n", $0 }' "$keys"
  echo "commit;"
} > "$out/insert.sql"
isql-fb -user SYSDBA -q -i "$out/insert.sql" >&2
fbstat -r "$db" | sed -n 's/.*Root page: [0-9]*, depth: \([0-9]*\),.*/\1/p' | head -1
