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

# The CLI: internal headers only by the named list (scripts/tools_internal_includes.txt).
if [ -d tools ] && [ -f scripts/tools_internal_includes.txt ]; then
  declare -A TOOLS_OK=()
  while read -r f h; do
    [[ -z "$f" || "$f" == \#* ]] && continue
    TOOLS_OK["$f $h"]=1
  done < scripts/tools_internal_includes.txt
  while IFS= read -r hit; do
    file="${hit%%:*}"
    rest="${hit#*:}"
    line="${rest%%:*}"
    inc="$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$rest")"
    if [ -z "${TOOLS_OK["$file $inc"]:-}" ]; then
      echo "$file:$line: tools -> $inc: not on the list of internal headers the CLI may use (scripts/tools_internal_includes.txt); use <pbtree/...>"
      fail=1
    fi
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"(util|keys|page|node|btree|file|firebird)/' tools --include='*.h' --include='*.cc' || true)
fi

# Installed headers name no type or header that is not installed: no internal class or struct
# (declared under util keys page node btree file firebird tools and not in include/pbtree),
# and no path of an internal source file, in code or comments.
if [ -d include/pbtree ]; then
  public_names="$(grep -ohE '^[[:space:]]*(class|struct)[[:space:]]+[A-Z][A-Za-z0-9_]*' include/pbtree/*.h \
    | awk '{print $2}' | sort -u)"
  internal_names="$(grep -rohE '^(class|struct)[[:space:]]+[A-Z][A-Za-z0-9_]*[[:space:]]*(:|\{|final)' \
    util keys page node btree file firebird tools --include='*.h' 2>/dev/null \
    | awk '{print $2}' | tr -d ':{' | sort -u | comm -23 - <(echo "$public_names"))"
  for name in $internal_names; do
    while IFS= read -r hit; do
      echo "$hit: installed header names $name, which is not installed"
      fail=1
    done < <(grep -nwE "$name" include/pbtree/*.h || true)
  done
  while IFS= read -r hit; do
    echo "$hit: installed header cites a source file that is not installed"
    fail=1
  done < <(grep -nE '(^|[^a-z_/<])(util|keys|page|node|btree|file|firebird|tools|tests|perf|fuzz)/[a-z_]+\.(h|cc)' include/pbtree/*.h || true)
fi

if [ $fail != 0 ]; then
  echo "check_layers: include edges outside the table (docs/ARCHITECTURE.md)" >&2
  exit 1
fi
echo "check_layers: ok"
