"""Reshaping, reordering, joining, slicing and padding; eval-mode no-ops.

Shapes are static: a view, reshape, flatten, squeeze or unsqueeze becomes
``aten::view_copy.out`` to the shape PyTorch computed on the example
inputs. Operations that return their input unchanged in eval mode
(``contiguous``, dropout, identity) emit nothing: their node is their input.
"""

import numbers

from .._operators import portable
from .values import dtype_of, shape_of

VIEW_COPY = portable.view_copy_out
PERMUTE_COPY = portable.permute_copy_out
CAT = portable.cat_out
SLICE_COPY = portable.slice_copy_out
CONSTANT_PAD_ND = portable.constant_pad_nd_out


def view_as_example(g, node, input, *_, **__):
    """Every reshaping call: view, reshape, flatten, squeeze, unsqueeze."""
    out = g.output(node)
    g.emit(VIEW_COPY, [g.tensor(input), g.int_list(out.shape), out.index])
    return out


def view_as_example_module(g, node, module, input):
    """torch.nn.Flatten, torch.nn.Unflatten."""
    return view_as_example(g, node, input)


def same_value(g, node, input, *_, **__):
    """contiguous(), clone(), detach(): the input itself (nothing writes it later)."""
    return input


def same_value_module(g, node, module, input, *_):
    """torch.nn.Identity, torch.nn.Dropout (eval mode)."""
    if getattr(module, "training", False) and hasattr(module, "p"):
        g.unsupported("dropout in training mode")
    return input


def dropout(g, node, input, p=0.5, training=True, inplace=False):
    """torch.nn.functional.dropout: only in eval mode (training=False), where it is the identity."""
    if training:
        g.unsupported("dropout with training=True")
    return input


def _normalized(dim, rank):
    return dim + rank if dim < 0 else dim


def permute(g, node, input, *dims):
    """torch.permute(input, dims) and Tensor.permute(*dims)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    out = g.output(node)
    rank = len(shape_of(input))
    g.emit(PERMUTE_COPY, [g.tensor(input), g.int_list([_normalized(d, rank) for d in dims]), out.index])
    return out


def transpose(g, node, input, dim0, dim1):
    """torch.transpose and Tensor.transpose."""
    rank = len(shape_of(input))
    dims = list(range(rank))
    a, b = _normalized(dim0, rank), _normalized(dim1, rank)
    dims[a], dims[b] = dims[b], dims[a]
    return permute(g, node, input, dims)


def cat(g, node, tensors, dim=0, *, out=None):
    """torch.cat / torch.concat."""
    if out is not None:
        g.unsupported("out= is not supported")
    result = g.output(node)
    g.emit(CAT, [g.tensor_list(tensors), g.integer(dim), result.index])
    return result


def emit_slice(g, input, dim, start, end, shape):
    out = g.intermediate(dtype_of(input), shape)
    g.emit(SLICE_COPY, [g.tensor(input), g.integer(dim), g.integer(start), g.integer(end), g.integer(1), out.index])
    return out


def _pieces(g, node, input, dim):
    """One slice per piece that PyTorch returned for `node` (chunk, split), along `dim`."""
    rank = len(shape_of(input))
    dim = _normalized(dim, rank)
    outputs, start = [], 0
    for piece in g.example_value(node):
        end = start + piece.shape[dim]
        outputs.append(emit_slice(g, input, dim, start, end, piece.shape))
        start = end
    return tuple(outputs)


def chunk(g, node, input, chunks, dim=0):
    """torch.chunk and Tensor.chunk: one slice_copy per chunk."""
    return _pieces(g, node, input, dim)


def split(g, node, input, split_size_or_sections, dim=0):
    """torch.split and Tensor.split: one slice_copy per piece."""
    return _pieces(g, node, input, dim)


def getitem(g, node, container, index):
    """operator.getitem: an element of a tuple of tensors, or basic slicing of a tensor."""
    if isinstance(container, (tuple, list)):
        return container[index]
    return _slice_tensor(g, node, container, index)


def _slice_tensor(g, node, input, index):
    index = index if isinstance(index, tuple) else (index,)
    if any(i is Ellipsis or i is None for i in index):
        g.unsupported("indexing with ... or None is not supported")
    shape = list(shape_of(input))
    value = input
    for dim, item in enumerate(index):
        if isinstance(item, slice):
            if item.step not in (None, 1):
                g.unsupported("slicing with a step is not supported")
            start, stop, _ = item.indices(shape[dim])
            if (start, stop) == (0, shape[dim]):
                continue
        elif isinstance(item, numbers.Integral) and not isinstance(item, bool):
            start = _normalized(item, shape[dim])
            stop = start + 1
        else:
            g.unsupported(f"indexing with {type(item).__name__} is not supported")
        shape[dim] = max(stop - start, 0)
        value = emit_slice(g, value, dim, start, stop, shape)
    # Integer indices drop their dimensions: a view to the result's shape.
    if tuple(shape_of(value)) == tuple(g.example_value(node).shape):
        return value
    out = g.output(node)
    g.emit(VIEW_COPY, [g.tensor(value), g.int_list(out.shape), out.index])
    return out


def pad(g, node, input, pad, mode="constant", value=None):  # noqa: A002 (torch's names)
    """torch.nn.functional.pad in constant mode."""
    if mode != "constant":
        g.unsupported(f"pad mode '{mode}' is not supported (only 'constant')")
    out = g.output(node)
    g.emit(CONSTANT_PAD_ND, [g.tensor(input), g.int_list(pad), g.scalar(0.0 if value is None else value), out.index])
    return out


def zero_pad_module(g, node, module, input):
    """torch.nn.ZeroPad2d / ConstantPad2d."""
    return pad(g, node, input, module.padding, "constant", getattr(module, "value", 0.0))
