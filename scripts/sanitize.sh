#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer and UndefinedBehaviorSanitizer (float-to-integer casts
# out of range included): a build of its own without the GPU side (the CUDA libraries are not
# built for the sanitizers) nor the fuzz targets (sanitized already, and built by the test build),
# every CPU test but the browser rendering check (Chromium, not our code), every error fatal. Run
# before submitting a change; CI runs the plain suite.
#   scripts/sanitize.sh [BUILD_DIR]        default build-sanitize/ beside the sources
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-sanitize}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUB_WITH_CUDA=OFF -DUB_BUILD_TESTS=ON \
  -DUB_BUILD_FUZZERS=OFF -DUB_SANITIZE=ON > /dev/null
cmake --build "$build"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$build" -L cpu -E 'Fuzz|Browser' --output-on-failure -j "$(nproc)"
