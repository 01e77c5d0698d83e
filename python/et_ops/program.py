"""Loading and running et_ops programs."""

import json
import os
from dataclasses import dataclass

import numpy as np

from . import _et_ops
from .errors import InputError, LoadError, RunError
from .etp import NUMPY_DTYPES


@dataclass(frozen=True)
class TensorSpec:
    """dtype (the .etp name), shape and dim order of a program input or output."""

    dtype: str
    shape: tuple
    dim_order: tuple

    @property
    def numpy_dtype(self):
        """The numpy dtype of arrays for this tensor (uint16 raw bits for bfloat16)."""
        return NUMPY_DTYPES[self.dtype]

    def describe_dtype(self):
        if self.dtype == "bfloat16":
            return "uint16 (the raw bits of bfloat16)"
        return self.numpy_dtype.name


class Program:
    """A loaded program: immutable, and safe to run from several threads."""

    def __init__(self, native):
        self._native = native
        self.input_specs = [TensorSpec(**spec) for spec in native.input_specs]
        self.output_specs = [TensorSpec(**spec) for spec in native.output_specs]

    @property
    def name(self):
        return self._native.name

    @property
    def path(self):
        return self._native.path

    @property
    def operators(self):
        """The operators the program uses, unique, in order of first use."""
        return list(self._native.operators)

    @property
    def instruction_count(self):
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
            raise ValueError(f"threads must be an int from 1 to 1024, got {threads!r}")
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
        if tuple(value.shape) != tuple(spec.shape):
            raise InputError(f"{where}: expected shape {tuple(spec.shape)}, got {tuple(value.shape)}")
        return np.ascontiguousarray(value, dtype=spec.numpy_dtype)

    def __repr__(self):
        return f"<et_ops.Program '{self.name}' from {self.path}: {self.instruction_count} instructions>"


def load(path):
    """Loads a .etp program; raises LoadError with the runtime's message."""
    path = os.fspath(path)
    outcome = _et_ops.load(path)
    if outcome["program"] is None:
        raise LoadError(outcome["error"], outcome["kind"], path, outcome["missing"])
    return Program(outcome["program"])
