#!/usr/bin/env bash
# upgradebench against its PyTorch peer (bench/peers/), side by side on one machine, in one run:
#   bench/vs_peer.sh mamf|bandwidth|attention|train|train_moe|train_sharded|loss|decompose|nccl OUT_DIR
# Settings from the environment (defaults in brackets):
#   UB          the upgradebench binary to measure [built from this tree into build-bench/]
#   SEQLENS     attention, train and decompose lengths [attention 1k..32k; train, decompose 8192,16384]
#   LAYERS      train, decompose: decoder layers kept [4]
#   PRECISIONS  train: bf16 and/or master; decompose: the first of them [bf16]
#   MODEL       train, decompose: preset or config.json [llama-3.1-8b]; train_moe: a preset with experts [qwen3-30b-a3b]
#   LR          train_moe: both sides' AdamW learning rate [0: the routing stays that of the initial weights on
#               both sides; trained on random tokens, a router collapses onto a few experts within steps];
#               loss: [3e-4]
#   STEPS       loss: steps of both sides from the same weights and tokens [8]
#   LOSS_TOLERANCE loss: the largest relative difference of a step's loss that counts as agreeing [0.01]
#   TORCH_CUDNN 1: run ours against PyTorch's cuDNN and NCCL, so both sides use the same libraries [1]
#   GPUS        nccl, train_sharded: ranks on this host [all]       SIZES  nccl: sizes [1M..4G, factor 2]
#   UB_NCCL_OPTIONS nccl: more options for ours (e.g. --graph)
#   UB_TRAIN_OPTIONS train: more options for ours (e.g. "--checkpointing --loss-chunk 8k")
#   PEER_OPTIONS    train: more options for the peer (e.g. --checkpointing)
# Records of both sides go to OUT_DIR (ours.jsonl / ours_*.jsonl, peer.jsonl); the comparison is
# printed and kept in OUT_DIR/compare.txt.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
usage="usage: bench/vs_peer.sh mamf|bandwidth|attention|train|train_moe|train_sharded|loss|decompose|nccl OUT_DIR"
what=${1:?$usage}
out=${2:?$usage}
mkdir -p "$out"
if [ -z "${UB:-}" ]; then
  ub_build "$here/.." "$here/../build-bench" -DCMAKE_CUDA_ARCHITECTURES="$(ub_arch)" || exit 1
  UB=$here/../build-bench/upgradebench
fi
if [ "${TORCH_CUDNN:-1}" = 1 ]; then
  for dir in $(ub_cudnn_dir) $(ub_nccl_dir); do export LD_LIBRARY_PATH="$dir:${LD_LIBRARY_PATH:-}"; done
fi
"$UB" env --json > "$out/env.json"
peers=$here/peers
case $what in
  mamf)
    "$UB" mamf --out "$out/ours.jsonl" > "$out/ours.txt" 2> "$out/ours.stderr"
    "$PYTHON" "$peers/mamf_peer.py" > "$out/peer.txt" 2> "$out/peer.stderr"
    grep -E "^(mean|median|max):" "$out/ours.txt" | sed 's/^/ours /'
    grep -E "^(mean|median|max):" "$out/peer.txt" | sed 's/^/peer /'
    "$UB" compare "$out/peer.txt" "$out/ours.jsonl" > "$out/compare.txt" 2>&1 ;;
  bandwidth)
    "$UB" bandwidth --sizes 1G,4G --out "$out/ours.jsonl" > "$out/ours.txt" 2> "$out/ours.stderr"
    "$PYTHON" "$peers/bandwidth_peer.py" > "$out/peer.json" 2> "$out/peer.stderr"
    { cat "$out/ours.txt"; cat "$out/peer.json"; } | tee "$out/compare.txt" ;;
  attention)
    seqlens=${SEQLENS:-1024,2048,4096,8192,16384,32768}
    "$UB" attention --seqlens "$seqlens" --warmup-s 5 --out "$out/ours.jsonl" --flash-attn-log "$out/ours_flash_attn.log" \
      > "$out/ours.txt" 2> "$out/ours.stderr"
    "$PYTHON" "$peers/attention_peer.py" --seqlens "$seqlens" --out "$out/peer.jsonl" > /dev/null 2> "$out/peer.stderr"
    cat "$out/ours.txt"
    "$PYTHON" - "$out" <<'PY' | tee "$out/compare.txt"
import json, sys
d = sys.argv[1]
ours = {r["seqlen"]: r for r in map(json.loads, open(f"{d}/ours.jsonl")) if r.get("type") == "attention" and "fwd_tflops" in r}
for p in map(json.loads, open(f"{d}/peer.jsonl")):
    o = ours.get(p["seqlen"])
    if o:
        print(f"{p['backend']:>6} {p['seqlen']:>6}: fwd {o['fwd_tflops'] / p['fwd_tflops']:.2f}x"
              + (f", fwd+bwd {o['fwd_bwd_tflops'] / p['fwd_bwd_tflops']:.2f}x" if o.get("fwd_bwd_tflops") and p.get("fwd_bwd_tflops") else ""))
PY
    ;;
  train)
    seqlens=${SEQLENS:-8192,16384} layers=${LAYERS:-4} model=${MODEL:-llama-3.1-8b}
    for precision in ${PRECISIONS:-bf16}; do
      for s in ${seqlens//,/ }; do
        # shellcheck disable=SC2086
        "$UB" train --model "$model" --layers "$layers" --seqlen "$s" --steps 6 --warmup 3 --precision "$precision" \
          ${UB_TRAIN_OPTIONS:-} --out "$out/ours_$precision.jsonl" > /dev/null 2>> "$out/ours_$precision.stderr"
      done
      grep "median of" "$out/ours_$precision.stderr" | sed "s/^/ours $precision /"
    done
    # shellcheck disable=SC2086
    "$PYTHON" "$peers/train_peer.py" --layers "$layers" --seqlens "$seqlens" ${PEER_OPTIONS:-} --out "$out/peer.jsonl" \
      > /dev/null 2> "$out/peer.stderr"
    precisions=${PRECISIONS:-bf16}
    "$UB" compare "$out/peer.jsonl" "$out/ours_${precisions%% *}.jsonl" --force > "$out/compare.txt" 2>&1
    grep -A8 "^Per sequence length" "$out/compare.txt" ;;
  train_moe)
    # A mixture-of-experts slice against Hugging Face's own model of its config (train_moe_peer.py),
    # both with bf16 weights and AdamW state; both sides record the tokens each expert received,
    # which `compare` shows beside the steps.
    seqlens=${SEQLENS:-4096,8192} layers=${LAYERS:-4} model=${MODEL:-qwen3-30b-a3b} lr=${LR:-0}
    for s in ${seqlens//,/ }; do
      # shellcheck disable=SC2086
      "$UB" train --model "$model" --layers "$layers" --seqlen "$s" --steps 6 --warmup 3 --lr "$lr" --precision bf16 \
        ${UB_TRAIN_OPTIONS:-} --out "$out/ours.jsonl" > /dev/null 2>> "$out/ours.stderr"
    done
    grep "median of" "$out/ours.stderr" | sed "s/^/ours /"
    # shellcheck disable=SC2086
    "$PYTHON" "$peers/train_moe_peer.py" --config "$here/../data/models/$model.json" --model-name "$model" --layers "$layers" \
      --seqlens "$seqlens" --lr "$lr" --upgradebench "$UB" ${PEER_OPTIONS:-} --out "$out/peer.jsonl" > /dev/null 2> "$out/peer.stderr"
    "$UB" compare "$out/peer.jsonl" "$out/ours.jsonl" --force > "$out/compare.txt" 2>&1
    grep -A12 "^Per sequence length" "$out/compare.txt" ;;
  loss)
    # Correctness against Hugging Face: its model of MODEL's config (train_moe_peer.py for a model
    # with experts, train_peer.py otherwise) saves its initial weights and token ids; ours trains from
    # them (--weights, --tokens), both in pure bf16 with the same AdamW, and each step's loss is
    # compared. The first step's is the forward pass alone on equal weights.
    s=${SEQLENS:-4096} s=${s%%,*} layers=${LAYERS:-2} model=${MODEL:-llama-3.1-8b} lr=${LR:-3e-4} steps=${STEPS:-8}
    config=$here/../data/models/$model.json
    peer=(train_peer.py)
    grep -qE '"(num_experts|num_local_experts|n_routed_experts)"' "$config" && peer=(train_moe_peer.py --upgradebench "$UB")
    # The weights (GiBs) live in a folder of their own, removed when the comparison ends: OUT_DIR
    # keeps the records.
    weights=$(mktemp -d "${TMPDIR:-/tmp}/ub-loss-weights.XXXXXX")
    trap 'rm -rf "$weights"' EXIT
    # shellcheck disable=SC2086
    "$PYTHON" "$peers/${peer[0]}" "${peer[@]:1}" --config "$config" --model-name "$model" --layers "$layers" --seqlens "$s" \
      --steps "$steps" --warmup 0 --lr "$lr" --save-weights "$weights" ${PEER_OPTIONS:-} --out "$out/peer.jsonl" \
      > /dev/null 2> "$out/peer.stderr"
    # shellcheck disable=SC2086
    "$UB" train --model "$model" --layers "$layers" --seqlen "$s" --steps "$steps" --warmup 0 --lr "$lr" --precision bf16 \
      --weights "$weights" --tokens "$weights/input_ids_$s.safetensors" ${UB_TRAIN_OPTIONS:-} \
      --out "$out/ours.jsonl" > /dev/null 2> "$out/ours.stderr"
    "$PYTHON" - "$out" "${LOSS_TOLERANCE:-0.01}" <<'PY' | tee "$out/compare.txt"
import json, sys
d, tol = sys.argv[1], float(sys.argv[2])
def losses(f):
    return {r["step"]: r["loss"] for r in map(json.loads, open(f"{d}/{f}")) if r.get("type") == "train_step"}
peer, ours = losses("peer.jsonl"), losses("ours.jsonl")
worst = 0.0
print(f"{'step':>4} {'Hugging Face':>13} {'upgradebench':>13} {'relative':>9}")
for step in sorted(set(peer) & set(ours)):
    rel = abs(ours[step] - peer[step]) / abs(peer[step])
    worst = max(worst, rel)
    print(f"{step:>4} {peer[step]:>13.5f} {ours[step]:>13.5f} {rel:>9.2e}")
steps = len(set(peer) & set(ours))
print(f"{steps} steps from the same weights and tokens: largest relative difference {worst:.2e}, "
      + ("within" if steps and worst <= tol else "NOT within") + f" {tol:g}")
sys.exit(0 if steps and worst <= tol else 1)
PY
    ;;
  train_sharded)
    # The sharded step on this host's GPUs: ours (--gpus N, ZeRO-3 by default) against Hugging Face
    # under torch FSDP2 (fully_shard per decoder layer, then the root), one sequence per GPU.
    seqlens=${SEQLENS:-8192,16384,32768} layers=${LAYERS:-32} model=${MODEL:-llama-3.1-8b}
    n=${GPUS:-$(nvidia-smi -L | wc -l)}
    for precision in ${PRECISIONS:-bf16}; do
      for s in ${seqlens//,/ }; do
        # shellcheck disable=SC2086
        "$UB" train --gpus "$n" --model "$model" --layers "$layers" --seqlen "$s" --steps 5 --warmup 2 \
          --precision "$precision" ${UB_TRAIN_OPTIONS:---zero 3 --checkpointing} --out "$out/ours_$precision.jsonl" \
          > /dev/null 2>> "$out/ours_$precision.stderr"
      done
      grep "median of" "$out/ours_$precision.stderr" | sed "s/^/ours $precision /"
      # shellcheck disable=SC2086
      torchrun --nproc-per-node "$n" "$peers/train_fsdp_peer.py" --layers "$layers" --seqlens "$seqlens" \
        --precision "$precision" ${PEER_OPTIONS:---checkpointing} --out "$out/peer_$precision.jsonl" \
        > /dev/null 2> "$out/peer_$precision.stderr"
      { echo "== $precision: torch FSDP2 (old) -> upgradebench (new)"
        "$UB" compare "$out/peer_$precision.jsonl" "$out/ours_$precision.jsonl" --force 2>&1; } >> "$out/compare.txt"
    done
    grep -A8 "^Per sequence length" "$out/compare.txt" ;;
  decompose)
    # Each side's step decomposed on the same GPU: ours under CUPTI (its trace kept), the Hugging
    # Face step from torch.profiler traces; torch's key_averages beside our reading of its trace.
    seqlens=${SEQLENS:-8192,16384} layers=${LAYERS:-4} model=${MODEL:-llama-3.1-8b} precision=${PRECISIONS:-bf16}
    "$PYTHON" "$peers/train_peer.py" --layers "$layers" --seqlens "$seqlens" --steps 4 --warmup 3 --profile "$out" \
      --out "$out/peer.jsonl" > /dev/null 2> "$out/peer.stderr"
    for s in ${seqlens//,/ }; do
      "$UB" decompose --model "$model" --layers "$layers" --seqlen "$s" --steps 6 --warmup 3 --precision "${precision%% *}" \
        --out "$out/ours_$s.jsonl" --trace-out "$out/ours_llama_${layers}l_$s.pt.trace.json" >> "$out/ours.txt" 2>> "$out/ours.stderr"
      gzip -f "$out/ours_llama_${layers}l_$s.pt.trace.json"
      "$UB" decompose "$out/hf_llama_${layers}l_$s.pt.trace.json.gz" --model "$model" --layers "$layers" --seqlen "$s" \
        --out "$out/peer_$s.jsonl" >> "$out/peer.txt" 2>> "$out/peer.stderr"
      { echo "== $s tokens: Hugging Face (old) -> upgradebench (new), same GPU"
        "$UB" compare "$out/peer_$s.jsonl" "$out/ours_$s.jsonl" --force 2>&1; } >> "$out/compare.txt"
    done
    "$PYTHON" - "$out" <<'PY' | tee -a "$out/compare.txt"
import json, sys
d = sys.argv[1]
for p in map(json.loads, open(f"{d}/peer.jsonl")):
    if p.get("type") != "profile":
        continue
    r = [x for x in map(json.loads, open(f"{d}/peer_{p['seqlen']}.jsonl")) if x.get("type") == "decomposition"][0]
    k = {b["name"]: b["kernel_ms"] for b in r["buckets"]}
    kernels = sum(v for n, v in k.items() if n not in ("idle", "communication"))
    print(f"{p['seqlen']:>6}: attention share of Hugging Face's kernel time: torch key_averages "
          f"{100 * p['attention_share_of_kernels']:.2f}% (over {p['steps']} steps), upgradebench decompose "
          f"{100 * k['attention'] / kernels:.2f}% (median step)")
PY
    cat "$out/ours.txt" ;;
  nccl)
    sizes=${SIZES:-1M,2M,4M,8M,16M,32M,64M,128M,256M,512M,1G,2G,4G}
    n=${GPUS:-$(nvidia-smi -L | wc -l)}
    "$UB" nccl --gpus "$n" --sizes "$sizes" --place both ${UB_NCCL_OPTIONS:-} --out "$out/ours.jsonl" > "$out/ours.txt" 2> "$out/ours.stderr"
    torchrun --nproc-per-node "$n" "$peers/nccl_peer.py" --sizes "$sizes" --out "$out/peer.jsonl" > /dev/null 2> "$out/peer.stderr"
    cat "$out/ours.txt"
    "$UB" compare "$out/peer.jsonl" "$out/ours.jsonl" | tee "$out/compare.txt"
    ;;
  *) echo "vs_peer.sh: unknown benchmark '$what' (mamf, bandwidth, attention, train, train_moe, train_sharded, decompose, nccl)" >&2; exit 2 ;;
esac
