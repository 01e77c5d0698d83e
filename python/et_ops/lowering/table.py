"""The one table of what the lowering supports: FX targets -> emitters.

Each row names the FX targets it lowers (functions for ``call_function``
nodes, `Method("name")` for ``call_method`` nodes, module classes for
``call_module`` nodes), the emitter that lowers them, and the operators
the emitter may emit. To support another operation, write its emitter
beside its family (elementwise.py, pooling.py, shapes.py, layers.py,
quantization.py) and add its row here; the exporting page's table is
generated from these rows (`supported_operations`) and checked by a test.

An emitter is called as ``emitter(g, node, *args, **kwargs)`` for functions
and methods (a method's first argument is the tensor it is called on), and
``emitter(g, node, module, *args, **kwargs)`` for modules, with every
argument already lowered (see context.py).
"""

import operator
from dataclasses import dataclass

import torch
import torch.ao.nn.intrinsic as nni
import torch.ao.nn.quantized.reference as nnqr
import torch.nn.functional as F
from torch import nn

from . import elementwise, layers, pooling, quantization, shapes
from ..errors import UsageError


@dataclass(frozen=True)
class Method:
    """A call_method target: Tensor.<name>."""
    name: str


@dataclass(frozen=True)
class Row:
    targets: tuple
    emitter: object
    operators: tuple


E, P, S, L, Q = elementwise, pooling, shapes, layers, quantization

ROWS = (
    # ---- quantization (reference quantized models) ----
    Row((torch.quantize_per_tensor,), Q.quantize_per_tensor, (Q.QUANTIZE_PER_TENSOR,)),
    Row((torch.quantize_per_channel,), Q.quantize_per_channel, (Q.QUANTIZE_PER_CHANNEL,)),
    Row((Method("dequantize"), torch.dequantize), Q.dequantize, (Q.DEQUANTIZE_PER_TENSOR, Q.DEQUANTIZE_PER_CHANNEL)),
    # ---- layers ----
    Row((nn.Conv2d, nnqr.Conv2d), L.conv2d_module,
        (L.CONVOLUTION, Q.DEQUANTIZE_PER_TENSOR, Q.DEQUANTIZE_PER_CHANNEL)),
    Row((nni.ConvReLU2d,), L.conv2d_relu_module,
        (L.CONVOLUTION, E.RELU, Q.DEQUANTIZE_PER_TENSOR, Q.DEQUANTIZE_PER_CHANNEL)),
    Row((F.conv2d,), L.conv2d, (L.CONVOLUTION,)),
    Row((nn.Linear, nnqr.Linear), L.linear_module, (L.LINEAR, Q.DEQUANTIZE_PER_TENSOR, Q.DEQUANTIZE_PER_CHANNEL)),
    Row((nni.LinearReLU,), L.linear_relu_module, (L.LINEAR, E.RELU, Q.DEQUANTIZE_PER_TENSOR, Q.DEQUANTIZE_PER_CHANNEL)),
    Row((F.linear,), L.linear, (L.LINEAR,)),
    Row((nn.BatchNorm2d,), L.batch_norm_module, (L.MUL, L.ADD)),
    # ---- arithmetic ----
    Row((torch.add, operator.add, operator.iadd, Method("add"), Method("add_")), E.add, (E.ADD, E.ADD_SCALAR)),
    Row((torch.sub, operator.sub, operator.isub, Method("sub"), Method("sub_")), E.sub, (E.SUB, E.SUB_SCALAR)),
    Row((torch.mul, operator.mul, operator.imul, Method("mul"), Method("mul_")), E.mul, (E.MUL, E.MUL_SCALAR)),
    Row((torch.div, operator.truediv, Method("div")), E.div, (E.DIV, E.DIV_SCALAR)),
    # ---- activations ----
    Row((torch.relu, F.relu, torch.relu_, Method("relu"), Method("relu_")), E.relu, (E.RELU,)),
    Row((nn.ReLU,), E.relu_module, (E.RELU,)),
    Row((F.relu6,), E.relu6, (E.HARDTANH,)),
    Row((nn.ReLU6,), E.relu6_module, (E.HARDTANH,)),
    Row((F.hardtanh,), E.hardtanh, (E.HARDTANH,)),
    Row((nn.Hardtanh,), E.hardtanh_module, (E.HARDTANH,)),
    Row((torch.clamp, torch.clip, Method("clamp"), Method("clip")), E.clamp, (E.CLAMP,)),
    Row((torch.sigmoid, Method("sigmoid")), E.sigmoid, (E.SIGMOID,)),
    Row((nn.Sigmoid,), E.sigmoid_module, (E.SIGMOID,)),
    Row((torch.tanh, Method("tanh")), E.tanh, (E.TANH,)),
    Row((nn.Tanh,), E.tanh_module, (E.TANH,)),
    Row((F.hardswish,), E.hardswish, (E.HARDSWISH,)),
    Row((nn.Hardswish,), E.hardswish_module, (E.HARDSWISH,)),
    Row((F.hardsigmoid,), E.hardsigmoid, (E.HARDSIGMOID,)),
    Row((nn.Hardsigmoid,), E.hardsigmoid_module, (E.HARDSIGMOID,)),
    Row((F.leaky_relu,), E.leaky_relu, (E.LEAKY_RELU,)),
    Row((nn.LeakyReLU,), E.leaky_relu_module, (E.LEAKY_RELU,)),
    Row((F.softmax, torch.softmax, Method("softmax")), E.softmax, (E.SOFTMAX,)),
    Row((nn.Softmax,), E.softmax_module, (E.SOFTMAX,)),
    # ---- pooling and reductions ----
    Row((F.max_pool2d, torch.max_pool2d), P.max_pool2d, (P.MAX_POOL2D,)),
    Row((nn.MaxPool2d,), P.max_pool2d_module, (P.MAX_POOL2D,)),
    Row((F.avg_pool2d,), P.avg_pool2d, (P.AVG_POOL2D,)),
    Row((nn.AvgPool2d,), P.avg_pool2d_module, (P.AVG_POOL2D,)),
    Row((F.adaptive_avg_pool2d,), P.adaptive_avg_pool2d, (P.ADAPTIVE_AVG_POOL2D, P.MEAN)),
    Row((nn.AdaptiveAvgPool2d,), P.adaptive_avg_pool2d_module, (P.ADAPTIVE_AVG_POOL2D, P.MEAN)),
    Row((torch.mean, Method("mean")), P.mean, (P.MEAN,)),
    # ---- shapes ----
    Row((torch.flatten, torch.reshape, torch.squeeze, torch.unsqueeze, Method("flatten"), Method("view"),
         Method("reshape"), Method("squeeze"), Method("unsqueeze")), S.view_as_example, (S.VIEW_COPY,)),
    Row((nn.Flatten, nn.Unflatten), S.view_as_example_module, (S.VIEW_COPY,)),
    Row((torch.permute, Method("permute")), S.permute, (S.PERMUTE_COPY,)),
    Row((torch.transpose, Method("transpose")), S.transpose, (S.PERMUTE_COPY,)),
    Row((torch.cat, torch.concat), S.cat, (S.CAT,)),
    Row((torch.chunk, Method("chunk")), S.chunk, (S.SLICE_COPY,)),
    Row((torch.split, Method("split")), S.split, (S.SLICE_COPY,)),
    Row((operator.getitem,), S.getitem, (S.SLICE_COPY, S.VIEW_COPY)),
    Row((F.pad,), S.pad, (S.CONSTANT_PAD_ND,)),
    Row((nn.ZeroPad2d, nn.ConstantPad2d), S.zero_pad_module, (S.CONSTANT_PAD_ND,)),
    Row((Method("contiguous"), Method("clone"), Method("detach"), torch.clone), S.same_value, ()),
    Row((nn.Identity, nn.Dropout), S.same_value_module, ()),
    Row((F.dropout,), S.dropout, ()),
)

_EMITTERS = {target: row.emitter for row in ROWS for target in row.targets}
_REGISTERED = []  # rows added at run time with register_lowering()


def register_lowering(targets, emitter, operators):
    """Lowers `targets` with `emitter` in this process: for operators of your own kernel library.

    `targets` are functions, Method("name") or module classes, as in ROWS;
    a target the table already lowers is refused with ValueError.
    """
    row = Row(tuple(targets), emitter, tuple(operators))
    taken = [display_name(t) for t in row.targets if t in _EMITTERS]
    if taken:
        raise UsageError(f"already lowered: {', '.join(taken)}")
    for target in row.targets:
        _EMITTERS[target] = emitter
    _REGISTERED.append(row)

# In-place forms: lowered out of place, which is only right when nothing reads
# the overwritten input afterwards (checked in lowering/__init__.py).
IN_PLACE_FUNCTIONS = frozenset({operator.iadd, operator.isub, operator.imul, torch.relu_})


def emitter_for(node, modules):
    """The emitter of a call_function, call_method or call_module node, or None."""
    if node.op == "call_function":
        return _EMITTERS.get(node.target)
    if node.op == "call_method":
        return _EMITTERS.get(Method(node.target))
    if node.op == "call_module":
        return _EMITTERS.get(type(modules[node.target]))
    return None


_NAMESPACES = (("torch.nn.functional", F), ("torch", torch), ("operator", operator), ("torch.nn", nn),
               ("torch.ao.nn.intrinsic", nni), ("torch.ao.nn.quantized.reference", nnqr))


def display_name(target):
    """How docs and messages name an FX target: "torch.nn.functional.relu", "Tensor.add", "torch.nn.Conv2d"."""
    if isinstance(target, Method):
        return f"Tensor.{target.name}"
    if isinstance(target, str):
        return f"Tensor.{target}"
    for prefix, namespace in _NAMESPACES:
        for name in sorted(vars(namespace)):
            if not name.startswith("_") and vars(namespace)[name] is target:
                return f"{prefix}.{name}"
    module = getattr(target, "__module__", None) or "?"
    return f"{module}.{getattr(target, '__qualname__', getattr(target, '__name__', repr(target)))}"


def supported_operations():
    """(kind, name, operators) for every target of the table, in table order."""
    kinds = {True: "module", False: "function"}
    rows = []
    for row in ROWS + tuple(_REGISTERED):
        for target in row.targets:
            kind = "method" if isinstance(target, Method) else kinds[isinstance(target, type)]
            rows.append((kind, display_name(target), row.operators))
    return rows


def markdown_table():
    """The table of the exporting documentation page: one row per emitter of ROWS, its targets and operators."""
    lines = ["| PyTorch | lowered to |", "|---|---|"]
    for row in ROWS:
        targets = ", ".join(f"`{display_name(t)}`" for t in row.targets)
        operators = ", ".join(f"`{op}`" for op in row.operators) or "nothing (the node is its input)"
        lines.append(f"| {targets} | {operators} |")
    return "\n".join(lines) + "\n"
