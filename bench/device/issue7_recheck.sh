#!/bin/bash
# Issue 7, last call: after the gradient norm moved onto a side stream (overlapping backward),
# the whole GPU suite, then ours and the peer again at 4k / 8k / 16k on the same cuDNN (9.19).
source bench/device/common.sh
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn,os;print(os.path.join(list(nvidia.cudnn.__path__)[0],'lib'))"):$LD_LIBRARY_PATH
ub_build || exit 1
R="$OUT/recheck"; mkdir -p "$R"
ub_gpu_tests "$R"
build-device/tests/gpu/gpu_tests --gtest_filter='LlamaEngine*' > "$R/engine_tests.log" 2>&1
T="$UB train --model llama-3.1-8b --layers 4 --steps 6 --warmup 3"
run() { local name=$1; shift; $T "$@" --out "$R/$name.jsonl" > /dev/null 2> "$R/$name.stderr"; echo "$name rc=$?"; grep "median of" "$R/$name.stderr"; }
for s in 4096 8192 16384; do run bf16_$s --seqlen $s --precision bf16 --breakdown; done
for s in 8192 16384; do run master_$s --seqlen $s --precision master; done
python3 bench/peers/train_peer.py --layers 4 --seqlens 4096,8192,16384 --out "$R/peer.jsonl" > /dev/null 2> "$R/peer.stderr"
echo "peer rc=$?"
cat "$R"/bf16_*.jsonl > "$R/ours.jsonl"
$UB compare "$R/peer.jsonl" "$R/ours.jsonl" --force 2>&1 | grep -A6 "^Per sequence length"
grep -A8 "breakdown of one" "$R/bf16_8192.stderr"
tar czf "$OUT/recheck.tgz" -C "$OUT" recheck && rm -rf "$R"
