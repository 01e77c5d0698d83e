"""The front end: a module run on its example inputs, recorded as aten operators.

- `trace(module, example_inputs)`: PyTorch's `make_fx` (real tensors) on
  a copy of the module, so anything its forward does on those inputs
  traces — Python that unpacks shapes, loops, indexes and splits, PyTorch's
  fused modules (decomposed by `decompositions.TABLE`), a reference
  quantized GraphModule from `convert_to_reference_fx`. Every node is
  stamped with where it came from: the path of the module whose forward
  made the call (``node.meta["module_path"]``), the user's source line
  (``node.meta["source_line"]``: the innermost frame outside PyTorch and
  et_ops) and, for a GraphModule, the name of the FX node of that graph
  that made it (``node.meta["source_node"]``: quantization reports name
  activations by it) and the module that node called, if any
  (``node.meta["source_module"]``: reports name weights by it). A get_attr
  node holding one of the module's buffers has its name
  (``node.meta["buffer"]``): buffers that forward updates in place are the
  program's state.
- `run(graph_module, example_inputs)`: the value of every node on the
  example inputs. Shapes are static: an output's shape is what PyTorch
  computed for it, and a node that yields no tensor is a constant of the
  program.
"""

import contextlib
import os
import sys

import torch
import torch.fx
from torch.fx.experimental import proxy_tensor

from ..module_copy import copy_module
from . import decompositions

MODULE_PATH = "module_path"
SOURCE_LINE = "source_line"
SOURCE_NODE = "source_node"
SOURCE_MODULE = "source_module"
BUFFER = "buffer"

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_ET_OPS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_frame():
    """(file, line, code) of the innermost frame that is neither PyTorch's nor et_ops', or None."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(_TORCH_DIR) or name.startswith(_ET_OPS_DIR) or name.startswith("<")):
            return name, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back
    return None


def user_line():
    """"file:line (in function)" of the user's code being run, or None."""
    frame = _user_frame()
    return None if frame is None else f"{frame[0]}:{frame[1]} (in {frame[2]})"


class _Provenance:
    """Where the call being traced comes from: a module path stack and the current FX node of a GraphModule."""

    def __init__(self):
        self.paths = [""]
        self.source_node = None
        self.source_module = None
        self.source_line = None  # the GraphModule node's own, when its graph recorded one

    def stamp(self, node):
        node.meta[MODULE_PATH] = self.paths[-1]
        if self.source_line is not None:
            node.meta[SOURCE_LINE] = self.source_line
            return
        if self.source_node is not None:
            node.meta[SOURCE_NODE] = self.source_node
        if self.source_module is not None:
            node.meta[SOURCE_MODULE] = self.source_module
        line = user_line()
        if line is not None:
            node.meta[SOURCE_LINE] = line


def _tracer_class(provenance):
    class StampingTracer(proxy_tensor.PythonKeyTracer):
        def create_node(self, *args, **kwargs):
            node = super().create_node(*args, **kwargs)
            provenance.stamp(node)
            return node
    return StampingTracer


@contextlib.contextmanager
def _module_paths(module, provenance):
    """Forward hooks that keep provenance.paths at the module whose forward runs."""
    handles = []
    for path, submodule in module.named_modules():
        if not path:
            continue

        def enter(_module, _inputs, path=path):
            provenance.paths.append(path)

        def leave(_module, _inputs, _output):
            provenance.paths.pop()
        handles.append(submodule.register_forward_pre_hook(enter))
        handles.append(submodule.register_forward_hook(leave))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


class _NodeNaming(torch.fx.Interpreter):
    """Runs a GraphModule node by node, telling provenance which node runs (and its module)."""

    def __init__(self, graph_module, provenance):
        super().__init__(graph_module)
        self.provenance = provenance

    def run_node(self, n):
        provenance = self.provenance
        provenance.source_node = n.name
        provenance.source_module = n.target if n.op == "call_module" else None
        provenance.source_line = n.meta.get(SOURCE_LINE)
        recorded_path = n.meta.get(MODULE_PATH)
        if recorded_path is not None:
            provenance.paths.append(recorded_path)
        try:
            return super().run_node(n)
        finally:
            if recorded_path is not None:
                provenance.paths.pop()
            provenance.source_node = provenance.source_module = provenance.source_line = None


class _AnnotatingTracer(torch.fx.Tracer):
    """torch.fx.Tracer that stamps every node with its module path and the user's source line."""

    def __init__(self):
        super().__init__()
        self._paths = []

    def call_module(self, m, forward, args, kwargs):
        self._paths.append(self.path_of_module(m))
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self._paths.pop()

    def create_node(self, *args, **kwargs):
        node = super().create_node(*args, **kwargs)
        node.meta[MODULE_PATH] = self._paths[-1] if self._paths else ""
        line = user_line()
        if line is not None:
            node.meta[SOURCE_LINE] = line
        return node


def annotate(graph_module, model):
    """Gives the nodes of `graph_module` (prepare_fx's trace of `model`, converted) the module path and source
    line of the node of the same name in a torch.fx trace of `model`; PyTorch 1.13's own trace records neither."""
    try:
        graph = _AnnotatingTracer().trace(model)
    except Exception:  # noqa: BLE001 - prepare_fx traced it; this trace only improves messages
        return
    recorded = {node.name: node.meta for node in graph.nodes}
    for node in graph_module.graph.nodes:
        meta = recorded.get(node.name)
        if meta is not None and node.op != "call_module":
            for key in (MODULE_PATH, SOURCE_LINE):
                if key in meta:
                    node.meta.setdefault(key, meta[key])


@contextlib.contextmanager
def _stamping_tracer(provenance):
    # make_fx builds its tracer from this module global; ours also stamps provenance.
    original = proxy_tensor.PythonKeyTracer
    proxy_tensor.PythonKeyTracer = _tracer_class(provenance)
    try:
        yield
    finally:
        proxy_tensor.PythonKeyTracer = original


def trace(module, example_inputs):
    """The aten-level graph of `module` run on `example_inputs`.

    A copy of the module runs, so that its buffers stay as they are.
    """
    module = copy_module(module)
    if isinstance(module, torch.nn.Module):
        module.eval()
    provenance = _Provenance()
    if isinstance(module, torch.fx.GraphModule):
        def function(*args):
            return _NodeNaming(module, provenance).run(*args)
        hooks = _module_paths(module, provenance)
    else:
        function = module
        hooks = _module_paths(module, provenance) if isinstance(module, torch.nn.Module) else contextlib.nullcontext()
    with torch.no_grad(), hooks, _stamping_tracer(provenance):
        graph_module = proxy_tensor.make_fx(function, decompositions.TABLE)(*example_inputs)
    _name_buffers(graph_module, module)
    # No dead code elimination: an in-place update of a buffer has no users but is kept
    # (the lowering skips unused nodes that write nothing).
    return graph_module


def _name_buffers(graph_module, module):
    """Stamps each get_attr node that holds one of the module's buffers with the buffer's name (make_fx calls
    them _tensor_constantN): the name a buffer updated in place (program state) is known by."""
    if not isinstance(module, torch.nn.Module):
        return
    names = {id(buffer): name for name, buffer in module.named_buffers()}
    for node in graph_module.graph.nodes:
        if node.op == "get_attr":
            name = names.get(id(getattr(graph_module, node.target, None)))
            if name is not None:
                node.meta[BUFFER] = name


def buffer_name(node):
    """The module buffer a get_attr node holds ("layers.0.cache"), or None."""
    return node.meta.get(BUFFER)


def module_path(node):
    """Where `node` came from: the path of the module whose forward made it, or "" (the top-level module)."""
    return node.meta.get(MODULE_PATH, "")


def source_line(node):
    """The user's source line that made `node` ("file:line (in function)"), or ""."""
    return node.meta.get(SOURCE_LINE, "")


def layer_path(node):
    """The module a layer's weight belongs to: the GraphModule's call_module target, else the module path."""
    return node.meta.get(SOURCE_MODULE) or module_path(node)


def source_node(node):
    """The name of the traced GraphModule's node that made `node`, or `node`'s own name."""
    return node.meta.get(SOURCE_NODE, node.name)


class _RecordingInterpreter(torch.fx.Interpreter):
    def __init__(self, graph_module):
        super().__init__(graph_module)
        self.values = {}

    def run_node(self, n):
        value = super().run_node(n)
        self.values[n] = value
        return value


def run(graph_module, example_inputs):
    """{node: value} of every node of `graph_module` on `example_inputs`."""
    interpreter = _RecordingInterpreter(graph_module)
    with torch.no_grad():
        interpreter.run(*example_inputs)
    return interpreter.values
