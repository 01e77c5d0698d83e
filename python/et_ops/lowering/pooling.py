"""Pooling and reductions (aten operators)."""

from .._operators import portable
from .values import shape_of

MAX_POOL2D = portable.max_pool2d_with_indices_out
AVG_POOL2D = portable.avg_pool2d_out
ADAPTIVE_AVG_POOL2D = portable.adaptive_avg_pool2d_out
MEAN = portable.mean_out
SUM = portable.sum_out
MAX_DIM = portable.max_dim_out


def _pair(value):
    return list(value) if isinstance(value, (tuple, list)) else [value, value]


def max_pool2d_with_indices(g, node, input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    out = g.output(node)
    indices = g.intermediate("int64", out.shape)
    stride = _pair(kernel_size) if stride is None or len(stride) == 0 else _pair(stride)
    g.emit(MAX_POOL2D, [g.tensor(input), g.int_list(_pair(kernel_size)), g.int_list(stride),
                        g.int_list(_pair(padding)), g.int_list(_pair(dilation)), g.boolean(ceil_mode), out.index,
                        indices.index])
    return out, indices


def avg_pool2d(g, node, input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    out = g.output(node)
    stride = _pair(kernel_size) if stride is None or len(stride) == 0 else _pair(stride)
    g.emit(AVG_POOL2D, [g.tensor(input), g.int_list(_pair(kernel_size)), g.int_list(stride),
                        g.int_list(_pair(padding)), g.boolean(ceil_mode), g.boolean(count_include_pad),
                        g.optional(divisor_override, g.integer), out.index])
    return out


def adaptive_avg_pool2d(g, node, input, output_size):
    """aten::_adaptive_avg_pool2d (a 1 x 1 output reaches the lowering as mean.dim)."""
    out = g.output(node)
    g.emit(ADAPTIVE_AVG_POOL2D, [g.tensor(input), g.int_list(out.shape[-2:]), out.index])
    return out


def _dims(input, dim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(len(shape_of(input))))
    return list(dim) if isinstance(dim, (list, tuple)) else [dim]


def _reduce(g, node, op, input, dim, keepdim, dtype):
    if dtype is not None:
        g.unsupported(f"{op} with dtype= is not supported")
    result = g.output(node)
    g.emit(op, [g.tensor(input), g.int_list(_dims(input, dim)), g.boolean(keepdim), g.none(), result.index])
    return result


def mean(g, node, input, dim=None, keepdim=False, *, dtype=None):
    """aten::mean.dim."""
    return _reduce(g, node, MEAN, input, dim, keepdim, dtype)


def sum_(g, node, input, dim=None, keepdim=False, *, dtype=None):
    """aten::sum.dim_IntList."""
    return _reduce(g, node, SUM, input, dim, keepdim, dtype)


def max_dim(g, node, input, dim, keepdim=False):
    """aten::max.dim: the values and their indices."""
    values, indices = g.outputs(node)
    g.emit(MAX_DIM, [g.tensor(input), g.integer(dim), g.boolean(keepdim), values.index, indices.index])
    return values, indices
