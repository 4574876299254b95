#!/usr/bin/env bash
# End-of-session check on the device: the final tree builds there, its GPU tests pass, and each
# GPU command runs once (after the refactors that followed the measurements).
set -uo pipefail
source bench/device/common.sh
ub_build || exit 1
W=$(mktemp -d)
ub_gpu_tests "$W"
grep -E "Passed|Skipped|Failed" "$W/gpu_tests.log" | sed 's/ *Test *#[0-9]*: / /' | head -40
$UB env | head -3
$UB bandwidth --sizes 4G --out "$W/bw.jsonl" 2>/dev/null | grep -E "GiB"
$UB mamf --m 4096 --n 4096 --k 8192 --warmup-s 2 --out "$W/m.jsonl" 2>/dev/null | grep -E "4096x4096|median:"
$UB mamf --dtype fp8 --m 4096 --n 4096 --k 8192 --warmup-s 1 --out "$W/m8.jsonl" 2>/dev/null | grep -E "median:"
$UB compare "$W/m.jsonl" "$W/m.jsonl" | head -6
cp "$W/gpu_tests.log" "$OUT/gpu_tests_final.log"
