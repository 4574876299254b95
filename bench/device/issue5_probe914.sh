#!/bin/bash
# Issue 5: which ragged configurations cuDNN 9.14 (the device's system cuDNN) gets wrong, and how
# many engine configurations the heuristics offer; the same on torch's 9.19 for comparison.
source bench/device/common.sh
ub_build || exit 1
CUDNN919=$(ub_cudnn919)
probe() {  # label, then attention options
  local label=$1; shift
  for lib in system 919; do
    if [ $lib = 919 ]; then export LD_LIBRARY_PATH=$CUDNN919; else unset LD_LIBRARY_PATH; fi
    $UB attention --warmup-s 0 --min-samples 3 --max-seconds 0.2 --out $OUT/probe_${label}_$lib.jsonl "$@" > /dev/null 2>&1
    python3 - "$OUT/probe_${label}_$lib.jsonl" "$label" "$lib" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type", "").startswith("attention") and "seqlen" in r:
        print(f"{sys.argv[2]:>22} {sys.argv[3]:>6} s {r['seqlen']:>6}: {r.get('error') or 'ok ' + str(r['check']['tensors']['dQ']['nmse'])}"
              f" | fwd {r.get('engine_fwd')} | bwd {r.get('engine_bwd')}")
PY
  done
}
probe mqa256_ragged --heads 4 --kv-heads 1 --head-dim 256 --docs 128,512
probe mha256_ragged --heads 4 --kv-heads 4 --head-dim 256 --docs 128,512
probe gqa256_ragged --heads 8 --kv-heads 2 --head-dim 256 --docs 128,512
probe gqa256_ragged2 --heads 8 --kv-heads 2 --head-dim 256 --docs 300,340,1000
probe gqa256_noncausal --heads 8 --kv-heads 2 --head-dim 256 --docs 128,512 --non-causal
probe mqa128_ragged --heads 4 --kv-heads 1 --head-dim 128 --docs 128,512
probe gqa64_ragged --heads 8 --kv-heads 2 --head-dim 64 --docs 128,512
probe mqa256_plain --heads 4 --kv-heads 1 --head-dim 256 --seqlens 640
probe llama_ragged --docs 3000,5192
probe llama_plain --seqlens 8k
