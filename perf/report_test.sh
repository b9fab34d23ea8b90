#!/usr/bin/env bash
# perf/report_test.sh: report.py on one tiny benchmark result (ctest perf_report_links): the
# regenerated RESULTS.md ends with the link to perf/FIREBIRD_STAT.md (the hand-written
# stat --firebird vs fbstat -r figures) followed by that file's figures table, and that file
# holds the figures and the command.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/pbtree-report-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/run.json" <<'JSON'
{"context": {"date": "2026-12-03T00:00:00+00:00", "num_cpus": 2, "mhz_per_cpu": 2000},
 "benchmarks": [{"name": "batch_insert/pbtree/bigint.decimal128/100000/batch1000",
                 "run_name": "batch_insert/pbtree/bigint.decimal128/100000/batch1000",
                 "run_type": "iteration", "iterations": 1, "real_time": 11.15,
                 "cpu_time": 11.15, "time_unit": "ms", "items_per_second": 89700}]}
JSON
python3 "$here/report.py" --out "$tmp/RESULTS.md" --command "perf/report_test.sh" \
  "$tmp/run.json" >/dev/null
want='Firebird: `pbtree stat --firebird` against `fbstat -r` on a 2.3 GB Firebird 3 database (perf/fdb_stat_bench.sh, not run by this report): [perf/FIREBIRD_STAT.md](FIREBIRD_STAT.md)'
# The link, then the measurement paragraph and the figures table copied from the file.
got=$(grep -F -m 1 'Firebird: `pbtree stat --firebird`' "$tmp/RESULTS.md" || true)
if [ "$got" != "$want" ]; then
  echo "report_test: RESULTS.md lacks the link line: $got" >&2
  exit 1
fi
for line in '| cached | 6.27 s | 16.04 s | 0.39 | <= 0.5 | 7.3 MiB | 15.6 MiB |' \
  '| uncached | 11.48 s | 50.18 s | 0.23 | <= 1.0 | 7.3 MiB | 15.6 MiB |'; do
  if ! grep -qF -- "$line" "$tmp/RESULTS.md"; then
    echo "report_test: RESULTS.md lacks FIREBIRD_STAT.md's figure line: $line" >&2
    exit 1
  fi
done
if [ "$(tail -n 1 "$tmp/RESULTS.md")" != '| uncached | 11.48 s | 50.18 s | 0.23 | <= 1.0 | 7.3 MiB | 15.6 MiB |' ]; then
  echo "report_test: RESULTS.md does not end with the Firebird figures table" >&2
  exit 1
fi
if [ "$(grep -c 'FIREBIRD_STAT.md' "$tmp/RESULTS.md")" != 1 ]; then
  echo "report_test: RESULTS.md links FIREBIRD_STAT.md other than once" >&2
  exit 1
fi
for line in '`perf/fdb_stat_bench.sh build/bin/pbtree big.fdb 5` on the database of' \
  '| cached | 6.27 s | 16.04 s | 0.39 | <= 0.5 | 7.3 MiB | 15.6 MiB |' \
  '| uncached | 11.48 s | 50.18 s | 0.23 | <= 1.0 | 7.3 MiB | 15.6 MiB |'; do
  if ! grep -qF -- "$line" "$here/FIREBIRD_STAT.md"; then
    echo "report_test: perf/FIREBIRD_STAT.md lacks: $line" >&2
    exit 1
  fi
done
if ! grep -qxF -- "$want" "$here/RESULTS.md"; then
  echo "report_test: the committed perf/RESULTS.md lacks the link" >&2
  exit 1
fi
echo "report_test: RESULTS.md ends with the link to perf/FIREBIRD_STAT.md and its figures"
