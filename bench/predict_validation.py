#!/usr/bin/env python3
"""How well `upgradebench predict` carries a measured step to another sequence length, checked
against steps measured at that length on the same GPU (leave one out: each measured length in turn
is the source, every other one the target).

  bench/predict_validation.py UPGRADEBENCH --model M [--layers L] [--measured FILE ...] INPUT...

INPUT: decomposition records (one length per file or several), or one training log (train /
sweep records, benchmark.py's sweep log). Prints one line per (source, target) pair and the mean
and largest absolute error; with --json, one JSON object per pair.
"""
import argparse
import json
import statistics
import subprocess
import sys


def predict(ub, args, inputs, target, source):
    cmd = [ub, "predict"] + inputs + ["--to", args.gpu, "--model", args.model, "--seqlen", str(target),
                                      "--carry-from", str(source), "--json"]
    cmd += ["--layers", str(args.layers)] if args.layers else []
    cmd += [f"--measured={m}" for m in args.measured]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"predict failed: {' '.join(cmd)}\n{out.stderr}")
    return json.loads(out.stdout)[0]


def measured_steps(ub, args, inputs):
    """Each input length's own step, as predict reads it (same GPU, no carrying)."""
    cmd = [ub, "predict"] + inputs + ["--to", args.gpu, "--model", args.model, "--json"]
    cmd += ["--layers", str(args.layers)] if args.layers else []
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"predict failed: {' '.join(cmd)}\n{out.stderr}")
    return {p["seqlen"]: p["old_step_ms"] for p in json.loads(out.stdout)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ub")
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--model", required=True)
    ap.add_argument("--layers", type=int, default=0)
    ap.add_argument("--gpu", required=True, help="the GPU the inputs measured (catalog id)")
    ap.add_argument("--measured", action="append", default=[], help="micro-benchmarks of that GPU (attention runs)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    steps = measured_steps(args.ub, args, args.inputs)
    errors = []
    for source in sorted(steps):
        for target in sorted(steps):
            if source == target:
                continue
            p = predict(args.ub, args, args.inputs, target, source)
            err = p["step_ms"] / steps[target] - 1
            errors.append(abs(err))
            row = {"source": source, "target": target, "predicted_ms": p["step_ms"], "measured_ms": steps[target],
                   "error": err}
            print(json.dumps(row) if args.json else
                  f"{source:>7} -> {target:>7}: predicted {p['step_ms']:10.2f} ms, measured {steps[target]:10.2f} ms, "
                  f"error {100 * err:+6.1f}%", flush=True)
    if errors and not args.json:
        print(f"{len(errors)} pairs: mean absolute error {100 * statistics.mean(errors):.1f}%, largest {100 * max(errors):.1f}%")


if __name__ == "__main__":
    main()
