#!/bin/bash
# Issue 5, end of session: every GPU test of the tree, and an attention point beyond memory
# (must become an attention_oom record and exit 0, not a crash).
source bench/device/common.sh
ub_build || exit 1
ub_gpu_tests "$OUT"
$UB attention --seqlens 8k,4M --warmup-s 0 --max-seconds 0.5 --out $OUT/oom.jsonl 2>&1 | tail -5
echo "attention rc=$?"
grep -c attention_oom $OUT/oom.jsonl
