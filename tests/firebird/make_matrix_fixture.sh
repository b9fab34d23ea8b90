#!/usr/bin/env bash
# Builds the combination matrix's Firebird 3 fixture, tests/firebird/matrix_fb3.fdb.zst (made
# once with Debian's Firebird 3.0.11 and committed; tests/cli/combination_matrix_test.cc imports
# its indexes): 4 KiB pages, the tables and indexes pbtree-matrix-rows prints
# (tests/support/matrix_rows_main.cc), loaded with isql-fb in embedded mode as make_dbs.sh does.
#
# usage: make_matrix_fixture.sh PBTREE_MATRIX_ROWS_BINARY [OUT.fdb.zst]
# Needs isql-fb, gfix (firebird3.0-utils, firebird3.0-server-core) and zstd.
set -euo pipefail
rows_tool=$1
here=$(cd "$(dirname "$0")" && pwd)
out=${2:-$here/matrix_fb3.fdb.zst}
lib=/usr/lib/x86_64-linux-gnu/firebird/3.0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/pbtree-matrix-fb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/root" "$scratch/lock"
for f in plugins intl firebird.msg plugins.conf lib UDF; do ln -sfn "$lib/$f" "$scratch/root/$f"; done
printf 'Providers = Engine12\n' > "$scratch/root/firebird.conf"
export FIREBIRD=$scratch/root FIREBIRD_LOCK=$scratch/lock
db=$scratch/matrix.fdb
echo "create database '$db' page_size 4096; commit;" > "$scratch/create.sql"
isql-fb -user SYSDBA -q -i "$scratch/create.sql"
gfix -user SYSDBA -write async "$db"
"$rows_tool" "$db" > "$scratch/load.sql"
isql-fb -user SYSDBA -q -i "$scratch/load.sql"
gfix -user SYSDBA -sweep "$db"
zstd -q -19 -f "$db" -o "$out"
echo "wrote $out ($(stat -c %s "$out") bytes, database $(stat -c %s "$db") bytes)"
