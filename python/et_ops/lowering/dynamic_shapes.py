"""Bounded dynamic shapes from programs lowered at several lengths.

The lowering is static: every size and int argument is what PyTorch
computed on the example inputs. To make one program for every length T of
a dimension (a language model's number of tokens), the model is lowered at
three lengths with `ProgramBuilder(share_scalars=False)`, so that the same
calls give the same value indices, and `merge` compares them value by
value: an entry equal in all three is a constant; one that differs is
`mul * T + add`, solved from the first two lengths and checked on the
third; anything else (a constant folded from T, a float that depends on T,
a graph whose operators differ) is a `ShapeMismatch` naming the value.
The result is one program whose symbol T has the bounds [1, max].
"""

import numpy as np

from ..etp import NUMPY_DTYPES, ProgramBuilder, Sym


class ShapeMismatch(Exception):
    """The programs lowered at different lengths do not differ only by affine sizes and ints."""


def _affine(entries, lengths, symbol, where):
    """An int equal at every length, or the Sym mul*T+add that gives entries[i] at lengths[i]."""
    if all(e == entries[0] for e in entries):
        return entries[0]
    (a, b), (ta, tb) = entries[:2], lengths[:2]
    mul, remainder = divmod(b - a, tb - ta)
    add = a - mul * ta
    if remainder or mul == 0 or any(mul * t + add != e for e, t in zip(entries, lengths)):
        raise ShapeMismatch(f"{where} is {', '.join(map(str, entries))} at {symbol} = "
                            f"{', '.join(map(str, lengths))}: not of the form a*{symbol}+b")
    return Sym(symbol, mul, add)


def _describe(value):
    return f"{value['type']} {value.get('dtype', '')}{value.get('sizes', value.get('value', ''))}"


class _Merge:
    def __init__(self, builders, lengths, symbol, bounds):
        self.builders, self.lengths, self.symbol, self.bounds = builders, lengths, symbol, bounds

    def size(self, entries, where):
        merged = _affine(entries, self.lengths, self.symbol, where)
        if isinstance(merged, Sym):
            low, high = (merged.mul * t + merged.add for t in self.bounds)
            if min(low, high) < 0:
                raise ShapeMismatch(f"{where} is {merged.mul}*{self.symbol}{merged.add:+d}, negative for some "
                                    f"{self.symbol} in [{self.bounds[0]}, {self.bounds[1]}]")
        return merged

    def tensor(self, out, index, values):
        first = values[0]
        where = f"value {index} ({_describe(first)})"
        for key in ("dtype", "dim_order", "state"):
            if any(v.get(key) != first.get(key) for v in values):
                raise ShapeMismatch(f"{where}: its {key} differs between lengths")
        if any(len(v["sizes"]) != len(first["sizes"]) for v in values):
            raise ShapeMismatch(f"{where}: its rank differs between lengths")
        data = [b.constant_bytes(index) for b in self.builders]
        if data[0] is not None:
            if any(d != data[0] for d in data) or any(v["sizes"] != first["sizes"] for v in values):
                raise ShapeMismatch(f"{where}: a constant that depends on {self.symbol} (computed at export time "
                                    f"from sizes: make it from the inputs, e.g. index a buffer with input_pos)")
            array = np.frombuffer(data[0], dtype=NUMPY_DTYPES[first["dtype"]]).reshape(first["sizes"])
            make = out.state if first.get("state") else out.constant
            return make(array, first["dtype"])
        sizes = [self.size([v["sizes"][d] for v in values], f"{where} dimension {d}")
                 for d in range(len(first["sizes"]))]
        return out.tensor(first["dtype"], sizes, first.get("dim_order"))

    def value(self, out, index, mapping):
        values = [b.value(index) for b in self.builders]
        first = values[0]
        kind = first["type"]
        if any(v["type"] != kind for v in values):
            raise ShapeMismatch(f"value {index}: {', '.join(v['type'] for v in values)} at different lengths")
        if kind == "tensor":
            return self.tensor(out, index, values)
        where = f"value {index} ({_describe(first)})"
        if kind == "int":
            return out.integer(_affine([v["value"] for v in values], self.lengths, self.symbol, where))
        if kind == "int_list":
            if any(len(v["value"]) != len(first["value"]) for v in values):
                raise ShapeMismatch(f"{where}: its length differs between lengths")
            return out.int_list([_affine([v["value"][i] for v in values], self.lengths, self.symbol,
                                         f"{where} element {i}") for i in range(len(first["value"]))])
        if any(v.get("value") != first.get("value") for v in values):
            raise ShapeMismatch(f"{where}: differs between lengths ({', '.join(str(v.get('value')) for v in values)})")
        if kind == "tensor_list":
            return out.tensor_list([mapping[t] for t in first["value"]])
        if kind == "optional_tensor_list":
            return out.optional_tensor_list([None if t is None else mapping[t] for t in first["value"]])
        if kind == "double":
            return out.double(first["value"])
        if kind == "bool":
            return out.boolean(first["value"])
        if kind == "string":
            return out.string(first["value"])
        if kind == "scalar_type":
            return out.scalar_type(first["value"])
        if kind == "none":
            return out.none()
        raise ShapeMismatch(f"{where}: values of type {kind} are not merged")

    def structure(self):
        first = self.builders[0]
        for builder, length in zip(self.builders[1:], self.lengths[1:]):
            if builder.value_count != first.value_count or builder.inputs != first.inputs \
                    or builder.outputs != first.outputs:
                raise ShapeMismatch(f"the program at {self.symbol} = {length} has other values than at "
                                    f"{self.symbol} = {self.lengths[0]}")
            for i, (a, b) in enumerate(zip(first.instructions, builder.instructions)):
                if a != b:
                    raise ShapeMismatch(f"instruction {i} is {a['op']} at {self.symbol} = {self.lengths[0]} but "
                                        f"{b['op']} at {self.symbol} = {length}")
            if len(builder.instructions) != len(first.instructions):
                raise ShapeMismatch(f"the program has {len(first.instructions)} instructions at {self.symbol} = "
                                    f"{self.lengths[0]} and {len(builder.instructions)} at {length}")

    def run(self):
        self.structure()
        first = self.builders[0]
        out = ProgramBuilder(first.name)
        out.metadata = dict(first.metadata)
        out.symbol(self.symbol, *self.bounds)
        mapping = {}
        for index in range(first.value_count):
            mapping[index] = self.value(out, index, mapping)
        for instruction in first.instructions:
            out.instruction(instruction["op"], [mapping[a] for a in instruction["args"]])
        for index in first.inputs:
            out.input(mapping[index])
        for index in first.outputs:
            out.output(mapping[index])
        return out


def merge(builders, lengths, symbol, bounds):
    """One ProgramBuilder with symbol `symbol` in `bounds` (min, max) from `builders` (made with
    share_scalars=False) lowered at `lengths` (three distinct values); raises ShapeMismatch."""
    if len(builders) != len(lengths) or len(set(lengths)) < 3:
        raise ValueError("merge needs programs lowered at three distinct lengths")
    return _Merge(list(builders), list(lengths), symbol, tuple(bounds)).run()
