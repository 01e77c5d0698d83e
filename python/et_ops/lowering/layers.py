"""Convolutions, matrix products, linear layers and normalizations (aten operators).

A linear layer reaches the lowering as ``addmm(bias, x, t(W))`` or
``mm(x, t(W))`` (PyTorch folds a 3-d input to 2-d views around it); it
becomes ``aten::linear.out(x, W, bias)`` on the untransposed weight, so
a quantized weight is read as the integers it is stored as. Batch
normalization in eval mode is folded into a per-channel multiply-add.
"""

import torch

from .._operators import portable
from .values import Constant, Deferred, dtype_of, shape_of

CONVOLUTION = portable.convolution_out
LINEAR = portable.linear_out
ADDMM = portable.addmm_out
MM = portable.mm_out
BMM = portable.bmm_out
BADDBMM = portable.baddbmm_out
MUL = portable.mul_out
ADD = portable.add_out
VIEW_COPY = portable.view_copy_out
LAYER_NORM = portable.native_layer_norm_out
GROUP_NORM = portable.native_group_norm_out
EMBEDDING = portable.embedding_out


def emit_conv2d(g, out, input, weight, bias, stride, padding, dilation, groups):
    g.emit(CONVOLUTION, [g.tensor(input), g.tensor(weight), g.optional(bias, g.tensor), g.int_list(stride),
                         g.int_list(padding), g.int_list(dilation), g.boolean(False), g.int_list([0, 0]),
                         g.integer(groups), out.index])
    return out


def _with_height_one(g, value):
    """A [N, C, L] tensor (or an [O, I, K] weight) viewed as [N, C, 1, L]."""
    shape = shape_of(value)
    shape4 = (shape[0], shape[1], 1, shape[2])
    if isinstance(value, Constant):
        return Constant(value.tensor.reshape(shape4))
    out = g.intermediate(dtype_of(value), shape4)
    g.emit(VIEW_COPY, [g.tensor(value), g.int_list(shape4), out.index])
    return out


def convolution(g, node, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """aten::convolution: 2-d, and 1-d as a 2-d convolution of height 1."""
    if transposed:
        g.unsupported("transposed convolution is not supported")
    rank = len(shape_of(input))
    if rank == 4:
        return emit_conv2d(g, g.output(node), input, weight, bias, stride, padding, dilation, groups)
    if rank != 3:
        g.unsupported(f"a {rank - 2}-d convolution is not supported (1-d and 2-d are)")
    result = g.example_value(node)
    out4 = g.intermediate(dtype_of(input), (result.shape[0], result.shape[1], 1, result.shape[2]))
    emit_conv2d(g, out4, _with_height_one(g, input), _with_height_one(g, weight), bias, [1] + list(stride),
                [0] + list(padding), [1] + list(dilation), groups)
    out = g.output(node)
    g.emit(VIEW_COPY, [out4.index, g.int_list(out.shape), out.index])
    return out


def _untransposed(g, node, position):
    """W when argument `position` of `node` is W transposed (a linear layer's weight), else None."""
    value = g.value_of(node.args[position])
    if isinstance(value, Deferred) and value.kind == "transpose":
        return value.source
    return None


def emit_linear(g, out, input, weight, bias):
    g.emit(LINEAR, [g.tensor(input), g.tensor(weight), g.optional(bias, g.tensor), out.index])
    return out


def addmm(g, node, bias, input, mat2, *, beta=1, alpha=1):
    """aten::addmm: a linear layer when mat2 is a transposed weight and bias is a row."""
    out = g.output(node)
    weight = _untransposed(g, node, 2)
    if weight is not None and beta == 1 and alpha == 1 and len(shape_of(bias)) == 1:
        return emit_linear(g, out, input, weight, bias)
    g.emit(ADDMM, [g.tensor(bias), g.tensor(input), g.tensor(mat2), g.scalar(beta), g.scalar(alpha), out.index])
    return out


def mm(g, node, input, mat2):
    """aten::mm: a linear layer without bias when mat2 is a transposed weight."""
    out = g.output(node)
    weight = _untransposed(g, node, 1)
    if weight is not None:
        return emit_linear(g, out, input, weight, None)
    g.emit(MM, [g.tensor(input), g.tensor(mat2), out.index])
    return out


def bmm(g, node, input, mat2):
    out = g.output(node)
    g.emit(BMM, [g.tensor(input), g.tensor(mat2), out.index])
    return out


def baddbmm(g, node, input, batch1, batch2, *, beta=1, alpha=1):
    out = g.output(node)
    g.emit(BADDBMM, [g.tensor(input), g.tensor(batch1), g.tensor(batch2), g.scalar(beta), g.scalar(alpha),
                     out.index])
    return out


def native_layer_norm(g, node, input, normalized_shape, weight, bias, eps):
    outputs = g.outputs(node)
    g.emit(LAYER_NORM, [g.tensor(input), g.int_list(normalized_shape), g.optional(weight, g.tensor),
                        g.optional(bias, g.tensor), g.double(eps)] + [o.index for o in outputs])
    return outputs


def native_group_norm(g, node, input, weight, bias, batch, channels, spatial, groups, eps):
    outputs = g.outputs(node)
    g.emit(GROUP_NORM, [g.tensor(input), g.optional(weight, g.tensor), g.optional(bias, g.tensor),
                        g.integer(batch), g.integer(channels), g.integer(spatial), g.integer(groups),
                        g.double(eps)] + [o.index for o in outputs])
    return outputs


def embedding(g, node, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    out = g.output(node)
    g.emit(EMBEDDING, [g.tensor(weight), g.tensor(indices), g.integer(padding_idx), g.boolean(scale_grad_by_freq),
                       g.boolean(sparse), out.index])
    return out


def native_batch_norm(g, node, input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Batch normalization in eval mode: x * scale + shift per channel.

    scale = weight / sqrt(running_var + eps) and shift = bias - mean * scale
    are computed once in float64 and rounded to float32.
    """
    if training or not all(isinstance(v, Constant) for v in (running_mean, running_var)):
        g.unsupported("batch normalization is lowered with its running statistics, in eval mode only")
    if not all(v is None or isinstance(v, Constant) for v in (weight, bias)):
        g.unsupported("batch normalization with weights computed at run time")
    scale = torch.rsqrt(running_var.tensor.detach().double() + eps)
    if weight is not None:
        scale = scale * weight.tensor.detach().double()
    shift = -running_mean.tensor.detach().double() * scale
    if bias is not None:
        shift = shift + bias.tensor.detach().double()
    shape = (-1,) + (1,) * (len(shape_of(input)) - 2)
    scaled = g.output(node)
    g.emit(MUL, [g.tensor(input), g.tensor(Constant(scale.float().reshape(shape))), scaled.index])
    out = g.output(node)
    g.emit(ADD, [scaled.index, g.tensor(Constant(shift.float().reshape(shape))), g.integer(1), out.index])
    return out, None, None
