#!/bin/bash
# Issue 5, first device call: build, then the cuDNN attention graphs on small shapes with both
# cuDNNs of the device (system 9.14; torch's 9.19 through LD_LIBRARY_PATH).
source bench/device/common.sh
cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DUB_BUILD_TESTS=OFF \
      -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1 &&
cmake --build build-device >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
CUDNN919=$(python3 -c "import nvidia.cudnn,os;print(os.path.join(list(nvidia.cudnn.__path__)[0],\"lib\"))")
echo "cudnn 9.19 dir: $CUDNN919"
A="$UB attention --warmup-s 0.3 --max-seconds 0.3 --min-samples 5"
for lib in system 919; do
  if [ $lib = 919 ]; then export LD_LIBRARY_PATH=$CUDNN919; fi
  echo "=== cuDNN $lib"; $UB env 2>&1 | grep -i -A2 cudnn | head -5
  $A --seqlens 128,1k,4k --out $OUT/smoke_$lib.jsonl 2>&1 | tail -12
  $A --seqlens 1k --non-causal --heads 8 --kv-heads 8 --head-dim 64 --out $OUT/smoke_${lib}_mha64.jsonl 2>&1 | tail -6
  $A --seqlens 1k --head-dim 256 --heads 8 --kv-heads 2 --out $OUT/smoke_${lib}_d256.jsonl 2>&1 | tail -6
  $A --seqlens 2k --dtype fp16 --batch 2 --out $OUT/smoke_${lib}_fp16.jsonl 2>&1 | tail -6
  $A --seqlens 4k --doc-len 1k --out $OUT/smoke_${lib}_packed.jsonl 2>&1 | tail -6
done
