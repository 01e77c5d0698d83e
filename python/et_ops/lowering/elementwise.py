"""Elementwise arithmetic, comparisons and activations (aten operators).

Every form of a call in Python (``torch.add(x, y)``, ``x + y``, ``x.add(y)``,
nn.ReLU) reaches the lowering as the same aten operator. A Python number
operand becomes the operator's Scalar overload; in-place forms (``relu_``)
are lowered out of place (lowering/__init__.py refuses them when the
overwritten input is read again later).
"""

import math
import numbers

import torch

from .._operators import portable
from .values import Constant, dtype_of, is_tensor

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
LOG_SOFTMAX = portable.log_softmax_out
GELU = portable.gelu_out
SILU = portable.silu_out
RSQRT = portable.rsqrt_out
SQRT = portable.sqrt_out
EXP = portable.exp_out
NEG = portable.neg_out
POW_SCALAR = portable.pow_tensor_scalar_out
POW = portable.pow_tensor_tensor_out
LOGICAL_NOT = portable.logical_not_out
WHERE = portable.where_self_out
MASKED_FILL = portable.masked_fill_scalar_out
COPY = portable.copy_out
COMPARISONS = {name: (getattr(portable, f"{name}_tensor_out"), getattr(portable, f"{name}_scalar_out"))
               for name in ("eq", "ne", "lt", "le", "gt", "ge")}


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


def _number(value):
    """A 0-dim constant as a Python number (aten passes `x + 1.0` some ways as a tensor)."""
    if isinstance(value, Constant) and value.tensor.dim() == 0:
        return value.tensor.item()
    return value


def add(g, node, input, other, *, alpha=1):
    """aten::add.Tensor / add.Scalar."""
    return _binary(g, node, ADD, ADD_SCALAR, input, other, alpha=alpha, commutative=alpha == 1)


def sub(g, node, input, other, *, alpha=1):
    """aten::sub.Tensor / sub.Scalar."""
    return _binary(g, node, SUB, SUB_SCALAR, input, other, alpha=alpha)


def rsub(g, node, input, other, alpha=1):
    """aten::rsub: other - alpha * input, as (-input) + other (one rounding, as PyTorch's)."""
    if alpha != 1:
        g.unsupported("rsub with alpha other than 1")
    negated = g.output(node)
    g.emit(NEG, [g.tensor(input), negated.index])
    return _binary(g, node, ADD, ADD_SCALAR, negated, _number(other), alpha=1, commutative=True)


def mul(g, node, input, other):
    """aten::mul.Tensor / mul.Scalar."""
    return _binary(g, node, MUL, MUL_SCALAR, input, other, commutative=True)


def div(g, node, input, other, *, rounding_mode=None):
    """aten::div.Tensor / div.Scalar (true division only)."""
    if rounding_mode is not None:
        g.unsupported("div with rounding_mode is not supported")
    return _binary(g, node, DIV, DIV_SCALAR, input, other)


def compare(g, node, input, other):
    """aten::eq / ne / lt / le / gt / ge, .Tensor and .Scalar."""
    tensor_op, scalar_op = COMPARISONS[node.target.overloadpacket.__name__]
    return _binary(g, node, tensor_op, scalar_op, input, _number(other))


def _unary(g, node, op, input, *scalars):
    out = g.output(node)
    g.emit(op, [g.tensor(input)] + [g.scalar(s) for s in scalars] + [out.index])
    return out


def unary(operator):
    """The emitter of an operator whose only argument is the tensor (relu, sigmoid, exp, ...)."""
    def emit(g, node, input):
        return _unary(g, node, operator, input)
    emit.__name__ = operator.split("::")[1].split(".")[0]
    return emit


def bitwise_not(g, node, input):
    """``~mask`` of a bool tensor: logical_not (other dtypes have no kernel)."""
    if dtype_of(input) != "bool":
        g.unsupported(f"bitwise_not of {dtype_of(input)} (only bool tensors: logical_not)")
    return _unary(g, node, LOGICAL_NOT, input)


def hardtanh(g, node, input, min_val=-1.0, max_val=1.0):
    return _unary(g, node, HARDTANH, input, min_val, max_val)


def clamp(g, node, input, min=None, max=None):  # noqa: A002 (aten's names)
    if is_tensor(min) or is_tensor(max):
        g.unsupported("clamp with tensor bounds is not supported")
    result = g.output(node)
    g.emit(CLAMP, [g.tensor(input), g.optional(min, g.scalar), g.optional(max, g.scalar), result.index])
    return result


def leaky_relu(g, node, input, negative_slope=0.01):
    return _unary(g, node, LEAKY_RELU, input, negative_slope)


def pow_(g, node, input, exponent):
    """aten::pow.Tensor_Scalar / Tensor_Tensor."""
    return _binary(g, node, POW, POW_SCALAR, input, _number(exponent))


def gelu(g, node, input, *, approximate="none"):
    out = g.output(node)
    g.emit(GELU, [g.tensor(input), g.string(approximate), out.index])
    return out


def softmax(g, node, input, dim, half_to_float):
    """aten::_softmax / _log_softmax on any dimension."""
    if half_to_float:
        g.unsupported("softmax with half_to_float")
    out = g.output(node)
    op = LOG_SOFTMAX if node.target.overloadpacket.__name__ == "_log_softmax" else SOFTMAX
    g.emit(op, [g.tensor(input), g.integer(dim), g.boolean(False), out.index])
    return out


def where(g, node, condition, input, other):
    out = g.output(node)
    g.emit(WHERE, [g.tensor(condition), g.tensor(input), g.tensor(other), out.index])
    return out


def masked_fill(g, node, input, mask, value):
    """aten::masked_fill.Scalar, and .Tensor with a constant 0-dim value.

    A non-finite value (-inf, a causal mask's) cannot be a program's double:
    it is a 0-dim constant of where(mask, value, input) instead, which
    computes the same.
    """
    value = _number(value)
    if is_tensor(value):
        g.unsupported("masked_fill with a tensor value computed at run time")
    out = g.output(node)
    if isinstance(value, float) and not math.isfinite(value):
        fill = Constant(torch.tensor(value, dtype=g.example_value(node).dtype))
        g.emit(WHERE, [g.tensor(mask), g.tensor(fill), g.tensor(input), out.index])
        return out
    g.emit(MASKED_FILL, [g.tensor(input), g.tensor(mask), g.scalar(value), out.index])
    return out


def to_copy(g, node, input, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
            memory_format=None):
    """aten::_to_copy (Tensor.to(dtype), .float(), .long()): a converting copy; the same dtype is the input."""
    out = g.output(node)
    if out.dtype == dtype_of(input):
        return input
    index = g.tensor(input)
    g.emit(COPY, [index, index, g.boolean(False), out.index])
    return out
