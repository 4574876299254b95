#!/usr/bin/env python3
"""The peer of the engine's mixture-of-experts step: Hugging Face transformers' own model of a
config.json of data/models (Qwen3-MoE, Mixtral: AutoModelForCausalLM from its model_type), its
first --layers layers, random initialisation, bf16 weights, sdpa attention, the same step as
train_peer.py (loss = model(ids, labels=ids).loss, backward, clipping to 1.0, fused AdamW with bf16
state), each step timed with CUDA events. The load-balancing loss is in the loss when the config
says so (output_router_logits), as transformers trains it.

TFLOPS count active FLOPs, as `upgradebench flops` does (6 x active parameters x tokens plus causal
attention per layer's window): the figure comes from `upgradebench flops --json` itself (--upgradebench,
the built binary), so that the peer and the engine divide by one count.

Writes our canonical records (docs/records.md) like train_peer.py, and after each length's timed steps
one `expert_load` record: the tokens each routed expert received in one more forward pass of the same
ids (top-k of every MoE layer's router logits, as transformers returns them), per layer min / median
/ max, summed over the layers, and over every (layer, expert) pair (`expert_tokens`, what our step
records count), since imbalance is what changes between GPUs. `compare` shows `expert_tokens` beside
the steps of that length.

    train_moe_peer.py --config data/models/qwen3-30b-a3b.json --model-name qwen3-30b-a3b --layers 4 \\
        --seqlens 4096,8192 --upgradebench build/upgradebench --out peer.jsonl
"""
import argparse
import json
import os
import statistics
import subprocess

import torch
from transformers import AutoConfig, AutoModelForCausalLM

from train_peer import add_common_options, build_model, context_record, load_config, make_emitter, measure_lengths, profile_length  # noqa: E402


def build_moe_model(c, layers, checkpointing, dtype):
    """transformers' model of config `c` (by its model_type), its first `layers` layers, sdpa, on the GPU."""
    def make_config(**fields):
        fields.pop("model_type", None)
        return AutoConfig.for_model(c["model_type"], **fields)
    return build_model(c, layers, checkpointing, dtype, make_config, AutoModelForCausalLM.from_config)


def active_flops(binary, model_name, layers, seqlens, batch):
    """{seqlen: FLOPs of one step} as `upgradebench flops --json` counts them (active parameters)."""
    args = [binary, "flops", "--model", model_name, "--layers", str(layers), "--seqlens", seqlens, "--batch", str(batch), "--json"]
    doc = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    return {p["seqlen"]: p["total_tflop"] * 1e12 for p in doc["points"]}


def spread(n):
    return {"min": min(n), "median": statistics.median(n), "max": max(n)}


def expert_load(model, ids, top_k, experts):
    """Tokens per routed expert in one forward pass: per MoE layer, summed over the layers, and
    over every (layer, expert) pair as our records' expert_tokens count them."""
    with torch.no_grad():
        out = model(input_ids=ids, output_router_logits=True)
    per_layer, pooled, total = [], [], torch.zeros(experts, dtype=torch.long, device=ids.device)
    for logits in out.router_logits or ():
        counts = torch.bincount(logits.topk(top_k, dim=-1).indices.flatten(), minlength=experts)
        total += counts
        per_layer.append(spread(counts.tolist()))
        pooled += counts.tolist()
    return per_layer, spread(total.tolist()), spread(pooled)


def main():
    ap = argparse.ArgumentParser()
    add_common_options(ap, layers=4, seqlens="4096,8192", steps=6, warmup=3)
    ap.set_defaults(config=os.path.join(os.path.dirname(__file__), "../../data/models/qwen3-30b-a3b.json"),
                    model_name="qwen3-30b-a3b")
    ap.add_argument("--upgradebench", default=os.path.join(os.path.dirname(__file__), "../../build/upgradebench"),
                    help="the built binary, whose `flops` counts the active FLOPs")
    ap.add_argument("--profile", default=None, help="folder for torch.profiler traces of each length (hf_<model>_<layers>l_<seqlen>)")
    ap.add_argument("--profile-steps", type=int, default=3)
    a = ap.parse_args()
    c = load_config(a.config)
    experts = c.get("num_experts") or c.get("num_local_experts") or c.get("n_routed_experts")
    top_k = c.get("num_experts_per_tok")
    if not experts or not top_k:
        raise SystemExit(f"{a.config}: no mixture of experts (num_experts / num_local_experts and num_experts_per_tok)")
    flops = active_flops(a.upgradebench, a.model_name, a.layers, a.seqlens, a.batch)
    emit = make_emitter(a.out)
    emit(context_record(a, "train_moe_peer.py (Hugging Face transformers)",
                        {"experts": experts, "top_k": top_k, "aux_loss": bool(c.get("output_router_logits", False)),
                         "flops": "active (upgradebench flops)"}))
    model = build_moe_model(c, a.layers, a.checkpointing, torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True)

    def after(s, ids):
        per_layer, overall, pooled = expert_load(model, ids, top_k, experts)
        emit({"type": "expert_load", "seqlen": s, "batch": a.batch, "tokens_per_expert": overall, "layers": per_layer,
              "expert_tokens": pooled})
        if a.profile:
            profile_length(a, model, opt, ids, s, emit, prefix="hf_" + a.model_name.replace("-", "_").replace(".", "_"))

    measure_lengths(a, c, model, opt, lambda s: flops[s], emit, after)


if __name__ == "__main__":
    main()
