#!/usr/bin/env python3
"""The peer for `upgradebench bandwidth`: a PyTorch device-to-device tensor copy (dst.copy_(src))
of --bytes, timed with CUDA events over --iters copies after warm-up. GB/s counts bytes read plus
bytes written, as ours does. Prints one JSON line."""
import argparse
import json
import statistics

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=4 * 2**30)
    ap.add_argument("--iters", type=int, default=100)
    a = ap.parse_args()
    src = torch.randint(0, 255, (a.bytes,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(20):
        dst.copy_(src)
    torch.cuda.synchronize()
    times = []
    for _ in range(a.iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        dst.copy_(src)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    assert torch.equal(dst, src)
    moved = 2.0 * a.bytes
    print(json.dumps({"op": "copy", "bytes": a.bytes,
                      "median_gbps": moved / (statistics.median(times) * 1e-3) / 1e9,
                      "max_gbps": moved / (min(times) * 1e-3) / 1e9,
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
