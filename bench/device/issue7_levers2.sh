#!/bin/bash
# Issue 7, fifth session: bf16 gradients in pure bf16 (as the peer's bf16 model), the embedding's
# gradient written whole from a token index (no memset, no atomics), the norm gradients' memset on
# the side stream, RMSNorm backward in one fused pass, cuBLASLt autotuning over its top 32. The
# kernel and engine GPU tests, then ours (bf16 at 8k and 16k with the breakdown, master weights at
# 16k) and the peer at 8k and 16k, on the same cuDNN (9.19). $1: the name of the results folder
# (first call "levers2", with RMSNorm's backward summing dw in shared memory; second "levers3",
# with the column-owning RMSNorm backward; third "levers4", its 2-row variant at 64 registers and
# AdamW / the norm's squares 8 elements (16 bytes) per thread).
source bench/device/common.sh
export LD_LIBRARY_PATH=$(ub_cudnn919):$LD_LIBRARY_PATH
ub_build || exit 1
N=${1:-levers2}; R="$OUT/$N"; mkdir -p "$R"
ub_gpu_tests "$R" "LlamaKernels|RopeKernels|RmsNormKernels|LlamaEngine|TrainCli"
for s in 16384 8192; do
  $UB train --model llama-3.1-8b --layers 4 --steps 6 --warmup 3 --seqlen $s --precision bf16 --breakdown \
    --out "$R/bf16_$s.jsonl" > /dev/null 2> "$R/bf16_$s.stderr"; echo "ours $s rc=$?"
  grep "median of" "$R/bf16_$s.stderr"
done
$UB train --model llama-3.1-8b --layers 4 --steps 6 --warmup 3 --seqlen 16384 \
  --out "$R/master_16384.jsonl" > /dev/null 2> "$R/master_16384.stderr"; echo "master rc=$?"
grep "median of" "$R/master_16384.stderr"
python3 bench/peers/train_peer.py --layers 4 --seqlens 8192,16384 --out "$R/peer.jsonl" > /dev/null 2> "$R/peer.stderr"
echo "peer rc=$?"
cat "$R"/bf16_*.jsonl > "$R/ours_bf16.jsonl"
$UB compare "$R/peer.jsonl" "$R/ours_bf16.jsonl" --force 2>&1 | grep -A5 "^Per sequence length"
tar czf "$OUT/$N.tgz" -C "$OUT" "$N" && rm -rf "$R"
