#!/usr/bin/env bash
# Self-test of scripts/check_layers.sh: copies the library folders to a temporary directory,
# adds one forbidden include (util/ -> btree/) and expects the check to fail on it; then adds
# an internal include to a public header and expects a failure again.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
for d in util keys page node btree file firebird tools include; do cp -r "$ROOT/$d" "$TMP/"; done
"$ROOT/scripts/check_layers.sh" "$TMP" >/dev/null || { echo "selftest: clean copy fails"; exit 1; }
echo '#include "btree/btree.h"' >> "$TMP/util/bytes.h"
if out="$("$ROOT/scripts/check_layers.sh" "$TMP" 2>&1)"; then
  echo "selftest: a forbidden include (util -> btree) passed the check"; exit 1
fi
grep -q 'util/bytes.h:.*util -> btree/btree.h' <<<"$out" || { echo "selftest: edge not named: $out"; exit 1; }
sed -i '$d' "$TMP/util/bytes.h"
echo '#include "page/wal.h"' >> "$TMP/include/pbtree/types.h"
if "$ROOT/scripts/check_layers.sh" "$TMP" >/dev/null 2>&1; then
  echo "selftest: an internal include in a public header passed the check"; exit 1
fi
echo "check_layers selftest: ok"
