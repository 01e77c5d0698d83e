"""The portable set's fused attention in place of the chain a transformer's attention lowers to.

`fuse_attention(builder)` takes a lowered program and returns a new
ProgramBuilder in which every chain

    bmm(view(query), view(permute(key, [0, 1, 3, 2]))) -> view -> mul.Scalar(scale) -> div.Scalar(divisor)
      -> where(mask, scores, fill) | where(logical_not(mask), fill, scores)
      -> _softmax(dim -1) -> view -> bmm(., view(value)) -> view

(query [B, H, T, D], key [B, H, S, D], value [B, H, S, Dv]; the mul, the
div and the where may each be absent; a where that keeps the scores where
its condition is false gets a logical_not of it, the kernel's mask) becomes one `et_portable::attention.out` reading
query, key and value where they are. A key or value that is a cache of Hkv
heads repeated for the query heads (repeat_kv:
view [B, Hkv, 1, S, D] -> expand [B, Hkv, H / Hkv, S, D] -> view) is read
unrepeated. A key or value that is a float32 copy of a float16 or bfloat16
cache (`cache.float()`: copy.out of the same sizes) is read in its 16-bit
form, which the kernel widens exactly. So a decode step no longer
transposes, repeats, converts and copies each layer's cache three times or
more.

Numerics: the fused kernel computes the chain's steps with the same
arithmetic but for the order of a score's float64 sum (the portable kernels'
documentation, "attention", gives it), so the program's outputs agree with the chain's to rounding,
with the same bits on every machine. The chain's instructions that nothing
else reads go.
"""

from .._operators import portable
from .rewriting import Program, symbolic

BMM = portable.bmm_out
VIEW_COPY = portable.view_copy_out
PERMUTE_COPY = portable.permute_copy_out
EXPAND_COPY = portable.expand_copy_out
MUL_SCALAR = portable.mul_scalar_out
DIV_SCALAR = portable.div_scalar_out
WHERE = portable.where_self_out
LOGICAL_NOT = portable.logical_not_out
SOFTMAX = portable.softmax_out
ATTENTION = portable.attention_out
COPY = portable.copy_out
CACHE_DTYPES = ("float32", "float16", "bfloat16")


class _Fused:
    """One attention: its operands, the value it writes, the chain it replaces."""

    def __init__(self, query, key, value, mask, negate, masked_score, scale, divisor, out, chain):
        self.query, self.key, self.value, self.mask, self.negate = query, key, value, mask, negate
        self.masked_score, self.scale, self.divisor, self.out, self.chain = masked_score, scale, divisor, out, chain


def _sizes(p, v):
    value = p.values[v]
    return value["sizes"] if value["type"] == "tensor" else None


def _float32(p, v):
    value = p.values[v]
    return value["type"] == "tensor" and value["dtype"] == "float32"


def _producer(p, v, op, chain):
    """The arguments of the instruction `op` that writes v (appended to chain), or None."""
    n = p.produced_by(v, op)
    if n is None:
        return None
    chain.append(n)
    return op.read(p.instructions[n]["args"])


def _repeated(p, v, chain):
    """The [B, Hkv, S, D] tensor that v, its repeat [B, Hkv, R, S, D] (an expand of a view
    [B, Hkv, 1, S, D] of it), repeats; or None."""
    b, kv, _, s, d = _sizes(p, v)
    expanded = _producer(p, v, EXPAND_COPY, chain)
    source = None if expanded is None else _producer(p, expanded.self, VIEW_COPY, chain)
    if source is None or _sizes(p, source.out) != [b, kv, 1, s, d] or _sizes(p, source.self) != [b, kv, s, d]:
        return None
    return source.self


def _widened(p, v, chain):
    """The float16 or bfloat16 tensor of v's sizes that v, its float32 copy (copy.out), widens; else v."""
    n = p.produced_by(v, COPY)
    if n is None:
        return v
    copy = COPY.read(p.instructions[n]["args"])
    src = p.values[copy.src]
    if src["type"] != "tensor" or src["dtype"] not in ("float16", "bfloat16") or src["sizes"] != _sizes(p, v):
        return v
    chain.append(n)
    return copy.src


def _heads(p, v, chain):
    """(operand, sizes): for v, a [B, H, S, D] tensor or the [B, Hkv, R, S, D] repeat that makes one, the
    tensor the kernel reads ([B, Hkv, S, D], unrepeated) and the [B, H, S, D] the chain saw; or None."""
    sizes = _sizes(p, v)
    if len(sizes) == 5:
        b, kv, r, s, d = sizes
        if not (isinstance(kv, int) and isinstance(r, int)):
            return None
        source = _repeated(p, v, chain)
        return None if source is None else (_widened(p, source, chain), [b, kv * r, s, d])
    if len(sizes) != 4:
        return None
    found = []
    view = _producer(p, v, VIEW_COPY, found)
    if view is not None and len(_sizes(p, view.self)) == 5:
        b, kv, r, s, d = _sizes(p, view.self)
        if isinstance(kv, int) and isinstance(r, int) and sizes == [b, kv * r, s, d]:
            source = _repeated(p, view.self, found)
            if source is not None:
                chain.extend(found)
                return _widened(p, source, chain), sizes
    return _widened(p, v, chain), sizes


def _flattened_heads(p, v, chain):
    """_heads of what v, a bmm operand [B * H, S, D], is a view of."""
    view = _producer(p, v, VIEW_COPY, chain)
    return None if view is None else _heads(p, view.self, chain)


def _flat(sizes):
    """[B * H, S, D] of [B, H, S, D] when B and H are numbers."""
    b, h = sizes[0], sizes[1]
    return [b * h] + sizes[2:] if isinstance(b, int) and isinstance(h, int) else None


def _mask(p, x, chain):
    """(scores, mask, masked score, negate) of the where producing x from scores: the kernel attends
    where `mask` (negate: where it is false) is true and puts the one-element float32 `masked score`
    elsewhere; (x, None, None, False) when no where produces x; None when it does not fit."""
    where = _producer(p, x, WHERE, chain)
    if where is None:
        return x, None, None, False
    if _sizes(p, where.other) == _sizes(p, x) and _float32(p, where.other):
        fill, scores, mask, negate = where.self, where.other, where.condition, True
        negated = _producer(p, mask, LOGICAL_NOT, chain)
        if negated is not None and p.values[negated.self]["dtype"] == "bool":
            mask, negate = negated.self, False
    else:
        fill, scores, mask, negate = where.other, where.self, where.condition, False
    one = p.values[fill]["type"] == "tensor" and all(size == 1 for size in _sizes(p, fill))
    if not (one and _float32(p, fill) and p.values[mask]["type"] == "tensor" and p.values[mask]["dtype"] == "bool"
            and _sizes(p, scores) == _sizes(p, x)):
        return None
    return scores, mask, fill, negate


def _scaling(p, scores, chain):
    """(unscaled scores, scale, divisor): the mul.Scalar and div.Scalar (in that order, each optional)
    that make `scores`."""
    scale = divisor = 1.0
    divided = _producer(p, scores, DIV_SCALAR, chain)
    if divided is not None:
        divisor, scores = float(p.scalar(divided.other)), divided.self
    multiplied = _producer(p, scores, MUL_SCALAR, chain)
    if multiplied is not None:
        scale, scores = float(p.scalar(multiplied.other)), multiplied.self
    return scores, scale, divisor


def _match(p, n):
    """The attention whose second product is instruction n (a bmm), or None."""
    chain = [n]
    second = BMM.read(p.instructions[n]["args"])
    out_view = None
    for reader in p.readers.get(second.out, []):
        if p.instructions[reader]["op"] == VIEW_COPY and p.only_reader(second.out, reader):
            out_view = VIEW_COPY.read(p.instructions[reader]["args"])
            chain.append(reader)
    if out_view is None or len(_sizes(p, out_view.out)) != 4 or not _float32(p, out_view.out):
        return None
    value = _flattened_heads(p, second.mat2, chain)
    probabilities = _producer(p, second.self, VIEW_COPY, chain)
    softmax = None if probabilities is None else _producer(p, probabilities.self, SOFTMAX, chain)
    if value is None or softmax is None or p.scalar(softmax.dim) not in (-1, 3) or p.scalar(softmax.half_to_float):
        return None
    masked = _mask(p, softmax.self, chain)
    if masked is None:
        return None
    scores, mask, masked_score, negate = masked
    scores, scale, divisor = _scaling(p, scores, chain)
    scores_view = _producer(p, scores, VIEW_COPY, chain)
    first = None if scores_view is None else _producer(p, scores_view.self, BMM, chain)
    query_view = None if first is None else _producer(p, first.self, VIEW_COPY, chain)
    key_view = None if first is None else _producer(p, first.mat2, VIEW_COPY, chain)
    transposed = None if key_view is None else _producer(p, key_view.self, PERMUTE_COPY, chain)
    if transposed is None or p.scalar(transposed.dims) != [0, 1, 3, 2] or query_view is None:
        return None
    key = _heads(p, transposed.self, chain)
    if key is None:
        return None
    (key, key_sizes), (value, v_sizes) = key, value
    query = query_view.self
    q_sizes = _sizes(p, query)
    if (len(q_sizes) != 4 or len(key_sizes) != 4 or not _float32(p, query)
            or not all(p.values[v]["dtype"] in CACHE_DTYPES for v in (key, value))
            or key_sizes[:2] != q_sizes[:2] or v_sizes[:3] != key_sizes[:3] or key_sizes[3] != q_sizes[3]
            or _sizes(p, out_view.out) != q_sizes[:3] + v_sizes[3:]
            or _sizes(p, query_view.out) != _flat(q_sizes) or _sizes(p, scores_view.self) != _flat(_sizes(p, scores))
            or _sizes(p, probabilities.out) != _flat(_sizes(p, softmax.out))
            or _sizes(p, scores) != q_sizes[:3] + key_sizes[2:3]):
        return None
    return _Fused(query, key, value, mask, negate, masked_score, scale, divisor, out_view.out, chain)


def _unchanged_until(p, fused, last):
    """Whether what the fused kernel reads at `last` is what the chain read: no instruction after the
    chain's first read of an operand (a cache, say) and up to `last` writes it."""
    for v in (fused.query, fused.key, fused.value, fused.mask, fused.masked_score):
        if v is None:
            continue
        first = min(k for k in fused.chain if v in set(p.read_by(p.instructions[k])))
        if any(v in p.written(k) for k in range(first + 1, last + 1)):
            return False
    return True


def fuse_attention(builder):
    """A new ProgramBuilder with et_portable::attention.out in place of each attention chain."""
    p = Program(builder)
    fused = {}
    for n, instruction in enumerate(p.instructions):
        if instruction["op"] == BMM:
            match = _match(p, n)
            if match is not None and _unchanged_until(p, match, max(match.chain)):
                fused[max(match.chain)] = match
    if not fused:
        return builder
    kept = {v for m in fused.values() for v in (m.query, m.key, m.value, m.mask, m.masked_score) if v is not None}
    removed = p.unread(fused, {c for m in fused.values() for c in m.chain}, kept)

    def emit(m):
        def replacement(b, new):
            mask = masked_score = b.none()
            if m.mask is not None:
                mask, masked_score = new(m.mask), new(m.masked_score)
            if m.negate:
                attend = b.tensor("bool", symbolic(p.values[m.mask]["sizes"]))
                b.instruction(LOGICAL_NOT, [mask, attend])
                mask = attend
            b.instruction(ATTENTION, [new(m.query), new(m.key), new(m.value), mask, masked_score,
                                      b.double(m.scale), b.double(m.divisor), new(m.out)])
        return replacement

    return p.rebuilt({n: emit(m) for n, m in fused.items()}, removed)
