"""The low-bit linears of the quantized set in place of the reference chains of quantize_weights.

`fuse_linears(builder)` takes a program lowered from a module of
et_ops.export.quantize_weights and returns a new ProgramBuilder in which
every linear layer whose weight is dequantized from constants,

    dequantize_per_channel_group_4bit(W, scales, None, -8, 7, group_size) -> linear
    dequantize_per_channel(W, scales, None, axis 0, -128, 127, int8)      -> linear

becomes `et_quantized::linear_int4.out` / `linear_int8.out` (float
activations), and where the linear's input is the per-token int8 round trip
of a float tensor x,

    choose_qparams_per_token_asymmetric(x) -> quantize_per_token -> dequantize_per_token

`et_quantized::linear_8da4w.out` / `linear_8da8w.out` on x (the kernel
quantizes x per token itself, with the same operators' numerics). The
chain's instructions that nothing else reads go; everything else is copied
unchanged. The fused kernels repack the weights when the program loads.

Numerics: an 8da* operator computes the chain's per-token integers exactly
and adds in one fixed float order, an int4/int8 one multiplies by the
chain's dequantized weights in one fixed order: each output differs from the
chain's by float summation order only (the quantized kernels' documentation
gives the bound).
"""

from .._operators import portable, quantized
from .rewriting import Program, symbolic

LINEAR = portable.linear_out
VIEW_COPY = portable.view_copy_out
CHOOSE_QPARAMS_PER_TOKEN = quantized.choose_qparams_per_token_asymmetric_out
QUANTIZE_PER_TOKEN = quantized.quantize_per_token_out
DEQUANTIZE_PER_TOKEN = quantized.dequantize_per_token_out
DEQUANTIZE_PER_CHANNEL = quantized.dequantize_per_channel_out
DEQUANTIZE_GROUP_4BIT = quantized.dequantize_per_channel_group_4bit_out

LINEAR_8DA4W = quantized.linear_8da4w_out
LINEAR_8DA8W = quantized.linear_8da8w_out
LINEAR_INT4 = quantized.linear_int4_out
LINEAR_INT8 = quantized.linear_int8_out
OPERATORS = (LINEAR_8DA4W, LINEAR_8DA8W, LINEAR_INT4, LINEAR_INT8)


class _Fused:
    """One fused linear replacing the instruction `linear` (and the chain instructions in `chain`)."""

    def __init__(self, op, input, weight, scales, group_size, bias, out, chain, view=None):  # noqa: A002
        self.op, self.input, self.weight, self.scales = op, input, weight, scales
        self.group_size, self.bias, self.out, self.chain = group_size, bias, out, chain
        self.view = view  # (sizes value, viewed value): the exporter's flattening of the linear's input


def _float32(p, v):
    value = p.values[v]
    return value["type"] == "tensor" and value["dtype"] == "float32"


def _is_none(p, v):
    return p.values[v]["type"] == "none"


def _constant_weight(p, v, linear):
    """(four_bit, integers, scales, group_size, instruction) of a weight dequantized from constants for `linear`."""
    n = p.produced_by(v, DEQUANTIZE_GROUP_4BIT)
    if n is not None and p.only_reader(v, linear):
        a = DEQUANTIZE_GROUP_4BIT.read(p.instructions[n]["args"])
        if (p.is_constant(a.input) and p.is_constant(a.scales) and _is_none(p, a.zero_points)
                and (p.scalar(a.quant_min), p.scalar(a.quant_max)) == (-8, 7)
                and p.scalar(a.output_dtype) == "float32" and p.values[a.input]["dtype"] == "uint8"
                and _float32(p, a.scales)):
            return True, a.input, a.scales, p.scalar(a.group_size), n
        return None
    n = p.produced_by(v, DEQUANTIZE_PER_CHANNEL)
    if n is not None and p.only_reader(v, linear):
        a = DEQUANTIZE_PER_CHANNEL.read(p.instructions[n]["args"])
        if (p.is_constant(a.input) and p.is_constant(a.scales) and _is_none(p, a.zero_points)
                and p.scalar(a.axis) == 0 and (p.scalar(a.quant_min), p.scalar(a.quant_max)) == (-128, 127)
                and p.scalar(a.dtype) == "int8" and (_is_none(p, a.out_dtype) or p.scalar(a.out_dtype) == "float32")
                and len(p.values[a.input]["sizes"]) == 2 and _float32(p, a.scales)):
            return False, a.input, a.scales, None, n
    return None


def _per_token_source(p, v):
    """(x, chain instructions) when v is dequantize_per_token(quantize_per_token(x, choose_qparams(x)))."""
    d = p.produced_by(v, DEQUANTIZE_PER_TOKEN)
    if d is None:
        return None
    dq = DEQUANTIZE_PER_TOKEN.read(p.instructions[d]["args"])
    q = p.produced_by(dq.input, QUANTIZE_PER_TOKEN)
    c = p.produced_by(dq.zero_points, CHOOSE_QPARAMS_PER_TOKEN)
    if q is None or c is None or p.scalar(dq.output_dtype) != "float32":
        return None
    qa = QUANTIZE_PER_TOKEN.read(p.instructions[q]["args"])
    ca = CHOOSE_QPARAMS_PER_TOKEN.read(p.instructions[c]["args"])
    ranges = {(p.scalar(a), p.scalar(b)) for a, b in ((dq.quant_min, dq.quant_max), (qa.quant_min, qa.quant_max))}
    if (ca.input != qa.input or (qa.scales, qa.zero_points) != (dq.scales, dq.zero_points)
            or (ca.scale_out, ca.zero_point_out) != (dq.scales, dq.zero_points) or ranges != {(-128, 127)}
            or {p.scalar(dq.dtype), p.scalar(qa.dtype), p.scalar(ca.dtype)} != {"int8"} or not _float32(p, qa.input)):
        return None
    return qa.input, [c, q, d]


def _match(p, n):
    a = LINEAR.read(p.instructions[n]["args"])
    x, weight, bias, out = a.input, a.weight, a.bias, a.out
    if not (_float32(p, x) and _float32(p, out) and (_is_none(p, bias) or _float32(p, bias))):
        return None
    if not _is_none(p, bias) and len(p.values[bias]["sizes"]) != 1:
        return None
    found = _constant_weight(p, weight, n)
    if found is None:
        return None
    four_bit, integers, scales, group_size, dequantize = found
    source = _per_token_source(p, x)
    view = p.produced_by(x, VIEW_COPY)
    if source is None and view is not None:
        # The exporter flattens leading dims before a linear: fuse on the flattened float source.
        v = VIEW_COPY.read(p.instructions[view]["args"])
        viewed, sizes = v.self, v.size
        source = _per_token_source(p, viewed)
        if source is not None:
            op = LINEAR_8DA4W if four_bit else LINEAR_8DA8W
            return _Fused(op, source[0], integers, scales, group_size, bias, out, [dequantize, view] + source[1],
                          (sizes, x))
    if source is None:
        op = LINEAR_INT4 if four_bit else LINEAR_INT8
        return _Fused(op, x, integers, scales, group_size, bias, out, [dequantize])
    op = LINEAR_8DA4W if four_bit else LINEAR_8DA8W
    return _Fused(op, source[0], integers, scales, group_size, bias, out, [dequantize] + source[1])


def fuse_linears(builder):
    """A new ProgramBuilder with the quantized set's low-bit linears in place of the reference chains."""
    p = Program(builder)
    fused = []
    for n, instruction in enumerate(p.instructions):
        if instruction["op"] == LINEAR:
            match = _match(p, n)
            if match is not None:
                fused.append((n, match))
    if not fused:
        return builder
    removed = p.unread({n for n, _ in fused}, {c for _, m in fused for c in m.chain}, {m.input for _, m in fused})

    def emit(m):
        def replacement(b, new):
            source = new(m.input)
            if m.view is not None:
                sizes, viewed = m.view
                flattened = b.tensor("float32", symbolic(p.values[viewed]["sizes"]))
                b.instruction(VIEW_COPY, [source, new(sizes), flattened])
                source = flattened
            args = [source, new(m.weight), new(m.scales)]
            if m.group_size is not None:
                args.append(b.integer(m.group_size))
            b.instruction(m.op, args + [new(m.bias), new(m.out)])
        return replacement

    return p.rebuilt({n: emit(m) for n, m in fused}, removed)
