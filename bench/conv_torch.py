#!/usr/bin/env python3
"""The float convolution and linear layers of ResNet18 and MobileNetV2 at
224x224 (batch 1, one thread): et_ops (bench/conv_bench, per Highway target)
beside PyTorch's own float conv2d / linear and a plain float matmul, all
measured in this one run, in GFLOP/s (2 * multiply-adds per second).

Every figure is the best of --repetitions runs in each of --rounds rounds,
which alternate between the two sides (the machine may be shared; the best
run is the one least disturbed), for both sides alike.

Usage (Debian's interpreter, which has torch):
  /usr/bin/python3 bench/conv_torch.py BUILD/bench/conv_bench [--targets AVX2,AVX3]
      [--repetitions 5] [--rounds 1] [--min-time 0.2] [--onednn-isa AVX2]

--onednn-isa limits PyTorch's convolution library (oneDNN) to an instruction
set (ONEDNN_MAX_CPU_ISA: AVX2, AVX512_CORE, ...), e.g. to compare both sides
on what an AVX2-only machine runs.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("conv_bench", help="the conv_bench executable (BUILD/bench/conv_bench)")
    parser.add_argument("--targets", default="AVX2,AVX3", help="Highway targets to report (comma-separated)")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds of both sides")
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per repetition of each benchmark")
    parser.add_argument("--onednn-isa", help="ONEDNN_MAX_CPU_ISA for PyTorch's convolution")
    parser.add_argument("--filter", default="", help="only layers whose name contains this")
    return parser.parse_args()


def best_seconds(fn, min_time, repetitions):
    """The fastest mean time per call over `repetitions` timed batches."""
    calls = 1
    while True:  # calibrate: a batch lasts about min_time
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time / 4 or calls > 1 << 20:
            break
        calls *= 2
    calls = max(1, int(calls * min_time / max(elapsed, 1e-9)))
    best = float("inf")
    for _ in range(repetitions):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def conv_flops(s):
    out = (s["size"] + 2 * s["padding"] - s["kernel"]) // s["stride"] + 1
    return 2.0 * s["out_channels"] * out * out * (s["in_channels"] // s["groups"]) * s["kernel"] ** 2


def torch_figures(torch, shapes, args):
    """GFLOP/s of PyTorch's conv2d and linear on every shape."""
    F = torch.nn.functional
    gen = torch.Generator().manual_seed(1)
    figures = {}
    with torch.no_grad():
        for s in shapes["conv"]:
            if args.filter not in s["name"]:
                continue
            x = torch.rand(1, s["in_channels"], s["size"], s["size"], generator=gen) * 2 - 1
            w = torch.rand(s["out_channels"], s["in_channels"] // s["groups"], s["kernel"], s["kernel"],
                           generator=gen) * 2 - 1
            b = torch.rand(s["out_channels"], generator=gen)
            seconds = best_seconds(lambda: F.conv2d(x, w, b, s["stride"], s["padding"], 1, s["groups"]),
                                   args.min_time, args.repetitions)
            figures["conv/" + s["name"]] = conv_flops(s) / seconds * 1e-9
        for s in shapes["linear"]:
            if args.filter not in s["name"]:
                continue
            x = torch.rand(s["rows"], s["in_features"], generator=gen)
            w = torch.rand(s["out_features"], s["in_features"], generator=gen)
            b = torch.rand(s["out_features"], generator=gen)
            seconds = best_seconds(lambda: F.linear(x, w, b), args.min_time, args.repetitions)
            figures["linear/" + s["name"]] = 2.0 * s["rows"] * s["in_features"] * s["out_features"] / seconds * 1e-9
    return figures


def et_ops_figures(args, targets):
    """Best GFLOP/s of each conv_bench benchmark: {(layer, target or plain_matmul): value}."""
    names = "|".join(targets + ["plain_matmul"])
    done = subprocess.run(
        [args.conv_bench, f"--benchmark_filter={args.filter}.*/({names})$", "--benchmark_format=json",
         f"--benchmark_repetitions={args.repetitions}", f"--benchmark_min_time={args.min_time}"],
        check=True, capture_output=True, text=True)
    figures = {}
    for run in json.loads(done.stdout)["benchmarks"]:
        if run.get("run_type") != "iteration":
            continue
        layer, variant = run["run_name"].rsplit("/", 1)
        key = (layer, variant)
        figures[key] = max(figures.get(key, 0.0), run["GFLOP/s"])
    return figures


def main():
    args = parse_args()
    if args.onednn_isa:
        os.environ["ONEDNN_MAX_CPU_ISA"] = args.onednn_isa  # before oneDNN starts
    import torch

    torch.set_num_threads(1)
    targets = [t for t in args.targets.split(",") if t]
    shapes = json.loads(subprocess.run([args.conv_bench, "--shapes"], check=True, capture_output=True,
                                       text=True).stdout)
    ours, theirs = {}, {}
    for _ in range(args.rounds):
        for key, value in et_ops_figures(args, targets).items():
            ours[key] = max(ours.get(key, 0.0), value)
        for key, value in torch_figures(torch, shapes, args).items():
            theirs[key] = max(theirs.get(key, 0.0), value)
    capability = next((line.split(":")[-1].strip() for line in torch.__config__.show().splitlines()
                       if "CPU capability usage" in line), "unknown")
    print(f"GFLOP/s, batch 1, one thread, best of {args.rounds} x {args.repetitions}; PyTorch {torch.__version__} "
          f"(ATen {capability}, oneDNN limit {os.environ.get('ONEDNN_MAX_CPU_ISA', 'none')})")
    head = ["layer", "MFLOP"] + [f"et_ops {t}" for t in targets] + ["plain matmul", "PyTorch"] + \
        [f"{t} / PyTorch" for t in targets]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    layers = [("conv/" + s["name"], conv_flops(s)) for s in shapes["conv"]] + \
        [("linear/" + s["name"], 2.0 * s["rows"] * s["in_features"] * s["out_features"]) for s in shapes["linear"]]
    totals = {t: 0.0 for t in targets + ["PyTorch"]}
    for layer, flops in layers:
        if layer not in theirs:
            continue
        row = [layer, f"{flops * 1e-6:.1f}"]
        row += [f"{ours.get((layer, t), 0):.1f}" for t in targets]
        row += [f"{ours.get((layer, 'plain_matmul'), 0):.1f}", f"{theirs[layer]:.1f}"]
        row += [f"{ours.get((layer, t), 0) / theirs[layer]:.2f}" for t in targets]
        print("| " + " | ".join(row) + " |")
        for t in targets:
            if ours.get((layer, t)):
                totals[t] += flops / (ours[(layer, t)] * 1e9)
        totals["PyTorch"] += flops / (theirs[layer] * 1e9)
    print("Time for the layers above, once each (ms): " +
          ", ".join(f"{name} {seconds * 1e3:.2f}" for name, seconds in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
