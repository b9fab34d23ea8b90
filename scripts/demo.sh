#!/usr/bin/env bash
# Installs what the library and the CLI need, builds only them in Release (build/, no tests
# or benchmarks) and runs `pbtree demo`: the README's first command, as a script. Extra
# arguments go to the demo (e.g. --rows 100000).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --demo
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPBTREE_BUILD_TESTS=OFF -DPBTREE_BUILD_BENCH=OFF
cmake --build build -j2 --target pbtree_cli
build/bin/pbtree demo "$@"
