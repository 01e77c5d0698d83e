"""Writing and reading et_ops program files (.etp, format versions 1 and 2;
the framing is et_ops.etp_format's).

Version 2 adds state tensors (``ProgramBuilder.state``) and bounded dynamic
shapes (``ProgramBuilder.symbol``, and ``Sym`` in sizes and ints). The
builder writes version 1 when a program uses neither, so such programs keep
their bytes.

`ProgramBuilder` collects values and instructions and writes the file; the
output depends only on what was added, in what order, so the same model
always gives the same bytes. `read_program` parses a file back (header and
constants) without the C++ runtime, for tests and tools.
"""

import json

import numpy as np

from .errors import FormatError, UsageError, UsageTypeError
from ._dtypes import DTYPES
from .etp_format import MAGIC, PREAMBLE, align as _align, read_header

# numpy dtype for every .etp dtype (et_ops._dtypes, from the one dtype
# table). NumPy has no bfloat16: its tensors are stored and exchanged as
# uint16 raw bits.
NUMPY_DTYPES = {name: np.dtype(descr) for name, _, descr, _, _ in DTYPES}

_DTYPE_OF_NUMPY = {np.dtype(descr): name for name, _, descr, _, numpy in DTYPES if numpy}


def etp_dtype_of(array):
    """The .etp dtype name of a numpy array (uint16 for raw bfloat16 bits)."""
    try:
        return _DTYPE_OF_NUMPY[array.dtype.newbyteorder("<")]
    except KeyError:
        raise UsageTypeError(f"numpy dtype {array.dtype} has no .etp equivalent") from None


class Sym:
    """A symbolic size or int of a version-2 program: ``mul * symbol + add``.

    ``Sym("T")`` is T, ``Sym("T", mul=2, add=1)`` is 2*T+1. Use it in a
    tensor's sizes or as an int / int_list element; the symbol must be
    declared with ``ProgramBuilder.symbol``.
    """

    def __init__(self, name, mul=1, add=0):
        if int(mul) == 0:
            raise UsageError("Sym: mul must not be 0 (write the constant instead)")
        self.name, self.mul, self.add = str(name), int(mul), int(add)

    def to_json(self):
        return {"sym": self.name, "mul": self.mul, "add": self.add}

    def __repr__(self):
        return f"Sym({self.name!r}, mul={self.mul}, add={self.add})"


def _entry(value):
    """A size or int entry for the header: an int, or a Sym's JSON object."""
    return value.to_json() if isinstance(value, Sym) else int(value)


class ProgramBuilder:
    """Builds one program: values, instructions, inputs, outputs.

    Scalar values (ints, lists, doubles, ...) are shared: the same int is one
    value. ``share_scalars=False`` gives every call its own value, so that two
    programs built by the same calls have the same value indices.
    """

    def __init__(self, name, share_scalars=True):
        self.name = name
        self._share_scalars = share_scalars
        self._values = []
        self._constants = []  # (value index, contiguous little-endian bytes)
        self._interned = {}  # scalar values are shared: (type, json text) -> index
        self._instructions = []
        self._inputs = []
        self._outputs = []
        self._symbols = []
        self.metadata = {}

    # ---- values ----
    def _add(self, value):
        self._values.append(value)
        return len(self._values) - 1

    def _interned_value(self, value):
        if not self._share_scalars:
            return self._add(value)
        key = (value["type"], json.dumps(value.get("value")))
        if key not in self._interned:
            self._interned[key] = self._add(value)
        return self._interned[key]

    def symbol(self, name, min, max):  # noqa: A002 (the format's own key names)
        """Declares a symbol for bounded dynamic shapes: any value in [min, max] (version 2)."""
        if any(s["name"] == name for s in self._symbols):
            raise UsageError(f"symbol {name!r} is declared twice")
        if not 0 <= int(min) <= int(max):
            raise UsageError(f"symbol {name!r}: bounds [{min}, {max}] must satisfy 0 <= min <= max")
        self._symbols.append({"name": str(name), "min": int(min), "max": int(max)})
        return Sym(name)

    def _check_symbols(self, entries):
        declared = {s["name"] for s in self._symbols}
        for e in entries:
            if isinstance(e, Sym) and e.name not in declared:
                raise UsageError(f"symbol {e.name!r} is not declared (ProgramBuilder.symbol)")

    def tensor(self, dtype, sizes, dim_order=None):
        """A tensor without data: an input or an intermediate (contiguous unless dim_order says otherwise).

        A size may be a ``Sym`` (version 2): the tensor is then as large as the
        symbols make it in each run, and memory is planned for the largest.
        """
        if dtype not in NUMPY_DTYPES:
            raise UsageError(f"unknown dtype {dtype!r}")
        sizes = list(sizes)
        self._check_symbols(sizes)
        value = {"type": "tensor", "dtype": dtype, "sizes": [_entry(s) for s in sizes]}
        if dim_order is not None:
            value["dim_order"] = [int(d) for d in dim_order]
        return self._add(value)

    def constant(self, array, dtype=None):
        """A constant tensor holding `array` (bfloat16 needs dtype='bfloat16' and uint16 bits)."""
        array = np.asarray(array)
        dtype = dtype or etp_dtype_of(array)
        data = np.ascontiguousarray(array, dtype=NUMPY_DTYPES[dtype]).tobytes()
        index = self._add({"type": "tensor", "dtype": dtype, "sizes": [int(s) for s in array.shape]})
        self._constants.append((index, data))
        return index

    def state(self, array, dtype=None):
        """A state tensor starting from `array` (version 2): each run state gets its own copy,
        kept from run to run and restored by reset(). Kernels may write it."""
        index = self.constant(array, dtype)
        self._values[index]["state"] = True
        return index

    def integer(self, value):
        """An int value; a ``Sym`` makes it symbolic (version 2)."""
        self._check_symbols([value])
        return self._interned_value({"type": "int", "value": _entry(value)})

    def double(self, value):
        return self._interned_value({"type": "double", "value": float(value)})

    def boolean(self, value):
        return self._interned_value({"type": "bool", "value": bool(value)})

    def scalar_type(self, dtype):
        if dtype not in NUMPY_DTYPES:
            raise UsageError(f"unknown dtype {dtype!r}")
        return self._interned_value({"type": "scalar_type", "value": dtype})

    def int_list(self, values):
        """An int_list value; elements may be ``Sym`` (version 2)."""
        values = list(values)
        self._check_symbols(values)
        return self._interned_value({"type": "int_list", "value": [_entry(v) for v in values]})

    def tensor_list(self, tensors):
        """A `Tensor[]` argument: the value indices of its tensors, in order."""
        tensors = [int(t) for t in tensors]
        for t in tensors:
            if not 0 <= t < len(self._values) or self._values[t]["type"] != "tensor":
                raise UsageError(f"tensor_list element {t} is not a tensor value")
        return self._interned_value({"type": "tensor_list", "value": tensors})

    def optional_tensor_list(self, tensors):
        """A `Tensor?[]` argument (aten::index's indices): value indices of tensors, or None, in order."""
        tensors = [None if t is None else int(t) for t in tensors]
        for t in tensors:
            if t is not None and (not 0 <= t < len(self._values) or self._values[t]["type"] != "tensor"):
                raise UsageError(f"optional_tensor_list element {t} is neither None nor a tensor value")
        return self._interned_value({"type": "optional_tensor_list", "value": tensors})

    def string(self, text):
        """A `str` argument (gelu's approximate)."""
        if not isinstance(text, str):
            raise UsageTypeError(f"a string value must be a str, got {type(text).__name__}")
        return self._interned_value({"type": "string", "value": text})

    def none(self):
        return self._interned_value({"type": "none"})

    @property
    def instructions(self):
        """The instructions added so far (copies)."""
        return [dict(i, args=list(i["args"])) for i in self._instructions]

    def value(self, index):
        """The header entry of value `index` (a copy)."""
        return dict(self._values[index])

    @property
    def value_count(self):
        return len(self._values)

    def constant_bytes(self, index):
        """The bytes of constant or state tensor `index` (None for any other value)."""
        return dict(self._constants).get(index)

    @property
    def inputs(self):
        return list(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    # ---- program structure ----
    def instruction(self, op, args):
        for a in args:
            if not 0 <= a < len(self._values):
                raise UsageError(f"{op}: argument value {a} does not exist")
        self._instructions.append({"op": op, "args": list(args)})

    def input(self, index):
        self._inputs.append(index)

    def output(self, index):
        self._outputs.append(index)

    # ---- serialisation ----
    def _layout_constants(self):
        """Header values with data ranges, and the data segment's bytes."""
        values = [dict(v) for v in self._values]
        segment = bytearray()
        for index, data in self._constants:
            offset = _align(len(segment))
            segment.extend(b"\0" * (offset - len(segment)))
            segment.extend(data)
            values[index]["data"] = {"offset": offset, "nbytes": len(data)}
        return values, bytes(segment)

    def version(self):
        """The format version the program needs: 2 with state or symbols, else 1."""
        uses_state = any(v.get("state") for v in self._values)
        return 2 if uses_state or self._symbols else 1

    def to_bytes(self):
        values, segment = self._layout_constants()
        version = self.version()
        header = {
            "format": "etp",
            "version": version,
            "name": self.name,
            "values": values,
            "inputs": self._inputs,
            "outputs": self._outputs,
            "instructions": self._instructions,
            "metadata": self.metadata,
        }
        if self._symbols:
            header["symbols"] = self._symbols
        # allow_nan=False: NaN and infinities are not JSON, so a non-finite double is refused here.
        header_bytes = json.dumps(header, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
        preamble = PREAMBLE.pack(MAGIC, version, len(header_bytes))
        head = preamble + header_bytes
        return head + b"\0" * (_align(len(head)) - len(head)) + segment

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.to_bytes())


class ProgramFile:
    """A parsed .etp file, read without the C++ runtime: the header and the constants.

    Made by ``read_program(path)`` or ``parse_program(data)``. Nothing is
    resolved: the operators need not be registered anywhere.

    Attributes:
        header: the header JSON as a dict (``values``, ``inputs``, ``outputs``,
            ``instructions``, ``name``, ``metadata``, ...).
        constants: value index -> numpy array, every constant tensor, indexed
            logically (whatever its dim order in the file).
    """

    def __init__(self, header, constants):
        self.header = header
        self.constants = constants  # value index -> numpy array

    @property
    def name(self):
        """The program's name ('' when the header has none)."""
        return self.header.get("name", "")

    @property
    def values(self):
        """The header's values, by index (dicts with ``type`` and its keys)."""
        return self.header["values"]

    @property
    def inputs(self):
        """The value indices of the inputs, in order."""
        return list(self.header["inputs"])

    @property
    def outputs(self):
        """The value indices of the outputs, in order."""
        return list(self.header["outputs"])

    @property
    def instructions(self):
        """The instructions in run order: dicts ``{"op": name, "args": [value index, ...]}``."""
        return self.header["instructions"]

    @property
    def operators(self):
        """Unique operator names in order of first use."""
        return list(dict.fromkeys(i["op"] for i in self.header["instructions"]))

    @property
    def metadata(self):
        """The header's metadata object ({} when it has none)."""
        return self.header.get("metadata", {})

    @property
    def version(self):
        """The format version (1 or 2)."""
        return self.header.get("version", 1)

    @property
    def symbols(self):
        """The symbols of bounded dynamic shapes: dicts ``{"name", "min", "max"}`` (version 2)."""
        return list(self.header.get("symbols", []))

    @property
    def state(self):
        """The value indices of the state tensors (version 2)."""
        return [i for i, v in enumerate(self.values) if v["type"] == "tensor" and v.get("state")]

    def describe_value(self, index):
        """``float32[4, 16]`` for a tensor value, ``int 3``, ``double 0.05`` ... for the others."""
        value = self.values[index]
        if value["type"] == "tensor":
            text = f"{value['dtype']}[{', '.join(_entry_text(s) for s in value['sizes'])}]"
            if value.get("dim_order", list(range(len(value["sizes"])))) != list(range(len(value["sizes"]))):
                text += f" dim_order {value['dim_order']}"
            if value.get("state"):
                return text + " state"
            return text + (" constant" if "data" in value else "")
        if value["type"] == "none":
            return "none"
        if value["type"] in ("int", "int_list"):
            v = value["value"]
            return f"{value['type']} " + (f"[{', '.join(_entry_text(e) for e in v)}]" if isinstance(v, list)
                                          else _entry_text(v))
        return f"{value['type']} {value['value']}"

    def __repr__(self):
        inputs = ", ".join(self.describe_value(v) for v in self.inputs)
        outputs = ", ".join(self.describe_value(v) for v in self.outputs)
        constant_bytes = sum(array.nbytes for array in self.constants.values())
        return (f"<et_ops.etp.ProgramFile {self.name!r}: inputs [{inputs}], outputs [{outputs}], "
                f"{len(self.values)} values ({len(self.constants)} constants, {constant_bytes} bytes), "
                f"{len(self.instructions)} instructions, operators {self.operators}>")


def _entry_text(entry):
    """``3``, or ``T`` / ``2*T+1`` for a symbolic entry."""
    if not isinstance(entry, dict):
        return str(entry)
    mul, add = entry.get("mul", 1), entry.get("add", 0)
    text = entry["sym"] if mul == 1 else f"{mul}*{entry['sym']}"
    return text + (f"+{add}" if add > 0 else f"{add}" if add < 0 else "")


def _logical_array(data, value):
    """A constant's bytes (stored in its dim order) as an array indexed logically."""
    sizes = value["sizes"]
    dim_order = value.get("dim_order", list(range(len(sizes))))
    stored = np.frombuffer(data, dtype=NUMPY_DTYPES[value["dtype"]]).reshape([sizes[d] for d in dim_order])
    return stored.transpose(np.argsort(dim_order))


def parse_program(data):
    """Parses .etp bytes; raises FormatError (a ValueError) naming what is wrong."""
    try:
        header, segment_start = read_header(data)
    except FormatError:
        raise
    except ValueError as e:
        raise FormatError(str(e)) from None
    constants = {}
    for index, value in enumerate(header["values"]):
        if value["type"] != "tensor" or "data" not in value:
            continue
        start = segment_start + value["data"]["offset"]
        end = start + value["data"]["nbytes"]
        if end > len(data):
            raise FormatError(f"constant {index} runs past the end of the file")
        constants[index] = _logical_array(data[start:end], value)
    return ProgramFile(header, constants)


def read_program(path):
    """Reads the .etp file at `path` into a ProgramFile; raises ValueError naming what is wrong."""
    with open(path, "rb") as f:
        return parse_program(f.read())
