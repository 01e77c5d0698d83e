"""Program state: module buffers that forward updates in place.

A buffer that an in-place operator writes (``cache[:, :, pos] = k`` is
``index_put_``, ``cache.index_copy_(2, pos, k)``, ``cache.copy_(x)``)
becomes one state tensor of the program, starting from the buffer's value
when the model was exported: every read of the buffer reads the state, and
the write is one instruction whose ``self`` and ``out`` are the state
itself, so the kernel writes only the selected elements. A write through a
view that covers the whole buffer (the full-range slices Python's indexing
makes) writes the buffer; a write into part of it (``cache[layer]``) is
reported.
"""

import torch

from .elementwise import COPY  # the out variants index_put_, index_copy_ and copy_ lower to
from .shapes import INDEX_COPY, INDEX_PUT
from .values import TensorValue, etp_dtype, shape_of

aten = torch.ops.aten

WRITERS = "index_put_ (index assignment), index_copy_ and copy_"  # how messages name them


def state_value(g, buffer):
    """A new state tensor of the program holding `buffer`'s values (its initial bytes)."""
    array = buffer.detach().contiguous()
    dtype = etp_dtype(array.dtype)
    data = array.view(torch.int16).numpy() if dtype == "bfloat16" else array.numpy()
    return TensorValue(g.builder.state(data, dtype), dtype, tuple(array.shape))


def _normalized(dim, rank):
    return dim + rank if dim < 0 else dim


def _index_put(g, state, indices, values, accumulate=False):
    g.emit(INDEX_PUT, [state.index, g.optional_tensor_list(indices), g.tensor(values), g.boolean(accumulate),
                       state.index])


def _index_copy(g, state, dim, index, source):
    g.emit(INDEX_COPY, [state.index, g.integer(_normalized(dim, len(state.shape))), g.tensor(index),
                        g.tensor(source), state.index])


def _copy(g, state, src, non_blocking=False):
    g.emit(COPY, [state.index, g.tensor(src), g.boolean(False), state.index])


_EMITTERS = {aten.index_put_.default: _index_put, aten.index_copy_.default: _index_copy, aten.copy_.default: _copy}


def write(g, node, buffer_name, state, target_value, *args, **kwargs):
    """Lowers the in-place `node` writing the state of `buffer_name`; returns the state (the node's value).

    `target_value` is the lowered value of the node's first argument: the
    state itself when the write goes through views that cover all of it.
    """
    emitter = _EMITTERS.get(node.target)
    if emitter is None:
        g.unsupported(f"writes the module's buffer '{buffer_name}' in place with {node.target._schema.name}: "
                      f"program state is written only by {WRITERS}")
    if target_value is not state or shape_of(target_value) != state.shape:
        g.unsupported(f"writes the module's buffer '{buffer_name}' in place through a view of part of it: write "
                      f"the whole buffer with {WRITERS} (index it with tensors instead of slicing it)")
    emitter(g, state, *args, **kwargs)
    return state
