#!/usr/bin/env python3
"""The peer for `upgradebench train` on several GPUs: Hugging Face transformers LlamaForCausalLM
sharded with torch FSDP2 (`fully_shard` on every decoder layer, then on the root: ZeRO-3's
parameters, gradients and optimizer state sharded, each layer gathered before use), run by
torchrun, one sequence per GPU, each rank its own random tokens (below vocab - 256, as
benchmark.py draws them). sdpa attention, AdamW, gradient clipping to global norm 1.0, and with
--checkpointing Hugging Face's gradient checkpointing (every decoder layer recomputed).

--precision bf16: a bf16 model, bf16 AdamW state (as train_peer.py's one-GPU peer).
--precision master: fp32 parameters and AdamW state, FSDP2's MixedPrecisionPolicy computing in
bf16 and reducing gradients in fp32 (DeepSpeed's bf16 mode, our --precision master).

Each step is timed with CUDA events around forward + backward + clip + optimizer step on every
rank; the step's record is the slowest rank's time and the largest rank's
torch.cuda.max_memory_reserved (the ml-engineering guide's worst-rank memory), with TFLOPS per GPU
by the MFU convention of facts/flops.hpp for one rank's sequence. Rank 0 writes our canonical
records (docs/records.md: a context, then one train_step per step), so `upgradebench compare`
reads them beside ours. A length that runs out of memory on any rank is a train_oom record.

  torchrun --nproc-per-node 2 bench/peers/train_fsdp_peer.py --layers 32 --seqlens 8192 --checkpointing
"""
import argparse
import datetime
import json
import os
import socket
import sys

import torch
import torch.distributed as dist
import transformers
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

sys.path.insert(0, os.path.dirname(__file__))
from train_peer import add_common_options, build_model, load_config, step_flops, timed_step  # noqa: E402  shared with the one-GPU peer


def main():
    ap = argparse.ArgumentParser()
    add_common_options(ap, layers=32, seqlens="8192", steps=5, warmup=2)
    ap.add_argument("--precision", choices=["bf16", "master"], default="bf16")
    a = ap.parse_args()
    if a.save_weights:
        ap.error("--save-weights is for the one-GPU peers (train_peer.py, train_moe_peer.py)")

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    c = load_config(a.config)
    out = open(a.out, "a") if (a.out and rank == 0) else None

    def emit(rec):
        if rank != 0:
            return
        line = json.dumps(rec)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    props = torch.cuda.get_device_properties(local)
    cudnn = torch.backends.cudnn.version()
    emit({"type": "context", "schema": "upgradebench/1", "tool": "train_fsdp_peer.py (Hugging Face transformers, torch FSDP2)",
          "command": "train", "argv": sys.argv, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
          "host": socket.gethostname(),
          "gpus": [{"index": local, "name": props.name, "memory_gib": props.total_memory / 2**30, "sm_count": props.multi_processor_count}],
          "stack": {"torch": torch.__version__, "cuda_runtime": torch.version.cuda,
                    "cudnn": "{0}.{1}.{2}".format(cudnn // 10000, cudnn % 10000 // 100, cudnn % 100),
                    "nccl": ".".join(str(v) for v in torch.cuda.nccl.version()), "transformers": transformers.__version__},
          "config": {"model": a.model_name, "layers": a.layers, "batch": a.batch, "dtype": "bf16",
                     "precision": a.precision, "master_weights": a.precision == "master", "attention": "sdpa",
                     "activation_checkpointing": a.checkpointing, "world_size": world, "zero_stage": 3,
                     "sharding": "torch FSDP2 fully_shard per decoder layer, then the root",
                     "seqlens": a.seqlens, "steps": a.steps, "warmup": a.warmup, "lr": a.lr, "max_grad_norm": 1.0}})

    master = a.precision == "master"
    model = build_model(c, a.layers, a.checkpointing, torch.float32 if master else torch.bfloat16)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if master else MixedPrecisionPolicy()
    for layer in model.model.layers:
        fully_shard(layer, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    gen = torch.Generator(device="cuda").manual_seed(1000 + rank)  # each rank its own sequence
    for s in [int(x) for x in a.seqlens.split(",")]:
        flop = step_flops(c, a.layers, s, a.batch)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        try:
            ids = torch.randint(0, c["vocab_size"] - 256, (a.batch, s), device="cuda", generator=gen)
            for step in range(a.warmup + a.steps):
                ms, loss = timed_step(model, opt, ids)
                stats = torch.tensor([ms, torch.cuda.max_memory_reserved() / 2**30, loss], device="cuda",
                                     dtype=torch.float64)
                worst = stats.clone()
                dist.all_reduce(worst, op=dist.ReduceOp.MAX)
                mean_loss = stats[2:3].clone()
                dist.all_reduce(mean_loss, op=dist.ReduceOp.AVG)
                ms, gib = worst[0].item(), worst[1].item()
                tf = flop / 1e12 / (ms / 1e3)
                emit({"type": "train_step", "seqlen": s, "batch": a.batch, "step": step, "warmup": step < a.warmup,
                      "exec_time_ms": ms, "tflops": tf, "mfu": tf / a.peak_tflops, "peak_mem_gib": gib,
                      "loss": mean_loss.item(), "world_size": world})
        except torch.OutOfMemoryError as e:
            # A rank out of memory cannot take part in the collectives of this length any more: the
            # job reports it and ends (the other ranks are stopped by torchrun).
            emit({"type": "train_oom", "seqlen": s, "batch": a.batch, "what": str(e).splitlines()[0]})
            print(f"rank {rank}: out of memory at seqlen {s}", file=sys.stderr, flush=True)
            sys.exit(3)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
