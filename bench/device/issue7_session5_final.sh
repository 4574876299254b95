#!/bin/bash
# Issue 7, fifth session, last call: the whole GPU suite on the system cuDNN 9.14 and the
# attention tests on torch's 9.19 (the check before the stop), then ours (bf16 at 8k and 16k with
# the breakdown, master weights at 16k) and the peer at 8k and 16k on cuDNN 9.19, with the
# cross-entropy reading its rows' second pass from L2.
source bench/device/common.sh
ub_build || exit 1
R="$OUT/final5"; mkdir -p "$R"
ub_gpu_tests "$R"
LD_LIBRARY_PATH=$(ub_cudnn919) ctest --test-dir build-device -L gpu -R Attention --output-on-failure > "$R/attention_919.log" 2>&1
echo "attention tests on 9.19 rc=$?"; grep -E "tests passed|\*\*\*Failed" "$R/attention_919.log"
export LD_LIBRARY_PATH=$(ub_cudnn919):$LD_LIBRARY_PATH
T="$UB train --model llama-3.1-8b --layers 4 --steps 6 --warmup 3"
run() { local name=$1; shift; $T "$@" --out "$R/$name.jsonl" > /dev/null 2> "$R/$name.stderr"; echo "$name rc=$?"; grep "median of" "$R/$name.stderr"; }
for s in 16384 8192; do run bf16_$s --seqlen $s --precision bf16 --breakdown; done
run master_16384 --seqlen 16384 --precision master
python3 bench/peers/train_peer.py --layers 4 --seqlens 8192,16384 --out "$R/peer.jsonl" > /dev/null 2> "$R/peer.stderr"
echo "peer rc=$?"
cat "$R"/bf16_*.jsonl > "$R/ours_bf16.jsonl"
$UB compare "$R/peer.jsonl" "$R/ours_bf16.jsonl" --force 2>&1 | grep -A5 "^Per sequence length"
tar czf "$OUT/final5.tgz" -C "$OUT" final5 && rm -rf "$R"
