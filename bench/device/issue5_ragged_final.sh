#!/bin/bash
# Issue 5, after the cuDNN 9.14 gate: the whole GPU suite on the system cuDNN 9.14, the attention
# tests on torch's 9.19, and a README example of packed documents of different lengths.
source bench/device/common.sh
ub_build || exit 1
mkdir -p $OUT/f && F=$OUT/f
ub_gpu_tests "$F"
mv $F/gpu_tests.log $F/gpu_tests_914.log
CUDNN919=$(ub_cudnn919)
LD_LIBRARY_PATH=$CUDNN919 ctest --test-dir build-device -L gpu -R Attention --output-on-failure > $F/gpu_tests_919.log 2>&1
echo "attention tests on 9.19 rc=$?"; grep -E "tests passed|\*\*\*Failed" $F/gpu_tests_919.log
LD_LIBRARY_PATH=$CUDNN919 $UB attention --docs 3000,5192,8k,1000,15384 --warmup-s 2 --out $F/example.jsonl 2>&1 | tail -6
$UB attention --docs 128,512 --head-dim 256 --heads 4 --kv-heads 1 > $F/gate_914.txt 2>&1; echo "gate rc=$?"; cat $F/gate_914.txt | tail -2
cd $OUT && tar czf final.tgz f && rm -rf f
