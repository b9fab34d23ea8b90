#!/usr/bin/env bash
# Checks that the library's folders depend one way (docs/ARCHITECTURE.md): every
# `#include "dir/..."` of a file in a layer must name a layer that layer may use, and the
# public headers include/pbtree/*.h include only the standard library and each other.
# Usage: scripts/check_layers.sh [source root, default: the repository]. Exit 1 on any edge
# outside the table, listing each as "file:line: layer -> included".
set -euo pipefail
ROOT="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$ROOT"

# layer -> the layers its files may include ("..." headers). Everyone may include
# <pbtree/...> (include/pbtree) and the standard and third-party libraries.
declare -A ALLOWED=(
  [util]=""
  [keys]="util"
  [page]="util"
  [node]="util keys page"
  [btree]="util keys page node"
  [file]="util keys page node btree"
  [firebird]="util keys page node btree"
  [tools]="util keys page node btree file firebird tools"
)

fail=0
for layer in "${!ALLOWED[@]}"; do
  [ -d "$layer" ] || continue
  while IFS= read -r hit; do
    file="${hit%%:*}"
    rest="${hit#*:}"
    line="${rest%%:*}"
    inc="$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$rest")"
    dir="${inc%%/*}"
    [ "$dir" = "$layer" ] && continue
    ok=0
    for a in ${ALLOWED[$layer]}; do [ "$dir" = "$a" ] && ok=1; done
    if [ $ok = 0 ]; then
      echo "$file:$line: $layer -> $inc"
      fail=1
    fi
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$layer" --include='*.h' --include='*.cc' || true)
done

# Public headers: only <...> includes, and of our own only <pbtree/...>.
if [ -d include/pbtree ]; then
  while IFS= read -r hit; do
    echo "$hit: public header includes an internal header"
    fail=1
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' include/pbtree/*.h || true)
  while IFS= read -r hit; do
    echo "$hit: public header includes a library header of pbtree outside include/pbtree"
    fail=1
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+<(util|keys|page|node|btree|file|firebird|tools)/' include/pbtree/*.h || true)
fi

if [ $fail != 0 ]; then
  echo "check_layers: include edges outside the table (docs/ARCHITECTURE.md)" >&2
  exit 1
fi
echo "check_layers: ok"
