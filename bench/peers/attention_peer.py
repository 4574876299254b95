#!/usr/bin/env python3
"""The peer for `upgradebench attention`: torch.nn.functional.scaled_dot_product_attention with
the cuDNN backend and with the flash backend (FlashAttention-2 inside PyTorch), enable_gqa=True,
timed the way our command times: inputs random normal in BSHD memory (the layout a Llama layer
produces, seen as [batch, heads, seq, dim] through a transpose), an L2 flush (zeroing 256 MiB)
before each sample, CUDA events around the forward, or around forward + backward, median of the
samples after a warm-up. TFLOPS by bench_flash_attn.py's convention: f = 4 * batch * s^2 * heads * head_dim,
halved when causal; forward+backward 3.5 f. Packed documents (--doc-len L) are the same buffer
seen as batch * s / L sequences of L, as ours.

Prints one JSON line per (backend, seqlen); --out writes them to a file too.
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}


def flops(batch, s, heads, head_dim, causal, doc_len):
    squares = (s // doc_len) * doc_len * doc_len if doc_len else s * s
    f = 4.0 * batch * squares * heads * head_dim
    return f / 2 if causal else f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seqlens", default="1024,2048,4096,8192,16384,32768")
    ap.add_argument("--backends", default="cudnn,flash")
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--doc-len", type=int, default=0)
    ap.add_argument("--non-causal", action="store_true")
    ap.add_argument("--warmup-s", type=float, default=2.0)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    causal = not a.non_causal
    dev = torch.device("cuda")
    torch.manual_seed(0)
    l2 = torch.empty(256 * 2**20, dtype=torch.int8, device=dev)
    out_file = open(a.out, "w") if a.out else None

    def timed(fn, iters):
        times = []
        for _ in range(iters):
            l2.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    warmed = False
    for backend in a.backends.split(","):
        for s in [int(x) for x in a.seqlens.split(",")]:
            b = a.batch * (s // a.doc_len if a.doc_len else 1)
            sl = a.doc_len or s
            q = torch.randn(b, sl, a.heads, a.head_dim, device=dev, dtype=torch.bfloat16, requires_grad=True)
            k = torch.randn(b, sl, a.kv_heads, a.head_dim, device=dev, dtype=torch.bfloat16, requires_grad=True)
            v = torch.randn(b, sl, a.kv_heads, a.head_dim, device=dev, dtype=torch.bfloat16, requires_grad=True)
            d_o = torch.randn(b, sl, a.heads, a.head_dim, device=dev, dtype=torch.bfloat16)

            def fwd():
                return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                      is_causal=causal, enable_gqa=True)

            def fwd_bwd():
                o = fwd()
                o.backward(d_o.transpose(1, 2))

            rec = {"peer": "torch.sdpa", "backend": backend, "torch": torch.__version__,
                   "cudnn": torch.backends.cudnn.version(), "seqlen": s, "batch": a.batch,
                   "heads": a.heads, "kv_heads": a.kv_heads, "head_dim": a.head_dim, "causal": causal,
                   "doc_len": a.doc_len}
            try:
                with sdpa_kernel([BACKENDS[backend]]):
                    if not warmed:
                        import time
                        t_end = time.time() + a.warmup_s
                        while time.time() < t_end:
                            fwd_bwd()
                        torch.cuda.synchronize()
                        warmed = True
                    for _ in range(3):
                        fwd_bwd()
                    f = flops(a.batch, s, a.heads, a.head_dim, causal, a.doc_len)
                    with torch.no_grad():
                        rec["fwd_ms"] = timed(fwd, a.iters)
                    rec["fwd_bwd_ms"] = timed(fwd_bwd, a.iters)
                    rec["fwd_tflops"] = f / (rec["fwd_ms"] * 1e-3) / 1e12
                    rec["fwd_bwd_tflops"] = 3.5 * f / (rec["fwd_bwd_ms"] * 1e-3) / 1e12
            except Exception as e:  # a backend that cannot run a shape says so and the sweep goes on
                rec["error"] = str(e).splitlines()[0][:200]
            q.grad = k.grad = v.grad = None
            line = json.dumps(rec)
            print(line, flush=True)
            if out_file:
                out_file.write(line + "\n")
                out_file.flush()


if __name__ == "__main__":
    main()
