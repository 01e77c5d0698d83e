"""Quantize and dequantize: reference quantized models and quantize_weights modules.

PyTorch's reference model (convert_to_reference_fx) quantizes activations
with ``aten::quantize_per_tensor(x, scale, zero_point, dtype)`` and reads
them back with ``aten::dequantize``; both become quantized_decomposed
operators over the integers that hold the quantized values, with the
dtype's whole range as quant_min/quant_max (what torch.quantize_per_tensor
clamps to). A weight quantized at export time (the quantize of a constant,
folded) is stored as int8 and dequantized by the same operators where a
layer first reads it, never as a float copy.

The modules of et_ops.export.quantize_weights call the operators of
``torch.ops.et_ops_reference``, which have the numerics of the
quantized_decomposed operators of the same names: each call becomes that
operator, its integer weights program constants.
"""

import numpy as np
import torch

from .._operators import quantized
from .values import (Constant, Deferred, PerChannelQParams, PerTensorQParams, TensorValue, etp_dtype, qparams_of,
                     quant_range)
from .tracing import layer_path

QUANTIZE_PER_TENSOR = quantized.quantize_per_tensor_out
QUANTIZE_PER_CHANNEL = quantized.quantize_per_channel_out
DEQUANTIZE_PER_TENSOR = quantized.dequantize_per_tensor_out
DEQUANTIZE_PER_CHANNEL = quantized.dequantize_per_channel_out
CHOOSE_QPARAMS_PER_TOKEN_ASYMMETRIC = quantized.choose_qparams_per_token_asymmetric_out
QUANTIZE_PER_TOKEN = quantized.quantize_per_token_out
DEQUANTIZE_PER_TOKEN = quantized.dequantize_per_token_out
DEQUANTIZE_PER_CHANNEL_GROUP_4BIT = quantized.dequantize_per_channel_group_4bit_out
EMBEDDING_BYTE = quantized.embedding_byte_out
EMBEDDING_4BIT = quantized.embedding_4bit_out


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


def _source_name(node):
    return node.meta.get("source_node", node.name)


def quantize_per_tensor(g, node, input, scale, zero_point, dtype):
    """aten::quantize_per_tensor (.default and .tensor_qparams)."""
    quant_min, quant_max = quant_range(_quantized_dtype(g, dtype))
    qparams = PerTensorQParams(float(_number(scale)), int(_number(zero_point)), quant_min, quant_max,
                               etp_dtype(dtype))
    out = g.output(node, qparams)
    g.emit(QUANTIZE_PER_TENSOR, [g.tensor(input), g.double(qparams.scale), g.integer(qparams.zero_point),
                                 g.integer(quant_min), g.integer(quant_max), g.scalar_type(qparams.dtype), out.index])
    g.activation_qparams[_source_name(node)] = qparams
    return out


def quantize_per_channel(g, node, input, scales, zero_points, axis, dtype):
    """aten::quantize_per_channel of a value computed at run time."""
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
    g.activation_qparams[_source_name(node)] = qparams
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


def _dequantized_weight(quantized_tensor, where):
    """A quantized weight: its integers become a constant, dequantized where a layer first reads it."""
    def emit(g):
        constant = g.quantized_constant(quantized_tensor)
        g.weight_qparams[where] = qparams_of(quantized_tensor)
        return emit_dequantize(g, constant, g.intermediate("float32", quantized_tensor.shape))
    return Deferred(emit, "float32", tuple(quantized_tensor.shape), "dequantize", quantized_tensor)


def dequantize(g, node, input):
    """aten::dequantize.self."""
    if isinstance(input, Constant) and input.is_quantized:
        user = next(iter(node.users), None)
        return _dequantized_weight(input.tensor, layer_path(user if user is not None else node))
    if not isinstance(input, TensorValue) or input.qparams is None:
        g.unsupported("dequantize of a tensor that is not quantized")
    return emit_dequantize(g, input, g.output(node))


# ---- et_ops_reference: the operators of quantize_weights modules ----

def _args(g, values):
    """Program values of an operator's arguments: tensors, ints, dtypes and None, in order."""
    converted = []
    for value in values:
        if value is None:
            converted.append(g.none())
        elif isinstance(value, torch.dtype):
            converted.append(g.scalar_type(value))
        elif isinstance(value, int):
            converted.append(g.integer(value))
        else:
            converted.append(g.tensor(value))
    return converted


def same_named(operator):
    """The emitter of an et_ops_reference operator: the quantized_decomposed operator of the same name."""
    def emit(g, node, *args):
        outputs = g.outputs(node) if isinstance(g.example_value(node), (tuple, list)) else (g.output(node),)
        g.emit(operator, _args(g, args) + [o.index for o in outputs])
        return outputs if len(outputs) > 1 else outputs[0]
    emit.__name__ = operator.split("::")[1].split(".")[0]
    return emit


def dequantize_per_channel(g, node, input, scales, zero_points, axis, quant_min, quant_max, dtype):
    """et_ops_reference::dequantize_per_channel (the reference schema has out_dtype=None after dtype)."""
    out = g.output(node)
    g.emit(DEQUANTIZE_PER_CHANNEL, _args(g, [input, scales, zero_points, axis, quant_min, quant_max, dtype, None])
           + [out.index])
    return out
