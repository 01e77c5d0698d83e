"""The exporter's numeric contract, and models conditioned as training would.

A program agrees with its reference quantized model as closely as other
valid evaluations of that same model do. On one input, with differences
measured in output quantization steps:

- PyTorch with oneDNN turned off (torch.backends.mkldnn.enabled = False),
- the model with its convolutions and linears accumulated in float64,
- PyTorch under its `default` CPU capability, when this process runs
  another one (PyTorch's avx512 code sums in another order than its
  default and avx2 code, and the same reference model then differs from
  itself by several steps on deep networks; a program has one result),

give a largest and a mean difference from the reference; the program's
may be at most twice the largest of them, and at most 3 steps (largest)
and 0.5 step (mean) where those are smaller.

`condition(model, input_shape)` gives a randomly initialised torchvision
model the statistics training would: random batch-norm affine parameters,
then running statistics measured on random inputs in train mode.
"""

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import numpy as np
import torch
import torch.ao.nn.intrinsic as nni
import torch.fx
from torch import nn
from torch.nn import functional as F

MAX_STEPS_FLOOR = 3.0
MEAN_STEPS_FLOOR = 0.5


@dataclass(frozen=True)
class Distance:
    max_steps: float
    mean_steps: float

    def __str__(self):
        return f"max {self.max_steps:.3f} steps, mean {self.mean_steps:.4f} steps"


def distance(output, reference, step):
    difference = np.abs(np.asarray(output, np.float64) - np.asarray(reference, np.float64)) / step
    return Distance(float(difference.max()), float(difference.mean()))


class _Float64Layers(torch.fx.Interpreter):
    """Runs a reference quantized model with every convolution and linear accumulated in float64."""

    def call_module(self, target, args, kwargs):
        module = self.fetch_attr(target)
        fused = isinstance(module, (nni.ConvReLU2d, nni.LinearReLU))
        layer = module[0] if fused else module
        if not isinstance(layer, (nn.Conv2d, nn.Linear)):
            return super().call_module(target, args, kwargs)
        weight = (layer.get_weight() if hasattr(layer, "get_weight") else layer.weight).double()
        bias = None if layer.bias is None else layer.bias.double()
        x = args[0].double()
        if isinstance(layer, nn.Conv2d):
            y = F.conv2d(x, weight, bias, layer.stride, layer.padding, layer.dilation, layer.groups)
        else:
            y = F.linear(x, weight, bias)
        y = y.float()
        return F.relu(y) if fused else y


def float64_layers_output(reference, example_inputs):
    with torch.no_grad():
        return _Float64Layers(reference).run(*example_inputs).numpy()


def onednn_off_output(reference, example_inputs):
    with torch.no_grad(), torch.backends.mkldnn.flags(enabled=False):
        return reference(*example_inputs).numpy()


_RUN_SAVED = """
import sys, numpy as np, torch
module, inputs = torch.load(sys.argv[1])
with torch.no_grad():
    np.save(sys.argv[2], module(*inputs).numpy())
"""


def default_capability_output(reference, example_inputs):
    """The reference model's output computed by PyTorch under ATEN_CPU_CAPABILITY=default."""
    with tempfile.TemporaryDirectory(prefix="et_ops_contract_") as directory:
        saved, output = os.path.join(directory, "model.pt"), os.path.join(directory, "output.npy")
        torch.save((reference, tuple(example_inputs)), saved)
        subprocess.run([sys.executable, "-c", _RUN_SAVED, saved, output], check=True,
                       env=dict(os.environ, ATEN_CPU_CAPABILITY="default",
                                PYTHONPATH=os.pathsep.join(filter(None, [os.path.dirname(os.path.abspath(__file__)),
                                                                          os.environ.get("PYTHONPATH")]))))
        return np.load(output)


def _runs_default_capability():
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage" in line:
            return line.split(":", 1)[1].strip() == "NO AVX"
    return False


@dataclass(frozen=True)
class Bound:
    max_steps: float
    mean_steps: float
    float64_layers: Distance
    onednn_off: Distance
    default_capability: Distance

    def admits(self, d):
        return d.max_steps <= self.max_steps and d.mean_steps <= self.mean_steps

    def __str__(self):
        return (f"allowed max {self.max_steps:.3f} / mean {self.mean_steps:.4f} steps "
                f"(float64 layers: {self.float64_layers}; oneDNN off: {self.onednn_off}; "
                f"PyTorch's default capability: {self.default_capability})")


def bound(reference, example_inputs, reference_output, step):
    others = [distance(float64_layers_output(reference, example_inputs), reference_output, step),
              distance(onednn_off_output(reference, example_inputs), reference_output, step),
              Distance(0.0, 0.0) if _runs_default_capability() else
              distance(default_capability_output(reference, example_inputs), reference_output, step)]
    return Bound(max(2 * max(d.max_steps for d in others), MAX_STEPS_FLOOR),
                 max(2 * max(d.mean_steps for d in others), MEAN_STEPS_FLOOR), *others)


def condition(model, input_shape, seed=0, batches=3):
    """Random batch-norm affine parameters, then running statistics measured on random inputs."""
    generator = torch.Generator().manual_seed(seed)
    batch_shape = (max(input_shape[0], 4),) + tuple(input_shape[1:])
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            with torch.no_grad():
                module.weight.copy_(torch.rand(module.weight.shape, generator=generator) + 0.5)
                module.bias.copy_(torch.rand(module.bias.shape, generator=generator) - 0.5)
            module.reset_running_stats()
            module.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch_shape, generator=generator))
    return model.eval()
