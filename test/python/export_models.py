"""Small modules for the exporter's tests, each built from supported operations.

Each class is also a factory for ``python3 -m et_ops.export --module
export_models:NAME`` (with test/python on PYTHONPATH).
"""

import operator

import torch
from torch import nn
from torch.nn import functional as F


class Residual(nn.Module):
    """Two conv-bn-relu blocks with an identity shortcut added by `operator.add`, `torch.add` and `x.add`."""

    input_shape = (2, 4, 12, 12)

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 4, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=True)
        self.head = nn.Linear(4, 5)

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        y = operator.add(y, x)
        y = torch.add(y, x)
        y = F.relu(y.add(x))
        return self.head(F.adaptive_avg_pool2d(y, 1).flatten(1))


class Branches(nn.Module):
    """Inception-style branches joined by cat, average and max pooling, padding, a strided slice."""

    input_shape = (1, 3, 16, 16)

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 4, 1)
        self.b = nn.Conv2d(3, 4, 3, padding=1)
        self.c = nn.Conv2d(3, 4, 5, padding=2, groups=1, dilation=1)
        self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.fc = nn.Linear(12 * 4 * 4, 6)

    def forward(self, x):
        y = torch.cat([F.relu(self.a(x)), F.relu6(self.b(x)), self.pool(self.c(x))], dim=1)
        y = F.max_pool2d(y, 3, stride=2, padding=1, ceil_mode=True)
        y = F.pad(y, (0, 1, 0, 1))[:, :, :8, :8]
        y = F.avg_pool2d(y, 2)
        return self.fc(torch.flatten(y, 1))


class Activations(nn.Module):
    """Depthwise convolution and every supported activation; a squeeze-and-excitation product."""

    input_shape = (2, 8, 10, 10)

    def __init__(self):
        super().__init__()
        self.depthwise = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.pointwise = nn.Conv2d(8, 16, 1)
        self.squeeze = nn.Conv2d(16, 16, 1)
        self.hardswish = nn.Hardswish()
        self.dropout = nn.Dropout(0.3)
        self.identity = nn.Identity()
        self.classifier = nn.Linear(16, 4)

    def forward(self, x):
        y = self.hardswish(self.depthwise(x))
        y = torch.clamp(self.pointwise(y), -3.0, 3.0)
        gate = F.hardsigmoid(self.squeeze(y.mean([2, 3], keepdim=True)))
        y = torch.mul(y, gate)
        y = torch.sigmoid(y) + torch.tanh(y) * 0.5 + F.leaky_relu(y, 0.1)
        y = self.identity(self.dropout(F.hardtanh(y, -2.0, 2.0)))
        y = y.mean(dim=(2, 3))
        return self.classifier(y.view(y.size(0), -1))


class ChannelShuffle(nn.Module):
    """ShuffleNet's channel shuffle: view, transpose, contiguous, view; chunk and cat."""

    input_shape = (1, 8, 6, 6)

    def __init__(self):
        super().__init__()
        self.branch = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        left = x[:, :4]
        right = x[:, 4:]
        y = torch.cat((left, F.relu(self.branch(right))), dim=1)
        # Indexed, not unpacked: PyTorch 1.13's tracer cannot unpack a traced
        # value under Python 3.11.
        batch, channels, height, width = y.size(0), y.size(1), y.size(2), y.size(3)
        y = y.view(batch, 2, channels // 2, height, width).transpose(1, 2).contiguous()
        y = y.view(batch, channels, height, width)
        halves = torch.chunk(y, 2, dim=1)
        return torch.cat([halves[1], halves[0]], 1).permute(0, 2, 3, 1).flatten(1)


class Unsupported(nn.Module):
    """Two operations without a lowering, one of them in a submodule."""

    input_shape = (1, 4)

    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.cumsum(self.inner(self.fc(x)), dim=1)


class Inner(nn.Module):
    def forward(self, x):
        return torch.erfinv(x.clamp(-0.5, 0.5)) + 1


MODELS = {"Residual": Residual, "Branches": Branches, "Activations": Activations, "ChannelShuffle": ChannelShuffle}
