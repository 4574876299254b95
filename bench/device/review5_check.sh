#!/bin/bash
# After the fifth session's review (one timing loop for autotuning, one SM count, the mask helper,
# the token check once): the whole GPU suite on the system cuDNN 9.14, the attention tests on
# 9.19, and one 8k training step with its breakdown (autotuned GEMM choices recorded).
source bench/device/common.sh
ub_build || exit 1
R="$OUT/review5"; mkdir -p "$R"
ub_gpu_tests "$R"
LD_LIBRARY_PATH=$(ub_cudnn919) ctest --test-dir build-device -L gpu -R Attention --output-on-failure > "$R/attention_919.log" 2>&1
echo "attention tests on 9.19 rc=$?"; grep -E "tests passed|\*\*\*Failed" "$R/attention_919.log"
LD_LIBRARY_PATH=$(ub_cudnn919):$LD_LIBRARY_PATH $UB train --model llama-3.1-8b --layers 4 --steps 4 --warmup 2 \
  --seqlen 8192 --precision bf16 --breakdown --out "$R/bf16_8192.jsonl" > /dev/null 2> "$R/bf16_8192.stderr"
echo "train rc=$?"; grep "median of" "$R/bf16_8192.stderr"
tar czf "$OUT/review5.tgz" -C "$OUT" review5 && rm -rf "$R"
