#!/usr/bin/env bash
# Installs missing dependencies, builds pbtree in Release (build/), runs every test with
# ctest, then the Firebird seed check (../shared/checks/seed-firebird-check.py) if present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPBTREE_BUILD_TESTS=ON -DPBTREE_BUILD_BENCH=ON
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2
if [ -f ../shared/checks/seed-firebird-check.py ]; then
  python3 ../shared/checks/seed-firebird-check.py build/bin/pbtree
else
  echo "test.sh: ../shared/checks/seed-firebird-check.py not found; seed check skipped"
fi
