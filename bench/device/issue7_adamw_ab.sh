#!/bin/bash
# A/B of the AdamW kernel (4 elements, 8-byte bf16 accesses vs 8 elements, 16-byte) in the 8k step
# on one GPU, alternating; then the kernel and engine GPU tests of the tree as it will be committed.
# The two variants were put in ab_tmp/ (not committed) before the call:
#   git show 2136979:src/gpu/kernels/optimizer.cu > ab_tmp/optimizer_octet.cu
#   git show 8f5c342:src/gpu/kernels/optimizer.cu > ab_tmp/optimizer_quad.cu
source bench/device/common.sh
export LD_LIBRARY_PATH=$(ub_cudnn919):$LD_LIBRARY_PATH
ub_build || exit 1
R="$OUT/ab"; mkdir -p "$R"
ub_gpu_tests "$R" "LlamaKernels|CrossEntropyKernel|RmsNormKernels|RopeKernels|LlamaEngine"
for round in 1 2; do
  for v in octet quad; do
    cp ab_tmp/optimizer_$v.cu src/gpu/kernels/optimizer.cu && cmake --build build-device > /dev/null 2>&1 || echo "build $v failed"
    $UB train --model llama-3.1-8b --layers 4 --steps 4 --warmup 2 --seqlen 8192 --precision bf16 --breakdown \
      --out "$R/${v}_$round.jsonl" > /dev/null 2> "$R/${v}_$round.stderr"
    python3 -c "
import json,sys
for l in open('$R/${v}_$round.jsonl'):
    r=json.loads(l)
    if 'ops' in r:
        print('$v round $round', [round(o['ms'],3) for o in r['ops'] if o['label']=='AdamW'], [round(c['ms'],2) for c in r['classes'] if c['class']=='optimizer'])
"
    grep "median of" "$R/${v}_$round.stderr"
  done
done
tar czf "$OUT/ab.tgz" -C "$OUT" ab && rm -rf "$R"
