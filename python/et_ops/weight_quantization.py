"""Weight quantization for transformers: `quantize_weights(model, scheme, group_size)`.

The returned module runs in PyTorch and is the numeric reference of the
exported program. Its quantized layers compute with the operators of
`torch.ops.et_ops_reference`, defined here with the numerics of the
quantized kernel set's operators of the same names (quantized_decomposed):
the exporter lowers each call to that operator, so a program computes
exactly what its reference computes, except for float summation order.

Schemes:

- "int8": per-channel symmetric int8 weights, float activations;
- "int4": group-wise symmetric int4 weights (`group_size` inputs per scale),
  two per byte, float activations;
- "8da8w": "int8" weights, activations quantized per token at run time
  (asymmetric int8: choose_qparams_per_token_asymmetric, quantize_per_token,
  dequantize_per_token);
- "8da4w": "int4" weights, activations as "8da8w".

Linear layers, embeddings and nn.MultiheadAttention's projections are
quantized (embeddings with embedding_byte / embedding_4bit semantics:
per-row scales for int8, groups of `group_size` for int4). A weight shared
by several layers (tied embeddings) stays one tensor of integers.
"""

import torch
import torch.nn.functional as F
from torch import nn

from .errors import UsageError
from .module_copy import copy_module

SCHEMES = ("int8", "int4", "8da8w", "8da4w")
INT8_RANGE = (-128, 127)
INT4_RANGE = (-8, 7)

_LIBRARY = torch.library.Library("et_ops_reference", "DEF")
_SCHEMAS = {
    "choose_qparams_per_token_asymmetric": "(Tensor input, ScalarType dtype) -> (Tensor, Tensor)",
    "quantize_per_token": "(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, "
                          "ScalarType dtype) -> Tensor",
    "dequantize_per_token": "(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, "
                            "ScalarType dtype, ScalarType output_dtype) -> Tensor",
    "dequantize_per_channel": "(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, "
                              "int quant_max, ScalarType dtype) -> Tensor",
    "dequantize_per_channel_group_4bit": "(Tensor input, Tensor scales, Tensor? zero_points, int quant_min, "
                                         "int quant_max, int group_size, ScalarType output_dtype) -> Tensor",
    "embedding_byte": "(Tensor weight, Tensor weight_scales, Tensor? weight_zero_points, int weight_quant_min, "
                      "int weight_quant_max, Tensor indices) -> Tensor",
    "embedding_4bit": "(Tensor weight, Tensor weight_scales, Tensor? weight_zero_points, int weight_quant_min, "
                      "int weight_quant_max, Tensor indices) -> Tensor",
}


def _implements(name):
    def register(function):
        _LIBRARY.define(name + _SCHEMAS[name])
        _LIBRARY.impl(name, function, "CompositeExplicitAutograd")
        return function
    return register


def _saturate(rounded, quant_min, quant_max, dtype):
    """Clamp in floats, NaN to quant_min, then convert (the reference contract's sat rule)."""
    rounded = torch.where(torch.isnan(rounded), torch.full_like(rounded, quant_min), rounded)
    return rounded.clamp(quant_min, quant_max).to(dtype)


@_implements("choose_qparams_per_token_asymmetric")
def choose_qparams_per_token_asymmetric(input, dtype):  # noqa: A002 (the operator's argument names)
    """Per token (row of the last dim), in float32: scale float64, zero point int64, shapes sizes[:-1] + [1]."""
    if torch.isnan(input).any():
        raise UsageError("choose_qparams_per_token_asymmetric: the input holds NaN")
    zero = torch.zeros((), dtype=torch.float32)
    low = torch.minimum(input.amin(dim=-1, keepdim=True), zero)
    high = torch.maximum(input.amax(dim=-1, keepdim=True), zero)
    scale = ((high - low) / 255.0).clamp(min=2.0 ** -23)
    low_steps, high_steps = low / scale, high / scale
    error = (-128 + low_steps) + (127 + high_steps)
    zero_point = torch.where(error > 0, -128 - low_steps, 127 - high_steps)
    return scale.double(), torch.round(zero_point.clamp(-128.0, 127.0)).long()


@_implements("quantize_per_token")
def quantize_per_token(input, scales, zero_points, quant_min, quant_max, dtype):  # noqa: A002
    """x * (1 / scale) + zero_point in float64, rounded half to even, saturated."""
    shape = input.shape[:-1] + (1,)
    inverse = 1.0 / scales.reshape(shape).double()
    shifted = input.double() * inverse + zero_points.reshape(shape).double()
    return _saturate(torch.round(shifted), quant_min, quant_max, dtype)


@_implements("dequantize_per_token")
def dequantize_per_token(input, scales, zero_points, quant_min, quant_max, dtype, output_dtype):  # noqa: A002
    shape = input.shape[:-1] + (1,)
    difference = input.long() - zero_points.reshape(shape).long()
    return (difference.double() * scales.reshape(shape).double()).to(output_dtype)


@_implements("dequantize_per_channel")
def dequantize_per_channel(input, scales, zero_points, axis, quant_min, quant_max, dtype):  # noqa: A002
    """Float32 scales: fl32(fl32(q - zp) * scale) along `axis`."""
    shape = [1] * input.dim()
    shape[axis] = -1
    values = input.long()
    if zero_points is not None:
        values = values - zero_points.reshape(shape).long()
    return values.float() * scales.reshape(shape).float()


def unpack_int4(packed):
    """[N, K/2] uint8 -> [N, K] int8 in [-8, 7]: even elements in the high nibble, value = nibble - 8.

    In bytes throughout: a 1.1B-parameter model's weights are unpacked at each of export_llm's traces."""
    nibbles = torch.stack((packed >> 4, packed & 0xF), dim=-1).reshape(packed.shape[0], -1)
    return nibbles.to(torch.int8) - 8


def pack_int4(values):
    """[N, K] integers in [-8, 7] (K even) -> [N, K/2] uint8, the layout unpack_int4 reads."""
    nibbles = (values.to(torch.int16) + 8).reshape(values.shape[0], -1, 2)
    return ((nibbles[..., 0] << 4) | nibbles[..., 1]).to(torch.uint8)


def _grouped(values, scales, zero_points):
    """fl32(fl32(w - zp) * s) with one scale per group of consecutive elements of a row."""
    rows, columns = values.shape
    groups = scales.reshape(rows, -1).shape[1]
    grouped = values.reshape(rows, groups, columns // groups).float()
    if zero_points is not None:
        grouped = grouped - zero_points.reshape(rows, groups, 1).float()
    return (grouped * scales.reshape(rows, groups, 1).float()).reshape(rows, columns)


@_implements("dequantize_per_channel_group_4bit")
def dequantize_per_channel_group_4bit(input, scales, zero_points, quant_min, quant_max, group_size,  # noqa: A002
                                      output_dtype):
    return _grouped(unpack_int4(input), scales, zero_points).to(output_dtype)


@_implements("embedding_byte")
def embedding_byte(weight, weight_scales, weight_zero_points, weight_quant_min, weight_quant_max, indices):
    return F.embedding(indices, _grouped(weight.long(), weight_scales, weight_zero_points))


@_implements("embedding_4bit")
def embedding_4bit(weight, weight_scales, weight_zero_points, weight_quant_min, weight_quant_max, indices):
    # The rows that indices name, dequantized alone: each row's values depend on that row only.
    flat = indices.reshape(-1)
    if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= weight.shape[0]):
        raise IndexError(f"embedding_4bit: an index is outside the {weight.shape[0]} rows (as F.embedding reports)")
    scales = weight_scales.reshape(weight.shape[0], -1)[flat]
    zero_points = None if weight_zero_points is None else weight_zero_points.reshape(weight.shape[0], -1)[flat]
    rows = _grouped(unpack_int4(weight[flat]), scales, zero_points)
    return rows.reshape(tuple(indices.shape) + (rows.shape[-1],))


ops = torch.ops.et_ops_reference


# ---- choosing the integers (export time; any deterministic choice is valid) ----

def _symmetric(weight, groups, quant_max):
    """(integers, float32 scales [rows, groups]): scale = max |w| of the group / quant_max (+ 0.5 for int4)."""
    rows, columns = weight.shape
    grouped = weight.detach().float().reshape(rows, groups, columns // groups)
    largest = grouped.abs().amax(dim=-1)
    scales = (largest / quant_max).clamp(min=torch.finfo(torch.float32).tiny)
    integers = torch.round(grouped / scales.unsqueeze(-1)).clamp(-quant_max - 1, quant_max)
    return integers.reshape(rows, columns), scales


class QuantizedWeight(nn.Module):
    """One weight matrix [rows, K] as integers and float32 scales: int8 per row, or int4 in groups, packed."""

    def __init__(self, weight, bits, group_size):
        super().__init__()
        rows, columns = weight.shape
        self.bits, self.columns = bits, columns
        if bits == 8:
            self.group_size = columns
            integers, scales = _symmetric(weight, 1, 127)
            self.register_buffer("integers", integers.to(torch.int8))
            self.register_buffer("scales", scales.reshape(rows))
        else:
            if columns % group_size or group_size % 2:
                raise UsageError(f"int4 weights need their {columns} columns in groups of an even group_size; "
                                 f"{group_size} does not divide them")
            self.group_size = group_size
            integers, scales = _symmetric(weight, columns // group_size, 7.5)
            self.register_buffer("integers", pack_int4(integers))
            self.register_buffer("scales", scales)

    def dequantized(self):
        if self.bits == 8:
            return ops.dequantize_per_channel(self.integers, self.scales, None, 0, *INT8_RANGE, torch.int8)
        return ops.dequantize_per_channel_group_4bit(self.integers, self.scales, None, *INT4_RANGE,
                                                     self.group_size, torch.float32)

    def embedding(self, indices):
        function = ops.embedding_byte if self.bits == 8 else ops.embedding_4bit
        return function(self.integers, self.scales, None, *(INT8_RANGE if self.bits == 8 else INT4_RANGE), indices)


def quantize_activations_per_token(x):
    """x through int8 per token, asymmetric: what the 8da* schemes do to a linear layer's input."""
    scales, zero_points = ops.choose_qparams_per_token_asymmetric(x, torch.int8)
    quantized = ops.quantize_per_token(x, scales, zero_points, *INT8_RANGE, torch.int8)
    return ops.dequantize_per_token(quantized, scales, zero_points, *INT8_RANGE, torch.int8, torch.float32)


class QuantizedLinear(nn.Module):
    def __init__(self, linear, weight, dynamic_activations):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.quantized = weight
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach().clone(), requires_grad=False)
        self.dynamic_activations = dynamic_activations

    @property
    def weight(self):
        """The float weight the layer computes with (what code reading `linear.weight` expects)."""
        return self.quantized.dequantized()

    def forward(self, x):
        if self.dynamic_activations:
            x = quantize_activations_per_token(x)
        return F.linear(x, self.weight, self.bias)


class QuantizedEmbedding(nn.Module):
    def __init__(self, embedding, weight):
        super().__init__()
        if embedding.max_norm is not None:
            raise UsageError("an embedding with max_norm renormalises its weights in forward: not quantized")
        self.num_embeddings, self.embedding_dim = embedding.num_embeddings, embedding.embedding_dim
        self.quantized = weight

    @property
    def weight(self):
        return self.quantized.dequantized()

    def forward(self, indices):
        return self.quantized.embedding(indices)


class QuantizedMultiheadAttention(nn.MultiheadAttention):
    """nn.MultiheadAttention whose packed input projection is a QuantizedWeight.

    MultiheadAttention reads its projection weights as tensors and never
    calls its layers' forward: the weights are quantized, the activations of
    its projections stay float (also under the 8da* schemes).
    """

    @property
    def in_proj_weight(self):
        return self.in_proj_quantized.dequantized()

    @classmethod
    def convert(cls, attention, quantized_weight, dynamic):
        weight = attention._parameters.pop("in_proj_weight")
        attention.__class__ = cls
        attention.in_proj_quantized = quantized_weight(weight)
        attention.out_proj = QuantizedLinear(attention.out_proj, quantized_weight(attention.out_proj.weight), dynamic)
        return attention


def quantize_weights(model, scheme, group_size=32):
    """A copy of `model` whose linear layers and embeddings hold quantized weights (see the module docstring)."""
    if scheme not in SCHEMES:
        raise UsageError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    if not isinstance(group_size, int) or group_size <= 0:
        raise UsageError(f"group_size must be a positive int, got {group_size!r}")
    bits = 4 if scheme.endswith("4w") or scheme == "int4" else 8
    dynamic = scheme.startswith("8da")
    model = copy_module(model).eval()
    shared = {}  # id(weight parameter) -> QuantizedWeight: tied weights stay one tensor of integers

    def quantized_weight(parameter):
        if id(parameter) not in shared:
            shared[id(parameter)] = QuantizedWeight(parameter, bits, group_size)
        return shared[id(parameter)]

    def replacement(module):
        if type(module) is nn.Linear:
            return QuantizedLinear(module, quantized_weight(module.weight), dynamic)
        if type(module) is nn.Embedding:
            return QuantizedEmbedding(module, quantized_weight(module.weight))
        if type(module) is nn.MultiheadAttention and module._qkv_same_embed_dim:
            QuantizedMultiheadAttention.convert(module, quantized_weight, dynamic)
            return None
        if isinstance(module, nn.TransformerEncoderLayer) and dynamic:
            # Its eval fast path would skip the linear layers' forward, and with it the
            # activations' quantization: the layer runs its ordinary path instead.
            module.activation_relu_or_gelu = 0
        return None

    root = replacement(model)
    if root is not None:
        return root
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            quantized = replacement(child)
            if quantized is not None:
                setattr(parent, name, quantized)
    return model
