#!/usr/bin/env bash
# Installs missing dependencies, builds pbtree in Release (build/) and runs `pbtree demo`.
# Extra arguments go to the demo (e.g. --rows 100000).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
build/bin/pbtree demo "$@"
