#!/bin/bash
# The whole GPU suite of the tree on the system cuDNN 9.14 and the attention tests on torch's
# 9.19: the check before a stop.
source bench/device/common.sh
ub_build || exit 1
mkdir -p $OUT/s && S=$OUT/s
ub_gpu_tests "$S"
LD_LIBRARY_PATH=$(ub_cudnn919) ctest --test-dir build-device -L gpu -R Attention --output-on-failure > $S/attention_919.log 2>&1
echo "attention tests on 9.19 rc=$?"; grep -E "tests passed|\*\*\*Failed" $S/attention_919.log
cd $OUT && tar czf suite.tgz s && rm -rf s
