#!/usr/bin/env bash
# Self-test of scripts/check_docs.py: copies the tree (its tracked and untracked, not ignored
# files; about 22 MB) to a temporary directory,
# expects the copy to pass, then good citations (globs, braces, sections, links) to pass, then
# plants bad citations and expects exactly one `file:line: what` per bad one; last, that
# --extract-library-blocks writes LIBRARY.md's C++ block.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
TREE="$TMP/tree"
mkdir "$TREE"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
    python3 -c 'import os, sys; sys.stdout.write("".join(f + "\0" for f in sys.stdin.read().split("\0") if os.path.isfile(f)))' |
    tar --null -T - -cf -) | tar -C "$TREE" -xf -
else
  tar -C "$ROOT" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$TREE" -xf -
fi
CHECK=("python3" "$ROOT/scripts/check_docs.py" "$TREE")
"${CHECK[@]}" >/dev/null || { echo "selftest: the clean copy fails:"; "${CHECK[@]}"; exit 1; }

# Good citations first: they must pass.
good() { printf '%s\n' "$2" >>"$TREE/$1"; }
good util/coding.h '// Tested by tests/cli/*_test.cc; codecs node/{node,jump_table}.h; FORMAT.md §3.6 and "Log file".'
good util/coding.h '// Firebird v5.0.4 src/jrd/btr.cpp and ../shared/data/seed (the data), 10 keys/s.'
good docs/ARCHITECTURE.md 'See [the log](FORMAT.md#32-log-file-db-wal) and docs/LIBRARY.md §6.'
out="$("${CHECK[@]}" 2>&1)" || { echo "selftest: good citations fail: $out"; exit 1; }

# bad FILE LINE_TEXT PATTERN: LINE_TEXT appended to FILE must give a problem matching PATTERN.
patterns=()
bad() {
  printf '%s\n' "$2" >>"$TREE/$1"
  patterns+=("$3")
}
bad docs/ARCHITECTURE.md 'The writer lives in `page/no_such_writer.cc`.' \
  '^docs/ARCHITECTURE.md:[0-9]+: `page/no_such_writer.cc` does not exist'
bad README.md 'The log format is in docs/FORMAT.md §3.9.' '^README.md:[0-9]+: §3.9: docs/FORMAT.md has no section 3.9'
bad docs/ARCHITECTURE.md 'Errors: LIBRARY.md §9.' '^docs/ARCHITECTURE.md:[0-9]+: §9: docs/LIBRARY.md has no section 9'
bad docs/ARCHITECTURE.md 'Old numbering: FORMAT.md §3.3a.' 'docs/FORMAT.md has no section 3.3a'
bad docs/ARCHITECTURE.md 'See FORMAT.md "No such section".' 'has no section named "No such section"'
bad docs/ARCHITECTURE.md 'See [the format](NOFORMAT.md).' 'link `NOFORMAT.md`: docs/NOFORMAT.md does not exist'
bad docs/ARCHITECTURE.md 'See [the log](FORMAT.md#no-such-heading).' 'has no heading #no-such-heading'
bad util/coding.h '// Rules: ../shared/reference/firebird-format.md §1.2.' \
  '^util/coding.h:[0-9]+: `../shared/reference/firebird-format.md` is outside the repository'
bad util/coding.h '// Rules: firebird-format.md §2.4.' '^util/coding.h:[0-9]+: `firebird-format.md` is not in the repository'
bad util/coding.h '// Tested by tests/util/*_nothing_test.cc.' '`tests/util/\*_nothing_test.cc` matches no file'
bad util/coding.h '// Codecs: node/{node,no_such_node}.h.' '`node/no_such_node.h` does not exist'
bad util/coding.h '// Where bytes are cut (§7.1).' '^util/coding.h:[0-9]+: §7.1: docs/FORMAT.md has no section 7.1'
bad util/coding.h '// See docs/FORMAT.md 2.77.' '^util/coding.h:[0-9]+: docs/FORMAT.md 2.77: docs/FORMAT.md has no section 2.77'
bad scripts/demo.sh '# Reads data/no_such_set/x.csv.' '^scripts/demo.sh:[0-9]+: `data/no_such_set/x.csv` does not exist'
bad CMakeLists.txt '# Layers: scripts/check_no_layers.sh' '^CMakeLists.txt:[0-9]+: `scripts/check_no_layers.sh` does not exist'
bad docs/ARCHITECTURE.md $'\nThis is `util/coding.h`:\n\n```cpp\n// not the file\n```' \
  '^docs/ARCHITECTURE.md:[0-9]+: block differs from `util/coding.h` at its line 1'
if out="$("${CHECK[@]}" 2>&1)"; then
  echo "selftest: bad citations pass"; exit 1
fi
for p in "${patterns[@]}"; do
  grep -Eq -- "$p" <<<"$out" || { echo "selftest: expected /$p/ in: $out"; exit 1; }
done
n="$(grep -Ec '^[^ ]+:[0-9]+: ' <<<"$out" || true)"
[ "$n" -eq "${#patterns[@]}" ] || { echo "selftest: ${#patterns[@]} problems planted, $n reported: $out"; exit 1; }

python3 "$ROOT/scripts/check_docs.py" --extract-library-blocks "$TMP/blocks" "$TREE" >/dev/null
grep -q '#include <pbtree/pbtree.h>' "$TMP/blocks/block_01.cc" ||
  { echo "selftest: block_01.cc is not LIBRARY.md's first program"; exit 1; }
echo "check_docs selftest: ok"
