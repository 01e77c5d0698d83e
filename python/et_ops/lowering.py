"""Backends that interpret a model's graph function (see models.py).

A graph function calls ``quantization_point``, ``linear``, ``conv2d``,
``relu``, ``max_pool2d`` and ``flatten`` on a backend ``g``. Three backends
give the same graph three meanings:

- `FloatGraph`: eager float64 PyTorch; every quantization point records the
  activation's min/max (calibration) and passes it through unchanged.
- `ProgramGraph`: emits the quantize/dequantize (Q/DQ) program: each
  quantization point becomes quantize_per_tensor + dequantize_per_tensor,
  each weight an int8 constant dequantized per channel at run time.
- `SimulatedGraph`: computes what that program computes, with the
  reference numerics of quantization.py (float32 matmuls and convolutions
  in PyTorch, so only the summation order can differ from the kernels).
"""

import numpy as np
import torch
from torch.nn import functional as F

from . import quantization as quant
from .etp import ProgramBuilder

Q = "quantized_decomposed::"


class FloatGraph:
    """Eager float64 evaluation with a min/max observer per quantization point."""

    def __init__(self):
        self.observers = {}
        self.layer_outputs = {}  # layer name -> float64 output, in graph order

    def quantization_point(self, name, x):
        self.observers.setdefault(name, quant.MinMaxObserver()).observe(x.numpy())
        return x

    @staticmethod
    def _parameter(array):
        return torch.from_numpy(array).to(torch.float64)

    def linear(self, x, layer):
        out = F.linear(x, self._parameter(layer.weight), self._parameter(layer.bias))
        self.layer_outputs[layer.name] = out.numpy()
        return out

    def conv2d(self, x, layer):
        out = F.conv2d(x, self._parameter(layer.weight), self._parameter(layer.bias),
                       stride=layer.stride, padding=layer.padding)
        self.layer_outputs[layer.name] = out.numpy()
        return out

    def relu(self, x):
        return F.relu(x)

    def max_pool2d(self, x, kernel_size, stride):
        return F.max_pool2d(x, kernel_size=kernel_size, stride=stride)

    def flatten(self, x):
        return torch.flatten(x, 1)


def window_output_size(size, kernel, stride, padding=0, dilation=1):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


class SimulatedGraph:
    """The program's computation in numpy/PyTorch with the kernels' numerics."""

    def __init__(self, activation_qparams):
        self.activation_qparams = activation_qparams
        self.layer_outputs = {}  # layer name -> float32 output

    def quantization_point(self, name, x):
        q = self.activation_qparams[name]
        return quant.dequantize_per_tensor(quant.quantize_per_tensor(x, q), q)

    @staticmethod
    def _dequantized_weight(weight):
        q = quant.choose_weight_qparams(weight)
        return quant.dequantize_per_channel(quant.quantize_per_channel(weight, q), q)

    def linear(self, x, layer):
        weight = self._dequantized_weight(layer.weight)
        out = (np.matmul(x, weight.T) + layer.bias).astype(np.float32)
        self.layer_outputs[layer.name] = out
        return out

    def conv2d(self, x, layer):
        weight = torch.from_numpy(self._dequantized_weight(layer.weight))
        out = F.conv2d(torch.from_numpy(x), weight, torch.from_numpy(layer.bias),
                       stride=layer.stride, padding=layer.padding).numpy()
        self.layer_outputs[layer.name] = out
        return out

    def relu(self, x):
        return np.maximum(x, np.float32(0))

    def max_pool2d(self, x, kernel_size, stride):
        return F.max_pool2d(torch.from_numpy(x), kernel_size=kernel_size, stride=stride).numpy()

    def flatten(self, x):
        return x.reshape(x.shape[0], -1)


class ProgramGraph:
    """Emits the Q/DQ program of a graph into a ProgramBuilder.

    Values are the builder's value indices; every tensor has a static shape.
    """

    def __init__(self, name, activation_qparams):
        self.builder = ProgramBuilder(name)
        self.activation_qparams = activation_qparams
        self.weight_qparams = {}

    def input(self, sizes):
        index = self.builder.tensor("float32", sizes)
        self.builder.input(index)
        return index

    def output(self, index):
        self.builder.output(index)

    def _sizes(self, index):
        return self.builder.value(index)["sizes"]

    def _intermediate(self, dtype, sizes):
        return self.builder.tensor(dtype, sizes)

    def _scalar_one(self):
        # aten's `Scalar beta=1, alpha=1`: an int value keeps them exact.
        return self.builder.integer(1)

    # ---- quantization ----
    def quantization_point(self, name, x):
        q = self.activation_qparams[name]
        b = self.builder
        sizes = self._sizes(x)
        qparams = [b.double(q.scale), b.integer(q.zero_point), b.integer(q.quant_min),
                   b.integer(q.quant_max), b.scalar_type(q.dtype)]
        quantized = self._intermediate(q.dtype, sizes)
        b.instruction(Q + "quantize_per_tensor.out", [x] + qparams + [quantized])
        dequantized = self._intermediate("float32", sizes)
        b.instruction(Q + "dequantize_per_tensor.out", [quantized] + qparams + [b.none(), dequantized])
        return dequantized

    def _weight(self, layer):
        """The float32 weight, dequantized per channel from its int8 constant at run time."""
        b = self.builder
        q = quant.choose_weight_qparams(layer.weight)
        self.weight_qparams[layer.name] = q
        weight_q = b.constant(quant.quantize_per_channel(layer.weight, q))
        args = [weight_q, b.constant(q.scales), b.constant(q.zero_points), b.integer(q.axis),
                b.integer(q.quant_min), b.integer(q.quant_max), b.scalar_type(q.dtype), b.none()]
        weight = self._intermediate("float32", layer.weight.shape)
        b.instruction(Q + "dequantize_per_channel.out", args + [weight])
        return weight

    # ---- float operators ----
    def linear(self, x, layer):
        b = self.builder
        out_features, in_features = layer.weight.shape
        transposed = self._intermediate("float32", [in_features, out_features])
        b.instruction("aten::permute_copy.out", [self._weight(layer), b.int_list([1, 0]), transposed])
        batch = self._sizes(x)[0]
        out = self._intermediate("float32", [batch, out_features])
        b.instruction("aten::addmm.out", [b.constant(layer.bias), x, transposed,
                                          self._scalar_one(), self._scalar_one(), out])
        return out

    def conv2d(self, x, layer):
        b = self.builder
        batch, _, height, width = self._sizes(x)
        out_channels, _, kernel_h, kernel_w = layer.weight.shape
        out_sizes = [batch, out_channels,
                     window_output_size(height, kernel_h, layer.stride[0], layer.padding[0]),
                     window_output_size(width, kernel_w, layer.stride[1], layer.padding[1])]
        out = self._intermediate("float32", out_sizes)
        b.instruction("aten::convolution.out", [
            x, self._weight(layer), b.constant(layer.bias),
            b.int_list(layer.stride), b.int_list(layer.padding), b.int_list([1, 1]),
            b.boolean(False), b.int_list([0, 0]), b.integer(1), out])
        return out

    def relu(self, x):
        out = self._intermediate("float32", self._sizes(x))
        self.builder.instruction("aten::relu.out", [x, out])
        return out

    def max_pool2d(self, x, kernel_size, stride):
        b = self.builder
        batch, channels, height, width = self._sizes(x)
        out_sizes = [batch, channels,
                     window_output_size(height, kernel_size[0], stride[0]),
                     window_output_size(width, kernel_size[1], stride[1])]
        out = self._intermediate("float32", out_sizes)
        indices = self._intermediate("int64", out_sizes)
        b.instruction("aten::max_pool2d_with_indices.out", [
            x, b.int_list(kernel_size), b.int_list(stride), b.int_list([0, 0]), b.int_list([1, 1]),
            b.boolean(False), out, indices])
        return out

    def flatten(self, x):
        sizes = self._sizes(x)
        flat = [sizes[0], int(np.prod(sizes[1:]))]
        out = self._intermediate("float32", flat)
        self.builder.instruction("aten::view_copy.out", [x, self.builder.int_list(flat), out])
        return out
