#!/usr/bin/env bash
# Fails (exit 1) if any tracked C++ source or header differs from what clang-format 14
# (Debian 12's version, pinned: another version formats differently) makes of it under
# .clang-format. Prints the files that differ. Usage: scripts/check_format.sh [file ...]
# (default: every tracked *.cc, *.h and *.cpp file). Fix with: clang-format-14 -i <file>.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format-14 >/dev/null; then
  echo "check_format.sh: clang-format-14 not found (Debian 12: apt-get install clang-format-14)" >&2
  exit 2
fi
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cpp')
fi
bad=()
for f in "${files[@]}"; do
  if ! clang-format-14 --dry-run -Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format.sh: ${#bad[@]} file(s) not formatted by clang-format-14 (.clang-format):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check_format.sh: ${#files[@]} files formatted"
