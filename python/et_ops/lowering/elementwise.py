"""Elementwise arithmetic and activations.

Every form of a call lowers alike: ``torch.add(x, y)``, ``x + y``
(operator.add), ``x.add(y)``; a module (nn.ReLU) like its function. A
Python number on either side of add or mul becomes the operator's Scalar
overload; in-place forms are lowered out of place (lowering/__init__.py
refuses them when the overwritten input is read again later).
"""

import numbers

from .._operators import portable
from .values import is_tensor

ADD, ADD_SCALAR = portable.add_out, portable.add_scalar_out
SUB, SUB_SCALAR = portable.sub_out, portable.sub_scalar_out
MUL, MUL_SCALAR = portable.mul_out, portable.mul_scalar_out
DIV, DIV_SCALAR = portable.div_out, portable.div_scalar_out
RELU = portable.relu_out
HARDTANH = portable.hardtanh_out
CLAMP = portable.clamp_out
SIGMOID = portable.sigmoid_out
TANH = portable.tanh_out
HARDSWISH = portable.hardswish_out
HARDSIGMOID = portable.hardsigmoid_out
LEAKY_RELU = portable.leaky_relu_out
SOFTMAX = portable.softmax_out


def _binary(g, node, tensor_op, scalar_op, a, b, alpha=None, commutative=False):
    out = g.output(node)
    extra = [] if alpha is None else [g.scalar(alpha)]
    if is_tensor(a) and is_tensor(b):
        g.emit(tensor_op, [g.tensor(a), g.tensor(b)] + extra + [out.index])
    elif is_tensor(a) and isinstance(b, numbers.Number):
        g.emit(scalar_op, [g.tensor(a), g.scalar(b)] + extra + [out.index])
    elif commutative and isinstance(a, numbers.Number) and is_tensor(b):
        g.emit(scalar_op, [g.tensor(b), g.scalar(a)] + extra + [out.index])
    else:
        g.unsupported(f"operands {type(a).__name__} and {type(b).__name__} are not supported")
    return out


def add(g, node, input, other, *, alpha=1, out=None):
    """torch.add, operator.add, Tensor.add, operator.iadd, Tensor.add_."""
    if out is not None:
        g.unsupported("out= is not supported")
    return _binary(g, node, ADD, ADD_SCALAR, input, other, alpha=alpha, commutative=alpha == 1)


def sub(g, node, input, other, *, alpha=1, out=None):
    """torch.sub, operator.sub, Tensor.sub."""
    if out is not None:
        g.unsupported("out= is not supported")
    return _binary(g, node, SUB, SUB_SCALAR, input, other, alpha=alpha)


def mul(g, node, input, other, *, out=None):
    """torch.mul, operator.mul, Tensor.mul."""
    if out is not None:
        g.unsupported("out= is not supported")
    return _binary(g, node, MUL, MUL_SCALAR, input, other, commutative=True)


def div(g, node, input, other, *, rounding_mode=None, out=None):
    """torch.div, operator.truediv, Tensor.div (true division only)."""
    if rounding_mode is not None or out is not None:
        g.unsupported("div with rounding_mode or out= is not supported")
    return _binary(g, node, DIV, DIV_SCALAR, input, other)


def _unary(g, node, op, input, *scalars):
    out = g.output(node)
    g.emit(op, [g.tensor(input)] + [g.scalar(s) for s in scalars] + [out.index])
    return out


def relu(g, node, input, inplace=False):
    return _unary(g, node, RELU, input)


def relu6(g, node, input, inplace=False):
    return _unary(g, node, HARDTANH, input, 0.0, 6.0)


def hardtanh(g, node, input, min_val=-1.0, max_val=1.0, inplace=False):
    return _unary(g, node, HARDTANH, input, min_val, max_val)


def clamp(g, node, input, min=None, max=None, *, out=None):  # noqa: A002 (torch's names)
    if out is not None:
        g.unsupported("out= is not supported")
    if is_tensor(min) or is_tensor(max):
        g.unsupported("clamp with tensor bounds is not supported")
    result = g.output(node)
    g.emit(CLAMP, [g.tensor(input), g.optional(min, g.scalar), g.optional(max, g.scalar), result.index])
    return result


def sigmoid(g, node, input, *, out=None):
    return _unary(g, node, SIGMOID, input)


def tanh(g, node, input, *, out=None):
    return _unary(g, node, TANH, input)


def hardswish(g, node, input, inplace=False):
    return _unary(g, node, HARDSWISH, input)


def hardsigmoid(g, node, input, inplace=False):
    return _unary(g, node, HARDSIGMOID, input)


def leaky_relu(g, node, input, negative_slope=0.01, inplace=False):
    return _unary(g, node, LEAKY_RELU, input, negative_slope)


def softmax(g, node, input, dim=None, _stacklevel=3, dtype=None):
    if dim is None or dtype is not None:
        g.unsupported("softmax needs an explicit dim and no dtype")
    out = g.output(node)
    g.emit(SOFTMAX, [g.tensor(input), g.integer(dim), g.boolean(False), out.index])
    return out


# ---- modules: their forward is the function with the module's settings ----

def relu_module(g, node, module, input):
    return relu(g, node, input)


def relu6_module(g, node, module, input):
    return relu6(g, node, input)


def hardtanh_module(g, node, module, input):
    return hardtanh(g, node, input, module.min_val, module.max_val)


def sigmoid_module(g, node, module, input):
    return sigmoid(g, node, input)


def tanh_module(g, node, module, input):
    return tanh(g, node, input)


def hardswish_module(g, node, module, input):
    return hardswish(g, node, input)


def hardsigmoid_module(g, node, module, input):
    return hardsigmoid(g, node, input)


def leaky_relu_module(g, node, module, input):
    return leaky_relu(g, node, input, module.negative_slope)


def softmax_module(g, node, module, input):
    return softmax(g, node, input, module.dim)
