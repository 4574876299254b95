#!/bin/bash
# Issue 6, first device call: build, the training engine's GPU tests, one short train run.
source bench/device/common.sh
ub_build || exit 1
mkdir -p "$OUT/smoke"
ub_gpu_tests "$OUT/smoke" 'Llama|TrainCli'
grep -E "gradient |loss " "$OUT/smoke/gpu_tests.log" | head -40
$UB train --model llama-3.1-8b --layers 4 --seqlen 4k --steps 3 --warmup 1 --mem-debug \
  --out "$OUT/smoke/ours_4k.jsonl" > "$OUT/smoke/ours_4k.stdout" 2> "$OUT/smoke/ours_4k.stderr"
echo "train rc=$?"; tail -5 "$OUT/smoke/ours_4k.stderr"
