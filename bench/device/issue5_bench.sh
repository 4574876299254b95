#!/bin/bash
# Issue 5 benchmarks: GPU tests of the attention path, then ours (torch's cuDNN 9.19 through
# LD_LIBRARY_PATH, so both sides run the same library; and the system 9.14) and the peer
# (torch SDPA, cuDNN and flash backends) side by side in this one call; then packed documents.
source bench/device/common.sh
ub_build || exit 1
ub_gpu_tests "$OUT" Attention
CUDNN919=$(python3 -c "import nvidia.cudnn,os;print(os.path.join(list(nvidia.cudnn.__path__)[0],\"lib\"))")
SEQ=1k,2k,4k,8k,16k,32k
nvidia-smi --query-gpu=name,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/gpu_state.csv
LD_LIBRARY_PATH=$CUDNN919 $UB env --json > $OUT/env_919.json
LD_LIBRARY_PATH=$CUDNN919 $UB attention --seqlens $SEQ --warmup-s 5 --out $OUT/ours_919.jsonl \
  --seed-log $OUT/ours_919_seed.log 2>&1 | tail -12
python3 bench/peers/attention_peer.py --seqlens 1024,2048,4096,8192,16384,32768 --out $OUT/peer.jsonl 2>&1 | tail -13
$UB attention --seqlens $SEQ --warmup-s 2 --out $OUT/ours_914.jsonl 2>&1 | tail -9
# Packed: 32 documents of 8k in a 256k buffer versus one 256k sequence.
LD_LIBRARY_PATH=$CUDNN919 $UB attention --seqlens 256k --doc-len 8k --min-samples 3 --max-seconds 10 \
  --warmup-s 0 --out $OUT/packed_919.jsonl 2>&1 | tail -4
LD_LIBRARY_PATH=$CUDNN919 $UB attention --seqlens 256k --min-samples 3 --max-seconds 30 \
  --warmup-s 0 --out $OUT/single256k_919.jsonl 2>&1 | tail -4
