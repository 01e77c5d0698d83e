"""A lowered program as a graph, and copying it into a new builder: what the rewrites of a lowered
program (the xnnpack backend, xnnpack.py; the low-bit linears, lowbit.py; the fused attention,
attention.py) share.

`Program(builder)` holds the builder's values, constants and instructions
with the instruction that writes each value and those that read it (by the
operators' schemas, et_ops._operators), finds the instructions a rewrite
leaves unread and rebuilds the program with replacements; `copy_value` copies one value into
another builder (constants, states and symbolic sizes included) and
`empty_like` starts that builder with the program's name, symbols and
metadata.
"""

import numpy as np

from .._operators import OPERATORS as SCHEMAS
from ..errors import UsageError
from ..etp import NUMPY_DTYPES, ProgramBuilder, Sym


class Program:
    """A lowered program's values and instructions, with who produces and who reads each value."""

    def __init__(self, builder):
        self.builder = builder
        self.values = [dict(v) for v in builder._values]
        self.data = dict(builder._constants)
        self.instructions = [dict(i, args=list(i["args"])) for i in builder._instructions]
        self.outputs = list(builder._outputs)
        self.inputs = list(builder._inputs)
        self.producer = {}
        self.readers = {}
        for n, instruction in enumerate(self.instructions):
            written = written_arguments(instruction)
            for position, v in enumerate(instruction["args"]):
                if position in written:
                    self.producer[v] = n
            for v in self.read_by(instruction):
                self.readers.setdefault(v, []).append(n)

    def read_by(self, instruction):
        """The values an instruction reads: its arguments but those it writes, and a list's tensors too."""
        written = written_arguments(instruction)
        for position, v in enumerate(instruction["args"]):
            if position not in written:
                yield v
                if self.values[v]["type"] in ("tensor_list", "optional_tensor_list"):
                    yield from (t for t in self.values[v]["value"] if t is not None)

    def scalar(self, v):
        value = self.values[v]
        return None if value["type"] == "none" else value.get("value")

    def is_constant(self, v):
        return v in self.data

    def array(self, v):
        value = self.values[v]
        return np.frombuffer(self.data[v], dtype=NUMPY_DTYPES[value["dtype"]]).reshape(value["sizes"])

    def only_reader(self, v, n):
        """Whether instruction n is the one reader of v, and v is no program output."""
        return self.readers.get(v, []) == [n] and v not in self.outputs

    def produced_by(self, v, op):
        n = self.producer.get(v)
        return n if n is not None and self.instructions[n]["op"] == op else None

    def written(self, n):
        """The values instruction n writes (its schema's out arguments)."""
        args = self.instructions[n]["args"]
        return {args[i] for i in written_arguments(self.instructions[n])}

    def unread(self, removed, candidates, kept):
        """`removed` (instruction indices) and every candidate whose values nothing else reads: no
        instruction left, no output, none of `kept` (values a rewrite reads)."""
        removed = set(removed)
        changed = True
        while changed:
            changed = False
            read = set(self.outputs) | set(kept)
            for k, instruction in enumerate(self.instructions):
                if k not in removed:
                    read.update(self.read_by(instruction))
            for c in sorted(set(candidates) - removed):
                if not self.written(c) & read:
                    removed.add(c)
                    changed = True
        return removed

    def rebuilt(self, replacements, removed, **metadata):
        """A new ProgramBuilder (empty_like) with this program's inputs, instructions and outputs, but
        for `removed` instructions, which go, and those in `replacements`: replacements[n](b, new) emits
        instruction n's replacement into b, `new` mapping an old value to b's."""
        b = empty_like(self.builder, **metadata)
        mapped = {}

        def new(v):
            if v not in mapped:
                mapped[v] = copy_value(self, b, v, new)
            return mapped[v]

        for v in self.inputs:
            b.input(new(v))
        for n, instruction in enumerate(self.instructions):
            if n in replacements:
                replacements[n](b, new)
            elif n not in removed:
                b.instruction(instruction["op"], [new(v) for v in instruction["args"]])
        for v in self.outputs:
            b.output(new(v))
        return b


def written_arguments(instruction):
    """Positions of the arguments the instruction's kernel writes (its schema's out arguments)."""
    return {a.position for a in SCHEMAS[instruction["op"]].outputs()}


def symbolic(entries):
    """Sizes or ints of a header (a symbolic entry is a {"sym", "mul", "add"} object) as a builder takes them."""
    def entry(e):
        return Sym(e["sym"], e["mul"], e["add"]) if isinstance(e, dict) else e
    return [entry(e) for e in entries] if isinstance(entries, list) else entry(entries)


def empty_like(builder, **metadata):
    """A new ProgramBuilder with `builder`'s name, symbols and metadata (updated by `metadata`)."""
    b = ProgramBuilder(builder.name)
    for symbol in builder._symbols:
        b.symbol(symbol["name"], symbol["min"], symbol["max"])
    b.metadata = dict(builder.metadata, **metadata)
    return b


def copy_value(p, b, v, new=None):
    """Value v of the old program in the new builder (constants and states with their data); `new` maps
    the tensors a tensor list names."""
    value = p.values[v]
    if v in p.data:
        array = p.array(v)
        return (b.state if value.get("state") else b.constant)(array, value["dtype"])
    if value["type"] == "tensor":
        return b.tensor(value["dtype"], symbolic(value["sizes"]), value.get("dim_order"))
    if value["type"] == "none":
        return b.none()
    if value["type"] == "int":
        return b.integer(symbolic(value["value"]))
    if value["type"] == "double":
        return b.double(value["value"])
    if value["type"] == "bool":
        return b.boolean(value["value"])
    if value["type"] == "scalar_type":
        return b.scalar_type(value["value"])
    if value["type"] == "int_list":
        return b.int_list(symbolic(value["value"]))
    if value["type"] == "string":
        return b.string(value["value"])
    if value["type"] == "tensor_list" and new is not None:
        return b.tensor_list([new(t) for t in value["value"]])
    if value["type"] == "optional_tensor_list" and new is not None:
        return b.optional_tensor_list([None if t is None else new(t) for t in value["value"]])
    raise UsageError(f"value {v} of type {value['type']} cannot be copied")
