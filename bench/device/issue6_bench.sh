#!/bin/bash
# Issue 6, the benchmark: the engine's GPU tests with their measured errors, then ours (fp32
# master weights, and pure bf16 as the peer) and the Hugging Face peer, Llama-3.1-8B dimensions
# with 4 layers, batch 1, 4k / 8k / 16k / 32k, side by side in this one call.
source bench/device/common.sh
ub_build || exit 1
R="$OUT/issue6"; mkdir -p "$R"
ub_gpu_tests "$R"   # the whole GPU suite
build-device/tests/gpu/gpu_tests --gtest_filter='LlamaEngine*' > "$R/engine_tests.log" 2>&1
$UB env --json > "$R/env.json" 2>/dev/null
for prec in master bf16; do
  for s in 4096 8192 16384 32768; do
    $UB train --model llama-3.1-8b --layers 4 --seqlen $s --steps 6 --warmup 3 --precision $prec \
      --out "$R/ours_$prec.jsonl" > /dev/null 2>> "$R/ours_$prec.stderr"
    echo "ours $prec $s rc=$?"
  done
done
$UB train --model llama-3.1-8b --layers 4 --seqlen 8k --steps 1 --warmup 0 --mem-debug --out "$R/memdebug.jsonl" > /dev/null 2>&1
python3 bench/peers/train_peer.py --layers 4 --seqlens 4096,8192,16384,32768 --out "$R/peer.jsonl" > /dev/null 2> "$R/peer.stderr"
echo "peer rc=$?"; tail -3 "$R/peer.stderr"
$UB compare "$R/peer.jsonl" "$R/ours_bf16.jsonl" --force > "$R/compare_bf16.txt" 2>&1
$UB compare "$R/peer.jsonl" "$R/ours_master.jsonl" --force > "$R/compare_master.txt" 2>&1
cat "$R/compare_bf16.txt" "$R/compare_master.txt"
grep -h "median of" "$R"/ours_*.stderr
# At most 8 files come back: everything in one archive.
tar czf "$OUT/issue6.tgz" -C "$OUT" issue6 && rm -rf "$R"
