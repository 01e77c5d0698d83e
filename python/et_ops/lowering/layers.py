"""Convolutions, linear layers and batch normalization.

A module is lowered from its parameters: a float module's weights become
float constants; a reference quantized module (convert_to_reference_fx:
torch.ao.nn.quantized.reference.Conv2d / Linear, alone or fused with a
ReLU) keeps its weight as integers, dequantized per tensor or per channel
at run time exactly as the reference model does (quantization.dequantized).
"""

import torch

from .._operators import portable
from .elementwise import RELU
from .quantization import dequantized
from .values import Constant, shape_of

CONVOLUTION = portable.convolution_out
LINEAR = portable.linear_out
MUL = portable.mul_out
ADD = portable.add_out


def _pair(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


def _weight(g, module, where):
    """The weight of a float or reference quantized module, as a tensor argument."""
    if hasattr(module, "get_quantized_weight"):
        return dequantized(g, module.get_quantized_weight(), where)
    return Constant(module.weight)


def _bias(module):
    return None if module.bias is None else Constant(module.bias)


def _conv_padding(g, padding, kernel_size, dilation):
    if padding == "valid":
        return (0, 0)
    if padding == "same":
        totals = [d * (k - 1) for k, d in zip(kernel_size, dilation)]
        if any(t % 2 for t in totals):
            g.unsupported("padding='same' with an even kernel extent pads unevenly, which aten::convolution cannot")
        return tuple(t // 2 for t in totals)
    return _pair(padding)


def emit_conv2d(g, out, input, weight, bias, stride, padding, dilation, groups):
    padding = _conv_padding(g, padding, shape_of(weight)[2:], _pair(dilation))
    g.emit(CONVOLUTION, [g.tensor(input), g.tensor(weight), g.optional(bias, g.tensor), g.int_list(_pair(stride)),
                         g.int_list(padding), g.int_list(_pair(dilation)), g.boolean(False), g.int_list([0, 0]),
                         g.integer(groups), out.index])
    return out


def _conv2d_of(g, node, conv, input, out):
    if conv.padding_mode != "zeros":
        g.unsupported(f"padding_mode='{conv.padding_mode}' is not supported (only 'zeros')")
    weight = _weight(g, conv, node.target)
    return emit_conv2d(g, out, input, weight, _bias(conv), conv.stride, conv.padding, conv.dilation, conv.groups)


def conv2d_module(g, node, module, input):
    """torch.nn.Conv2d and its reference quantized version."""
    return _conv2d_of(g, node, module, input, g.output(node))


def conv2d_relu_module(g, node, module, input):
    """torch.ao.nn.intrinsic.ConvReLU2d: a convolution, then ReLU."""
    conv_out = _conv2d_of(g, node, module[0], input, g.output(node))
    out = g.output(node)
    g.emit(RELU, [conv_out.index, out.index])
    return out


def conv2d(g, node, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv2d."""
    return emit_conv2d(g, g.output(node), input, weight, bias, stride, padding, dilation, groups)


def emit_linear(g, out, input, weight, bias):
    g.emit(LINEAR, [g.tensor(input), g.tensor(weight), g.optional(bias, g.tensor), out.index])
    return out


def linear_module(g, node, module, input):
    """torch.nn.Linear and its reference quantized version."""
    return emit_linear(g, g.output(node), input, _weight(g, module, node.target), _bias(module))


def linear_relu_module(g, node, module, input):
    """torch.ao.nn.intrinsic.LinearReLU: a linear layer, then ReLU."""
    linear = module[0]
    linear_out = emit_linear(g, g.output(node), input, _weight(g, linear, node.target), _bias(linear))
    out = g.output(node)
    g.emit(RELU, [linear_out.index, out.index])
    return out


def linear(g, node, input, weight, bias=None):
    """torch.nn.functional.linear."""
    return emit_linear(g, g.output(node), input, weight, bias)


def batch_norm_module(g, node, module, input):
    """torch.nn.BatchNorm2d in eval mode: x * scale + shift per channel.

    scale = weight / sqrt(running_var + eps) and shift = bias - mean * scale
    are computed once in float64 and rounded to float32.
    """
    if module.training or not module.track_running_stats:
        g.unsupported("batch normalization is lowered with its running statistics, in eval mode only")
    var = module.running_var.detach().double()
    scale = torch.rsqrt(var + module.eps)
    if module.affine:
        scale = scale * module.weight.detach().double()
    shift = -module.running_mean.detach().double() * scale
    if module.affine:
        shift = shift + module.bias.detach().double()
    shape = (-1,) + (1,) * (len(g.example_value(node).shape) - 2)
    scaled = g.output(node)
    g.emit(MUL, [g.tensor(input), g.tensor(Constant(scale.float().reshape(shape))), scaled.index])
    out = g.output(node)
    g.emit(ADD, [scaled.index, g.tensor(Constant(shift.float().reshape(shape))), g.integer(1), out.index])
    return out

