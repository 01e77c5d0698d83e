"""The one table of what the lowering supports: aten operators -> emitters.

The front end (tracing.py) records a module as aten operators
(``torch.ops.aten.*`` overloads, ``operator.getitem`` for an element of a
tuple of results, and the ``torch.ops.et_ops_reference.*`` operators of
quantize_weights modules). Each row names the overloads it lowers, the
emitter that lowers them, and the operators the emitter may emit. To
support another operation, write its emitter beside its family
(elementwise.py, pooling.py, shapes.py, layers.py, quantization.py) and add
its row here; the exporting page's table is generated from these rows
(`supported_operations`) and checked by a test. An in-place overload
(``relu_``) is lowered by the row of its out-of-place form.

An emitter is called as ``emitter(g, node, *args, **kwargs)`` with the
node's arguments already lowered (see context.py).
"""

import operator
from dataclasses import dataclass

import torch

from .. import weight_quantization  # noqa: F401 (defines torch.ops.et_ops_reference)
from . import elementwise, layers, pooling, quantization, shapes
from ..errors import UsageError


@dataclass(frozen=True)
class Row:
    targets: tuple
    emitter: object
    operators: tuple


E, P, S, L, Q = elementwise, pooling, shapes, layers, quantization
aten = torch.ops.aten
ref = torch.ops.et_ops_reference

ROWS = (
    # ---- quantization ----
    Row((aten.quantize_per_tensor.default, aten.quantize_per_tensor.tensor_qparams), Q.quantize_per_tensor,
        (Q.QUANTIZE_PER_TENSOR,)),
    Row((aten.quantize_per_channel.default,), Q.quantize_per_channel, (Q.QUANTIZE_PER_CHANNEL,)),
    Row((aten.dequantize.self,), Q.dequantize, (Q.DEQUANTIZE_PER_TENSOR, Q.DEQUANTIZE_PER_CHANNEL)),
    Row((ref.choose_qparams_per_token_asymmetric.default,), Q.same_named(Q.CHOOSE_QPARAMS_PER_TOKEN_ASYMMETRIC),
        (Q.CHOOSE_QPARAMS_PER_TOKEN_ASYMMETRIC,)),
    Row((ref.quantize_per_token.default,), Q.same_named(Q.QUANTIZE_PER_TOKEN), (Q.QUANTIZE_PER_TOKEN,)),
    Row((ref.dequantize_per_token.default,), Q.same_named(Q.DEQUANTIZE_PER_TOKEN), (Q.DEQUANTIZE_PER_TOKEN,)),
    Row((ref.dequantize_per_channel.default,), Q.dequantize_per_channel, (Q.DEQUANTIZE_PER_CHANNEL,)),
    Row((ref.dequantize_per_channel_group_4bit.default,), Q.same_named(Q.DEQUANTIZE_PER_CHANNEL_GROUP_4BIT),
        (Q.DEQUANTIZE_PER_CHANNEL_GROUP_4BIT,)),
    Row((ref.embedding_byte.default,), Q.same_named(Q.EMBEDDING_BYTE), (Q.EMBEDDING_BYTE,)),
    Row((ref.embedding_4bit.default,), Q.same_named(Q.EMBEDDING_4BIT), (Q.EMBEDDING_4BIT,)),
    # ---- layers ----
    Row((aten.convolution.default,), L.convolution, (L.CONVOLUTION, L.VIEW_COPY)),
    Row((aten.addmm.default,), L.addmm, (L.LINEAR, L.ADDMM)),
    Row((aten.mm.default,), L.mm, (L.LINEAR, L.MM)),
    Row((aten.bmm.default,), L.bmm, (L.BMM,)),
    Row((aten.baddbmm.default,), L.baddbmm, (L.BADDBMM,)),
    Row((aten.native_layer_norm.default,), L.native_layer_norm, (L.LAYER_NORM,)),
    Row((aten.native_group_norm.default,), L.native_group_norm, (L.GROUP_NORM,)),
    Row((aten.native_batch_norm.default,), L.native_batch_norm, (L.MUL, L.ADD)),
    Row((aten.embedding.default,), L.embedding, (L.EMBEDDING,)),
    # ---- arithmetic and comparisons ----
    Row((aten.add.Tensor, aten.add.Scalar), E.add, (E.ADD, E.ADD_SCALAR)),
    Row((aten.sub.Tensor, aten.sub.Scalar), E.sub, (E.SUB, E.SUB_SCALAR)),
    Row((aten.rsub.Scalar, aten.rsub.Tensor), E.rsub, (E.NEG, E.ADD, E.ADD_SCALAR)),
    Row((aten.mul.Tensor, aten.mul.Scalar), E.mul, (E.MUL, E.MUL_SCALAR)),
    Row((aten.div.Tensor, aten.div.Scalar), E.div, (E.DIV, E.DIV_SCALAR)),
    Row((aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor), E.pow_, (E.POW_SCALAR, E.POW)),
    Row(tuple(getattr(getattr(aten, name), overload) for name in E.COMPARISONS for overload in ("Tensor", "Scalar")),
        E.compare, tuple(op for ops in E.COMPARISONS.values() for op in ops)),
    Row((aten.logical_not.default,), E.unary(E.LOGICAL_NOT), (E.LOGICAL_NOT,)),
    Row((aten.bitwise_not.default,), E.bitwise_not, (E.LOGICAL_NOT,)),
    Row((aten.where.self,), E.where, (E.WHERE,)),
    Row((aten.masked_fill.Scalar, aten.masked_fill.Tensor), E.masked_fill, (E.MASKED_FILL, E.WHERE)),
    Row((aten.rsqrt.default,), E.unary(E.RSQRT), (E.RSQRT,)),
    Row((aten.sqrt.default,), E.unary(E.SQRT), (E.SQRT,)),
    Row((aten.exp.default,), E.unary(E.EXP), (E.EXP,)),
    Row((aten.neg.default,), E.unary(E.NEG), (E.NEG,)),
    Row((aten._to_copy.default,), E.to_copy, (E.COPY,)),
    # ---- activations ----
    Row((aten.relu.default,), E.unary(E.RELU), (E.RELU,)),
    Row((aten.hardtanh.default,), E.hardtanh, (E.HARDTANH,)),
    Row((aten.clamp.default,), E.clamp, (E.CLAMP,)),
    Row((aten.sigmoid.default,), E.unary(E.SIGMOID), (E.SIGMOID,)),
    Row((aten.tanh.default,), E.unary(E.TANH), (E.TANH,)),
    Row((aten.hardswish.default,), E.unary(E.HARDSWISH), (E.HARDSWISH,)),
    Row((aten.hardsigmoid.default,), E.unary(E.HARDSIGMOID), (E.HARDSIGMOID,)),
    Row((aten.leaky_relu.default,), E.leaky_relu, (E.LEAKY_RELU,)),
    Row((aten.gelu.default,), E.gelu, (E.GELU,)),
    Row((aten.silu.default,), E.unary(E.SILU), (E.SILU,)),
    Row((aten._softmax.default, aten._log_softmax.default), E.softmax, (E.SOFTMAX, E.LOG_SOFTMAX)),
    # ---- pooling and reductions ----
    Row((aten.max_pool2d_with_indices.default,), P.max_pool2d_with_indices, (P.MAX_POOL2D,)),
    Row((aten.avg_pool2d.default,), P.avg_pool2d, (P.AVG_POOL2D,)),
    Row((aten._adaptive_avg_pool2d.default,), P.adaptive_avg_pool2d, (P.ADAPTIVE_AVG_POOL2D,)),
    Row((aten.mean.dim, aten.mean.default), P.mean, (P.MEAN,)),
    Row((aten.sum.dim_IntList, aten.sum.default), P.sum_, (P.SUM,)),
    Row((aten.max.dim,), P.max_dim, (P.MAX_DIM,)),
    # ---- shapes and indexing ----
    Row((aten.view.default, aten._reshape_alias.default, aten._unsafe_view.default, aten.reshape.default,
         aten.squeeze.default, aten.squeeze.dim, aten.unsqueeze.default, aten.flatten.using_ints),
        S.view_as_example, (S.VIEW_COPY,)),
    Row((aten.permute.default,), S.permute, (S.PERMUTE_COPY,)),
    Row((aten.transpose.int,), S.transpose, (S.PERMUTE_COPY,)),
    Row((aten.t.default,), S.t, (S.PERMUTE_COPY,)),
    Row((aten.expand.default,), S.expand, (S.EXPAND_COPY,)),
    Row((aten.cat.default,), S.cat, (S.CAT,)),
    Row((aten.stack.default,), S.stack, (S.VIEW_COPY, S.CAT)),
    Row((aten.slice.Tensor,), S.slice_, (S.SLICE_COPY,)),
    Row((aten.select.int,), S.select, (S.SELECT_COPY,)),
    Row((aten.split.Tensor, aten.split_with_sizes.default, aten.unbind.int), S.pieces, (S.SLICE_COPY, S.VIEW_COPY)),
    Row((operator.getitem,), S.getitem, ()),
    Row((aten.constant_pad_nd.default,), S.constant_pad_nd, (S.CONSTANT_PAD_ND,)),
    Row((aten.index.Tensor,), S.index, (S.INDEX,)),
    Row((aten.index_select.default,), S.index_select, (S.INDEX_SELECT,)),
    Row((aten.index_put.default,), S.index_put, (S.INDEX_PUT,)),
    Row((aten.index_copy.default,), S.index_copy, (S.INDEX_COPY,)),
    Row((aten.clone.default, aten.detach.default, aten.alias.default, aten.lift_fresh_copy.default),
        S.same_value, (S.VIEW_COPY,)),
)

_EMITTERS = {target: row.emitter for row in ROWS for target in row.targets}
_REGISTERED = []  # rows added at run time with register_lowering()

# Operators that are never evaluated at export time even when every input is a
# constant: an integer weight stays integers in the program.
# A transposed weight is not folded either: a linear layer reads the weight
# itself (one constant, also when an embedding shares it).
NEVER_FOLDED = frozenset({aten.dequantize.self, ref.dequantize_per_channel.default,
                          ref.dequantize_per_channel_group_4bit.default, aten.t.default, aten.transpose.int,
                          aten.permute.default})


def register_lowering(targets, emitter, operators):
    """Lowers `targets` (aten overloads, e.g. torch.ops.aten.cumsum.default) with `emitter` in this process.

    For operators of your own kernel library; a target the table already
    lowers is refused with ValueError.
    """
    row = Row(tuple(targets), emitter, tuple(operators))
    taken = [display_name(t) for t in row.targets if t in _EMITTERS]
    if taken:
        raise UsageError(f"already lowered: {', '.join(taken)}")
    for target in row.targets:
        _EMITTERS[target] = emitter
    _REGISTERED.append(row)


def is_in_place(target):
    """Whether an aten overload writes its first argument (relu_, add_, index_put_, copy_)."""
    schema = getattr(target, "_schema", None)
    if schema is None or not schema.arguments:
        return False
    alias = schema.arguments[0].alias_info
    return alias is not None and alias.is_write and not schema.arguments[0].kwarg_only


def _out_of_place(target):
    """relu_.default -> relu.default (None when there is no such overload)."""
    packet = target.overloadpacket.__name__
    if not packet.endswith("_") or packet.startswith("_"):
        return None
    functional = getattr(torch.ops.aten, packet[:-1], None)
    return getattr(functional, target._overloadname, None) if functional is not None else None


def emitter_for(node):
    """The emitter of a call_function node, or None."""
    if node.op != "call_function":
        return None
    emitter = _EMITTERS.get(node.target)
    if emitter is None and is_in_place(node.target):
        functional = _out_of_place(node.target)
        emitter = _EMITTERS.get(functional) if functional is not None else None
    return emitter


def display_name(target):
    """How docs and messages name a target: ``aten::add.Tensor``, ``et_ops_reference::quantize_per_token``."""
    if isinstance(target, torch._ops.OpOverload):
        name = target._schema.name
        return name if target._overloadname == "default" else f"{name}.{target._overloadname}"
    if target is operator.getitem:
        return "operator.getitem"
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"


def supported_operations():
    """(name, operators) for every target of the table, in table order."""
    return [(display_name(target), row.operators) for row in ROWS + tuple(_REGISTERED) for target in row.targets]


def markdown_table():
    """The table of the exporting documentation page: one row per emitter of ROWS, its targets and operators."""
    lines = ["| aten operator | lowered to |", "|---|---|"]
    for row in ROWS:
        targets = ", ".join(f"`{display_name(t)}`" for t in row.targets)
        operators = ", ".join(f"`{op}`" for op in row.operators) or "nothing (the node is its input)"
        lines.append(f"| {targets} | {operators} |")
    return "\n".join(lines) + "\n"
