#!/usr/bin/env python3
"""The peer for `upgradebench mamf`: torch.mm (and torch._scaled_mm for fp8) timed the way
mamf-finder.py does it, written here so the comparison runs in the same device call as ours.

Method (shared/reference/formats.md): accelerator warm-up first (--warmup-s, 30 s in the peer);
per shape 50 warm-up + 100 timed products, each preceded by an L2 flush (zeroing a 256 MiB
buffer) and a re-randomised output, CUDA events around each product; TFLOPS = 2*M*N*K / time,
mean / median / max over the iterations (max = from the fastest). fp8: e4m3 inputs, per-tensor
scales of 1.0, bf16 output, B column-major (what _scaled_mm requires).

Prints one JSON line per shape and the peer's footer; --out writes the JSON lines to a file.
"""
import argparse
import json
import statistics
import sys
import time

import torch


def sizes(values, rng):
    if rng:
        start, stop, step = rng
        return list(range(start or step, stop, step))
    return values


def main():
    ap = argparse.ArgumentParser()
    for d in "mnk":
        ap.add_argument(f"--{d}", type=int, nargs="+", default=None)
        ap.add_argument(f"--{d}_range", type=int, nargs=3, default=None)
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp8"])
    ap.add_argument("--warmup-s", type=float, default=30.0)
    ap.add_argument("--warmup-iters", type=int, default=50)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    ms = sizes(a.m or [2048, 4096, 8192], a.m_range)
    ns = sizes(a.n or [2048, 4096, 8192], a.n_range)
    ks = sizes(a.k or [4096, 8192, 13312], a.k_range)
    dev = torch.device("cuda")
    torch.manual_seed(0)
    l2 = torch.empty(256 * 2**20, dtype=torch.int8, device=dev)
    out_file = open(a.out, "w") if a.out else None

    def operands(m, n, k):
        if a.dtype == "fp8":
            A = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
            B = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()  # column-major K x N
            C = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
            one = torch.tensor(1.0, device=dev)
            return A, B, C, lambda: torch._scaled_mm(A, B, scale_a=one, scale_b=one,
                                                     out_dtype=torch.bfloat16, out=C)
        dt = torch.bfloat16 if a.dtype == "bf16" else torch.float16
        A = torch.randn(m, k, device=dev, dtype=dt)
        B = torch.randn(k, n, device=dev, dtype=dt)
        C = torch.empty(m, n, device=dev, dtype=dt)
        return A, B, C, lambda: torch.mm(A, B, out=C)

    # Accelerator warm-up on the last (largest) shape.
    _, _, _, f = operands(ms[-1], ns[-1], ks[-1])
    t_end = time.time() + a.warmup_s
    while time.time() < t_end:
        for _ in range(10):
            f()
        torch.cuda.synchronize()

    best = {"mean": (0, ""), "median": (0, ""), "max": (0, "")}
    t0 = time.time()
    count = 0
    for m in ms:
        for n in ns:
            for k in ks:
                A, B, C, f = operands(m, n, k)
                for _ in range(a.warmup_iters):
                    f()
                starts = [torch.cuda.Event(enable_timing=True) for _ in range(a.iters)]
                ends = [torch.cuda.Event(enable_timing=True) for _ in range(a.iters)]
                for i in range(a.iters):
                    l2.zero_()
                    C.normal_()
                    starts[i].record()
                    f()
                    ends[i].record()
                torch.cuda.synchronize()
                ms_ = [s.elapsed_time(e) for s, e in zip(starts, ends)]
                flop = 2.0 * m * n * k
                r = {"m": m, "n": n, "k": k, "dtype": a.dtype,
                     "mean": flop / (statistics.mean(ms_) * 1e-3) / 1e12,
                     "median": flop / (statistics.median(ms_) * 1e-3) / 1e12,
                     "max": flop / (min(ms_) * 1e-3) / 1e12}
                count += 1
                shape = f"{m}x{n}x{k}"
                for key in best:
                    if r[key] > best[key][0]:
                        best[key] = (r[key], shape)
                line = json.dumps(r)
                print(line, flush=True)
                if out_file:
                    out_file.write(line + "\n")
                    out_file.flush()
                del A, B, C
    elapsed = time.time() - t0
    print(f"Tried {count} shapes => the best outcomes were:")
    print(f"mean:   {best['mean'][0]:.1f} TFLOPS @ {best['mean'][1]} (MxNxK)")
    print(f"median: {best['median'][0]:.1f} TFLOPS @ {best['median'][1]} (MxNxK)")
    print(f"max:    {best['max'][0]:.1f} TFLOPS @ {best['max'][1]} (MxNxK)")
    print(f"elapsed {elapsed:.1f} s after {a.warmup_s:.0f} s warm-up; torch {torch.__version__}, "
          f"{torch.cuda.get_device_name()}", file=sys.stderr)


if __name__ == "__main__":
    main()
