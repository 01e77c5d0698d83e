"""Quantize and dequantize: the Q/DQ nodes of a reference quantized model.

PyTorch's reference model (convert_to_reference_fx) quantizes activations
with ``torch.quantize_per_tensor(x, scale, zero_point, dtype)`` and reads
them back with ``.dequantize()``; both become quantized_decomposed
operators over the integers that hold the quantized values, with the
dtype's whole range as quant_min/quant_max (what torch.quantize_per_tensor
clamps to). Weights are int8 constants dequantized by the same operators
(`dequantized`), never float copies.
"""

import numpy as np
import torch

from .._operators import quantized
from .values import (Constant, PerChannelQParams, PerTensorQParams, TensorValue, etp_dtype, qparams_of,
                     quant_range)

QUANTIZE_PER_TENSOR = quantized.quantize_per_tensor_out
QUANTIZE_PER_CHANNEL = quantized.quantize_per_channel_out
DEQUANTIZE_PER_TENSOR = quantized.dequantize_per_tensor_out
DEQUANTIZE_PER_CHANNEL = quantized.dequantize_per_channel_out


def _number(value):
    if isinstance(value, Constant):
        return value.tensor.item()
    if isinstance(value, torch.Tensor):
        return value.item()
    return value


def _quantized_dtype(g, dtype):
    if dtype not in (torch.quint8, torch.qint8, torch.qint32):
        g.unsupported(f"quantizing to {dtype} is not supported (quint8, qint8, qint32 are)")
    return dtype


def quantize_per_tensor(g, node, input, scale, zero_point, dtype):
    """torch.quantize_per_tensor(input, scale, zero_point, dtype)."""
    quant_min, quant_max = quant_range(_quantized_dtype(g, dtype))
    qparams = PerTensorQParams(float(_number(scale)), int(_number(zero_point)), quant_min, quant_max,
                               etp_dtype(dtype))
    out = g.output(node, qparams)
    g.emit(QUANTIZE_PER_TENSOR, [g.tensor(input), g.double(qparams.scale), g.integer(qparams.zero_point),
                                 g.integer(quant_min), g.integer(quant_max), g.scalar_type(qparams.dtype), out.index])
    g.activation_qparams[node.name] = qparams
    return out


def quantize_per_channel(g, node, input, scales, zero_points, axis, dtype):
    """torch.quantize_per_channel(input, scales, zero_points, axis, dtype)."""
    quant_min, quant_max = quant_range(_quantized_dtype(g, dtype))
    scales = Constant(torch.as_tensor(scales.tensor if isinstance(scales, Constant) else scales, dtype=torch.float64))
    zero_points = Constant(torch.as_tensor(zero_points.tensor if isinstance(zero_points, Constant) else zero_points,
                                           dtype=torch.int64))
    qparams = PerChannelQParams(tuple(scales.tensor.tolist()), tuple(zero_points.tensor.tolist()), int(axis),
                                quant_min, quant_max, etp_dtype(dtype))
    out = g.output(node, qparams)
    g.emit(QUANTIZE_PER_CHANNEL, [g.tensor(input), g.tensor(scales), g.tensor(zero_points), g.integer(axis),
                                  g.integer(quant_min), g.integer(quant_max), g.scalar_type(qparams.dtype),
                                  out.index])
    g.activation_qparams[node.name] = qparams
    return out


def emit_dequantize(g, quantized, out):
    """out = the float32 values of `quantized` (a TensorValue with qparams)."""
    q = quantized.qparams
    if isinstance(q, PerTensorQParams):
        g.emit(DEQUANTIZE_PER_TENSOR, [quantized.index, g.double(q.scale), g.integer(q.zero_point),
                                       g.integer(q.quant_min), g.integer(q.quant_max), g.scalar_type(q.dtype),
                                       g.none(), out.index])
    else:
        scales = g.builder.constant(np.asarray(q.scales, dtype=np.float64))
        zero_points = g.builder.constant(np.asarray(q.zero_points, dtype=np.int64))
        g.emit(DEQUANTIZE_PER_CHANNEL, [quantized.index, scales, zero_points, g.integer(q.axis),
                                        g.integer(q.quant_min), g.integer(q.quant_max), g.scalar_type(q.dtype),
                                        g.none(), out.index])
    return out


def dequantize(g, node, input):
    """Tensor.dequantize() / torch.dequantize(input)."""
    if isinstance(input, Constant) and input.is_quantized:
        input = g.quantized_constant(input.tensor)
    if not isinstance(input, TensorValue) or input.qparams is None:
        g.unsupported("dequantize of a tensor that is not quantized")
    return emit_dequantize(g, input, g.output(node))


def dequantized(g, quantized_tensor, where):
    """A quantized torch tensor (a weight) as an integer constant dequantized at run time."""
    constant = g.quantized_constant(quantized_tensor)
    g.weight_qparams[where] = qparams_of(quantized_tensor)
    return emit_dequantize(g, constant, g.intermediate("float32", quantized_tensor.shape))
