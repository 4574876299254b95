#!/usr/bin/env bash
# Our training step under several sets of options on this machine's GPUs, one after another in
# one run, each into its own records file, then a table of the median step, TFLOPS per GPU, peak
# memory, the exposed communication, offloaded-optimizer and offloaded-checkpoint times and the
# host memory held pinned of each:
#   bench/train_variants.sh OUT_DIR NAME="OPTIONS" [NAME="OPTIONS" ...]
#   e.g. bench/train_variants.sh out plain="" selective="--selective-checkpointing" \
#          tiles="--checkpointing --mlp-tile 4k" zero3="--zero 3" offload="--zero 3 --offload-optimizer"
# Settings from the environment: UB (the binary; else this tree is built into build-bench/),
# MODEL [llama-3.1-8b], LAYERS [4], SEQLENS [8192,16384], PRECISION [bf16], STEPS [5], WARMUP [2].
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
out=${1:?usage: bench/train_variants.sh OUT_DIR NAME=\"OPTIONS\" ...}
shift
mkdir -p "$out"
if [ -z "${UB:-}" ]; then
  ub_build "$here/.." "$here/../build-bench" -DCMAKE_CUDA_ARCHITECTURES="$(ub_arch)" || exit 1
  UB=$here/../build-bench/upgradebench
fi
model=${MODEL:-llama-3.1-8b} layers=${LAYERS:-4} seqlens=${SEQLENS:-8192,16384}
for variant in "$@"; do
  name=${variant%%=*} options=${variant#*=}
  for s in ${seqlens//,/ }; do
    # shellcheck disable=SC2086
    "$UB" train --model "$model" --layers "$layers" --seqlen "$s" --steps "${STEPS:-5}" --warmup "${WARMUP:-2}" \
      --precision "${PRECISION:-bf16}" $options --out "$out/$name.jsonl" > /dev/null 2>> "$out/$name.stderr" ||
      echo "$name seqlen $s: exit $?" >&2
  done
done
"$PYTHON" - "$out" "$@" <<'PY' | tee "$out/variants.txt"
import json, statistics, sys
out, variants = sys.argv[1], [v.split("=", 1) for v in sys.argv[2:]]
print(f"{'variant':<12} {'seqlen':>7} {'step ms':>9} {'TFLOPS':>8} {'peak GiB':>9} {'comm ms':>8} {'offload ms':>10} "
      f"{'ckpt copy ms':>12} {'pinned GiB':>10}  options")
for name, options in variants:
    steps = {}
    try:
        for r in map(json.loads, open(f"{out}/{name}.jsonl")):
            if r.get("type") == "train_step" and not r.get("warmup"):
                steps.setdefault(r["seqlen"], []).append(r)
            elif r.get("type") in ("train_oom", "train_error"):
                print(f"{name:<12} {r['seqlen']:>7} {r['type']}: {r.get('what') or r.get('error')}")
    except FileNotFoundError:
        print(f"{name:<12} no records")
    for s, rs in sorted(steps.items()):
        med = lambda k: statistics.median(x[k] for x in rs) if all(x.get(k) is not None for x in rs) else float("nan")
        print(f"{name:<12} {s:>7} {med('exec_time_ms'):>9.1f} {med('tflops'):>8.1f} {max(x['peak_mem_gib'] for x in rs):>9.2f} "
              f"{med('exposed_comm_ms'):>8.2f} {med('exposed_offload_ms'):>10.1f} "
              f"{med('exposed_checkpoint_copy_ms'):>12.1f} {med('pinned_host_gib'):>10.2f}  {options}")
PY
