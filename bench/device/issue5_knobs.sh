#!/bin/bash
# Issue 5: autotuning over the engine's knobs as well (the heuristics' configurations, then the
# first one with one knob at a time at its other values), against cuDNN's first choice, and the
# flash / cuDNN peers, side by side on torch's cuDNN 9.19; the attention GPU tests first.
source bench/device/common.sh
ub_build || exit 1
mkdir -p $OUT/k && K=$OUT/k
CUDNN919=$(ub_cudnn919)
export LD_LIBRARY_PATH=$CUDNN919
ctest --test-dir build-device -L gpu -R Attention --output-on-failure -V > $K/gpu_tests_919.log 2>&1
echo "attention tests rc=$?"; grep -E "tests passed|\*\*\*Failed|forward:|backward:|candidate" $K/gpu_tests_919.log | head -60
$UB env --json > $K/env.json
SEQ=8k,16k,32k
$UB attention --seqlens $SEQ --warmup-s 3 --out $K/ours_knobs.jsonl 2>&1 | tail -5
python3 bench/peers/attention_peer.py --seqlens 8192,16384,32768 --out $K/peer.jsonl 2>&1 | tail -6
$UB attention --seqlens $SEQ --warmup-s 1 --no-autotune --out $K/ours_first.jsonl 2>&1 | tail -5
python3 - $K <<'PY'
import json, sys
for f in ["ours_knobs", "ours_first"]:
    for l in open(f"{sys.argv[1]}/{f}.jsonl"):
        r = json.loads(l)
        if r.get("type") == "attention":
            print(f, r["seqlen"], r.get("engine_fwd"), "|", r.get("engine_bwd"))
            for c in r.get("engine_bwd_timed", []): print("   bwd", c["engine"], round(c["ms"], 3))
PY
cd $OUT && tar czf knobs.tgz k && rm -rf k
