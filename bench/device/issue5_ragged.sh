#!/bin/bash
# Issue 5, packed documents of different lengths (ragged offsets + padding mask): the attention
# GPU tests on the system cuDNN 9.14 and on torch's 9.19, then packed buffers of 256k tokens:
# 32 documents of 8k (equal: folded into the batch), 32 of 8000 + one of 6144 (ragged), and
# 16 x (4k, 12k) (ragged, unequal), each validated against the fp32 reference before it is timed.
source bench/device/common.sh
ub_build || exit 1
mkdir -p $OUT/r && R=$OUT/r
ub_gpu_tests "$R" Attention
mv $R/gpu_tests.log $R/gpu_tests_914.log
CUDNN919=$(ub_cudnn919)
LD_LIBRARY_PATH=$CUDNN919 ctest --test-dir build-device -L gpu -R Attention --output-on-failure > $R/gpu_tests_919.log 2>&1
echo "gpu tests on 9.19 rc=$?"; grep -E "tests passed|\*\*\*Failed" $R/gpu_tests_919.log
LD_LIBRARY_PATH=$CUDNN919 $UB env --json > $R/env_919.json
MIX=$(python3 -c "print(','.join(['4k','12k']*16))")
run() { LD_LIBRARY_PATH=$CUDNN919 $UB attention --min-samples 5 --max-seconds 10 --warmup-s "$@" 2>&1 | tail -3; }
run 3 --seqlens 256k --doc-len 8k --out $R/equal_8k.jsonl
run 0 --seqlens 256k --doc-len 8000 --out $R/ragged_8000.jsonl
run 0 --docs $MIX --out $R/ragged_4k_12k.jsonl
run 0 --seqlens 256k --doc-len 8k --out $R/equal_8k_again.jsonl
cd $OUT && tar czf ragged.tgz r && rm -rf r
