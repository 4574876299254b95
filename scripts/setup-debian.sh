#!/usr/bin/env bash
# Installs what upgradebench needs on a fresh Debian 12 machine, from Debian's packages and (for
# the HTML report's charting libraries) the npm registry. As root, or through sudo.
#   (no argument)  to build and run: compiler, CMake, CLI11, nlohmann-json, fmt, zlib, the SQLite and
#                  PostgreSQL client libraries (the history database), OpenSSL's libcrypto (the
#                  rendezvous' proofs of the job secret), gnuplot, Vega
#   --test         also what the tests use: GoogleTest, Chromium (the report's rendering test),
#                  clang with libFuzzer (the log readers' fuzz targets), a PostgreSQL server (the
#                  history's tests start their own in a temporary folder)
# CUDA (nvcc, cuBLAS, cuBLASLt) is not a Debian package here: where /usr/local/cuda is installed the GPU
# side is built, elsewhere it is left out and the GPU commands say so.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
pkgs="cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libfmt-dev zlib1g-dev libsqlite3-dev libpq-dev libssl-dev gnuplot-nox"
[ "${1:-}" = --test ] && pkgs="$pkgs libgtest-dev chromium clang libclang-rt-14-dev postgresql"
command -v npm >/dev/null || pkgs="$pkgs nodejs npm"
$sudo apt-get update
# shellcheck disable=SC2086
$sudo apt-get install -y --no-install-recommends $pkgs
npm ci --prefix "$root/web" --no-audit --no-fund --loglevel=error
