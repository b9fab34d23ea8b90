#!/usr/bin/env bash
# Builds real Firebird 3 databases for the `pbtree stat --firebird` comparison test, with isql-fb
# in embedded mode (no server): a private FIREBIRD root whose firebird.conf allows external
# tables, so the seed rows load from a fixed-width text file (CREATE TABLE ... EXTERNAL FILE,
# INSERT ... SELECT).
#
# usage: make_dbs.sh OUTDIR ROWS PAGE_SIZE...
#   OUTDIR     scratch folder (created); writes OUTDIR/db<PAGE_SIZE>.fdb
#   ROWS       seed rows loaded into T_SEED (1..1000000, from data/seed/t_int.csv.zst)
#   PAGE_SIZE  4096, 8192 or 16384 (one database each)
#
# Tables of each database (columns derived from the seed's id, col):
#   T_SEED  ID integer PK, COL integer (NULL every 97th row), BID bigint unique, BCOL bigint,
#           D double, N numeric(18,2), V varchar(20) (NULL every 89th row); indexes built by
#           CREATE INDEX after the load: I_COL, I_COL_DESC (descending), UI_BID (unique),
#           I_BCOL, I_BCOL_DESC, I_D, I_N, I_V, I_COMP (COL, V), I_COMP_DESC (BCOL, D) desc.
#   T_INS   the same columns, indexes created first and then ROWS/10 rows inserted in COL
#           order (pages split by inserts, not bulk-built).
#   T_EMPTY one indexed column, no rows.
# Needs: isql-fb (firebird3.0-utils), firebird3.0-server-core, zstd, awk.
set -euo pipefail

out=$1; rows=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
seed=$here/../../data/seed/t_int.csv.zst
lib=/usr/lib/x86_64-linux-gnu/firebird/3.0
for tool in isql-fb fbstat gfix zstd awk; do
  command -v $tool >/dev/null || { echo "make_dbs.sh: $tool not found (run scripts/install-deps.sh)" >&2; exit 3; }
done
[ -e "$lib/plugins/libEngine12.so" ] || { echo "make_dbs.sh: $lib/plugins/libEngine12.so missing (firebird3.0-server-core; run scripts/install-deps.sh)" >&2; exit 3; }

mkdir -p "$out/root" "$out/lock"
for f in plugins intl firebird.msg plugins.conf lib UDF; do ln -sfn "$lib/$f" "$out/root/$f"; done
printf 'ExternalFileAccess = Full\nProviders = Engine12\n' > "$out/root/firebird.conf"
export FIREBIRD=$out/root FIREBIRD_LOCK=$out/lock

# Fixed-width rows: id (7 chars), col (7 chars), newline.
ext=$out/seed.txt
zstd -dc "$seed" | awk -F, -v n="$rows" 'NR <= n { printf "%7d%7d\n", $1, $2 }' > "$ext"

for ps in "$@"; do
  db=$out/db$ps.fdb
  rm -f "$db"
  # Create, then turn forced writes off (gfix -write async): the load needs no fsyncs.
  echo "create database '$db' page_size $ps; commit;" > "$out/create$ps.sql"
  isql-fb -user SYSDBA -q -i "$out/create$ps.sql"
  gfix -user SYSDBA -write async "$db"
  cat > "$out/make$ps.sql" <<SQL
set bail on;
connect '$db';
create table ext external file '$ext' (id char(7), col char(7), nl char(1));
create table t_seed (id integer not null primary key, col integer, bid bigint, bcol bigint,
  d double precision, n numeric(18,2), v varchar(20));
create table t_ins (id integer not null, col integer, bid bigint, bcol bigint,
  d double precision, n numeric(18,2), v varchar(20));
create table t_empty (x integer);
create index i_empty on t_empty (x);
create index t_ins_col on t_ins (col);
create descending index t_ins_bcol_desc on t_ins (bcol);
create index t_ins_v on t_ins (v);
create index t_ins_comp on t_ins (col, v);
commit;
insert into t_seed
  select cast(id as integer),
         iif(mod(cast(id as integer), 97) = 0, null, cast(col as integer)),
         cast(id as bigint) * 1000003,
         cast(col as bigint),
         cast(col as double precision) / 8,
         cast(col as numeric(18,2)) * 0.01,
         iif(mod(cast(id as integer), 89) = 0, null, 'k' || trim(col))
  from ext;
commit;
insert into t_ins
  select id, col, bid, bcol, d, n, v from t_seed where mod(id, 10) = 0 order by col, id;
commit;
create index i_col on t_seed (col);
create descending index i_col_desc on t_seed (col);
create unique index ui_bid on t_seed (bid);
create index i_bcol on t_seed (bcol);
create descending index i_bcol_desc on t_seed (bcol);
create index i_d on t_seed (d);
create index i_n on t_seed (n);
create index i_v on t_seed (v);
create index i_comp on t_seed (col, v);
create descending index i_comp_desc on t_seed (bcol, d);
commit;
drop table ext;
commit;
SQL
  isql-fb -user SYSDBA -q -i "$out/make$ps.sql"
done
