"""Reshaping, reordering, joining, slicing, indexing and padding (aten operators).

Shapes are static: every view (view, _reshape_alias, _unsafe_view,
squeeze, unsqueeze, flatten) becomes ``aten::view_copy.out`` to the shape
PyTorch computed on the example inputs, emitted where an operator first
reads it (values.Deferred, kind "view") and from the tensor a chain of
views started at: a chain of views is one copy, and a chain that returns
to its start's shape is none. A view of program state shows the state's
values where it is read, as a view of a module's buffer does. Operations
that return their input unchanged (clone, detach, alias, lift_fresh_copy)
emit nothing: their node is their input, except a clone of program state
read after the state is written, which is a copy. A transposition is
deferred too: a linear layer reads the untransposed weight, anything else
gets a permute_copy.
"""

import torch

from .._operators import portable
from .values import Constant, Deferred, TensorValue, dtype_of, shape_of

VIEW_COPY = portable.view_copy_out
PERMUTE_COPY = portable.permute_copy_out
EXPAND_COPY = portable.expand_copy_out
CAT = portable.cat_out
SLICE_COPY = portable.slice_copy_out
SELECT_COPY = portable.select_copy_int_out
CONSTANT_PAD_ND = portable.constant_pad_nd_out
INDEX = portable.index_out
INDEX_SELECT = portable.index_select_out
INDEX_PUT = portable.index_put_out
INDEX_COPY = portable.index_copy_out


def _normalized(dim, rank):
    return dim + rank if dim < 0 else dim


def view_as_example(g, node, input, *_, **__):
    """Every reshaping operator: view, _reshape_alias, _unsafe_view, squeeze, unsqueeze, flatten."""
    shape = tuple(int(s) for s in g.example_value(node).shape)
    if shape == shape_of(input):
        return input
    if isinstance(input, TensorValue) and input.qparams is not None:  # a quantized tensor keeps its own copy
        out = g.output(node)
        g.emit(VIEW_COPY, [g.tensor(input), g.int_list(shape), out.index])
        return out
    # A view of a view views the first one's source, as in PyTorch; one of program state shows the state's
    # values where it is read (forget_views_of).
    start = input.source if isinstance(input, Deferred) and input.kind == "view" else input
    if shape == shape_of(start):
        return start

    def emit(g_):
        out = g_.intermediate(dtype_of(start), shape)
        g_.emit(VIEW_COPY, [g_.tensor(start), g_.int_list(shape), out.index])
        return out
    return g.deferred_view(Deferred(emit, dtype_of(start), shape, "view", start))


def same_value(g, node, input, *_, **__):
    """clone, detach, alias, lift_fresh_copy: the input itself; a clone of program state that is written
    before the clone's last read is a copy made here."""
    if node.target == torch.ops.aten.clone.default and g.is_state(input) and \
            not g.state_order.read_before_next_write(node):
        out = g.output(node)
        g.emit(VIEW_COPY, [g.tensor(input), g.int_list(out.shape), out.index])
        return out
    return input


def emit_permute(g, input, dims, shape):
    out = g.intermediate(dtype_of(input), shape)
    g.emit(PERMUTE_COPY, [g.tensor(input), g.int_list(dims), out.index])
    return out


def permute(g, node, input, dims):
    """aten::permute; a 2-d transposition is deferred (a constant's is folded where it is read)."""
    rank = len(shape_of(input))
    dims = [_normalized(d, rank) for d in dims]
    shape = tuple(g.example_value(node).shape)
    if dims == [1, 0]:
        def emit(g_):
            if isinstance(input, Constant):
                return Constant(input.tensor.t())
            return emit_permute(g_, input, dims, shape)
        return Deferred(emit, dtype_of(input), shape, "transpose", input)
    if isinstance(input, Constant):  # folded (table.NEVER_FOLDED leaves permutes to this emitter)
        return Constant(input.tensor.permute(dims))
    return emit_permute(g, input, dims, shape)


def transpose(g, node, input, dim0, dim1):
    """aten::transpose.int and aten::t."""
    rank = len(shape_of(input))
    dims = list(range(rank))
    if rank >= 2:
        a, b = _normalized(dim0, rank), _normalized(dim1, rank)
        dims[a], dims[b] = dims[b], dims[a]
    return permute(g, node, input, dims)


def t(g, node, input):
    return transpose(g, node, input, 0, 1) if len(shape_of(input)) == 2 else input


def expand(g, node, input, size, *, implicit=False):
    out = g.output(node)
    if tuple(out.shape) == shape_of(input):
        return input
    g.emit(EXPAND_COPY, [g.tensor(input), g.int_list(out.shape), g.boolean(False), out.index])
    return out


def cat(g, node, tensors, dim=0):
    result = g.output(node)
    g.emit(CAT, [g.tensor_list(tensors), g.integer(dim), result.index])
    return result


def stack(g, node, tensors, dim=0):
    """aten::stack: each tensor viewed with the new dimension, then cat."""
    result = g.output(node)
    dim = _normalized(dim, len(result.shape))
    parts = []
    for tensor in tensors:
        shape = list(shape_of(tensor))
        shape.insert(dim, 1)
        part = g.intermediate(dtype_of(tensor), shape)
        g.emit(VIEW_COPY, [g.tensor(tensor), g.int_list(shape), part.index])
        parts.append(part)
    g.emit(CAT, [g.tensor_list(parts), g.integer(dim), result.index])
    return result


def emit_slice(g, input, dim, start, end, shape, step=1):
    out = g.intermediate(dtype_of(input), shape)
    g.emit(SLICE_COPY, [g.tensor(input), g.integer(dim), g.integer(start), g.integer(end), g.integer(step),
                        out.index])
    return out


def slice_(g, node, input, dim=0, start=None, end=None, step=1):
    """aten::slice.Tensor: a whole dimension is the input itself."""
    shape = shape_of(input)
    dim = _normalized(dim, len(shape))
    start, end, step = slice(start, end, step).indices(shape[dim])
    if (start, end, step) == (0, shape[dim], 1):
        return input
    return emit_slice(g, input, dim, start, end, g.example_value(node).shape, step)


def select(g, node, input, dim, index):
    out = g.output(node)
    rank = len(shape_of(input))
    g.emit(SELECT_COPY, [g.tensor(input), g.integer(_normalized(dim, rank)), g.integer(index), out.index])
    return out


def pieces(g, node, input, _sizes=None, dim=0):
    """aten::split.Tensor / split_with_sizes / unbind / chunk: one slice_copy per piece PyTorch returned."""
    if node.target.overloadpacket.__name__ == "unbind":
        dim = _sizes or 0
    rank = len(shape_of(input))
    dim = _normalized(dim, rank)
    outputs, start = [], 0
    for piece in g.example_value(node):
        length = 1 if len(piece.shape) < rank else piece.shape[dim]
        shape = list(shape_of(input))
        shape[dim] = length
        value = emit_slice(g, input, dim, start, start + length, shape)
        if tuple(shape) != tuple(piece.shape):  # unbind drops the dimension
            out = g.intermediate(dtype_of(input), piece.shape)
            g.emit(VIEW_COPY, [value.index, g.int_list(piece.shape), out.index])
            value = out
        outputs.append(value)
        start += length
    return tuple(outputs)


def getitem(g, node, container, index):
    """operator.getitem: an element of an operator's tuple of results."""
    if not isinstance(container, (tuple, list)):
        g.unsupported(f"getitem of {type(container).__name__}")
    return container[index]


def constant_pad_nd(g, node, input, pad, value=0.0):
    out = g.output(node)
    g.emit(CONSTANT_PAD_ND, [g.tensor(input), g.int_list(pad), g.scalar(value), out.index])
    return out


def index(g, node, input, indices):
    """aten::index.Tensor: advanced indexing with tensors (None for a whole dimension)."""
    out = g.output(node)
    g.emit(INDEX, [g.tensor(input), g.optional_tensor_list(indices), out.index])
    return out


def index_select(g, node, input, dim, index_):
    out = g.output(node)
    g.emit(INDEX_SELECT, [g.tensor(input), g.integer(_normalized(dim, len(shape_of(input)))), g.tensor(index_),
                          out.index])
    return out


def index_put(g, node, input, indices, values, accumulate=False):
    out = g.output(node)
    g.emit(INDEX_PUT, [g.tensor(input), g.optional_tensor_list(indices), g.tensor(values), g.boolean(accumulate),
                       out.index])
    return out


def index_copy(g, node, input, dim, index_, source):
    out = g.output(node)
    g.emit(INDEX_COPY, [g.tensor(input), g.integer(_normalized(dim, len(shape_of(input)))), g.tensor(index_),
                        g.tensor(source), out.index])
    return out
