#!/usr/bin/env bash
# Device call 6 for issue 4 (kind nvidia-h200-x2): the final build's GPU tests, then both GPUs
# measured at the same time (--devices all) for mamf and bandwidth.
set -uo pipefail
source bench/device/common.sh
ub_build || exit 1
W=$(mktemp -d)
nvidia-smi -L
ub_gpu_tests "$W"
$UB mamf --devices all --warmup-s 5 --out "$W/mamf_x2.jsonl" > "$W/mamf_x2.txt" 2> "$W/mamf_x2.err"
echo "mamf rc=$?"; sed -n '/Per GPU/,$p' "$W/mamf_x2.txt"
$UB bandwidth --devices all --sizes 4G --out "$W/bw_x2.jsonl" > "$W/bw_x2.txt" 2>/dev/null
echo "bandwidth rc=$?"; cat "$W/bw_x2.txt"
tar czf "$OUT/issue4_x2.tgz" -C "$W" .
