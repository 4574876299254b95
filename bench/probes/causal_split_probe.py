#!/usr/bin/env python3
"""Probe: would causal attention run faster as blocks? Causal(s) equals two causal
blocks of s/2 (batched) plus one non-causal block of s/2 x s/2 (the second half's queries on the
first half's keys), merged through the softmax statistics. This times the pieces with torch's
cuDNN backend (the same engines ours uses) to see what the decomposition could reach before it
is built. Prints one line per piece: ms and TFLOPS by bench_flash_attn.py's convention."""
import statistics
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

H, KV, D = 32, 8, 128
dev = torch.device("cuda")
l2 = torch.empty(256 * 2**20, dtype=torch.int8, device=dev)


def timed(fn, iters=20):
    for _ in range(3):
        fn()
    times = []
    for _ in range(iters):
        l2.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def piece(batch, s, causal):
    q = torch.randn(batch, s, H, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(batch, s, KV, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(batch, s, KV, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
    do = torch.randn(batch, s, H, D, device=dev, dtype=torch.bfloat16)
    f = 4.0 * batch * s * s * H * D / (2 if causal else 1)

    def fwd():
        return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                              is_causal=causal, enable_gqa=True)

    def fb():
        fwd().backward(do.transpose(1, 2))
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        tf, tfb = timed(fwd), timed(fb)
    print(f"batch {batch} s {s} {'causal' if causal else 'full'}: fwd {tf:.3f} ms {f/tf/1e9:.1f} TFLOPS,"
          f" fwd+bwd {tfb:.3f} ms {3.5*f/tfb/1e9:.1f}, bwd {tfb-tf:.3f} ms {2.5*f/(tfb-tf)/1e9:.1f}", flush=True)
    return tf, tfb


for rnd in range(2):
    for s in (8192, 16384, 32768):
        whole = piece(1, s, True)
        half_c = piece(2, s // 2, True)
        half_n = piece(1, s // 2, False)
        q_c = piece(4, s // 4, True)
        q_n = piece(2, s // 4, False)
        f = 2.0 * s * s * H * D
        one = (half_c[0] + half_n[0], half_c[1] + half_n[1])
        two = (q_c[0] + q_n[0] + half_n[0], q_c[1] + q_n[1] + half_n[1])
        for name, t in (("whole", whole), ("split once", one), ("split twice", two)):
            print(f"== s {s} {name}: fwd {f/t[0]/1e9:.1f} fwd+bwd {3.5*f/t[1]/1e9:.1f}", flush=True)
