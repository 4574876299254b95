#!/usr/bin/env bash
# Device call 1 for issue 4: build, GPU tests, and a smoke run of env / bandwidth / mamf.
set -uo pipefail
source bench/device/common.sh
ub_build || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,memory.total --format=csv
$UB env | tee "$OUT/env.txt"
ub_gpu_tests "$OUT"
$UB bandwidth --sizes 16M,256M,1G,4G --out "$OUT/bandwidth.jsonl"
$UB mamf --m 4096 8192 --n 4096 8192 --k 8192 --warmup-s 5 --out "$OUT/mamf_bf16.jsonl"
$UB mamf --dtype fp8 --m 8192 --n 8192 --k 8192 --warmup-s 2 --out "$OUT/mamf_fp8.jsonl"
$UB mamf --dtype nvfp4 --m 4096 --n 4096 --k 4096; echo "nvfp4 rc=$?"
python3 bench/peers/bandwidth_peer.py
python3 bench/peers/mamf_peer.py --m 4096 8192 --n 4096 8192 --k 8192 --warmup-s 5
