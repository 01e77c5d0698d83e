#!/usr/bin/env python3
"""The example MLP end to end, in one run, three ways:
  - et_ops running the exported quantized program (Python module, one run state reused),
  - PyTorch 1.13 eager float32 (the same module, the same weights),
  - PyTorch's own quantized version (post-training static quantization
    calibrated on the same calibration set) with fbgemm, or the x86 engine
    this PyTorch build has when it lacks fbgemm (Debian's 1.13 has onednn
    and qnnpack only).
Reports the median time per call and each one's ratio to eager float.

Usage (Debian's interpreter, with the build tree's package on the path):
  PYTHONPATH=build/src/python /usr/bin/python3 bench/mlp_e2e.py [--batch N] [--repeat N]
"""
import argparse
import os
import statistics
import tempfile
import time

import numpy as np
import torch
from torch import nn

import et_ops
from et_ops import export, models


def median_seconds(fn, repeat):
    for _ in range(min(100, repeat)):  # warm-up
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class QuantizableMLP(nn.Module):
    """The same layers wrapped for eager-mode post-training quantization."""

    def __init__(self, float_model):
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.body = float_model
        self.dequant = torch.ao.quantization.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.body(self.quant(x)))


def quantized_engine():
    supported = torch.backends.quantized.supported_engines
    return next(e for e in ("fbgemm", "x86", "onednn", "qnnpack") if e in supported)


def torch_quantized_model(spec, engine):
    torch.backends.quantized.engine = engine
    model = QuantizableMLP(models.build_model(spec)).eval()
    model.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    prepared = torch.ao.quantization.prepare(model)
    with torch.no_grad():
        prepared(models.calibration_inputs(spec))
    return torch.ao.quantization.convert(prepared)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    torch.set_num_threads(1)

    spec = models.MODELS["mlp"]
    x = models.example_input(spec)
    with tempfile.TemporaryDirectory() as directory:
        export.export("mlp", directory)
        program = et_ops.load(os.path.join(directory, "qmlp.etp"))
    x_numpy = x.numpy()
    float_model = models.build_model(spec)
    engine = quantized_engine()
    quantized_torch = torch_quantized_model(spec, engine)

    with torch.no_grad():
        results = {
            "et_ops quantized program": median_seconds(lambda: program.run([x_numpy]), args.repeat),
            "PyTorch eager float32": median_seconds(lambda: float_model(x), args.repeat),
            f"PyTorch quantized ({engine})": median_seconds(lambda: quantized_torch(x), args.repeat),
        }
    reference = results["PyTorch eager float32"]
    print(f"MLP 16-32-8, batch {x.shape[0]}, median of {args.repeat} calls, 1 thread")
    for name, seconds in results.items():
        print(f"  {name:28s} {seconds * 1e6:9.2f} us   {seconds / reference:5.2f}x eager float")


if __name__ == "__main__":
    main()
