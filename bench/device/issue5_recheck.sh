#!/bin/bash
# Issue 5: after folding repeated code in the reference kernels, the graph builder and the
# driver: the attention GPU tests and one measured point again.
source bench/device/common.sh
ub_build || exit 1
ub_gpu_tests "$OUT" Attention
$UB attention --seqlens 8k --warmup-s 1 --out $OUT/recheck.jsonl 2>&1 | tail -4
