#!/usr/bin/env bash
# Builds a ~2 GB Firebird 3 database (ODS 12.0, 8 KiB pages) for the `pbtree stat --firebird`
# vs `fbstat -r` benchmark (perf/fdb_stat_bench.sh). Not run in CI: it takes several minutes and
# about 3.5 GB of scratch disk. Uses isql-fb in embedded mode (no server) as
# tests/firebird/make_dbs.sh does: rows come from a fixed-width external file.
#
# usage: make_big_fdb.sh OUTDIR [ROWS]
#   writes OUTDIR/big.fdb; ROWS defaults to 10^7.
# Table T_BIG: ID integer primary key, COL integer (pseudo-random, duplicates), BID bigint
# unique, D double, V varchar(120) (pseudo-random text from a pool, little RLE gain).
# Indexes: the primary key, I_COL, UI_BID, I_D, all built by CREATE INDEX after the load.
set -euo pipefail
out=$1; rows=${2:-10000000}
lib=/usr/lib/x86_64-linux-gnu/firebird/3.0
for tool in isql-fb gfix awk; do
  command -v $tool >/dev/null || { echo "make_big_fdb.sh: $tool not found" >&2; exit 3; }
done
mkdir -p "$out/root" "$out/lock"
for f in plugins intl firebird.msg plugins.conf lib UDF; do ln -sfn "$lib/$f" "$out/root/$f"; done
printf 'ExternalFileAccess = Full\nProviders = Engine12\nTempCacheLimit = 512M\n' > "$out/root/firebird.conf"
export FIREBIRD=$out/root FIREBIRD_LOCK=$out/lock
ext=$out/rows.txt
# Fixed width: id (10), col (10), v (120), newline. v = 3 pieces of a pool of 997 random
# 40-character strings picked from id.
awk -v n="$rows" 'BEGIN {
  srand(12345); chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -";
  for (i = 0; i < 997; i++) { s = ""; for (j = 0; j < 40; j++) s = s substr(chars, int(rand() * 64) + 1, 1); pool[i] = s }
  x = 7;
  for (id = 1; id <= n; id++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    printf "%10d%10d%s%s%s\n", id, x % n + 1, pool[id % 997], pool[(id * 7) % 997], pool[x % 997]
  } }' > "$ext"
db=$out/big.fdb
rm -f "$db"
echo "create database '$db' page_size 8192; commit;" > "$out/create.sql"
isql-fb -user SYSDBA -q -i "$out/create.sql"
gfix -user SYSDBA -write async "$db"
cat > "$out/make.sql" <<SQL
set bail on;
connect '$db';
create table ext external file '$ext' (id char(10), col char(10), v char(120), nl char(1));
create table t_big (id integer not null, col integer, bid bigint, d double precision,
  v varchar(120));
commit;
insert into t_big select cast(id as integer), cast(col as integer),
  cast(id as bigint) * 1000003, cast(col as double precision) / 8, v from ext;
commit;
alter table t_big add constraint pk_big primary key (id);
create index i_col on t_big (col);
create unique index ui_bid on t_big (bid);
create index i_d on t_big (d);
commit;
drop table ext;
commit;
SQL
isql-fb -user SYSDBA -q -i "$out/make.sql"
rm -f "$ext"
ls -l "$db"
