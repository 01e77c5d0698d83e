"""The example models of the exporter, their data, and their graphs.

Each model exists twice, on purpose: as a PyTorch module (the eager float
reference) and as a graph function written against a small backend
interface (see lowering.py). The exporter runs the graph with a float
backend and checks that it reproduces the module bit for bit, so the
program it emits from the same graph function is known to describe the
module.

Determinism: weights come from PyTorch's default initialisation after
``torch.manual_seed``, and data from ``torch.rand`` with a seeded
generator. Both draw uniform numbers serially from the CPU generator, so
they are identical on every machine (``torch.randn``'s vectorised kernels
are not guaranteed to be).
"""

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

WEIGHT_SEED = 20240601
CALIBRATION_SEED = 20240602
EXAMPLE_SEED = 20240603
CALIBRATION_SAMPLES = 256


class MLP(nn.Module):
    """16 -> 32 -> ReLU -> 8."""

    input_shape = (4, 16)  # the example input's batch of 4

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class CNN(nn.Module):
    """conv 3x3 (3 -> 8, padding 1) -> ReLU -> max pool 2x2 -> flatten -> linear 128 -> 10."""

    input_shape = (2, 3, 8, 8)

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), kernel_size=2, stride=2)
        return self.fc(torch.flatten(x, 1))


@dataclass(frozen=True)
class Linear:
    name: str
    weight: np.ndarray  # float32 [out, in]
    bias: np.ndarray  # float32 [out]


@dataclass(frozen=True)
class Conv2d:
    name: str
    weight: np.ndarray  # float32 [out, in, kh, kw]
    bias: np.ndarray  # float32 [out]
    stride: tuple
    padding: tuple


def _float32(parameter):
    return parameter.detach().to(torch.float32).numpy().copy()


def _linear(name, module):
    return Linear(name, _float32(module.weight), _float32(module.bias))


def _conv2d(name, module):
    return Conv2d(name, _float32(module.weight), _float32(module.bias), tuple(module.stride), tuple(module.padding))


def mlp_graph(g, layers, x):
    x = g.quantization_point("input", x)
    h = g.relu(g.linear(x, layers["fc1"]))
    h = g.quantization_point("hidden", h)
    y = g.linear(h, layers["fc2"])
    return g.quantization_point("output", y)


def cnn_graph(g, layers, x):
    x = g.quantization_point("input", x)
    h = g.relu(g.conv2d(x, layers["conv"]))
    # Max pooling picks values that are already on the quantization grid,
    # so it needs no quantization point of its own.
    h = g.quantization_point("conv_relu", h)
    h = g.flatten(g.max_pool2d(h, kernel_size=(2, 2), stride=(2, 2)))
    y = g.linear(h, layers["fc"])
    return g.quantization_point("output", y)


@dataclass(frozen=True)
class ModelSpec:
    name: str  # the command-line name
    program_name: str  # the program's and the files' name
    module_class: type
    graph: object
    layers: object  # module -> {name: Linear | Conv2d}
    sample_shape: tuple  # one calibration sample, without the batch dimension


MODELS = {
    "mlp": ModelSpec(
        "mlp", "qmlp", MLP, mlp_graph,
        lambda m: {"fc1": _linear("fc1", m.fc1), "fc2": _linear("fc2", m.fc2)},
        (16,)),
    "cnn": ModelSpec(
        "cnn", "qcnn", CNN, cnn_graph,
        lambda m: {"conv": _conv2d("conv", m.conv), "fc": _linear("fc", m.fc)},
        (3, 8, 8)),
}


def build_model(spec):
    """The float32 module with its deterministic initial weights."""
    torch.manual_seed(WEIGHT_SEED)
    return spec.module_class().eval()


def _uniform(shape, seed, low=-1.0, high=1.0):
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=generator, dtype=torch.float32) * (high - low) + low


def calibration_inputs(spec):
    return _uniform((CALIBRATION_SAMPLES,) + spec.sample_shape, CALIBRATION_SEED)


def example_input(spec):
    return _uniform(spec.module_class.input_shape, EXAMPLE_SEED)
