#!/usr/bin/env python3
"""The portable set's transformer operators against PyTorch 1.13.

Each case writes a one-instruction .etp program with et_ops.etp's
ProgramBuilder (tensor arguments are inputs, out arguments are outputs),
runs it through et_ops.load and compares every output with PyTorch's
result on the same seeded inputs. Without ATEN_CPU_CAPABILITY it runs
itself once per capability this CPU has (test/aten_capabilities.py).

How closely (docs/kernels-portable.md says the same):
- bit for bit: neg, sqrt, rsqrt, pow with exponent 0, 1, 2, 3, 0.5, -0.5,
  -1, -2, comparisons, logical_not, where, masked_fill, expand_copy,
  select_copy, copy (dtype casts), embedding, index, index_select,
  index_put, index_copy, max.dim, integral sum;
- within ULPS ulp: exp, silu, pow with other exponents;
- gelu (both forms) within GELU_ULPS ulp of |x| (1 + erf or 1 + tanh
  cancels for negative x, in PyTorch as here);
- within RTOL relative to the magnitude of the terms: layer_norm,
  group_norm, softmax, log_softmax, bmm, baddbmm, float sum.
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import aten_capabilities  # noqa: E402  (test/aten_capabilities.py)

if __name__ == "__main__" and aten_capabilities.requested() is None:
    sys.exit(aten_capabilities.run_under_each())

import numpy as np  # noqa: E402
import torch  # noqa: E402

import et_ops  # noqa: E402
from et_ops import etp  # noqa: E402

SEED = 20261201
RTOL = 1e-5
ULPS = 2
GELU_ULPS = 4

TORCH_DTYPES = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
                np.dtype(np.int64): torch.int64, np.dtype(np.int32): torch.int32, np.dtype(np.bool_): torch.bool}


class Tensor:
    """An input tensor argument."""

    def __init__(self, array):
        self.array = np.ascontiguousarray(array)


class Out:
    """An out argument: a tensor the program returns."""

    def __init__(self, dtype, shape, alias=None):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)
        self.alias = alias  # an earlier Tensor argument this out is (in place)


def run_op(op, args):
    """Runs `op` on `args` (Tensor, Out, ("int", v), ("string", s), [Tensor or None] ...); returns the outs."""
    b = etp.ProgramBuilder(op)
    inputs = []
    arg_values = []
    outputs = []
    value_of = {}
    for a in args:
        if isinstance(a, Tensor):
            v = b.tensor(etp.etp_dtype_of(a.array), a.array.shape)
            b.input(v)
            inputs.append(a.array)
            value_of[id(a)] = v
        elif isinstance(a, Out):
            v = value_of[id(a.alias)] if a.alias is not None else b.tensor(etp.etp_dtype_of(np.zeros(0, a.dtype)), a.shape)
            outputs.append(v)
        elif isinstance(a, list):
            elements = []
            for t in a:
                if t is None:
                    elements.append(None)
                    continue
                v = b.tensor(etp.etp_dtype_of(t.array), t.array.shape)
                b.input(v)
                inputs.append(t.array)
                elements.append(v)
            v = b.optional_tensor_list(elements)
        else:
            kind, value = a[0], a[1] if len(a) > 1 else None
            v = {"int": b.integer, "double": b.double, "bool": b.boolean, "string": b.string,
                 "int_list": b.int_list, "scalar_type": b.scalar_type, "none": lambda _: b.none()}[kind](value)
        arg_values.append(v)
    b.instruction(op, arg_values)
    for v in outputs:
        b.output(v)
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "op.etp")
        b.write(path)
        return et_ops.load(path).run(inputs)


def t(array):
    return torch.from_numpy(np.array(array))


def bits_equal(case, ours, ref):
    ref = ref.numpy() if isinstance(ref, torch.Tensor) else ref
    case.assertEqual(ours.dtype, ref.dtype)
    case.assertEqual(ours.shape, ref.shape)
    if ours.dtype.kind == "f":
        ours_bits = ours.view(np.uint32 if ours.dtype.itemsize == 4 else np.uint64)
        ref_bits = ref.view(ours_bits.dtype)
        both_nan = np.isnan(ours) & np.isnan(ref)
        bad = (ours_bits != ref_bits) & ~both_nan
    else:
        bad = ours != ref
    case.assertFalse(bad.any(), f"{bad.sum()} elements differ, first at {np.argwhere(bad)[:3].tolist()}: "
                     f"ours {ours[bad][:3]} PyTorch {ref[bad][:3]}")


def within_ulps(case, ours, ref, ulps, scale=None):
    """|ours - ref| <= ulps units in the last place of `scale` (default: of ref)."""
    ref = ref.numpy()
    scale = np.abs(ref if scale is None else scale).astype(ours.dtype)
    ulp = np.spacing(np.maximum(scale, np.finfo(ours.dtype).tiny))
    with np.errstate(invalid="ignore"):
        bad = ~((np.abs(ours.astype(np.float64) - ref) <= ulps * ulp) | (np.isnan(ours) & np.isnan(ref)) | (ours == ref))
    case.assertFalse(bad.any(), f"{bad.sum()} elements beyond {ulps} ulp: ours {ours[bad][:3]} PyTorch {ref[bad][:3]}")


def within_rtol(case, ours, ref, magnitude):
    ref = ref.numpy()
    bad = np.abs(ours.astype(np.float64) - ref) > RTOL * np.maximum(magnitude, 1e-30) + 1e-37
    case.assertFalse(bad.any(), f"{bad.sum()} elements beyond {RTOL}: ours {ours[bad][:3]} PyTorch {ref[bad][:3]}")


class TransformerOperators(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        aten_capabilities.check_active(torch)

    def setUp(self):
        self.gen = np.random.default_rng(SEED)

    def normal(self, *shape, scale=1.0):
        return (self.gen.standard_normal(shape) * scale).astype(np.float32)

    # ---- elementwise ----
    def test_unary_math(self):
        x = self.normal(3, 37, scale=4.0)
        positive = np.abs(x) + np.float32(1e-3)
        cases = [("aten::neg.out", x, torch.neg(t(x)), "bits"), ("aten::sqrt.out", positive, torch.sqrt(t(positive)), "bits"),
                 ("aten::rsqrt.out", positive, torch.rsqrt(t(positive)), "bits"),
                 ("aten::exp.out", x, torch.exp(t(x)), "ulps"), ("aten::silu.out", x, torch.nn.functional.silu(t(x)), "ulps")]
        for op, data, ref, how in cases:
            with self.subTest(op=op):
                (ours,) = run_op(op, [Tensor(data), Out(np.float32, data.shape)])
                (bits_equal if how == "bits" else lambda c, o, r: within_ulps(c, o, r, ULPS))(self, ours, ref)
        (ours,) = run_op("aten::neg.out", [Tensor(np.arange(-5, 5)), Out(np.int64, (10,))])
        bits_equal(self, ours, torch.neg(torch.arange(-5, 5)))

    def test_gelu(self):
        x = np.concatenate([self.normal(300, scale=3.0), np.float32([0.0, -0.0, 10.0, -10.0, np.inf, -np.inf, np.nan])])
        for approximate in ("none", "tanh"):
            with self.subTest(approximate=approximate):
                (ours,) = run_op("aten::gelu.out", [Tensor(x), ("string", approximate), Out(np.float32, x.shape)])
                within_ulps(self, ours, torch.nn.functional.gelu(t(x), approximate=approximate), GELU_ULPS, scale=x)

    def test_pow(self):
        x = np.abs(self.normal(41, scale=3.0)) + np.float32(0.01)
        for exponent in (0, 1, 2, 3, 0.5, -0.5, -1, -2, 1.7, -2.5):
            with self.subTest(exponent=exponent):
                kind = ("int", exponent) if isinstance(exponent, int) else ("double", exponent)
                (ours,) = run_op("aten::pow.Tensor_Scalar_out", [Tensor(x), kind, Out(np.float32, x.shape)])
                ref = torch.pow(t(x), exponent)
                if exponent in (1.7, -2.5):
                    within_ulps(self, ours, ref, ULPS)
                else:
                    bits_equal(self, ours, ref)
        e = self.normal(41)
        (ours,) = run_op("aten::pow.Tensor_Tensor_out", [Tensor(x), Tensor(e), Out(np.float32, x.shape)])
        within_ulps(self, ours, torch.pow(t(x), t(e)), ULPS)

    def test_comparisons(self):
        a = np.round(self.normal(4, 5)).astype(np.float32)
        b = np.round(self.normal(5)).astype(np.float32)
        for name in ("eq", "ne", "lt", "le", "gt", "ge"):
            with self.subTest(op=name):
                (ours,) = run_op(f"aten::{name}.Tensor_out", [Tensor(a), Tensor(b), Out(np.bool_, (4, 5))])
                bits_equal(self, ours, getattr(torch, name)(t(a), t(b)))
                (ours,) = run_op(f"aten::{name}.Scalar_out", [Tensor(a), ("double", 0.0), Out(np.bool_, (4, 5))])
                bits_equal(self, ours, getattr(torch, name)(t(a), 0.0))
                ints = np.arange(-3, 3)
                (ours,) = run_op(f"aten::{name}.Scalar_out", [Tensor(ints), ("int", 1), Out(np.bool_, (6,))])
                bits_equal(self, ours, getattr(torch, name)(t(ints), 1))
        mask = a > 0
        (ours,) = run_op("aten::logical_not.out", [Tensor(mask), Out(np.bool_, mask.shape)])
        bits_equal(self, ours, torch.logical_not(t(mask)))

    def test_where_and_masked_fill(self):
        x = self.normal(2, 4, 4)
        causal = np.triu(np.ones((4, 4), dtype=np.bool_), 1)
        lowest = float(np.finfo(np.float32).min)  # a double value is finite JSON: no -inf
        (ours,) = run_op("aten::masked_fill.Scalar_out", [Tensor(x), Tensor(causal), ("double", lowest),
                                                          Out(np.float32, x.shape)])
        bits_equal(self, ours, t(x).masked_fill(t(causal), lowest))
        other = self.normal(4)
        (ours,) = run_op("aten::where.self_out", [Tensor(causal), Tensor(x), Tensor(other), Out(np.float32, x.shape)])
        bits_equal(self, ours, torch.where(t(causal), t(x), t(other)))

    # ---- copies ----
    def test_copies(self):
        x = self.normal(3, 1, 5)
        (ours,) = run_op("aten::expand_copy.out", [Tensor(x), ("int_list", [2, -1, 4, 5]), ("bool", False),
                                                    Out(np.float32, (2, 3, 4, 5))])
        bits_equal(self, ours, t(x).expand(2, -1, 4, 5).contiguous())
        (ours,) = run_op("aten::select_copy.int_out", [Tensor(x), ("int", -1), ("int", -2), Out(np.float32, (3, 1))])
        bits_equal(self, ours, t(x).select(-1, -2).contiguous())
        wide = np.concatenate([self.normal(20, scale=1e10), np.float32([np.nan, np.inf, -0.5, 2.5])])
        for dtype in (np.int64, np.int32, np.bool_, np.float64):
            with self.subTest(dtype=dtype):
                source = wide if dtype != np.int32 else np.clip(wide, -1e9, 1e9)  # PyTorch's out-of-range int32 is UB
                source = np.nan_to_num(source, nan=1.0, posinf=2.0) if dtype in (np.int64, np.int32) else source
                (ours,) = run_op("aten::copy.out", [Tensor(np.zeros(source.shape, dtype)), Tensor(source), ("bool", False),
                                                    Out(dtype, source.shape)])
                bits_equal(self, ours, t(source).to(TORCH_DTYPES[np.dtype(dtype)]))

    def test_copy_into_state_in_place(self):
        state = self.normal(2, 6)
        update = self.normal(6)
        self_arg = Tensor(state)
        (ours,) = run_op("aten::copy.out", [self_arg, Tensor(update), ("bool", False), Out(np.float32, state.shape, self_arg)])
        bits_equal(self, ours, t(state).copy_(t(update)))

    # ---- indexing ----
    def test_indexing(self):
        weight = self.normal(10, 4)
        ids = self.gen.integers(0, 10, (2, 3))
        (ours,) = run_op("aten::embedding.out", [Tensor(weight), Tensor(ids), ("int", -1), ("bool", False), ("bool", False),
                                                  Out(np.float32, (2, 3, 4))])
        bits_equal(self, ours, torch.nn.functional.embedding(t(ids), t(weight)))
        index = np.array([3, 0, 3, 9])
        (ours,) = run_op("aten::index_select.out", [Tensor(weight), ("int", 0), Tensor(index), Out(np.float32, (4, 4))])
        bits_equal(self, ours, torch.index_select(t(weight), 0, t(index)))
        x = self.normal(3, 4, 5)
        rows = np.array([[0, -1], [2, 1]])
        cols = np.array([4, -5])
        for indices, ref in (([None, Tensor(rows)], t(x)[:, t(rows)]),
                             ([Tensor(rows), None, Tensor(cols)], t(x)[t(rows), :, t(cols)]),
                             ([None, Tensor(rows), Tensor(cols)], t(x)[:, t(rows), t(cols)])):
            with self.subTest(shape=tuple(ref.shape)):
                (ours,) = run_op("aten::index.Tensor_out", [Tensor(x), indices, Out(np.float32, ref.shape)])
                bits_equal(self, ours, ref)

    def test_index_put_and_copy_in_place(self):
        cache = self.normal(2, 8, 3)
        positions = np.array([5, -1])
        values = self.normal(2, 2, 3)
        for accumulate in (False, True):
            with self.subTest(accumulate=accumulate):
                self_arg = Tensor(cache)
                (ours,) = run_op("aten::index_put.out", [self_arg, [None, Tensor(positions)], Tensor(values),
                                                         ("bool", accumulate), Out(np.float32, cache.shape, self_arg)])
                # x[:, positions] (= or +=) values, written with the broadcast index PyTorch's index_put takes.
                ref = t(cache).index_put((torch.arange(2)[:, None], t(positions)), t(values), accumulate=accumulate)
                bits_equal(self, ours, ref)
        index = np.array([6, 1])
        source = self.normal(2, 2, 3)
        self_arg = Tensor(cache)
        (ours,) = run_op("aten::index_copy.out", [self_arg, ("int", 1), Tensor(index), Tensor(source),
                                                  Out(np.float32, cache.shape, self_arg)])
        bits_equal(self, ours, t(cache).index_copy(1, t(index), t(source)))

    def test_index_out_of_range_names_operator_index_and_bound(self):
        with self.assertRaises(et_ops.RunError) as caught:
            run_op("aten::index_copy.out", [Tensor(np.zeros((4, 2), np.float32)), ("int", 0), Tensor(np.array([4])),
                                            Tensor(np.zeros((1, 2), np.float32)), Out(np.float32, (4, 2))])
        message = str(caught.exception)
        for text in ("aten::index_copy.out", "index 4", "size 4"):
            self.assertIn(text, message)

    # ---- reductions and products ----
    def test_normalization(self):
        x = self.normal(2, 5, 24, scale=3.0) + np.float32(1.5)
        w, b = self.normal(24), self.normal(24)
        y, mean, rstd = run_op("aten::native_layer_norm.out", [Tensor(x), ("int_list", [24]), Tensor(w), Tensor(b), ("double", 1e-5),
                                                                Out(np.float32, x.shape), Out(np.float32, (2, 5, 1)),
                                                                Out(np.float32, (2, 5, 1))])
        ry, rmean, rrstd = torch.native_layer_norm(t(x), [24], t(w), t(b), 1e-5)
        scale = np.abs(x - rmean.numpy()) * rrstd.numpy() * np.abs(w) + np.abs(b)
        within_rtol(self, y, ry, scale)
        within_rtol(self, mean, rmean, np.abs(x).mean(axis=2, keepdims=True))
        within_rtol(self, rstd, rrstd, rrstd.numpy())
        g = self.normal(2, 6, 4, 5)
        gw, gb = self.normal(6), self.normal(6)
        y, mean, rstd = run_op("aten::native_group_norm.out", [Tensor(g), Tensor(gw), Tensor(gb), ("int", 2), ("int", 6),
                                                                ("int", 20), ("int", 3), ("double", 1e-5),
                                                                Out(np.float32, g.shape), Out(np.float32, (2, 3)),
                                                                Out(np.float32, (2, 3))])
        ry, rmean, rrstd = torch.native_group_norm(t(g), t(gw), t(gb), 2, 6, 20, 3, 1e-5)
        within_rtol(self, y, ry, np.abs(ry.numpy()) + np.abs(gb)[None, :, None, None] + 1.0)
        within_rtol(self, mean, rmean, 1.0)
        within_rtol(self, rstd, rrstd, rrstd.numpy())

    def test_softmax_any_dim(self):
        x = self.normal(3, 4, 5, scale=3.0)
        for dim in (0, 1, -1, -2):
            with self.subTest(dim=dim):
                (ours,) = run_op("aten::_softmax.out", [Tensor(x), ("int", dim), ("bool", False), Out(np.float32, x.shape)])
                ref = torch.softmax(t(x), dim)
                within_rtol(self, ours, ref, ref.numpy())
                (ours,) = run_op("aten::_log_softmax.out", [Tensor(x), ("int", dim), ("bool", False), Out(np.float32, x.shape)])
                ref = torch.log_softmax(t(x), dim)
                within_rtol(self, ours, ref, np.abs(ref.numpy()) + 1.0)

    def test_sum_and_max(self):
        x = self.normal(3, 4, 70)
        for dim, keepdim in (([-1], False), ([0, 2], True), (None, False)):
            with self.subTest(dim=dim, keepdim=keepdim):
                ref = torch.sum(t(x), dim=dim, keepdim=keepdim) if dim is not None else torch.sum(t(x))
                dim_arg = ("int_list", dim) if dim is not None else ("none",)
                (ours,) = run_op("aten::sum.IntList_out", [Tensor(x), dim_arg, ("bool", keepdim), ("none",),
                                                           Out(np.float32, tuple(ref.shape))])
                magnitude = torch.sum(t(np.abs(x)), dim=dim, keepdim=keepdim) if dim is not None else np.abs(x).sum()
                within_rtol(self, ours, ref, np.asarray(magnitude))
        ints = self.gen.integers(-100, 100, (4, 6)).astype(np.int32)
        (ours,) = run_op("aten::sum.IntList_out", [Tensor(ints), ("int_list", [1]), ("bool", False), ("scalar_type", "int64"),
                                                   Out(np.int64, (4,))])
        bits_equal(self, ours, torch.sum(t(ints), 1, dtype=torch.int64))
        tied = np.round(self.normal(4, 7))
        values, indices = run_op("aten::max.dim_max", [Tensor(tied), ("int", 1), ("bool", True), Out(np.float32, (4, 1)),
                                                       Out(np.int64, (4, 1))])
        ref_values, ref_indices = torch.max(t(tied), 1, keepdim=True)
        bits_equal(self, values, ref_values)
        bits_equal(self, indices, ref_indices)

    def test_batched_products(self):
        a, b = self.normal(3, 4, 16), self.normal(3, 16, 5)
        (ours,) = run_op("aten::bmm.out", [Tensor(a), Tensor(b), Out(np.float32, (3, 4, 5))])
        magnitude = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
        within_rtol(self, ours, torch.bmm(t(a), t(b)), magnitude)
        bias = self.normal(1, 5)
        (ours,) = run_op("aten::baddbmm.out", [Tensor(bias), Tensor(a), Tensor(b), ("double", 0.5), ("double", 0.125),
                                               Out(np.float32, (3, 4, 5))])
        within_rtol(self, ours, torch.baddbmm(t(bias), t(a), t(b), beta=0.5, alpha=0.125),
                    0.125 * magnitude + 0.5 * np.abs(bias))


if __name__ == "__main__":
    unittest.main()
