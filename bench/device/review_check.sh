#!/bin/bash
# After the review of the session's change: the attention and engine GPU tests on the system
# cuDNN 9.14, the attention tests on torch's 9.19 (the autotuned test prints each candidate).
source bench/device/common.sh
ub_build || exit 1
mkdir -p $OUT/r && R=$OUT/r
ub_gpu_tests "$R" "Attention|LlamaEngine"
LD_LIBRARY_PATH=$(ub_cudnn919) ctest --test-dir build-device -L gpu -R Attention --output-on-failure -V > $R/attention_919.log 2>&1
echo "attention tests on 9.19 rc=$?"; grep -E "tests passed|\*\*\*Failed|candidate" $R/attention_919.log | head -12
cd $OUT && tar czf review.tgz r && rm -rf r
