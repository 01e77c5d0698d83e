"""What an emitter works with: the program being built, and each node's value.

An emitter (see table.py) receives a `Lowering` as its first argument and
turns one FX node into instructions. It reads the node's arguments as
lowered values (values.py), and calls:

- `output(node)`: a new intermediate tensor shaped like the node's result
  on the example inputs;
- `tensor(value)`: the program value of a tensor argument (a `Constant`
  becomes a program constant here, once);
- `integer`, `double`, `boolean`, `scalar`, `int_list`, `tensor_list`,
  `optional_tensor_list`, `string`, `scalar_type`, `none`: the program
  values of other arguments;
- `value_of(fx_node)`: the lowered value of another node (to look through
  a transposition, say);
- `emit(operator, args)`: one instruction, arguments in schema order;
- `unsupported(reason)`: gives up on this node with a reason.
"""

import numbers

import numpy as np
import torch

from ..errors import Error
from ..etp import ProgramBuilder
from .values import Constant, Deferred, TensorValue, etp_dtype, qparams_of


class Unsupported(Error):
    """Raised by an emitter that cannot lower its node; the reason is reported."""


class Lowering:
    def __init__(self, name, graph_module, node_values, builder=None):
        self.builder = builder if builder is not None else ProgramBuilder(name)
        self.graph_module = graph_module
        self._node_values = node_values  # node -> its value on the example inputs
        self._constants = {}  # id(constant's torch tensor) -> (program value index, the tensor)
        self._deferred = {}  # id(Deferred) -> its program value index, once emitted
        self._state_views = {}  # state value index -> its views (Deferred)
        self.state_order = None  # where the graph writes state (set by the walk): read_before_next_write(node)
        self.values = {}  # fx node -> lowered value (filled by the walk)
        self.activation_qparams = {}  # quantize node name -> qparams (the quantization report)
        self.weight_qparams = {}  # module path -> qparams

    # ---- the example run ----
    def example_value(self, node):
        return self._node_values[node]

    # ---- tensors ----
    def input(self, node):
        value = self.example_value(node)
        if not isinstance(value, torch.Tensor) or value.is_quantized:
            raise Unsupported(f"program inputs must be plain tensors, got {type(value).__name__}")
        index = self.builder.tensor(etp_dtype(value.dtype), value.shape)
        self.builder.input(index)
        return TensorValue(index, etp_dtype(value.dtype), tuple(value.shape))

    def output(self, node, qparams=None):
        """A new intermediate tensor with the node's example shape and dtype."""
        value = self.example_value(node)
        if isinstance(value, (tuple, list)) and len(value) > 0:
            value = value[0]
        if not isinstance(value, torch.Tensor):
            raise Unsupported(f"expected a tensor result, got {type(value).__name__}")
        return self.intermediate(etp_dtype(value.dtype), value.shape, qparams)

    def outputs(self, node):
        """One new intermediate per tensor of the node's tuple of results."""
        return tuple(self.intermediate(etp_dtype(v.dtype), v.shape) for v in self.example_value(node))

    def intermediate(self, dtype, shape, qparams=None):
        shape = tuple(int(s) for s in shape)
        return TensorValue(self.builder.tensor(dtype, shape), dtype, shape, qparams)

    def tensor(self, value):
        """The program value index of a tensor argument."""
        if isinstance(value, TensorValue):
            return value.index
        if isinstance(value, Deferred):
            if id(value) not in self._deferred:
                self._deferred[id(value)] = self.tensor(value.emit(self))
            return self._deferred[id(value)]
        if isinstance(value, Constant):
            if value.is_quantized:
                raise Unsupported("a quantized constant can only be dequantized")
            if id(value.tensor) not in self._constants:
                array = value.tensor.detach().contiguous()
                dtype = etp_dtype(array.dtype)
                data = array.view(torch.int16).numpy() if dtype == "bfloat16" else array.numpy()
                # The tensor is kept alive with its index: its id is not reused for another one.
                self._constants[id(value.tensor)] = (self.builder.constant(data, dtype), value.tensor)
            return self._constants[id(value.tensor)][0]
        raise Unsupported(f"expected a tensor argument, got {type(value).__name__}")

    def is_state(self, value):
        """Whether `value` is a state tensor of the program (written from run to run)."""
        return isinstance(value, TensorValue) and bool(self.builder.value(value.index).get("state"))

    def deferred_view(self, view):
        """`view` (a Deferred view); one of state is remembered for forget_views_of."""
        if self.is_state(view.source):
            self._state_views.setdefault(view.source.index, []).append(view)
        return view

    def forget_views_of(self, state):
        """Before an instruction writes `state`: its views already emitted are emitted again where they are
        read next, so that they show the new values, as a view of a module's buffer does."""
        for view in self._state_views.get(state.index, []):
            self._deferred.pop(id(view), None)

    def quantized_constant(self, quantized):
        """The integers of a quantized torch tensor as a program constant, and its qparams."""
        integers = quantized.int_repr().contiguous().numpy()
        return TensorValue(self.builder.constant(integers), etp_dtype(quantized.dtype), tuple(quantized.shape),
                           qparams_of(quantized))

    # ---- other arguments ----
    def integer(self, value):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise Unsupported(f"expected an int, got {value!r}")
        return self.builder.integer(int(value))

    def double(self, value):
        if isinstance(value, torch.Tensor) or isinstance(value, Constant):
            value = (value.tensor if isinstance(value, Constant) else value).item()
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise Unsupported(f"expected a float, got {value!r}")
        return self.builder.double(float(value))

    def boolean(self, value):
        return self.builder.boolean(bool(value))

    def scalar(self, value):
        """An aten Scalar: ints stay ints, floats are doubles."""
        if isinstance(value, Constant) and value.tensor.numel() == 1:
            value = value.tensor.item()
        if isinstance(value, bool):
            return self.builder.boolean(value)
        if isinstance(value, numbers.Integral):
            return self.builder.integer(int(value))
        if isinstance(value, numbers.Real):
            return self.builder.double(float(value))
        raise Unsupported(f"expected a number, got {value!r}")

    def int_list(self, values):
        if isinstance(values, numbers.Integral):
            values = [values]
        try:
            return self.builder.int_list([int(v) for v in values])
        except (TypeError, ValueError):
            raise Unsupported(f"expected a list of ints, got {values!r}") from None

    def tensor_list(self, values):
        return self.builder.tensor_list([self.tensor(v) for v in values])

    def optional_tensor_list(self, values):
        """A `Tensor?[]` argument (index.Tensor's indices): tensors and Nones."""
        return self.builder.optional_tensor_list([None if v is None else self.tensor(v) for v in values])

    def string(self, value):
        if not isinstance(value, str):
            raise Unsupported(f"expected a string, got {value!r}")
        return self.builder.string(value)

    def value_of(self, fx_node):
        """The lowered value of `fx_node` (a node lowered before the current one), or None."""
        return self.values.get(fx_node)

    def scalar_type(self, dtype):
        return self.builder.scalar_type(etp_dtype(dtype) if isinstance(dtype, torch.dtype) else dtype)

    def none(self):
        return self.builder.none()

    def optional(self, value, convert):
        return self.none() if value is None else convert(value)

    # ---- instructions ----
    def emit(self, operator, args):
        self.builder.instruction(operator, args)

    @staticmethod
    def unsupported(reason):
        raise Unsupported(reason)


def array_of(value):
    """The numpy array of a Constant (for emitters that fold parameters)."""
    return np.asarray(value.tensor.detach().numpy())
