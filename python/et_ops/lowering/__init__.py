"""Lowering a torch.fx GraphModule to an et_ops program.

`lower(graph_module, example_inputs, name)` walks the graph once, in order:

- placeholders become the program's inputs (static shapes: the example
  inputs' shapes); ``get_attr`` nodes are constants (`values.Constant`);
- a node whose result holds no tensor (``x.size(0)``, shape arithmetic) is
  a Python constant of the program: its value on the example inputs;
- a node whose inputs are all constants is folded to its example value,
  except that a quantized constant (an int8 weight) is never turned back
  into floats at export time: its dequantize is emitted;
- every other node is lowered by its emitter from the table (table.py).

Nodes without an emitter, or whose emitter refuses its arguments, are
collected and reported together in one `UnsupportedError`.
"""

from dataclasses import dataclass

import torch
import torch.fx

from ..errors import Error

from . import tracing
from .context import Lowering, Unsupported
from .table import (IN_PLACE_FUNCTIONS, Method, display_name, emitter_for, markdown_table, register_lowering,
                    supported_operations)
from .values import UNAVAILABLE, Constant, TensorValue, Unavailable

__all__ = ["UnsupportedError", "UnsupportedNode", "lower", "supported_operations", "markdown_table", "register_lowering",
           "Method", "LoweredProgram"]


@dataclass(frozen=True)
class UnsupportedNode:
    """One node that could not be lowered."""

    op: str  # call_function, call_method, call_module, ...
    target: str  # what it calls, e.g. "torch.nn.functional.gelu", "Tensor.unfold", "torch.nn.LSTM"
    module_path: str  # the module it came from ("" for the top-level module)
    node: str  # the FX node's name
    reason: str

    def __str__(self):
        where = f"in module '{self.module_path}'" if self.module_path else "in the top-level module"
        return f"{self.op} {self.target} (node '{self.node}', {where}): {self.reason}"


class UnsupportedError(Error):
    """Nodes of a graph that the lowering cannot turn into operators, all of them at once."""

    def __init__(self, model_name, nodes):
        self.nodes = list(nodes)
        lines = [f"cannot export {model_name}: {len(self.nodes)} node(s) have no et_ops lowering"]
        lines += [f"  - {n}" for n in self.nodes]
        lines.append("Supported operations: et_ops.lowering.supported_operations() (and the exporting page of the "
                     "documentation).")
        super().__init__("\n".join(lines))


@dataclass
class LoweredProgram:
    builder: object  # etp.ProgramBuilder
    activation_qparams: dict  # quantize node name -> qparams
    weight_qparams: dict  # module path -> qparams
    output_qparams: list  # qparams of the quantize node each output was dequantized from (or None)


def _flatten(value):
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _flatten(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _flatten(item)
    else:
        yield value


def _holds_tensor(value):
    return any(isinstance(v, torch.Tensor) for v in _flatten(value))


def _target_name(node, modules):
    if node.op == "call_module":
        return display_name(type(modules[node.target]))
    return display_name(node.target)


# Queries whose results describe a tensor's shape, not its values.
_SHAPE_QUERIES = frozenset({"size", "dim", "numel", "ndimension"})


def _is_shape_query(node):
    if node.op == "call_method":
        return node.target in _SHAPE_QUERIES
    return node.op == "call_function" and node.target is getattr and node.args[1] in ("shape", "ndim", "dtype")


def _is_in_place(node, modules):
    if node.op == "call_function":
        return node.target in IN_PLACE_FUNCTIONS or bool(node.kwargs.get("inplace", False))
    if node.op == "call_method":
        return node.target.endswith("_") and not node.target.startswith("__")
    if node.op == "call_module":
        return bool(getattr(modules[node.target], "inplace", False))
    return False


class _Walk:
    """One pass over the graph: node -> lowered value, and what could not be lowered."""

    def __init__(self, graph_module, example_inputs, name):
        self.graph_module = graph_module
        self.modules = dict(graph_module.named_modules())
        self.g = Lowering(name, graph_module, tracing.run(graph_module, example_inputs))
        self.values = {}
        self.problems = []
        self.position = {node: i for i, node in enumerate(graph_module.graph.nodes)}

    def run(self):
        outputs = None
        for node in self.graph_module.graph.nodes:
            if node.op == "output":
                outputs = node.args[0]
            else:
                self.values[node] = self.lower(node)
        return outputs

    def problem(self, node, reason):
        self.problems.append(UnsupportedNode(node.op, _target_name(node, self.modules) if node.op.startswith("call")
                                             else str(node.target), tracing.module_path(node), node.name, reason))
        return UNAVAILABLE

    def lower(self, node):
        if node.op == "placeholder":
            try:
                return self.g.input(node)
            except Unsupported as e:
                return self.problem(node, str(e))
        if node.op == "get_attr":
            value = self.g.example_value(node)
            return Constant(value) if isinstance(value, torch.Tensor) else value
        return self.lower_call(node)

    def lower_call(self, node):
        args = torch.fx.node.map_arg(node.args, self.values.__getitem__)
        kwargs = torch.fx.node.map_arg(node.kwargs, self.values.__getitem__)
        inputs = list(_flatten((args, kwargs)))
        emitter = emitter_for(node, self.modules)
        if any(isinstance(v, Unavailable) for v in inputs):
            return UNAVAILABLE if emitter is not None else self.problem(node, "no lowering for this operation")
        example = self.g.example_value(node)
        runtime_inputs = any(isinstance(v, TensorValue) for v in inputs)
        if not _holds_tensor(example):
            if runtime_inputs and not _is_shape_query(node):
                return self.problem(node, "its result depends on the values of tensors, which a program cannot "
                                          "know at export time")
            return example
        quantized_constant = any(isinstance(v, Constant) and v.is_quantized for v in inputs)
        if not runtime_inputs and not quantized_constant:
            return self.fold(example)
        if emitter is None:
            return self.problem(node, "no lowering for this operation")
        if _is_in_place(node, self.modules) and self.read_later(node):
            return self.problem(node, "an in-place operation whose input is read again afterwards")
        return self.call(emitter, node, args, kwargs)

    @staticmethod
    def fold(example):
        if isinstance(example, torch.Tensor):
            return Constant(example)
        return type(example)(Constant(e) if isinstance(e, torch.Tensor) else e for e in example)

    def read_later(self, node):
        if not node.args or not isinstance(node.args[0], torch.fx.Node):
            return False
        return any(self.position[user] > self.position[node] for user in node.args[0].users if user is not node)

    def call(self, emitter, node, args, kwargs):
        try:
            if node.op == "call_module":
                return emitter(self.g, node, self.modules[node.target], *args, **kwargs)
            return emitter(self.g, node, *args, **kwargs)
        except Unsupported as e:
            return self.problem(node, str(e))
        except TypeError as e:  # the call's arguments do not fit the emitter's signature
            return self.problem(node, f"unsupported arguments ({e})")


# Operations whose output values are some of their first input's values,
# rearranged: an output computed by them stays on its source's quantization
# grid, so it is measured in that source's steps.
_VALUE_PRESERVING = {"view", "reshape", "flatten", "permute", "transpose", "contiguous", "squeeze", "unsqueeze",
                     "chunk", "split", "max_pool2d", "adaptive_max_pool2d", "dropout", "identity",
                     "getitem", "cat", "concat"}


def _short_target(node):
    """A call's method or function name: "view", "cat", "getitem"."""
    target = node.target
    return target if isinstance(target, str) else getattr(target, "__name__", "")


def _quantize_source(graph_module, node):
    """The name of the quantize node whose grid `node`'s values lie on, or None."""
    if not isinstance(node, torch.fx.Node):
        return None
    if node.op == "call_method" and node.target == "dequantize":
        return node.args[0].name if isinstance(node.args[0], torch.fx.Node) else None
    if node.op == "call_module":
        module = graph_module.get_submodule(node.target)
        name = type(module).__name__.lower()
        preserving = name in {"flatten", "maxpool2d", "adaptivemaxpool2d", "dropout", "identity"}
        return _quantize_source(graph_module, node.args[0]) if preserving and node.args else None
    if node.op in ("call_function", "call_method") and _short_target(node) in _VALUE_PRESERVING and node.args:
        first = node.args[0]
        if isinstance(first, (list, tuple)):  # cat: every part on one grid
            sources = {_quantize_source(graph_module, part) for part in first}
            return sources.pop() if len(sources) == 1 else None
        return _quantize_source(graph_module, first)
    return None


def _output_qparams(graph_module, output):
    """For each output node: the quantize node whose grid its values lie on, or None."""
    return [_quantize_source(graph_module, node) for node in _flatten(output)]


def lower(graph_module, example_inputs, name):
    """Lowers `graph_module` run on `example_inputs` to a program named `name`.

    Raises UnsupportedError listing every node that cannot be lowered.
    """
    walk = _Walk(graph_module, example_inputs, name)
    outputs = walk.run()
    g = walk.g
    output_values = [walk.values[n] if isinstance(n, torch.fx.Node) else n for n in _flatten(outputs)]
    for value in output_values:
        if not isinstance(value, (TensorValue, Constant, Unavailable)):
            walk.problems.append(UnsupportedNode("output", "output", "", "output",
                                                 f"outputs must be tensors, got {type(value).__name__}"))
    if walk.problems:
        raise UnsupportedError(name, walk.problems)
    for value in output_values:
        g.builder.output(g.tensor(value))
    sources = _output_qparams(graph_module, outputs)
    return LoweredProgram(g.builder, g.activation_qparams, g.weight_qparams,
                          [g.activation_qparams.get(s) if s else None for s in sources])
