"""The exporter's two built-in example models.

``python3 -m et_ops.export --model mlp`` is shorthand for exporting `MLP`
through the same path as any user module (``--module
et_ops.models:MLP --input-shape 4,16 --name qmlp``): PyTorch's quantization
flow, then the generic lowering. Nothing here is specific to the exporter.
"""

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


class MLP(nn.Module):
    """16 -> 32 -> ReLU -> 8."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class CNN(nn.Module):
    """conv 3x3 (3 -> 8, padding 1) -> ReLU -> max pool 2x2 -> flatten -> linear 128 -> 10."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), kernel_size=2, stride=2)
        return self.fc(torch.flatten(x, 1))


@dataclass(frozen=True)
class BuiltIn:
    factory: str  # PKG.MOD:FACTORY, as --module takes it
    input_shape: tuple
    name: str  # the program's and the files' name


BUILT_IN = {
    "mlp": BuiltIn("et_ops.models:MLP", (4, 16), "qmlp"),
    "cnn": BuiltIn("et_ops.models:CNN", (2, 3, 8, 8), "qcnn"),
}
