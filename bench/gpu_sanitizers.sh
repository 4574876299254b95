#!/usr/bin/env bash
# compute-sanitizer over the GPU test binary: memcheck, racecheck, synccheck and initcheck on the
# kernel tests (every kernel of ours at odd shapes), then memcheck on what drives them (the training
# engine, the data-parallel step of one rank with NCCL, every cuDNN attention configuration).
#   bench/gpu_sanitizers.sh GPU_TESTS OUT_DIR
# GPU_TESTS is build/tests/gpu/gpu_tests (of this tree, or copied from a build elsewhere). Writes
# OUT_DIR/<tool>_<set>.log and OUT_DIR/sanitizers.jsonl (a line per run: tool, set, errors, seconds,
# exit code, tests passed) and prints those lines; exits 1 if any run reported an error or failed a test.
# NCCL's initialisation probes kernels not built for this GPU and handles the refusal; those API
# errors are left out (--report-api-errors no) on the set that starts NCCL. The offload set runs
# racecheck and synccheck over the step with checkpoints offloaded to the host, cuDNN's generated
# attention kernels left out (they synchronise through mbarriers the tools do not model).
#   SETS="kernels engine offload" (the default: all) picks the sets.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
bin=${1:?usage: bench/gpu_sanitizers.sh GPU_TESTS OUT_DIR}
out=${2:?usage: bench/gpu_sanitizers.sh GPU_TESTS OUT_DIR}
mkdir -p "$out"
command -v compute-sanitizer > /dev/null || { echo "gpu_sanitizers.sh: compute-sanitizer not on the PATH" >&2; exit 2; }
[ -x "$bin" ] || { echo "gpu_sanitizers.sh: $bin is not an executable" >&2; exit 2; }

kernels='LlamaKernels.*:Shapes/RmsNormKernels.*:HeadDims/RopeKernels.*:Vocab/CrossEntropyKernel.*:Shapes/BandwidthKernels.*:BandwidthCheck.*:CollectiveCheck.*'
engine='LlamaEngineTest.*:DataParallel.*:Attention.EverySupportedConfigurationValidates'
offload='LlamaEngineTest.OffloadedCheckpointsGiveTheSameStepBitForBit:DataParallel.OffloadedCheckpoints*'
sets=" ${SETS:-kernels engine offload} "
rc=0
: > "$out/sanitizers.jsonl"
# run TOOL SET FILTER [sanitizer options...]
run() {
  local tool=$1 set=$2 filter=$3
  shift 3
  local log="$out/${tool}_${set}.log" start end status errors
  start=$(date +%s)
  compute-sanitizer --tool "$tool" --error-exitcode 9 "$@" "$bin" --gtest_filter="$filter" > "$log" 2>&1
  status=$?
  end=$(date +%s)
  # memcheck, synccheck and initcheck end with "ERROR SUMMARY: N errors", racecheck with
  # "RACECHECK SUMMARY: N hazards displayed"; no summary at all counts as a failure.
  errors=$(grep -oE '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$')
  [ "$status" = 0 ] && [ "${errors:-x}" = 0 ] || rc=1
  printf '{"tool": "%s", "set": "%s", "errors": %s, "seconds": %s, "exit": %s, "tests": "%s"}\n' \
    "$tool" "$set" "${errors:-null}" "$((end - start))" "$status" \
    "$(grep -oE '\[  PASSED  \] [0-9]+ tests?' "$log" | grep -oE '[0-9]+' || echo 0) passed" |
    tee -a "$out/sanitizers.jsonl"
}
if [[ $sets == *" kernels "* ]]; then
  for tool in memcheck racecheck synccheck initcheck; do
    run "$tool" kernels "$kernels"
  done
fi
[[ $sets == *" engine "* ]] && run memcheck engine "$engine" --report-api-errors no
if [[ $sets == *" offload "* ]]; then
  for tool in racecheck synccheck; do
    run "$tool" offload "$offload" --kernel-name-exclude kns=cudnn_generated --report-api-errors no
  done
fi
exit $rc
