#!/usr/bin/env python3
"""The peer for `upgradebench train`: Hugging Face transformers LlamaForCausalLM with the same
dimensions (a config.json of data/models, its first --layers layers), random initialisation,
bf16 weights, sdpa attention, loss = model(ids, labels=ids).loss (the shift inside), backward,
gradient clipping to global norm 1.0 (as ours), torch.optim.AdamW(fused=True) (bf16 state, as a
bf16 model has), batch 1 by default, random token ids below vocab - 256 as benchmark.py draws them;
with --checkpointing Hugging Face's gradient checkpointing of every decoder layer.
Each step is timed with CUDA events around forward + backward + clip + optimizer step.

Writes our canonical records (docs/records.md): a context record, then one train_step per step
(step, warmup, exec_time_ms, tflops, mfu, peak_mem_gib = torch.cuda.max_memory_reserved, loss),
so `upgradebench compare peer.jsonl ours.jsonl` compares the two directly. A length that runs
out of memory is a train_oom record.

With --profile DIR, after the timed steps of each length, torch.profiler records one warm-up and
--profile-steps active steps (CPU and CUDA activity, each step a ProfilerStep#N annotation) into
DIR/hf_llama_<layers>l_<seqlen>.pt.trace.json.gz (export_chrome_trace, then gzip), and prints one
JSON line per length with what torch's own key_averages says of its kernels: total kernel time
(NCCL excluded), attention time (the device time of the aten::_scaled_dot_product_*attention ops and
their backward: the kernels torch itself attributes to attention, whatever their names; beside it the
kernels whose names match flash|fmha|sdpa|attn|attention) and the attention share of kernel time:
what `upgradebench decompose` must agree with.

TFLOPS by the MFU convention of facts/flops.hpp:
6 * dense_N * tokens + 6 * s^2 * head_dim * heads * layers per sequence (causal),
dense_N = (3 h I + h (2 q + 2 kv)) L + V h.
"""
import argparse
import datetime
import gzip
import json
import math
import os
import re
import shutil
import socket
import sys
import time

import torch
import transformers
from safetensors.torch import save_file
from transformers import LlamaConfig, LlamaForCausalLM


def step_flops(c, layers, seqlen, batch):
    h, inter, nq, nkv = c["hidden_size"], c["intermediate_size"], c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"])
    d = c.get("head_dim") or h // nq
    q, kv = nq * d, nkv * d
    dense_n = (3 * h * inter + h * (2 * q + 2 * kv)) * layers + c["vocab_size"] * h
    return 6.0 * dense_n * batch * seqlen + 6.0 * batch * seqlen * seqlen * d * nq * layers


def add_common_options(ap, layers, seqlens, steps, warmup):
    """The options of both training peers (this one and train_fsdp_peer.py), with their defaults."""
    ap.add_argument("--config", default=os.path.join(os.path.dirname(__file__), "../../data/models/llama-3.1-8b.json"))
    ap.add_argument("--model-name", default="llama-3.1-8b")
    ap.add_argument("--layers", type=int, default=layers)
    ap.add_argument("--seqlens", default=seqlens)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--warmup", type=int, default=warmup)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--peak-tflops", type=float, default=989.0, help="bf16 dense peak of the GPU (H200: 989)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--checkpointing", action="store_true", help="Hugging Face's gradient checkpointing of every layer")
    ap.add_argument("--save-weights", default=None,
                    help="folder for the weights before the first step (save_pretrained: config.json, model.safetensors) "
                         "and each length's token ids (input_ids_<seqlen>.safetensors), what `upgradebench train "
                         "--weights --tokens` starts from, so that both steps' losses can be compared")


def load_config(path):
    with open(path) as f:
        c = json.load(f)
    return c.get("text_config", c)


def build_model(c, layers, checkpointing, dtype, make_config=LlamaConfig, make_model=LlamaForCausalLM):
    """The model of config `c` (LlamaForCausalLM unless make_config / make_model say otherwise) with
    its first `layers` layers, sdpa attention, on the GPU in `dtype`."""
    cfg = make_config(**{k: v for k, v in c.items() if not k.startswith("_")})
    cfg.num_hidden_layers = layers
    cfg.use_cache = False
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    torch.set_default_dtype(dtype)
    with torch.device("cuda"):
        model = make_model(cfg)
    if checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    return model


def timed_step(model, opt, ids):
    """One step (forward, backward, clipping to 1.0, AdamW) between two CUDA events: (ms, loss)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end), loss.item()


def make_emitter(path):
    """emit(record): one JSON line on stdout and, appended and flushed, into `path` when given."""
    out = open(path, "a") if path else None

    def emit(rec):
        line = json.dumps(rec)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()
    return emit


def context_record(a, tool, config):
    """Our context record for a run of a training peer: this GPU, torch's stack, `config` beside
    the options every training peer takes."""
    props = torch.cuda.get_device_properties(0)
    cudnn = torch.backends.cudnn.version()
    return {"type": "context", "schema": "upgradebench/1", "tool": tool,
            "command": "train", "argv": sys.argv, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "host": socket.gethostname(),
            "gpus": [{"index": 0, "name": props.name, "memory_gib": props.total_memory / 2**30, "sm_count": props.multi_processor_count}],
            "stack": {"torch": torch.__version__, "cuda_runtime": torch.version.cuda,
                      "cudnn": "{0}.{1}.{2}".format(cudnn // 10000, cudnn % 10000 // 100, cudnn % 100),
                      "transformers": transformers.__version__},
            "config": dict({"model": a.model_name, "layers": a.layers, "batch": a.batch, "dtype": "bf16",
                            "precision": "bf16 weights and AdamW state (torch AdamW fused)", "attention": "sdpa",
                            "activation_checkpointing": a.checkpointing, "seqlens": a.seqlens, "steps": a.steps,
                            "warmup": a.warmup, "lr": a.lr, "max_grad_norm": 1.0}, **config)}


def measure_lengths(a, c, model, opt, flop_of, emit, after_length=None):
    """The timed steps of every length of a.seqlens as train_step records (a length out of memory:
    a train_oom record); `after_length(s, ids)` runs after a length's steps. With --save-weights the
    weights are saved before the first step and each length's ids beside them."""
    if a.save_weights:
        model.save_pretrained(a.save_weights)
    for s in [int(x) for x in a.seqlens.split(",")]:
        flop = flop_of(s)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        try:
            ids = torch.randint(0, c["vocab_size"] - 256, (a.batch, s), device="cuda")
            if a.save_weights:
                save_file({"input_ids": ids.to(torch.int64).cpu().contiguous()}, os.path.join(a.save_weights, f"input_ids_{s}.safetensors"))
            for step in range(a.warmup + a.steps):
                ms, loss = timed_step(model, opt, ids)
                tf = flop / 1e12 / (ms / 1e3)
                emit({"type": "train_step", "seqlen": s, "batch": a.batch, "step": step, "warmup": step < a.warmup,
                      "exec_time_ms": ms, "tflops": tf, "mfu": tf / a.peak_tflops,
                      "peak_mem_gib": torch.cuda.max_memory_reserved() / 2**30, "loss": loss})
            if after_length:
                after_length(s, ids)
        except torch.OutOfMemoryError as e:
            emit({"type": "train_oom", "seqlen": s, "batch": a.batch, "what": str(e).splitlines()[0]})
            opt.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    add_common_options(ap, layers=4, seqlens="4096,8192,16384", steps=6, warmup=3)
    ap.add_argument("--profile", default=None, help="folder for torch.profiler traces of each length")
    ap.add_argument("--profile-steps", type=int, default=3)
    a = ap.parse_args()
    c = load_config(a.config)
    emit = make_emitter(a.out)
    emit(context_record(a, "train_peer.py (Hugging Face transformers)", {}))
    model = build_model(c, a.layers, a.checkpointing, torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    after = (lambda s, ids: profile_length(a, model, opt, ids, s, emit)) if a.profile else None
    measure_lengths(a, c, model, opt, lambda s: step_flops(c, a.layers, s, a.batch), emit, after)


ATTENTION = re.compile("flash|fmha|sdpa|attn|attention", re.IGNORECASE)
SDPA_OP = re.compile(r"^aten::_scaled_dot_product_\w*attention(_backward)?$")


def device_time(k, name, old_name):
    t = getattr(k, name, None)
    return t if t is not None else getattr(k, old_name)


def profile_length(a, model, opt, ids, s, emit, prefix="hf_llama"):
    """torch.profiler over one warm-up and a.profile_steps steps; the trace gzipped into a.profile
    as <prefix>_<layers>l_<seqlen>.pt.trace.json.gz.

    The trace is exported from on_trace_ready, at the end of the active steps: the profiler clears
    its events when its cycle ends, so an export after the `with` block finds none."""
    os.makedirs(a.profile, exist_ok=True)
    from torch.profiler import ProfilerActivity, profile, schedule
    name = os.path.join(a.profile, f"{prefix}_{a.layers}l_{s}.pt.trace.json")
    seen = {}

    def ready(prof):
        prof.export_chrome_trace(name)
        avgs = prof.key_averages()
        # GPU-side annotations (ProfilerStep#N, Optimizer.step...) are CUDA rows too, named like
        # the CPU annotations they mirror: kernels are the CUDA rows no CPU row shares a name with.
        cpu = {k.key for k in avgs if "CUDA" not in str(getattr(k, "device_type", ""))}
        total = by_name = by_op = 0.0
        for k in avgs:
            if k.key in cpu:
                if SDPA_OP.match(k.key):  # torch's own attribution: the kernels the attention ops launched
                    by_op += device_time(k, "device_time_total", "cuda_time_total")
                continue
            if "nccl" in k.key.lower():
                continue
            t = device_time(k, "self_device_time_total", "self_cuda_time_total")
            total += t
            if ATTENTION.search(k.key):
                by_name += t
        seen.update(total=total, by_name=by_name, by_op=by_op)

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=a.profile_steps, repeat=1), on_trace_ready=ready) as prof:
        for _ in range(1 + a.profile_steps):
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            prof.step()
    if not seen:
        raise RuntimeError("torch.profiler produced no trace")
    with open(name, "rb") as src, gzip.open(name + ".gz", "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(name)
    total, by_op = seen["total"], seen["by_op"]
    emit({"type": "profile", "seqlen": s, "trace": os.path.basename(name) + ".gz", "steps": a.profile_steps,
          "key_averages_kernel_us": total, "key_averages_attention_us": by_op,
          "key_averages_attention_kernels_by_name_us": seen["by_name"],
          "attention_share_of_kernels": by_op / total if total else None})

if __name__ == "__main__":
    main()
