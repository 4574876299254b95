#!/bin/bash
# Issue 5, after fixing the single-candidate path of the attention autotuning (the first call's
# plans with one candidate were never run): the whole GPU suite on the system cuDNN 9.14, the
# attention tests on torch's 9.19, then autotune against cuDNN's first choice at 4k..32k.
source bench/device/common.sh
ub_build || exit 1
mkdir -p $OUT/a && A=$OUT/a
ub_gpu_tests "$A"
CUDNN919=$(ub_cudnn919)
export LD_LIBRARY_PATH=$CUDNN919
ctest --test-dir build-device -L gpu -R Attention --output-on-failure -V > $A/gpu_tests_919.log 2>&1
echo "attention tests on 9.19 rc=$?"; grep -E "tests passed|\*\*\*Failed|forward:|backward:" $A/gpu_tests_919.log
$UB env --json > $A/env.json
SEQ=4k,8k,16k,32k
$UB attention --seqlens $SEQ --warmup-s 3 --out $A/ours_autotune.jsonl 2>&1 | tail -6
$UB attention --seqlens $SEQ --warmup-s 1 --no-autotune --out $A/ours_first.jsonl 2>&1 | tail -6
python3 - $A <<'PY'
import json, sys
for f in ["ours_autotune", "ours_first"]:
    for l in open(f"{sys.argv[1]}/{f}.jsonl"):
        r = json.loads(l)
        if r.get("type") == "attention":
            print(f, r["seqlen"], r.get("engine_fwd"), "|", r.get("engine_bwd"))
PY
cd $OUT && tar czf autotune2.tgz a && rm -rf a
