#!/usr/bin/env bash
# Installs the Debian 12 packages pbtree needs to build, test and benchmark, but only those
# not installed yet (apt-get update runs only if something is missing). Non-interactive;
# run as root (or with sudo available).
# Usage: scripts/install-deps.sh [--demo | --bench]
#   --demo: only what building the library and the CLI needs (the README's first command)
#   --bench: adds what the benchmark runs and the report need beyond the tests: fio,
#            matplotlib, and chromium to look at perf/results.html
set -euo pipefail

# The library and the CLI (-DPBTREE_BUILD_TESTS=OFF -DPBTREE_BUILD_BENCH=OFF).
DEMO_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libtbb-dev libzstd-dev zstd libcli11-dev libfmt-dev nlohmann-json3-dev libisal-dev
)
PACKAGES=(
  "${DEMO_PACKAGES[@]}"
  libgtest-dev libgmock-dev googletest libbenchmark-dev python3
  # benchmark peers
  libsqlite3-dev liblmdb-dev libabsl-dev librocksdb-dev
  # libFuzzer targets (fuzz/, PBTREE_FUZZ): clang 14 and its runtime (fuzzer, sanitizers)
  clang libclang-rt-14-dev llvm
  # scripts/check_format.sh (CI): the pinned formatter
  clang-format-14
  # real Firebird 3.0.11 for tests/firebird (isql-fb, fbstat, gfix; embedded engine, no server)
  firebird3.0-server-core firebird3.0-utils
)

if [ "${1:-}" = "--demo" ]; then
  PACKAGES=("${DEMO_PACKAGES[@]}")
elif [ "${1:-}" = "--bench" ]; then
  # perf/memory_limited.sh (disk's random read rate) and perf/report.py's charts; chromium
  # renders perf/results.html headless to check it
  PACKAGES+=(fio python3-matplotlib chromium)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
