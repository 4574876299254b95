#!/bin/bash
# Issue 5: timing every engine configuration cuDNN offers (autotune, the default now) against
# cuDNN's first choice (--no-autotune), and the flash / cuDNN peers, side by side in one call on
# torch's cuDNN 9.19; the attention GPU tests first.
source bench/device/common.sh
ub_build || exit 1
mkdir -p $OUT/a && A=$OUT/a
CUDNN919=$(ub_cudnn919)
export LD_LIBRARY_PATH=$CUDNN919
ctest --test-dir build-device -L gpu -R Attention --output-on-failure -V > $A/gpu_tests_919.log 2>&1
echo "attention tests rc=$?"; grep -E "tests passed|\*\*\*Failed|forward:|backward:" $A/gpu_tests_919.log
$UB env --json > $A/env.json
SEQ=4k,8k,16k,32k
$UB attention --seqlens $SEQ --warmup-s 5 --out $A/ours_autotune.jsonl 2>&1 | tail -6
python3 bench/peers/attention_peer.py --seqlens 4096,8192,16384,32768 --out $A/peer.jsonl 2>&1 | tail -9
$UB attention --seqlens $SEQ --warmup-s 1 --no-autotune --out $A/ours_first.jsonl 2>&1 | tail -6
$UB attention --seqlens $SEQ --warmup-s 1 --out $A/ours_autotune2.jsonl 2>&1 | tail -6
python3 - $A <<'PY'
import json, sys
for f in ["ours_autotune", "ours_first", "ours_autotune2"]:
    for l in open(f"{sys.argv[1]}/{f}.jsonl"):
        r = json.loads(l)
        if r.get("type") == "attention":
            print(f, r["seqlen"], r.get("engine_fwd"), "|", r.get("engine_bwd"))
PY
cd $OUT && tar czf autotune.tgz a && rm -rf a
