#!/usr/bin/env bash
# An A/B of two builds of upgradebench on the training step, on one GPU, alternating A and B
# (clocks and temperature drift over minutes; alternation spreads it over both):
#   bench/ab.sh SRC_A SRC_B OUT_DIR [ROUNDS] -- [train options]
# SRC_A and SRC_B are source trees (a `git worktree` or an unpacked `git archive` of each commit);
# each is built into SRC/build-ab, unless A_BIN / B_BIN name a binary already built from it.
# Every run appends its records to OUT_DIR/{a,b}_<round>.jsonl;
# the median step of each run is printed, then each side's median over its runs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
a=${1:?usage: bench/ab.sh SRC_A SRC_B OUT_DIR [ROUNDS] -- [train options]}
b=${2:?} out=${3:?}
rounds=2
shift 3
if [ $# -gt 0 ] && [ "$1" != -- ]; then rounds=$1; shift; fi
[ "${1:-}" = -- ] && shift
train=("$@")
[ ${#train[@]} -eq 0 ] && train=(--model llama-3.1-8b --layers 4 --seqlen 8k --steps 6 --warmup 2 --precision bf16)
mkdir -p "$out"
arch=$(ub_arch)
bin_a=${A_BIN:-$a/build-ab/upgradebench} bin_b=${B_BIN:-$b/build-ab/upgradebench}
[ -n "${A_BIN:-}" ] || ub_build "$a" "$a/build-ab" -DCMAKE_CUDA_ARCHITECTURES="$arch" || exit 1
[ -n "${B_BIN:-}" ] || ub_build "$b" "$b/build-ab" -DCMAKE_CUDA_ARCHITECTURES="$arch" || exit 1
for round in $(seq "$rounds"); do
  for side in a b; do
    bin=$([ $side = a ] && echo "$bin_a" || echo "$bin_b")
    "$bin" train "${train[@]}" --out "$out/${side}_$round.jsonl" > /dev/null 2> "$out/${side}_$round.stderr"
    echo "$side round $round: $(grep 'median of' "$out/${side}_$round.stderr" || tail -1 "$out/${side}_$round.stderr")"
  done
done
"$PYTHON" - "$out" <<'PY'
import glob, json, statistics, sys
for side in "ab":
    ms = []
    for f in sorted(glob.glob(f"{sys.argv[1]}/{side}_*.jsonl")):
        ms += [r["exec_time_ms"] for r in map(json.loads, open(f)) if r.get("type") == "train_step" and not r["warmup"]]
    if ms:
        print(f"{side}: median step {statistics.median(ms):.2f} ms over {len(ms)} steps (min {min(ms):.2f}, max {max(ms):.2f})")
PY
