#!/usr/bin/env bash
# How fast the history database takes records in and answers a trend: bench/tools/history_speed
# writes record files of `train_step` records (copies of the bundled sweep's real ones) and times
# `upgradebench history add` of 100k records into a fresh SQLite file, then of 1M records, with
# `history trend` on each (goals: 100k added under 5 s, a trend over 1M under 200 ms). With
# PG_URL set (postgresql://...; an empty database), the same 100k into PostgreSQL.
#   bench/history_speed.sh OUT_DIR
#   UB=path/to/upgradebench  HISTORY_SPEED=path/to/history_speed  (else built from this tree, CPU only)
# Writes OUT_DIR/history_speed.jsonl, one JSON object per run, and prints them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: bench/history_speed.sh OUT_DIR}
mkdir -p "$out"
if [ -z "${UB:-}" ] || [ -z "${HISTORY_SPEED:-}" ]; then
  build=${BUILD:-$here/../build-cpu}
  cmake -S "$here/.." -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUB_WITH_CUDA=OFF > "$out/build.log"
  cmake --build "$build" --target upgradebench history_speed >> "$out/build.log"
  UB=${UB:-$build/upgradebench}
  HISTORY_SPEED=${HISTORY_SPEED:-$build/bench/tools/history_speed}
fi
sweep=$here/../data/examples/sweep_h200_llama-3.1-8b-4layers.jsonl
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$HISTORY_SPEED" "$UB" "$sweep" "$scratch/100k.sqlite" 100000 1 | tee -a "$out/history_speed.jsonl"
"$HISTORY_SPEED" "$UB" "$sweep" "$scratch/1m.sqlite" 1000000 10 | tee -a "$out/history_speed.jsonl"
if [ -n "${PG_URL:-}" ]; then
  "$HISTORY_SPEED" "$UB" "$sweep" "$PG_URL" 100000 1 | tee -a "$out/history_speed.jsonl"
fi
