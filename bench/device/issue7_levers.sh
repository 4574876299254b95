#!/bin/bash
# Issue 7, first call: the engine's GPU tests, then each lever at 8k (and 16k) side by side with
# the Hugging Face peer: GEMM autotuning on/off, activation checkpointing, chunked loss, both
# precisions, a per-kernel-class breakdown, and mamf at the 8k GEMM shapes (their ceilings).
source bench/device/common.sh
ub_build || exit 1
R="$OUT/issue7"; mkdir -p "$R"
ub_gpu_tests "$R" 'Llama|TrainCli|CrossEntropy'
T="$UB train --model llama-3.1-8b --layers 4 --steps 6 --warmup 3"
run() { local name=$1; shift; $T "$@" --out "$R/$name.jsonl" > /dev/null 2> "$R/$name.stderr"; echo "$name rc=$?"; grep "median of" "$R/$name.stderr"; }
run bf16_8k_breakdown --seqlen 8k --precision bf16 --breakdown
run bf16_8k_noautotune --seqlen 8k --precision bf16 --no-autotune
run bf16_16k --seqlen 16k --precision bf16 --breakdown
run master_8k --seqlen 8k --precision master
run master_16k --seqlen 16k --precision master
run bf16_8k_ckpt --seqlen 8k --precision bf16 --checkpointing
run bf16_8k_chunk --seqlen 8k --precision bf16 --loss-chunk 2048
run bf16_8k_both --seqlen 8k --precision bf16 --checkpointing --loss-chunk 2048
grep -A12 "breakdown of one" "$R/bf16_8k_breakdown.stderr"
python3 bench/peers/train_peer.py --layers 4 --seqlens 8192,16384 --out "$R/peer.jsonl" > /dev/null 2> "$R/peer.stderr"
echo "peer rc=$?"
python3 - "$R/peer.jsonl" <<'PY'
import json, sys, statistics
pts = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "train_step" and not r["warmup"]: pts.setdefault(r["seqlen"], []).append(r["tflops"])
for s, v in sorted(pts.items()): print("peer", s, round(statistics.median(v), 1))
PY
$UB mamf --m 6144 4096 28672 128256 --n 8192 --k 4096 14336 --top-k 8 --max-seconds 1 --warmup-s 2 \
  --out "$R/mamf_8k_shapes.jsonl" > "$R/mamf_8k_shapes.txt" 2>/dev/null; echo "mamf rc=$?"
tar czf "$OUT/issue7.tgz" -C "$OUT" issue7 && rm -rf "$R"
