#!/bin/bash
# Issue 5: heads run in groups one after another (--head-groups), so that a group's K and V stay
# in L2 at long sequences, against one call over all heads; the flash peer in the same call;
# torch's cuDNN 9.19; the attention GPU tests first.
source bench/device/common.sh
ub_build || exit 1
mkdir -p $OUT/g && G=$OUT/g
CUDNN919=$(python3 -c "import nvidia.cudnn,os;print(os.path.join(list(nvidia.cudnn.__path__)[0],\"lib\"))")
export LD_LIBRARY_PATH=$CUDNN919
ctest --test-dir build-device -L gpu -R Attention --output-on-failure > $G/gpu_tests_919.log 2>&1
echo "attention tests rc=$?"; grep -E "tests passed|\*\*\*Failed" $G/gpu_tests_919.log
$UB env --json > $G/env.json
$UB attention --seqlens 8k,16k,32k --warmup-s 3 --out $G/groups1.jsonl 2>&1 | tail -5 | head -3
for n in 2 4 8; do
  $UB attention --seqlens 8k,16k,32k --warmup-s 0 --head-groups $n --out $G/groups$n.jsonl 2>&1 | tail -5 | head -3
done
python3 bench/peers/attention_peer.py --seqlens 8192,16384,32768 --backends flash --out $G/peer.jsonl 2>&1 | tail -3
$UB attention --seqlens 8k,16k,32k --warmup-s 0 --out $G/groups1_again.jsonl 2>&1 | tail -5 | head -3
cd $OUT && tar czf groups.tgz g && rm -rf g
