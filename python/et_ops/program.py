"""Loading and running et_ops programs."""

import json
import os
from dataclasses import dataclass

import numpy as np

from . import _et_ops
from .errors import InputError, LoadError, RunError, UsageError
from .etp import NUMPY_DTYPES


@dataclass(frozen=True)
class TensorSpec:
    """dtype (the .etp name), shape and dim order of a program input or output.

    ``dim_order`` lists the dimensions from outermost to innermost in memory:
    ``(0, 1, ..., n-1)`` is contiguous (row-major), ``(0, 2, 3, 1)`` for an
    NCHW tensor is channels-last. Arrays passed to and returned by
    ``Program.run`` are indexed logically whatever the dim order.
    """

    dtype: str
    shape: tuple
    dim_order: tuple

    @property
    def numpy_dtype(self):
        """The numpy dtype of arrays for this tensor (uint16 raw bits for bfloat16)."""
        return NUMPY_DTYPES[self.dtype]

    def describe(self):
        """``float32[4, 16]``, with the dim order when it is not contiguous."""
        text = f"{self.dtype}[{', '.join(str(s) for s in self.shape)}]"
        if tuple(self.dim_order) != tuple(range(len(self.shape))):
            text += f" dim_order {list(self.dim_order)}"
        return text

    def describe_dtype(self):
        """The numpy dtype's name that arrays for this tensor have."""
        if self.dtype == "bfloat16":
            return "uint16 (the raw bits of bfloat16)"
        return self.numpy_dtype.name


class Program:
    """A loaded program: immutable, and safe to run from several threads.

    Made by ``et_ops.load(path)``, which reads, validates and resolves the
    whole file before anything runs. ``run(inputs)`` takes one numpy array
    per input and returns one new array per output.

    Attributes:
        name: the program's name from its header ('' when it has none).
        path: the file it was loaded from.
        operators: the operators it uses, unique, in order of first use.
        input_specs, output_specs: a ``TensorSpec`` (dtype, shape, dim order)
            per input and per output.
        instruction_count: how many instructions a run executes.
        planned_memory_bytes: activation memory of one run.
        metadata: the header's metadata object (a dict).
    """

    def __init__(self, native):
        self._native = native
        self.input_specs = [TensorSpec(**spec) for spec in native.input_specs]
        self.output_specs = [TensorSpec(**spec) for spec in native.output_specs]
        #: Per input, per dimension: the (smallest, largest) size it accepts;
        #: the two differ in a dynamic dimension of a version-2 program, whose
        #: spec shows the largest. Outputs then have the sizes of the run.
        self.input_bounds = [[tuple(b) for b in bounds] for bounds in native.input_bounds]

    @property
    def state_count(self):
        """How many state tensors each session (run state) holds."""
        return self._native.state_count

    def session(self, threads=1):
        """A run state of its own that keeps the program's state from run to run.

        ``session.run(inputs)`` runs like ``Program.run``; ``session.reset()``
        restores the state to the program's initial bytes. ``Program.run``
        itself gives no guarantee about state between calls (it reuses run
        states from a pool); use a session for programs with state.
        """
        return Session(self, threads)

    @property
    def name(self):
        """The program's name from its header ('' when it has none)."""
        return self._native.name

    @property
    def path(self):
        """The file the program was loaded from."""
        return self._native.path

    @property
    def operators(self):
        """The operators the program uses, unique, in order of first use."""
        return list(self._native.operators)

    @property
    def instruction_count(self):
        """How many instructions one run executes."""
        return self._native.instruction_count

    @property
    def planned_memory_bytes(self):
        """Activation memory of one run."""
        return self._native.planned_memory_bytes

    @property
    def metadata(self):
        """The header's metadata object."""
        return json.loads(self._native.metadata_json or "{}")

    def run(self, inputs, threads=1, profile=False):
        """Runs the program on a list of numpy arrays; returns a list of new arrays.

        Each input must have its spec's dtype and shape exactly (no implicit
        conversion: a float64 array for a float32 input is an InputError).
        Outputs are copies that the caller owns. The GIL is released while
        the kernels run.

        `threads`: the threads the run may use (1, the default, runs on the
        calling thread); any count gives the same bytes. With `profile=True`
        the result is `(outputs, records)`: one dict per instruction with
        its "instruction" index, "op", "kernel_set" (the kernel library's
        component), the "shapes" and "dtypes" of its tensor arguments, and
        "start_us" / "duration_us" (microseconds from the start of the run).
        """
        if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 1024:
            raise UsageError(f"threads must be an int from 1 to 1024, got {threads!r}")
        arrays = self._checked_inputs(inputs)
        outputs, error, records = self._native.run(arrays, threads, bool(profile))
        if outputs is None:
            raise RunError(f"program '{self.name}' ({self.path}): {error}")
        return (list(outputs), list(records)) if profile else list(outputs)

    def _checked_inputs(self, inputs):
        if isinstance(inputs, np.ndarray) or not hasattr(inputs, "__len__"):
            raise InputError(f"program '{self.name}': run() takes a list of arrays, got {type(inputs).__name__}")
        if len(inputs) != len(self.input_specs):
            raise InputError(f"program '{self.name}' takes {len(self.input_specs)} input(s), got {len(inputs)}")
        return [self._checked_input(i, value, spec) for i, (value, spec) in enumerate(zip(inputs, self.input_specs))]

    def _checked_input(self, index, value, spec):
        where = f"program '{self.name}' input {index}"
        if not isinstance(value, np.ndarray):
            raise InputError(f"{where}: expected a numpy array, got {type(value).__name__}")
        # Byte order is representation, not value: a big-endian array is accepted.
        if value.dtype.newbyteorder("<") != spec.numpy_dtype:
            raise InputError(f"{where}: expected dtype {spec.describe_dtype()}, got {value.dtype.name} "
                             f"(convert with array.astype(numpy.{spec.numpy_dtype.name}))")
        bounds = self.input_bounds[index]
        if len(value.shape) != len(spec.shape) or any(not lo <= n <= hi for n, (lo, hi) in zip(value.shape, bounds)):
            expected = tuple(spec.shape) if all(lo == hi for lo, hi in bounds) else \
                "(" + ", ".join(str(lo) if lo == hi else f"{lo}..{hi}" for lo, hi in bounds) + ")"
            raise InputError(f"{where}: expected shape {expected}, got {tuple(value.shape)}")
        return np.ascontiguousarray(value, dtype=spec.numpy_dtype)

    def __repr__(self):
        inputs = ", ".join(spec.describe() for spec in self.input_specs)
        outputs = ", ".join(spec.describe() for spec in self.output_specs)
        return (f"<et_ops.Program {self.name!r} from {self.path!r}: inputs [{inputs}], outputs [{outputs}], "
                f"{len(self.operators)} operators, {self.instruction_count} instructions, "
                f"{self.planned_memory_bytes} bytes planned>")


class Session:
    """A run state of one program that keeps its state from run to run (``Program.session``)."""

    def __init__(self, program, threads=1):
        if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 1024:
            raise UsageError(f"threads must be an int from 1 to 1024, got {threads!r}")
        self.program = program
        self._native = _et_ops.NativeSession(program._native, threads)
        if self._native.error:
            raise RunError(f"program '{program.name}' ({program.path}): {self._native.error}")

    def run(self, inputs):
        """Runs once on a list of numpy arrays; returns a list of new arrays.

        Errors (an input outside its bounds, a kernel's error) raise
        InputError or RunError; no state is written before a bound is
        checked, and the session stays usable.
        """
        arrays = self.program._checked_inputs(inputs)
        outputs, error, _ = self._native.run(arrays)
        if outputs is None:
            raise RunError(f"program '{self.program.name}' ({self.program.path}): {error}")
        return list(outputs)

    def reset(self):
        """Restores every state tensor to the program's initial bytes."""
        self._native.reset()

    def __repr__(self):
        return f"<et_ops.Session of {self.program.name!r} ({self.program.state_count} state tensors)>"


def load(path):
    """Loads a .etp program; raises LoadError with the runtime's message."""
    path = os.fspath(path)
    outcome = _et_ops.load(path)
    if outcome["program"] is None:
        raise LoadError(outcome["error"], outcome["kind"], path, outcome["missing"])
    return Program(outcome["program"])
