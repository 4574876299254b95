#!/bin/bash
# Issue 7, the measurement: the whole GPU test suite, then ours and the Hugging Face peer side by
# side at 4k / 8k / 16k on the same cuDNN (the peer's, 9.19, through LD_LIBRARY_PATH), both
# precisions, the breakdown per kernel class, the memory options at 8k / 16k, and mamf at the
# 8k GEMM shapes (the GEMM class's ceiling).
source bench/device/common.sh
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn,os;print(os.path.join(list(nvidia.cudnn.__path__)[0],'lib'))"):$LD_LIBRARY_PATH
ub_build || exit 1
R="$OUT/issue7"; mkdir -p "$R"
ub_gpu_tests "$R"
$UB env --json > "$R/env.json" 2>/dev/null
T="$UB train --model llama-3.1-8b --layers 4 --steps 6 --warmup 3"
run() { local name=$1; shift; $T "$@" --out "$R/$name.jsonl" > /dev/null 2> "$R/$name.stderr"; echo "$name rc=$?"; grep "median of" "$R/$name.stderr"; }
for s in 4096 8192 16384; do run bf16_$s --seqlen $s --precision bf16 --breakdown; done
for s in 8192 16384; do run master_$s --seqlen $s --precision master; done
for s in 8192 16384; do run lean_$s --seqlen $s --precision bf16 --checkpointing --loss-chunk 4096; done
python3 bench/peers/train_peer.py --layers 4 --seqlens 4096,8192,16384 --out "$R/peer.jsonl" > /dev/null 2> "$R/peer.stderr"
echo "peer rc=$?"
cat "$R"/bf16_*.jsonl > "$R/ours_bf16.jsonl"
$UB compare "$R/peer.jsonl" "$R/ours_bf16.jsonl" --force 2>&1 | grep -B2 -A8 "^Per sequence length"
$UB mamf --m 6144 4096 28672 --n 8192 --k 4096 14336 --top-k 8 --max-seconds 1 --warmup-s 2 \
  --out "$R/mamf_8k_shapes.jsonl" > "$R/mamf_8k_shapes.txt" 2> "$R/mamf.stderr"; echo "mamf rc=$?"
tar czf "$OUT/issue7.tgz" -C "$OUT" issue7 && rm -rf "$R"
