"""Pooling and reductions over spatial dimensions."""

from .._operators import portable
from .values import shape_of

MAX_POOL2D = portable.max_pool2d_with_indices_out
AVG_POOL2D = portable.avg_pool2d_out
ADAPTIVE_AVG_POOL2D = portable.adaptive_avg_pool2d_out
MEAN = portable.mean_out


def _pair(value):
    return list(value) if isinstance(value, (tuple, list)) else [value, value]


def max_pool2d(g, node, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """torch.nn.functional.max_pool2d (its indices, when asked for, are not lowered)."""
    if return_indices:
        g.unsupported("max_pool2d with return_indices=True is not supported")
    out = g.output(node)
    indices = g.intermediate("int64", out.shape)
    stride = _pair(kernel_size) if stride is None or stride == [] else _pair(stride)
    g.emit(MAX_POOL2D, [g.tensor(input), g.int_list(_pair(kernel_size)), g.int_list(stride),
                        g.int_list(_pair(padding)), g.int_list(_pair(dilation)), g.boolean(ceil_mode), out.index,
                        indices.index])
    return out


def max_pool2d_module(g, node, module, input):
    return max_pool2d(g, node, input, module.kernel_size, module.stride, module.padding, module.dilation,
                      module.ceil_mode, module.return_indices)


def avg_pool2d(g, node, input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """torch.nn.functional.avg_pool2d."""
    out = g.output(node)
    stride = _pair(kernel_size) if stride is None or stride == [] else _pair(stride)
    g.emit(AVG_POOL2D, [g.tensor(input), g.int_list(_pair(kernel_size)), g.int_list(stride),
                        g.int_list(_pair(padding)), g.boolean(ceil_mode), g.boolean(count_include_pad),
                        g.optional(divisor_override, g.integer), out.index])
    return out


def avg_pool2d_module(g, node, module, input):
    return avg_pool2d(g, node, input, module.kernel_size, module.stride, module.padding, module.ceil_mode,
                      module.count_include_pad, module.divisor_override)


def adaptive_avg_pool2d(g, node, input, output_size):
    """torch.nn.functional.adaptive_avg_pool2d; None sizes keep the input's, as PyTorch's result shows.

    A 1 x 1 output is the mean over the last two dimensions, as PyTorch
    computes it (its adaptive_avg_pool2d calls mean then, whose order of
    additions differs from the pooling kernel's).
    """
    out = g.output(node)
    if tuple(out.shape[-2:]) == (1, 1):
        g.emit(MEAN, [g.tensor(input), g.int_list([-1, -2]), g.boolean(True), g.none(), out.index])
    else:
        g.emit(ADAPTIVE_AVG_POOL2D, [g.tensor(input), g.int_list(out.shape[-2:]), out.index])
    return out


def adaptive_avg_pool2d_module(g, node, module, input):
    return adaptive_avg_pool2d(g, node, input, module.output_size)


def mean(g, node, input, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.mean and Tensor.mean over the given dimensions (all when dim is None)."""
    if dtype is not None or out is not None:
        g.unsupported("mean with dtype= or out= is not supported")
    if dim is None:
        dim = list(range(len(shape_of(input))))
    result = g.output(node)
    g.emit(MEAN, [g.tensor(input), g.int_list(dim if isinstance(dim, (list, tuple)) else [dim]),
                  g.boolean(keepdim), g.none(), result.index])
    return result
