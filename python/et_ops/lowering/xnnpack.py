"""The xnnpack backend: int8 operators of libet_kernels_xnnpack.so in place of Q/DQ float code.

`rewrite(builder)` takes a program lowered for the reference path and
returns a new one in which every pattern

    dequantize_per_tensor(x) -> OP -> [relu | hardtanh] -> quantize_per_tensor

whose OP is a convolution, a linear layer (weights int8, symmetric, per
tensor or per channel, dequantized from constants), an addition of two
dequantized tensors or a multiplication (both broadcasting), a hardswish,
hardsigmoid or sigmoid, a global average pooling, or a max pooling or a
concatenation with unchanged quantization parameters, becomes one `et_xnnpack::*` operator
computing in integers and requantizing, as PyTorch's quantized engines do.
A following `dequantize -> relu | hardtanh -> quantize` with the same
parameters folds into the operator's output clamp. Everything else stays on
the reference path, unchanged.

The int8 operators take int8 activations: a uint8 activation whose every
use is a quantize or dequantize is stored as int8 instead, its values and
zero point minus 128 (an exact change of representation). Their 4-dim
activations are channels-last in memory: `et_xnnpack::convert_layout`
copies between layouts where a tensor crosses from one path to the other.
"""

import numpy as np

from .._operators import OPERATORS as SCHEMAS, portable, quantized, xnnpack
from .rewriting import Program, copy_value, empty_like, written_arguments

NAME = "xnnpack"

Q = quantized.quantize_per_tensor_out
DQ = quantized.dequantize_per_tensor_out
DQ_CHANNEL = quantized.dequantize_per_channel_out
CONVOLUTION = portable.convolution_out
LINEAR = portable.linear_out
ADD = portable.add_out
RELU = portable.relu_out
HARDTANH = portable.hardtanh_out
ADAPTIVE_AVG_POOL2D = portable.adaptive_avg_pool2d_out
MEAN = portable.mean_out
MAX_POOL2D = portable.max_pool2d_with_indices_out
MUL = portable.mul_out
CAT = portable.cat_out
# float activation -> its int8 operator (a table made by the reference's arithmetic)
ACTIVATIONS = {portable.hardswish_out: xnnpack.hardswish_kernel, portable.hardsigmoid_out: xnnpack.hardsigmoid_kernel,
               portable.sigmoid_out: xnnpack.sigmoid_kernel}

CONV2D_INT8 = xnnpack.conv2d_kernel
LINEAR_INT8 = xnnpack.linear_kernel
ADD_INT8 = xnnpack.add_kernel
ADAPTIVE_AVG_POOL2D_INT8 = xnnpack.adaptive_avg_pool2d_kernel
MAX_POOL2D_INT8 = xnnpack.max_pool2d_kernel
MUL_INT8 = xnnpack.mul_kernel
CAT_INT8 = xnnpack.cat_kernel
CONVERT_LAYOUT = xnnpack.convert_layout_kernel

OPERATORS = (CONV2D_INT8, LINEAR_INT8, ADD_INT8, ADAPTIVE_AVG_POOL2D_INT8, MAX_POOL2D_INT8, MUL_INT8, CAT_INT8,
             *ACTIVATIONS.values(), CONVERT_LAYOUT)
CHANNELS_LAST = [0, 2, 3, 1]


class _Match:
    """One int8 operator replacing instructions `consumed`."""

    def __init__(self, op, consumed, inputs, output, output_q, build):
        self.op = op
        self.consumed = consumed  # instruction indices it replaces
        self.inputs = inputs  # quantized activation values it reads
        self.output = output  # the quantized value it writes
        self.output_q = output_q  # (scale, zero point, quant_min, quant_max, dtype) of output
        self.build = build  # (new builder, value map, clamp) -> argument list
        self.clamp = None  # (min, max) in the output's stored units, from a folded relu / hardtanh


def _per_tensor(p, n, op):
    """(input, (scale, zero_point, quant_min, quant_max, dtype), output) of a Q or DQ instruction."""
    a = op.read(p.instructions[n]["args"])
    qparams = (float(p.scalar(a.scale)), int(p.scalar(a.zero_point)), int(p.scalar(a.quant_min)),
               int(p.scalar(a.quant_max)), p.scalar(a.dtype))
    if op == DQ and p.scalar(a.out_dtype) not in (None, "float32"):
        return None
    return a.input, qparams, a.out


def _activation(p, v, reader):
    """The quantized activation that float value v dequantizes, read by instruction `reader`."""
    n = p.produced_by(v, DQ)
    if n is None:
        return None
    x, qparams, _ = _per_tensor(p, n, DQ)
    if qparams[4] not in ("int8", "uint8") or p.is_constant(x):
        return None
    return n, x, qparams


def _weight(p, v, reader):
    """(dequantize instruction, int8 weight constant, per-channel scales) of a weight, if symmetric int8."""
    n = p.produced_by(v, DQ_CHANNEL)
    if n is not None and p.only_reader(v, reader):
        a = DQ_CHANNEL.read(p.instructions[n]["args"])
        w, scales, zero_points, axis = a.input, a.scales, a.zero_points, p.scalar(a.axis)
        if (p.is_constant(w) and p.values[w]["dtype"] == "int8" and axis == 0 and p.is_constant(scales)
                and p.is_constant(zero_points) and not p.array(zero_points).any()
                and p.scalar(a.out_dtype) in (None, "float32")):
            return n, w, p.array(scales).astype(np.float32)
        return None
    n = p.produced_by(v, DQ)
    if n is not None and p.only_reader(v, reader):
        w, qparams, _ = _per_tensor(p, n, DQ)
        if p.is_constant(w) and qparams[4] == "int8" and qparams[1] == 0:
            return n, w, np.asarray([qparams[0]], dtype=np.float32)
    return None


def _clamp_of(p, n, quantized):
    """The output clamp that relu or hardtanh instruction n amounts to on the quantized output."""
    scale, zero_point, quant_min, quant_max, _ = quantized
    instruction = p.instructions[n]
    if instruction["op"] == RELU:
        return max(zero_point, quant_min), quant_max
    a = HARDTANH.read(instruction["args"])
    low, high = float(p.scalar(a.min_val)), float(p.scalar(a.max_val))
    q_low = zero_point + round(low / scale) if low != 0 else zero_point
    q_high = zero_point + int(np.round(np.float32(high) / np.float32(scale)))
    if low != 0 and low != -np.inf:
        return None  # only relu-like lower bounds are exact on the integers
    return max(quant_min, q_low), min(quant_max, q_high)


def _match_at(p, n):
    """The int8 operator that quantize instruction n ends, or None."""
    y_float, out_q, y_q = _per_tensor(p, n, Q)
    if out_q[4] not in ("int8", "uint8"):
        return None
    consumed = [n]
    clamp = None
    m = p.producer.get(y_float)
    if m is None or not p.only_reader(y_float, n):
        return None
    if p.instructions[m]["op"] in (RELU, HARDTANH):
        clamp = _clamp_of(p, m, out_q)
        if clamp is None:
            return None
        consumed.append(m)
        y_float = SCHEMAS[p.instructions[m]["op"]].read(p.instructions[m]["args"]).self
        m = p.producer.get(y_float)
        if m is None or not p.only_reader(y_float, consumed[-1]):
            return None
    instruction = p.instructions[m]
    op, args = instruction["op"], instruction["args"]
    consumed.append(m)
    match = None
    if op == CONVOLUTION:
        a = CONVOLUTION.read(args)
        if not p.scalar(a.transposed) and not any(p.scalar(a.output_padding) or []):
            match = _convolution(p, m, a, consumed, y_q, out_q)
    elif op == LINEAR:
        match = _linear(p, m, LINEAR.read(args), consumed, y_q, out_q)
    elif op == ADD:
        a = ADD.read(args)
        if p.scalar(a.alpha) == 1:
            match = _add(p, m, a, consumed, y_q, out_q)
    elif op == MUL:
        match = _mul(p, m, MUL.read(args), consumed, y_q, out_q)
    elif op == CAT:
        a = CAT.read(args)
        if clamp is None:
            match = _cat(p, m, a, consumed, y_q, out_q)
    elif op in ACTIVATIONS:
        match = _lookup(p, m, ACTIVATIONS[op], SCHEMAS[op].read(args).self, consumed, y_q, out_q)
    elif op == ADAPTIVE_AVG_POOL2D:
        a = ADAPTIVE_AVG_POOL2D.read(args)
        if list(p.scalar(a.output_size)) == [1, 1] and len(p.values[a.self]["sizes"]) == 4:
            match = _average_pool(p, m, a.self, consumed, y_q, out_q)
    elif op == MEAN:
        a = MEAN.read(args)
        if _is_global_average_pool(p, a):
            match = _average_pool(p, m, a.self, consumed, y_q, out_q)
    elif op == MAX_POOL2D:
        a = MAX_POOL2D.read(args)
        if clamp is None and not p.readers.get(a.indices):
            match = _max_pool(p, m, a, consumed, y_q, out_q)
    if match is not None:
        match.clamp = clamp
    return match


def _shift(q):
    """How far a tensor's stored values move: uint8 activations are stored as int8, minus 128."""
    return 128 if q[4] == "uint8" else 0


def _quant_args(b, q):
    return [b.double(q[0]), b.integer(q[1] - _shift(q))]


def _output_args(b, match):
    q = match.output_q
    low, high = match.clamp if match.clamp else (q[2], q[3])
    shift = _shift(q)
    return [b.double(q[0]), b.integer(q[1] - shift), b.integer(low - shift), b.integer(high - shift)]


def _weighted_inputs(p, m, a, consumed):
    """What a convolution and a linear share: an int8 activation, an int8 weight and a float32
    constant bias or none (a.input, a.weight, a.bias). None when they do not match; else the
    activation's int8 value and a function (b, new) of the operator's leading arguments, after
    recording in `consumed` the dequantizes the match replaces."""
    x = _activation(p, a.input, m)
    w = _weight(p, a.weight, m)
    if x is None or w is None:
        return None
    bias = a.bias
    if p.values[bias]["type"] != "none" and not (p.is_constant(bias) and p.values[bias]["dtype"] == "float32"):
        return None
    dq_x, x_q, x_params = x
    dq_w, weight, scales = w
    consumed += [dq_w] + ([dq_x] if p.only_reader(a.input, m) else [])

    def arguments(b, new):
        return [new(x_q), *_quant_args(b, x_params), new(weight), b.constant(scales, "float32"),
                b.none() if p.values[bias]["type"] == "none" else new(bias)]

    return x_q, arguments


def _convolution(p, m, a, consumed, y_q, out_q):
    if len(p.values[a.input].get("sizes", ())) != 4:
        return None
    inputs = _weighted_inputs(p, m, a, consumed)
    if inputs is None:
        return None
    x_q, arguments = inputs
    stride, padding, dilation, groups = (p.scalar(v) for v in (a.stride, a.padding, a.dilation, a.groups))

    def build(b, new, clamp):
        return [*arguments(b, new), b.int_list(stride), b.int_list(padding), b.int_list(dilation),
                b.integer(groups)]

    return _Match(CONV2D_INT8, consumed, [x_q], y_q, out_q, build)


def _linear(p, m, a, consumed, y_q, out_q):
    inputs = _weighted_inputs(p, m, a, consumed)
    if inputs is None:
        return None
    x_q, arguments = inputs
    return _Match(LINEAR_INT8, consumed, [x_q], y_q, out_q, lambda b, new, clamp: arguments(b, new))


def _binary(p, m, operands, consumed, y_q, out_q, op):
    """op on two dequantized activations (operands.self, operands.other)."""
    a, c = _activation(p, operands.self, m), _activation(p, operands.other, m)
    if a is None or c is None:
        return None
    for dq, _, _ in (a, c):
        value = DQ.read(p.instructions[dq]["args"]).out
        if p.only_reader(value, m) and dq not in consumed:
            consumed.append(dq)

    def build(b, new, clamp):
        return [new(a[1]), *_quant_args(b, a[2]), new(c[1]), *_quant_args(b, c[2])]

    return _Match(op, consumed, [a[1], c[1]], y_q, out_q, build)


def _add(p, m, operands, consumed, y_q, out_q):
    """An addition whose operands broadcast without a change of rank."""
    if len(p.values[operands.self]["sizes"]) != len(p.values[operands.other]["sizes"]):
        return None
    return _binary(p, m, operands, consumed, y_q, out_q, ADD_INT8)


def _mul(p, m, operands, consumed, y_q, out_q):
    """A multiplication whose operands broadcast without a change of rank (a squeeze-excitation's scale)."""
    if len(p.values[operands.self]["sizes"]) != len(p.values[operands.other]["sizes"]):
        return None
    return _binary(p, m, operands, consumed, y_q, out_q, MUL_INT8)


def _cat(p, m, a, consumed, y_q, out_q):
    """A concatenation of dequantized activations quantized as its output is (exact on the integers)."""
    if p.values[a.tensors]["type"] != "tensor_list":
        return None
    items = p.values[a.tensors]["value"]
    inputs = [_activation(p, v, m) for v in items]
    if not items or any(x is None or x[2] != out_q for x in inputs):
        return None
    for v, (dq, _, _) in zip(items, inputs):
        if p.only_reader(v, m) and dq not in consumed:
            consumed.append(dq)
    dim = p.scalar(a.dim)

    def build(b, new, clamp):
        return [b.tensor_list([new(x[1]) for x in inputs]), b.integer(dim)]

    match = _Match(CAT_INT8, consumed, [x[1] for x in inputs], y_q, out_q, build)
    match.plain_output = True  # no quantization arguments
    return match


def _lookup(p, m, op, source, consumed, y_q, out_q):
    """An activation of one dequantized tensor: its int8 operator."""
    x = _single_input(p, m, source, consumed)
    if x is None:
        return None
    x_q, x_params = x
    return _Match(op, consumed, [x_q], y_q, out_q, lambda b, new, clamp: [new(x_q), *_quant_args(b, x_params)])


def _single_input(p, m, source, consumed):
    """(int8 value, its parameters) of the one dequantized activation instruction m reads, recording in
    `consumed` the dequantize when m is its only reader."""
    x = _activation(p, source, m)
    if x is None:
        return None
    dq_x, x_q, x_params = x
    consumed += [dq_x] if p.only_reader(source, m) else []
    return x_q, x_params


def _is_global_average_pool(p, a):
    """mean over the last two dimensions of a 4-D tensor, kept as 1 x 1 (what a 1 x 1 adaptive pooling lowers to)."""
    if len(p.values[a.self]["sizes"]) != 4 or p.scalar(a.keepdim) is not True:
        return False
    dims = p.scalar(a.dim)
    return dims is not None and sorted(d % 4 for d in dims) == [2, 3] and p.scalar(a.dtype) is None


def _average_pool(p, m, source, consumed, y_q, out_q):
    x = _single_input(p, m, source, consumed)
    if x is None:
        return None
    x_q, x_params = x

    def build(b, new, clamp):
        return [new(x_q), *_quant_args(b, x_params), b.int_list([1, 1])]

    return _Match(ADAPTIVE_AVG_POOL2D_INT8, consumed, [x_q], y_q, out_q, build)


def _max_pool(p, m, a, consumed, y_q, out_q):
    x = _activation(p, a.self, m)
    if x is None or x[2] != out_q or len(p.values[a.self]["sizes"]) != 4:
        return None  # exact on the integers only when the parameters are unchanged
    dq_x, x_q, _ = x
    consumed += [dq_x] if p.only_reader(a.self, m) else []
    kernel, stride, padding, dilation = (p.scalar(v) for v in (a.kernel_size, a.stride, a.padding, a.dilation))

    def build(b, new, clamp):
        return [new(x_q), b.int_list(kernel), b.int_list(stride or kernel), b.int_list(padding),
                b.int_list(dilation), b.boolean(bool(p.scalar(a.ceil_mode)))]

    match = _Match(MAX_POOL2D_INT8, consumed, [x_q], y_q, out_q, build)
    match.plain_output = True  # no quantization arguments
    return match


def _fold_clamps(p, matches, by_output):
    """dequantize -> relu | hardtanh -> quantize (same parameters) after an int8 operator: its clamp."""
    taken = {n for m in matches for n in m.consumed}
    for n, instruction in enumerate(p.instructions):
        if instruction["op"] != Q or n in taken:
            continue
        y_float, out_q, y_q = _per_tensor(p, n, Q)
        m = p.producer.get(y_float)
        if m is None or p.instructions[m]["op"] not in (RELU, HARDTANH) or not p.only_reader(y_float, n):
            continue
        source = SCHEMAS[p.instructions[m]["op"]].read(p.instructions[m]["args"]).self
        x = _activation(p, source, m)
        if x is None or x[2] != out_q or not p.only_reader(source, m):
            continue
        dq, x_q, _ = x
        match = by_output.get(x_q)
        if match is None or getattr(match, "plain_output", False) or not p.only_reader(x_q, dq):
            continue
        clamp = _clamp_of(p, m, out_q)
        if clamp is None:
            continue
        low, high = match.clamp or (out_q[2], out_q[3])
        match.clamp = (max(low, clamp[0]), min(high, clamp[1]))
        match.consumed += [dq, m, n]
        taken.update((dq, m, n))
        match.folded_into = y_q  # the operator writes the clamped value directly
        del by_output[x_q]
        by_output[y_q] = match


def rewrite(builder):
    """A new ProgramBuilder with the int8 operators of the xnnpack kernel set where patterns match."""
    p = Program(builder)
    matches = []
    for n, instruction in enumerate(p.instructions):
        if instruction["op"] == Q:
            match = _match_at(p, n)
            if match is not None:
                matches.append(match)
    by_output = {match.output: match for match in matches}
    _fold_clamps(p, matches, by_output)
    matches = [m for m in matches if not _touches_unshiftable(p, m)]
    return _build(p, matches)


def _shiftable(p, v):
    """A uint8 activation whose every use is a per-tensor quantize or dequantize (int8 can hold it, shifted)."""
    users = p.readers.get(v, []) + ([p.producer[v]] if v in p.producer else [])
    return v not in p.outputs and v not in p.inputs and all(p.instructions[u]["op"] in (Q, DQ) for u in users)


def _touches_unshiftable(p, match):
    values = match.inputs + [getattr(match, "folded_into", match.output)]
    return any(p.values[v]["dtype"] == "uint8" and not _shiftable(p, v) for v in values)


def _dead_instructions(p, matches, consumed):
    """Reference instructions left without readers once the matches replaced theirs (a dequantize that
    fed only int8 operators, say)."""
    dead = set()
    changed = True
    while changed:
        changed = False
        read = set(p.outputs) | {v for m in matches for v in m.inputs}
        for n, instruction in enumerate(p.instructions):
            if n not in consumed and n not in dead:
                read.update(p.read_by(instruction))
        for n, instruction in enumerate(p.instructions):
            if n in consumed or n in dead:
                continue
            written = [instruction["args"][i] for i in written_arguments(instruction)]
            if not any(v in read for v in written):
                dead.add(n)
                changed = True
    return dead


def _build(p, matches):
    consumed = {n for m in matches for n in m.consumed}
    consumed |= _dead_instructions(p, matches, consumed)
    at = {max(m.consumed): m for m in matches}  # emitted where its last instruction was
    written_by = {getattr(m, "folded_into", m.output): m for m in matches}
    int8_values = {v for m in matches for v in m.inputs} | set(written_by)
    shifted = {v for v in int8_values if p.values[v]["dtype"] == "uint8"}

    def channels_last(v):
        sizes = p.values[v]["sizes"]
        return v in int8_values and len(sizes) == 4 and sizes[2:] != [1, 1]

    # Channels-last int8 values that the reference path reads or writes too:
    # there they are a contiguous twin, copied by convert_layout.
    remaining = [n for n in range(len(p.instructions)) if n not in consumed]
    touched_by_reference = {v for n in remaining for v in p.instructions[n]["args"]} | set(p.outputs)
    touched_by_reference |= {v for n in remaining for v in p.read_by(p.instructions[n])}
    needs_twin = {v for v in int8_values if channels_last(v) and v in touched_by_reference}

    b = empty_like(p.builder, backend=NAME)
    mapped, twins = {}, {}

    def new(v):
        if v not in mapped:
            if v in int8_values:
                mapped[v] = b.tensor("int8", p.values[v]["sizes"], CHANNELS_LAST if channels_last(v) else None)
            else:
                mapped[v] = copy_value(p, b, v, reference)
        return mapped[v]

    def reference(v):
        if v not in needs_twin:
            return new(v)
        if v not in twins:
            twins[v] = b.tensor("int8" if v in shifted else p.values[v]["dtype"], p.values[v]["sizes"])
        return twins[v]

    for v in p.inputs:
        b.input(new(v))
    for n, instruction in enumerate(p.instructions):
        if n in at:
            match = at[n]
            args = match.build(b, new, match.clamp)
            if not getattr(match, "plain_output", False):
                args += _output_args(b, match)
            out = getattr(match, "folded_into", match.output)
            b.instruction(match.op, args + [new(out)])
            if out in needs_twin:
                b.instruction(CONVERT_LAYOUT, [new(out), reference(out)])
        if n in consumed:
            continue
        op, args = instruction["op"], instruction["args"]
        new_args = [reference(v) for v in args]
        if op in (Q, DQ) and (DQ.read(args).input if op == DQ else Q.read(args).out) in shifted:
            schema = SCHEMAS[op]
            for name in ("zero_point", "quant_min", "quant_max"):  # a reduced range stays reduced
                new_args[schema.position(name)] = b.integer(p.scalar(getattr(schema.read(args), name)) - 128)
            new_args[schema.position("dtype")] = b.scalar_type("int8")
        b.instruction(op, new_args)
        for position in written_arguments(instruction):
            v = args[position]
            if v in needs_twin:  # written here, read channels-last by the int8 path
                b.instruction(CONVERT_LAYOUT, [reference(v), new(v)])
    for v in p.outputs:
        b.output(reference(v))
    return b
