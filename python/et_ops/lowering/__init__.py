"""Lowering an aten-level graph (tracing.trace) to an et_ops program.

`lower(graph_module, example_inputs, name)` walks the graph once, in order:

- placeholders become the program's inputs (static shapes: the example
  inputs' shapes); ``get_attr`` nodes are constants (`values.Constant`);
- a node whose result holds no tensor is a Python constant of the
  program: its value on the example inputs;
- a node whose inputs are all constants is folded to its example value
  (full, arange, triu, rotary tables, weight_norm of parameters), except
  a dequantization (table.NEVER_FOLDED): an integer weight is never turned
  back into floats at export time;
- a node without users emits nothing (unless it writes its input);
- a module buffer that an in-place operator writes is program state
  (state.py): every read of it reads the state, and the write is an
  instruction that writes the state in place;
- every other node is lowered by its emitter from the table (table.py).

Nodes without an emitter, or whose emitter refuses its arguments, are
collected and reported together in one `UnsupportedError`, each with its
aten operator and the Python source line it came from.
"""

from dataclasses import dataclass

import torch
import torch.fx

from ..errors import Error

from . import shapes, state, tracing
from .context import Lowering, Unsupported
from .table import NEVER_FOLDED, display_name, emitter_for, is_in_place, markdown_table, register_lowering, \
    supported_operations
from .values import UNAVAILABLE, Constant, Deferred, TensorValue, Unavailable

__all__ = ["UnsupportedError", "UnsupportedNode", "lower", "supported_operations", "markdown_table", "register_lowering",
           "LoweredProgram"]


@dataclass(frozen=True)
class UnsupportedNode:
    """One node that could not be lowered."""

    op: str  # call_function, placeholder, output
    target: str  # the aten operator, e.g. ``aten::cumsum``
    module_path: str  # the module whose forward made the call ("" for the top-level module)
    node: str  # the graph node's name
    reason: str
    source_line: str = ""  # "file:line (in function)" of the Python code that made the call

    def __str__(self):
        where = f"in module '{self.module_path}'" if self.module_path else "in the top-level module"
        at = f", at {self.source_line}" if self.source_line else ""
        return f"{self.target} (node '{self.node}', {where}{at}): {self.reason}"


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


def _is_runtime(value):
    return isinstance(value, (TensorValue, Deferred))


def _viewed_base(node):
    """The node whose memory `node` views (through slice, select, view, ...), or `node` itself."""
    while node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) and node.args:
        returns = node.target._schema.returns
        alias = returns[0].alias_info if len(returns) == 1 else None
        if alias is None or alias.is_write or not isinstance(node.args[0], torch.fx.Node):
            break
        node = node.args[0]
    return node


def _written_buffer(node):
    """The get_attr node of the module buffer an in-place operator writes (program state), or None."""
    if not is_in_place(node.target) or not node.args or not isinstance(node.args[0], torch.fx.Node):
        return None
    base = _viewed_base(node.args[0])
    return base if base.op == "get_attr" else None


# Emitters whose result may be their input itself or a deferred view of it:
# a reader of their result reads the input.
_MAY_ALIAS = (shapes.view_as_example, shapes.same_value, shapes.permute, shapes.transpose, shapes.t, shapes.expand)


class _StateOrder:
    """Where the graph writes program state, and how long a node's value is read."""

    def __init__(self, graph_module, position):
        self.position = position
        self.writes = sorted(position[n] for n in graph_module.graph.nodes
                             if n.op == "call_function" and _written_buffer(n) is not None)

    def last_read(self, node):
        """The position of the last node that reads `node`'s value, directly or through an operator that may
        return it (a view, clone, permute)."""
        last = self.position[node]
        for user in node.users:
            last = max(last, self.last_read(user) if emitter_for(user) in _MAY_ALIAS else self.position[user])
        return last

    def read_before_next_write(self, node):
        """Whether every read of `node`'s value happens before the graph next writes any program state."""
        start = self.position[node]
        next_write = next((w for w in self.writes if w > start), None)
        return next_write is None or self.last_read(node) < next_write


class _Walk:
    """One pass over the graph: node -> lowered value, and what could not be lowered."""

    def __init__(self, graph_module, example_inputs, name, builder=None):
        self.graph_module = graph_module
        self.g = Lowering(name, graph_module, tracing.run(graph_module, example_inputs), builder)
        self.values = self.g.values
        self.problems = []
        self.position = {node: i for i, node in enumerate(graph_module.graph.nodes)}
        self.g.state_order = _StateOrder(graph_module, self.position)
        # get_attr target -> the written buffer's get_attr node, and its state once made
        self.written = {}
        for node in graph_module.graph.nodes:
            buffer = _written_buffer(node) if node.op == "call_function" else None
            if buffer is not None:
                self.written.setdefault(buffer.target, buffer)
        self.states = {}

    def run(self):
        outputs = None
        for node in self.graph_module.graph.nodes:
            if node.op == "output":
                outputs = node.args[0]
            else:
                self.values[node] = self.lower(node)
        return outputs

    def problem(self, node, reason):
        target = display_name(node.target) if node.op == "call_function" else str(node.target)
        self.problems.append(UnsupportedNode(node.op, target, tracing.module_path(node), node.name, reason,
                                             tracing.source_line(node)))
        return UNAVAILABLE

    def lower(self, node):
        if node.op == "placeholder":
            try:
                return self.g.input(node)
            except Unsupported as e:
                return self.problem(node, str(e))
        if node.op == "get_attr":
            if node.target in self.written:
                return self.state_of(node)
            value = self.g.example_value(node)
            return Constant(value) if isinstance(value, torch.Tensor) else value
        return self.lower_call(node)

    def state_of(self, node):
        """The state tensor of a written buffer (one per buffer, however many get_attr nodes read it)."""
        if node.target not in self.states:
            first = self.written[node.target]
            initial = tracing.initial_value(first)
            if initial is None:
                initial = self.g.example_value(first)
            self.states[node.target] = state.state_value(self.g, initial)
        return self.states[node.target]

    def write_state(self, node, buffer, args, kwargs):
        name = tracing.buffer_name(buffer) or buffer.target
        if any(isinstance(v, Unavailable) for v in _flatten((args, kwargs))):
            return UNAVAILABLE
        try:
            self.g.forget_views_of(self.states[buffer.target])
            return state.write(self.g, node, name, self.states[buffer.target], *args, **kwargs)
        except Unsupported as e:
            return self.problem(node, str(e))
        except TypeError as e:
            return self.problem(node, f"unsupported arguments ({e})")

    def lower_call(self, node):
        args = torch.fx.node.map_arg(node.args, self.values.__getitem__)
        kwargs = torch.fx.node.map_arg(node.kwargs, self.values.__getitem__)
        inputs = list(_flatten((args, kwargs)))
        emitter = emitter_for(node)
        buffer = _written_buffer(node)
        if buffer is not None:
            return self.write_state(node, buffer, args, kwargs)
        if any(isinstance(v, Unavailable) for v in inputs):
            return UNAVAILABLE if emitter is not None else self.problem(node, "no lowering for this operation")
        example = self.g.example_value(node)
        runtime_inputs = any(_is_runtime(v) for v in inputs)
        if not _holds_tensor(example):
            if runtime_inputs:
                return self.problem(node, "its result depends on the values of tensors, which a program cannot "
                                          "know at export time")
            return example
        if not runtime_inputs and node.target not in NEVER_FOLDED:
            return self.fold(example)
        if not node.users and not is_in_place(node.target):
            return UNAVAILABLE
        if emitter is None:
            return self.problem(node, "no lowering for this operation")
        if is_in_place(node.target) and self.read_later(node):
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
            return emitter(self.g, node, *args, **kwargs)
        except Unsupported as e:
            return self.problem(node, str(e))
        except TypeError as e:  # the call's arguments do not fit the emitter's signature
            return self.problem(node, f"unsupported arguments ({e})")


# Operators whose output values are some of their first input's values,
# rearranged: an output computed by them stays on its source's quantization
# grid, so it is measured in that source's steps.
_VALUE_PRESERVING = {"view", "_reshape_alias", "_unsafe_view", "reshape", "flatten", "permute", "transpose", "t",
                     "clone", "squeeze", "unsqueeze", "split", "split_with_sizes", "unbind", "slice", "select",
                     "max_pool2d_with_indices", "getitem", "cat", "expand", "alias", "detach"}


def _short_target(node):
    """An operator's name without namespace and overload: "view", "cat", "getitem"."""
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return target.overloadpacket.__name__
    return getattr(target, "__name__", "")


def _quantize_source(node):
    """The name of the quantize node whose grid `node`'s values lie on, or None."""
    if not isinstance(node, torch.fx.Node) or node.op != "call_function":
        return None
    if node.target is torch.ops.aten.dequantize.self:
        source = node.args[0]
        return tracing.source_node(source) if isinstance(source, torch.fx.Node) else None
    if _short_target(node) in _VALUE_PRESERVING and node.args:
        first = node.args[0]
        if isinstance(first, (list, tuple)):  # cat: every part on one grid
            sources = {_quantize_source(part) for part in first}
            return sources.pop() if len(sources) == 1 else None
        return _quantize_source(first)
    return None


def _output_qparams(output):
    """For each output node: the quantize node whose grid its values lie on, or None."""
    return [_quantize_source(node) for node in _flatten(output)]


def lower(graph_module, example_inputs, name, builder=None):
    """Lowers `graph_module` run on `example_inputs` to a program named `name`.

    `builder`: the etp.ProgramBuilder to fill (a new one when None).
    Raises UnsupportedError listing every node that cannot be lowered.
    """
    walk = _Walk(graph_module, example_inputs, name, builder)
    outputs = walk.run()
    g = walk.g
    output_values = [walk.values[n] if isinstance(n, torch.fx.Node) else n for n in _flatten(outputs)]
    for value in output_values:
        if not isinstance(value, (TensorValue, Constant, Deferred, Unavailable)):
            walk.problems.append(UnsupportedNode("output", "output", "", "output",
                                                 f"outputs must be tensors, got {type(value).__name__}"))
    if walk.problems:
        raise UnsupportedError(name, walk.problems)
    for value in output_values:
        g.builder.output(g.tensor(value))
    sources = _output_qparams(outputs)
    return LoweredProgram(g.builder, g.activation_qparams, g.weight_qparams,
                          [g.activation_qparams.get(s) if s else None for s in sources])
