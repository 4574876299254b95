#!/bin/bash
# Issue 7: RoPE split / join with 16-byte accesses: the kernel and engine GPU tests, then ours at
# 16k (with the per-kernel breakdown) and the peer at 16k, on the same cuDNN (9.19).
source bench/device/common.sh
export LD_LIBRARY_PATH=$(ub_cudnn919):$LD_LIBRARY_PATH
ub_build || exit 1
R="$OUT/rope"; mkdir -p "$R"
ub_gpu_tests "$R" "LlamaKernels|RopeKernels|LlamaEngine"
$UB train --model llama-3.1-8b --layers 4 --steps 6 --warmup 3 --seqlen 16384 --precision bf16 --breakdown \
  --out "$R/bf16_16384.jsonl" > /dev/null 2> "$R/bf16_16384.stderr"; echo "ours rc=$?"
grep "median of" "$R/bf16_16384.stderr"; grep -E "rope|gaps" "$R/bf16_16384.stderr" | head -4
python3 bench/peers/train_peer.py --layers 4 --seqlens 16384 --out "$R/peer.jsonl" > /dev/null 2> "$R/peer.stderr"
echo "peer rc=$?"
$UB compare "$R/peer.jsonl" "$R/bf16_16384.jsonl" --force 2>&1 | grep -A4 "^Per sequence length"
tar czf "$OUT/rope.tgz" -C "$OUT" rope && rm -rf "$R"
