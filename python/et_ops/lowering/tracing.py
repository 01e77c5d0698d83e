"""What the lowering knows about a graph before it emits anything.

- `trace(module)`: a torch.fx trace of a plain module that also records, on
  every node, the path of the module whose forward made the call
  (``node.meta["module_path"]``), so an unsupported node can be reported
  with where it came from. PyTorch 1.13's tracer does not record it.
- `copy_module_paths(source, target)`: carries those paths over to a graph
  traced again from the same code (prepare_fx traces the user's module once
  more; node names match).
- `run(graph_module, example_inputs)`: the value of every node on the
  example inputs. Shapes are static: an output's shape is what PyTorch
  computed for it, and a node that yields no tensor (``x.size(0)``, shape
  arithmetic) is a constant of the program.
"""

import torch
import torch.fx

MODULE_PATH = "module_path"


class PathRecordingTracer(torch.fx.Tracer):
    """torch.fx.Tracer that stamps every node with its module path."""

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
        return node


def trace(module):
    """symbolic_trace with module paths; raises torch.fx's own error if the module cannot be traced."""
    tracer = PathRecordingTracer()
    graph = tracer.trace(module)
    name = module.__class__.__name__ if isinstance(module, torch.nn.Module) else module.__name__
    return torch.fx.GraphModule(tracer.root, graph, name)


def copy_module_paths(source, target):
    """Copies node.meta["module_path"] from `source` to the nodes of `target` that have the same name."""
    paths = {node.name: node.meta.get(MODULE_PATH) for node in source.graph.nodes}
    for node in target.graph.nodes:
        if node.name in paths and paths[node.name] is not None:
            node.meta.setdefault(MODULE_PATH, paths[node.name])


def module_path(node):
    """Where `node` came from: its module path, a call_module's own target, or "" (the top-level module)."""
    if node.op == "call_module":
        return node.target
    return node.meta.get(MODULE_PATH, "")


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
