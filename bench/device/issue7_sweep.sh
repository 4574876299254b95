#!/bin/bash
# Issue 7, memory: the 4-layer model with activation checkpointing and the chunked loss, swept
# from 4k up, then bisected for the longest sequence one H200 holds; memfit on the result.
source bench/device/common.sh
export LD_LIBRARY_PATH=$(python3 -c "import nvidia.cudnn,os;print(os.path.join(list(nvidia.cudnn.__path__)[0],'lib'))"):$LD_LIBRARY_PATH
ub_build || exit 1
R="$OUT/sweep"; mkdir -p "$R"
S="$UB sweep --model llama-3.1-8b --layers 4 --precision bf16 --checkpointing --loss-chunk 4096 --out $R/sweep_h200.jsonl"
$S --seqlens 4k,8k,16k,32k,64k,128k,256k --steps 2 --warmup 1 > "$R/sweep.txt" 2> "$R/sweep.stderr"; echo "sweep rc=$?"
$S --seqlens 256k --resume --find-max --find-max-granularity 64k --steps 1 --warmup 1 > "$R/findmax.txt" 2> "$R/findmax.stderr"; echo "find-max rc=$?"
cat "$R/sweep.txt" "$R/findmax.txt"
$UB memfit "$R/sweep_h200.jsonl" | tee "$R/memfit.txt"
tar czf "$OUT/sweep.tgz" -C "$OUT" sweep && rm -rf "$R"
