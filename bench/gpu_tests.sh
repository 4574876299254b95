#!/usr/bin/env bash
# The GPU test suite (CTest label `gpu`) on this machine's GPUs, built from this tree; with
# CUDNN_DIR (or --torch-cudnn: PyTorch's copy) the attention tests run again against that cuDNN.
#   bench/gpu_tests.sh OUT_DIR [--torch-cudnn] [-R REGEX]
# Writes OUT_DIR/gpu_tests.log (and gpu_tests_cudnn.log), prints the summary lines.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
out=${1:?usage: bench/gpu_tests.sh OUT_DIR [--torch-cudnn] [-R REGEX]}
shift
mkdir -p "$out"
regex=() cudnn=${CUDNN_DIR:-}
while [ $# -gt 0 ]; do
  case $1 in
    --torch-cudnn) cudnn=$(ub_cudnn_dir) ;;
    -R) regex=(-R "$2"); shift ;;
  esac
  shift
done
build=${BUILD:-$here/../build-gpu}
ub_build "$here/.." "$build" -DUB_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES="$(ub_arch)" || exit 1
ctest --test-dir "$build" -L gpu "${regex[@]}" --output-on-failure > "$out/gpu_tests.log" 2>&1
rc=$?
grep -E "tests passed|\*\*\*Failed|Skipped.*sm_" "$out/gpu_tests.log" | head -20
if [ -n "$cudnn" ]; then
  LD_LIBRARY_PATH="$cudnn:${LD_LIBRARY_PATH:-}" ctest --test-dir "$build" -L gpu -R Attention --output-on-failure \
    > "$out/gpu_tests_cudnn.log" 2>&1 || rc=1
  echo "attention against $cudnn:"
  grep -E "tests passed|\*\*\*Failed" "$out/gpu_tests_cudnn.log"
fi
exit $rc
