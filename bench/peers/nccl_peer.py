#!/usr/bin/env python3
"""The peer for `upgradebench nccl`: torch.distributed (NCCL backend) all_reduce, all_gather and
reduce_scatter, one process per GPU, started by torchrun:

    torchrun --nproc-per-node 2 bench/peers/nccl_peer.py --sizes 1M,16M,256M,1G,4G --out peer.jsonl

Sizes name a point as nccl-tests and `upgradebench nccl` do: all_reduce the buffer, all_gather the
gathered output (each rank sends size / n), reduce_scatter the input (each rank receives size / n).
all_reduce runs in place (dist.all_reduce), the other two out of place, and each line says which.
Per size: 5 warm-up calls, then --iters calls between two CUDA events; time per call is the
slowest rank's. algbw = size / time; busbw = algbw x 2(n-1)/n (all_reduce) or (n-1)/n. The result
of the first call is checked (integers, exact in bf16). Rank 0 prints one JSON line per point.
"""
import argparse
import json
import os

import torch
import torch.distributed as dist

FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
          "reduce_scatter": lambda n: (n - 1) / n}


def size(text):
    mult = {"k": 2**10, "K": 2**10, "M": 2**20, "G": 2**30}
    return int(float(text[:-1]) * mult[text[-1]]) if text[-1] in mult else int(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1M,2M,4M,8M,16M,32M,64M,128M,256M,512M,1G,2G,4G")
    ap.add_argument("--ops", default="all_reduce,all_gather,reduce_scatter")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, n = dist.get_rank(), dist.get_world_size()
    out = open(a.out, "w") if a.out and rank == 0 else None
    for op in a.ops.split(","):
        for s in [size(x) for x in a.sizes.split(",")]:
            elems = s // 2 // n * n  # bf16, whole parts per rank
            part = elems // n
            if op == "all_reduce":
                inp = torch.full((elems,), rank % 3 - 1, dtype=torch.bfloat16, device="cuda")
                outp = inp
                call = lambda: dist.all_reduce(inp)
                want = sum(r % 3 - 1 for r in range(n))
            elif op == "all_gather":
                inp = torch.full((part,), rank % 3 - 1, dtype=torch.bfloat16, device="cuda")
                outp = torch.empty(elems, dtype=torch.bfloat16, device="cuda")
                call = lambda: dist.all_gather_into_tensor(outp, inp)
                want = None
            else:
                inp = torch.full((elems,), rank % 3 - 1, dtype=torch.bfloat16, device="cuda")
                outp = torch.empty(part, dtype=torch.bfloat16, device="cuda")
                call = lambda: dist.reduce_scatter_tensor(outp, inp)
                want = sum(r % 3 - 1 for r in range(n))
            call()
            torch.cuda.synchronize()
            if op == "all_gather":
                expect = torch.cat([torch.full((part,), r % 3 - 1, dtype=torch.bfloat16, device="cuda") for r in range(n)])
                assert torch.equal(outp, expect), f"{op} {s}: wrong result"
            else:
                assert bool((outp == want).all()), f"{op} {s}: wrong result"
            for _ in range(5):
                call()
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            for _ in range(a.iters):
                call()
            end.record()
            end.synchronize()
            t = torch.tensor([begin.elapsed_time(end) / a.iters], device="cuda")
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            ms = t.item()
            bytes_ = elems * 2
            algbw = bytes_ / (ms * 1e-3) / 1e9
            rec = {"collective": op, "dtype": "bf16", "bytes": bytes_, "world_size": n, "in_place": op == "all_reduce",
                   "time_us": ms * 1e3,
                   "algbw_gbps": algbw, "busbw_gbps": algbw * FACTOR[op](n), "torch": torch.__version__,
                   "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                   "gpu": torch.cuda.get_device_name()}
            if rank == 0:
                print(json.dumps(rec), flush=True)
                if out:
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
            del inp, outp
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
