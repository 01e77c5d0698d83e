#!/usr/bin/env python3
"""Compares the portable kernels with PyTorch 1.13 on seeded random inputs.

Usage: torch_reference_test.py TORCH_DRIVER

Without ATEN_CPU_CAPABILITY in its environment it runs itself once per
capability this CPU supports (default, avx2, avx512; test/aten_capabilities.py):
PyTorch's results differ between them where its vector code differs, and
the kernels must agree with every one.

Every case builds inputs with a fixed seed, computes PyTorch's result, and
asks torch_driver (through the registry and the C ABI) for ours. What must
agree how (docs/kernels-portable.md states the same):

- bit for bit (NaNs by position, signed zeros included): elementwise
  arithmetic, relu, hardtanh, clamp, leaky_relu, hardswish, hardsigmoid,
  copies (view, permute, slice, cat, constant padding, nearest upsampling), max,
  average and adaptive average pooling;
- within ULPS[op] units in the last place: sigmoid and tanh (PyTorch's exp
  and tanh differ between its capabilities; ours are correctly rounded in
  float32 but for rare ties, within a few ulp in float64);
- within MEAN_ULPS units in the last place of the mean magnitude of the
  reduced elements: mean (PyTorch sums in another order);
- within one rounding: float add and sub with alpha other than 1 (PyTorch's
  vector loops fuse self + alpha * other, its scalar loops do not);
- within RTOL relative to the sum of the magnitudes of the terms of each
  result: mm, addmm, linear, convolution (PyTorch sums in float32);
  relative to the result: softmax; relative to softmax(scores) @ |value|
  (float64): attention;
- and mm, addmm, linear, convolution equal PyTorch's float64 result rounded
  to float32 (ours sum in float64 and round once), bit for bit, but where
  that float64 result lies closer to a float32 rounding boundary than the
  two float64 sums' error bound (then either neighbour): counted and
  printed with how many of them rounded the other way (none on these
  inputs); in the midpoint cases every float64 sum is exact: no band.

The largest differences measured per operator are printed at the end.
Needs numpy and torch: run it with Debian's /usr/bin/python3 (the meson
option python_interpreter), not a python3 without them.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import aten_capabilities  # noqa: E402  (test/aten_capabilities.py)

if __name__ == "__main__" and aten_capabilities.requested() is None:
    sys.exit(aten_capabilities.run_under_each())

import numpy as np  # noqa: E402
import torch  # noqa: E402

RTOL = 1e-5
SEED = 20240229
ULPS = {"sigmoid": 4, "tanh": 3}
MEAN_ULPS = 4

DTYPES = {
    torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
    torch.int8: "int8", torch.uint8: "uint8", torch.int16: "int16",
    torch.int32: "int32", torch.int64: "int64", torch.bool: "bool",
}
CONTIGUOUS = None
CHANNELS_LAST = (0, 2, 3, 1)


class Request:
    """Collects kernel calls and the files their tensors travel in."""

    def __init__(self, directory):
        self.directory = directory
        self.calls = []
        self.files = 0

    def _file(self):
        self.files += 1
        return f"t{self.files}.bin"

    def tensor_in(self, t, dim_order=CONTIGUOUS):
        order = tuple(range(t.dim())) if dim_order is None else tuple(dim_order)
        name = self._file()
        memory = t.permute(order).contiguous() if t.dim() else t.contiguous()
        with open(os.path.join(self.directory, name), "wb") as f:
            f.write(memory.numpy().tobytes())
        return {"tensor": {"dtype": DTYPES[t.dtype], "sizes": list(t.shape), "dim_order": list(order),
                           "input": name}}

    def tensor_out(self, dtype, sizes, dim_order=CONTIGUOUS):
        order = tuple(range(len(sizes))) if dim_order is None else tuple(dim_order)
        name = self._file()
        spec = {"tensor": {"dtype": DTYPES[dtype], "sizes": list(sizes), "dim_order": list(order), "output": name}}
        return spec, (name, dtype, tuple(sizes), order)

    def add(self, op, args):
        self.calls.append({"op": op, "args": args})
        return len(self.calls) - 1

    def read(self, output):
        name, dtype, sizes, order = output
        raw = np.fromfile(os.path.join(self.directory, name), dtype=torch.empty(0, dtype=dtype).numpy().dtype)
        memory = torch.from_numpy(raw.copy()).reshape([sizes[d] for d in order]) if sizes else \
            torch.from_numpy(raw.copy()).reshape([])
        inverse = [order.index(d) for d in range(len(order))]
        return memory.permute(inverse) if sizes else memory


def same_bits(ours, ref):
    """Bit-exact equality; every NaN payload counts as NaN."""
    if ours.shape != ref.shape or ours.dtype != ref.dtype:
        return False, f"shape/dtype {tuple(ours.shape)} {ours.dtype} vs {tuple(ref.shape)} {ref.dtype}"
    if ours.dtype.is_floating_point:
        nan_ours, nan_ref = torch.isnan(ours), torch.isnan(ref)
        if not torch.equal(nan_ours, nan_ref):
            return False, "NaN positions differ"
        keep = ~nan_ref
        a, b = ours[keep], ref[keep]
        if not (torch.equal(a, b) and torch.equal(torch.signbit(a), torch.signbit(b))):
            diff = (a.double() - b.double()).abs().max().item() if a.numel() else 0
            return False, f"values differ (max abs diff {diff})"
        return True, ""
    return (torch.equal(ours, ref), "values differ")


def non_nan(ours, ref):
    """(the mask of ref's non-NaN elements, "") when the shapes and the NaN
    positions agree, else (None, why)."""
    if ours.shape != ref.shape:
        return None, f"shape {tuple(ours.shape)} vs {tuple(ref.shape)}"
    nan_ours, nan_ref = torch.isnan(ours), torch.isnan(ref)
    if not torch.equal(nan_ours, nan_ref):
        return None, "NaN positions differ"
    return ~nan_ref, ""


def within_bound(ours, ref, bound, rtol=RTOL):
    """|ours - ref| <= rtol * bound elementwise (bound: sum of |terms|)."""
    keep, why = non_nan(ours, ref)
    if keep is None:
        return False, why
    same = ours[keep] == ref[keep]  # equal infinities have no finite difference
    err = torch.where(same, torch.zeros((), dtype=torch.float64), (ours[keep].double() - ref[keep].double()).abs())
    limit = rtol * bound[keep].double() + 1e-300
    if bool((err <= limit).all()):
        return True, ""
    worst = (err / limit).argmax()
    return False, f"error {err[worst].item():.3g} exceeds {limit[worst].item():.3g}"


def correctly_rounded(suite, op, ours, ref64, bound, depth, exact_sums=False):
    """ours == float32(ref64) elementwise (NaNs by position), but where ref64 is
    within 2 * (depth + 2) * 2^-53 * bound (two float64 sums' error bounds) of a
    float32 rounding boundary: there either float32 neighbour of that band.
    exact_sums: every float64 partial sum is exact, so no band at all."""
    expected = ref64.float()
    keep, why = non_nan(ours, expected)
    if keep is None:
        return False, why
    got, want, exact = ours[keep], expected[keep], ref64[keep]
    error = (0 if exact_sums else 2 * (depth + 2) * 2.0 ** -53) * bound[keep].double()
    low, high = (exact - error).float(), (exact + error).float()
    same = (got.view(torch.int32) == want.view(torch.int32)) | ((got == 0) & (want == 0) & (exact == 0))
    near_boundary = low != high
    ok = same | (near_boundary & (got >= low) & (got <= high))
    band, differ = suite.near_boundary.get(op, (0, 0))
    suite.near_boundary[op] = (band + int(near_boundary.sum()), differ + int((near_boundary & ~same).sum()))
    if bool(ok.all()):
        return True, ""
    worst = (~ok).nonzero()[0].item()
    return False, (f"element {worst}: {got[worst].item()!r}, float64 result rounded: {want[worst].item()!r} "
                   f"(float64 {exact[worst].item()!r})")


def both(*checks):
    """Every check passes; the first failure's reason."""
    for check in checks:
        ok, why = check()
        if not ok:
            return False, why
    return True, ""


def ordered_bits(t):
    """Float elements as integers in the order of their values (-0.0 == 0.0)."""
    if t.dtype == torch.float32:
        bits = t.contiguous().view(torch.int32).to(torch.int64)
        return torch.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    bits = t.contiguous().view(torch.int64)
    return torch.where(bits < 0, -(bits & 0x7FFFFFFFFFFFFFFF), bits)


def within_ulps(suite, op, ours, ref, ulps):
    """Same NaN positions, every other element within `ulps` units in the last place."""
    if ours.shape != ref.shape or ours.dtype != ref.dtype:
        return False, f"shape/dtype {tuple(ours.shape)} {ours.dtype} vs {tuple(ref.shape)} {ref.dtype}"
    if not torch.equal(torch.isnan(ours), torch.isnan(ref)):
        return False, "NaN positions differ"
    keep = ~torch.isnan(ref)
    distance = (ordered_bits(ours[keep]) - ordered_bits(ref[keep])).abs()
    worst = int(distance.max().item()) if distance.numel() else 0
    suite.measure(op, worst)
    if worst <= ulps:
        return True, ""
    at = int(distance.argmax().item())
    return False, f"{worst} ulp apart at {ref[keep][at].item()!r} (ours {ours[keep][at].item()!r})"


def ulp_of(magnitude, dtype):
    """The spacing of `dtype` values at each (non-negative, float64) magnitude."""
    digits = 24 if dtype == torch.float32 else 53
    _, exponent = torch.frexp(magnitude.clamp(min=torch.finfo(dtype).tiny))
    return torch.ldexp(torch.ones_like(magnitude), exponent - digits)


def within_ulps_of_scale(suite, op, ours, ref, scale, ulps):
    """|ours - ref| within `ulps` units in the last place of `scale` (same NaN positions)."""
    if ours.shape != ref.shape or ours.dtype != ref.dtype:
        return False, f"shape/dtype {tuple(ours.shape)} {ours.dtype} vs {tuple(ref.shape)} {ref.dtype}"
    if not torch.equal(torch.isnan(ours), torch.isnan(ref)):
        return False, "NaN positions differ"
    keep = ~torch.isnan(ref)
    same = ours[keep] == ref[keep]  # equal infinities have no finite difference
    err = torch.where(same, torch.zeros((), dtype=torch.float64), (ours[keep].double() - ref[keep].double()).abs())
    units = err / ulp_of(scale[keep].double(), ours.dtype)
    worst = float(units.max().item()) if units.numel() else 0.0
    suite.measure(op, worst)
    return (True, "") if worst <= ulps else (False, f"{worst:g} ulp of the mean magnitude apart")


class Suite:
    def __init__(self, driver):
        self.driver = driver
        self.tmp = tempfile.TemporaryDirectory(prefix="portable_torch_")
        self.request = Request(self.tmp.name)
        self.checks = []  # (name, call index, check function)
        self.measured = {}  # operator -> largest difference measured, in its unit
        self.near_boundary = {}  # operator -> (elements too close to call, of which rounded the other way)

    def measure(self, op, value):
        self.measured[op] = max(self.measured.get(op, 0), value)

    def expect(self, name, op, args, check):
        index = self.request.add(op, args)
        self.checks.append((name, index, check))

    def run(self):
        path = os.path.join(self.tmp.name, "request.json")
        with open(path, "w") as f:
            json.dump({"calls": self.request.calls}, f)
        done = subprocess.run([self.driver, path], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"torch_driver failed ({done.returncode}): {done.stderr}")
            return 1
        lines = done.stdout.splitlines()
        passed = failed = 0
        for name, index, check in self.checks:
            status = lines[index] if index < len(lines) else "missing"
            if status != "ok":
                ok, why = False, f"kernel said: {status}"
            else:
                ok, why = check()
            if ok:
                passed += 1
            else:
                failed += 1
                print(f"FAIL {name}: {why}")
        print(f"torch {torch.__version__}, CPU capability {aten_capabilities.active(torch)}")
        for op, value in sorted(self.measured.items()):
            print(f"largest difference from PyTorch: {op}: {value:g} ulp")
        for op, (band, differ) in sorted(self.near_boundary.items()):
            print(f"float64 result within its error of a float32 rounding boundary: {op}: {band} elements, "
                  f"{differ} of them rounded the other way")
        print(f"portable_torch: {passed} passed, {failed} failed")
        return 0 if failed == 0 and passed > 0 else 1


def random_values(shape, dtype, gen, specials=False):
    if dtype.is_floating_point:
        t = torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype) * 3
        if specials and t.numel() >= 8:
            flat = t.view(-1)
            picks = torch.randperm(t.numel(), generator=gen)[:6]
            for i, v in zip(picks.tolist(), [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e-40]):
                flat[i] = v
        return t
    info = torch.iinfo(dtype)
    low, high = max(info.min, -2**62), min(info.max, 2**62)  # randint's range must fit int64
    return torch.randint(low, high, shape, generator=gen, dtype=torch.int64).to(dtype)


# ---- cases ----

def elementwise_cases(suite, gen):
    r = suite.request
    shapes = [([2, 3], [2, 3]), ([4, 5], [5]), ([3, 1], [1, 4]), ([2, 3, 4], [3, 1]), ([], [3]),
              ([0, 3], [3]), ([8, 33], [33]), ([5, 1, 7], [6, 1])]
    dtypes = [torch.float32, torch.float64, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
    for dtype in dtypes:
        floating = dtype.is_floating_point
        alphas = [1, 2, 0.37, -1.5] if floating else [1, 3, -2]
        for a_shape, b_shape in shapes:
            a = random_values(a_shape, dtype, gen, specials=True)
            b = random_values(b_shape, dtype, gen, specials=True)
            out_shape = torch.broadcast_shapes(a.shape, b.shape)
            for alpha in alphas:
                ref = torch.add(a, b, alpha=alpha)
                spec, out = r.tensor_out(dtype, out_shape)
                scalar = {"double": alpha} if isinstance(alpha, float) else {"int": alpha}
                name = f"add {DTYPES[dtype]} {a_shape}+{b_shape} alpha={alpha}"
                if alpha == 1 or not floating:
                    check = lambda out=out, ref=ref: same_bits(r.read(out), ref)  # noqa: E731
                else:
                    # The kernel rounds self + alpha * other once, as PyTorch's
                    # vectorised loops do; PyTorch's scalar loops (broadcast
                    # rows, tails) may round alpha * other first: one ulp.
                    bound = a.double().abs() + 2 * abs(alpha) * b.double().abs()
                    eps = torch.finfo(dtype).eps
                    check = lambda out=out, ref=ref, bound=bound, eps=eps: \
                        within_bound(r.read(out), ref, bound, eps)  # noqa: E731
                suite.expect(name, "aten::add.out", [r.tensor_in(a), r.tensor_in(b), scalar, spec], check)
            ref = torch.mul(a, b)
            spec, out = r.tensor_out(dtype, out_shape)
            suite.expect(f"mul {DTYPES[dtype]} {a_shape}*{b_shape}", "aten::mul.out",
                         [r.tensor_in(a), r.tensor_in(b), spec],
                         lambda out=out, ref=ref: same_bits(r.read(out), ref))
        x = random_values([3, 7, 2], dtype, gen, specials=True)
        spec, out = r.tensor_out(dtype, x.shape)
        suite.expect(f"relu {DTYPES[dtype]}", "aten::relu.out", [r.tensor_in(x), spec],
                     lambda out=out, ref=torch.relu(x): same_bits(r.read(out), ref))
    # Channels-last operands, as convolutional models produce them.
    x = random_values([2, 3, 4, 5], torch.float32, gen, specials=True)
    bias = random_values([3, 1, 1], torch.float32, gen)
    # alpha 0.5 scales exactly, so fused or not, the sum rounds once.
    for op, ref, args in [("aten::add.out", torch.add(x, bias, alpha=0.5), [{"double": 0.5}]),
                          ("aten::mul.out", torch.mul(x, bias), [])]:
        spec, out = r.tensor_out(torch.float32, x.shape, CHANNELS_LAST)
        suite.expect(f"{op} channels-last", op, [r.tensor_in(x, CHANNELS_LAST), r.tensor_in(bias)] + args + [spec],
                     lambda out=out, ref=ref: same_bits(r.read(out), ref))
    spec, out = r.tensor_out(torch.float32, x.shape)
    suite.expect("relu channels-last self", "aten::relu.out", [r.tensor_in(x, CHANNELS_LAST), spec],
                 lambda out=out, ref=torch.relu(x): same_bits(r.read(out), ref))


def copy_cases(suite, gen):
    r = suite.request
    views = [([2, 3, 4], [6, 4]), ([2, 3, 4], [-1]), ([2, 3, 4], [4, -1, 2]), ([5], [1, 5, 1]),
             ([], [1]), ([0, 4], [2, 0, 3]), ([0, 4], [-1, 4])]
    for dtype in [torch.float32, torch.float64, torch.float16, torch.int8, torch.int64, torch.bool]:
        for shape, size in views:
            x = random_values(shape, dtype, gen) if dtype != torch.bool else torch.rand(shape, generator=gen) > 0.5
            ref = x.reshape(size)
            spec, out = r.tensor_out(dtype, ref.shape)
            suite.expect(f"view_copy {DTYPES[dtype]} {shape}->{size}", "aten::view_copy.out",
                         [r.tensor_in(x), {"int_list": size}, spec],
                         lambda out=out, ref=ref: same_bits(r.read(out), ref))
        x = random_values([2, 3, 4, 5], dtype, gen) if dtype != torch.bool else \
            torch.rand([2, 3, 4, 5], generator=gen) > 0.5
        for dims in [[0, 2, 3, 1], [3, 2, 1, 0], [-1, 0, -2, 1], [0, 1, 2, 3]]:
            ref = x.permute(dims)
            spec, out = r.tensor_out(dtype, ref.shape)
            suite.expect(f"permute_copy {DTYPES[dtype]} {dims}", "aten::permute_copy.out",
                         [r.tensor_in(x), {"int_list": dims}, spec],
                         lambda out=out, ref=ref: same_bits(r.read(out), ref))
    x = random_values([2, 3, 4, 5], torch.float32, gen)
    ref = x.permute([0, 2, 3, 1])
    spec, out = r.tensor_out(torch.float32, ref.shape)
    suite.expect("permute_copy channels-last self", "aten::permute_copy.out",
                 [r.tensor_in(x, CHANNELS_LAST), {"int_list": [0, 2, 3, 1]}, spec],
                 lambda out=out, ref=ref: same_bits(r.read(out), ref))
    ref = x.reshape(2, 60)
    spec, out = r.tensor_out(torch.float32, ref.shape)
    suite.expect("view_copy channels-last self", "aten::view_copy.out",
                 [r.tensor_in(x, CHANNELS_LAST), {"int_list": [2, 60]}, spec],
                 lambda out=out, ref=ref: same_bits(r.read(out), ref))


def matmul_cases(suite, gen):
    r = suite.request
    for n, k, m in [(1, 1, 1), (3, 5, 4), (16, 64, 10), (7, 33, 1), (0, 4, 3), (4, 0, 3), (4, 3, 0)]:
        a = random_values([n, k], torch.float32, gen)
        b = random_values([k, m], torch.float32, gen)
        ref = torch.mm(a, b)
        ref64 = torch.mm(a.double(), b.double())
        bound = torch.mm(a.double().abs(), b.double().abs())
        for b_order in [CONTIGUOUS, (1, 0)]:
            spec, out = r.tensor_out(torch.float32, [n, m])
            suite.expect(f"mm [{n},{k}]@[{k},{m}] mat2 order {b_order}", "aten::mm.out",
                         [r.tensor_in(a), r.tensor_in(b, b_order), spec],
                         lambda out=out, ref=ref, ref64=ref64, bound=bound, k=k: both(
                             lambda: within_bound(r.read(out), ref, bound),
                             lambda: correctly_rounded(suite, "mm", r.read(out), ref64, bound, k)))
        for bias_shape, beta, alpha in [([m], 1, 1), ([n, m], 0.5, 2), ([1], 1, -1.25), ([n, 1], 0, 1), ([], 3, 1)]:
            bias = random_values(bias_shape, torch.float32, gen)
            if beta == 0 and bias.numel():
                bias.view(-1)[0] = float("nan")  # beta 0 must ignore it
            ref = torch.addmm(bias, a, b, beta=beta, alpha=alpha)
            ref64 = torch.addmm(bias.double(), a.double(), b.double(), beta=beta, alpha=alpha)
            bound = abs(alpha) * torch.mm(a.double().abs(), b.double().abs()) + \
                (abs(beta) * bias.double().abs() if beta else 0)
            spec, out = r.tensor_out(torch.float32, [n, m])
            scalars = [{"double": v} if isinstance(v, float) else {"int": v} for v in (beta, alpha)]
            suite.expect(f"addmm bias {bias_shape} [{n},{k}]@[{k},{m}] beta={beta} alpha={alpha}", "aten::addmm.out",
                         [r.tensor_in(bias), r.tensor_in(a), r.tensor_in(b)] + scalars + [spec],
                         lambda out=out, ref=ref, ref64=ref64, bound=bound, k=k: both(
                             lambda: within_bound(r.read(out), ref, bound),
                             lambda: correctly_rounded(suite, "addmm", r.read(out), ref64, bound, k + 2)))


def linear_cases(suite, gen):
    r = suite.request
    # input shape, out_features, bias shape (None: no bias), input layout
    configs = [
        ([1, 512], 1000, [1000], CONTIGUOUS),      # ResNet18's classifier
        ([1, 1280], 1000, [1000], CONTIGUOUS),     # MobileNetV2's classifier
        ([7, 33], 17, [17], CONTIGUOUS),
        ([2, 3, 20], 9, None, CONTIGUOUS),
        ([2, 3, 20], 9, [1], (1, 0, 2)),
        ([20], 5, [], CONTIGUOUS),
        ([64, 300], 70, [70], (1, 0)),
        ([0, 8], 4, [4], CONTIGUOUS),
        ([3, 0], 4, [4], CONTIGUOUS),
    ]
    for x_shape, out_features, bias_shape, layout in configs:
        x = random_values(x_shape, torch.float32, gen)
        w = random_values([out_features, x_shape[-1]], torch.float32, gen)
        b = random_values(bias_shape, torch.float32, gen) if bias_shape is not None else None
        ref = torch.nn.functional.linear(x, w, b)
        ref64 = torch.nn.functional.linear(x.double(), w.double(), b.double() if b is not None else None)
        bound = torch.nn.functional.linear(x.double().abs(), w.double().abs(),
                                           b.double().abs() if b is not None else None)
        spec, out = r.tensor_out(torch.float32, ref.shape)
        bias_arg = r.tensor_in(b) if b is not None else {"none": None}
        suite.expect(f"linear x{x_shape} -> {out_features} bias {bias_shape} layout {layout}", "aten::linear.out",
                     [r.tensor_in(x, layout), r.tensor_in(w), bias_arg, spec],
                     lambda out=out, ref=ref, ref64=ref64, bound=bound, k=x_shape[-1]: both(
                         lambda: within_bound(r.read(out), ref, bound),
                         lambda: correctly_rounded(suite, "linear", r.read(out), ref64, bound, k + 1)))
    # The weight transposed in memory (as an exported permute would leave it).
    x = random_values([4, 24], torch.float32, gen)
    w = random_values([10, 24], torch.float32, gen)
    ref = torch.nn.functional.linear(x, w)
    bound = torch.nn.functional.linear(x.double().abs(), w.double().abs())
    spec, out = r.tensor_out(torch.float32, ref.shape)
    suite.expect("linear with a column-major weight", "aten::linear.out",
                 [r.tensor_in(x), r.tensor_in(w, (1, 0)), {"none": None}, spec],
                 lambda out=out, ref=ref, bound=bound: within_bound(r.read(out), ref, bound))


def conv_cases(suite, gen):
    r = suite.request
    F = torch.nn.functional
    configs = [
        # input shape, weight shape, bias, stride, padding, dilation, groups, layout
        ([1, 1, 5, 5], [1, 1, 3, 3], True, [1, 1], [0, 0], [1, 1], 1, CONTIGUOUS),
        ([2, 3, 8, 7], [4, 3, 3, 3], True, [1], [1], [1], 1, CONTIGUOUS),
        ([2, 4, 9, 9], [6, 2, 3, 2], False, [2, 1], [1, 0], [1, 2], 2, CONTIGUOUS),
        ([1, 6, 7, 7], [6, 1, 3, 3], True, [1, 1], [1, 1], [1, 1], 6, CONTIGUOUS),  # depthwise
        ([1, 8, 6, 6], [16, 8, 1, 1], True, [1, 1], [0, 0], [1, 1], 1, CONTIGUOUS),  # pointwise
        ([2, 3, 10, 10], [8, 3, 5, 5], True, [2, 2], [2, 2], [1, 1], 1, CHANNELS_LAST),
        ([1, 4, 6, 5], [4, 2, 2, 3], True, [3, 2], [2, 1], [2, 1], 2, CHANNELS_LAST),
        ([0, 3, 5, 5], [2, 3, 3, 3], True, [1, 1], [0, 0], [1, 1], 1, CONTIGUOUS),
        # ResNet18 layer types (reduced sizes): the 7x7 stem, 3x3, 3x3 stride 2,
        # the 1x1 stride-2 downsample, and the deep 3x3 of 512 channels.
        ([1, 3, 45, 39], [64, 3, 7, 7], False, [2, 2], [3, 3], [1, 1], 1, CONTIGUOUS),
        ([1, 64, 14, 14], [64, 64, 3, 3], True, [1, 1], [1, 1], [1, 1], 1, CONTIGUOUS),
        ([1, 64, 15, 15], [128, 64, 3, 3], False, [2, 2], [1, 1], [1, 1], 1, CONTIGUOUS),
        ([1, 64, 15, 15], [128, 64, 1, 1], False, [2, 2], [0, 0], [1, 1], 1, CONTIGUOUS),
        ([1, 512, 7, 7], [512, 512, 3, 3], False, [1, 1], [1, 1], [1, 1], 1, CONTIGUOUS),
        # MobileNetV2 layer types: 3x3 stride 2 stem, pointwise expand and
        # project, depthwise 3x3 stride 1 and 2.
        ([1, 3, 33, 33], [32, 3, 3, 3], False, [2, 2], [1, 1], [1, 1], 1, CONTIGUOUS),
        ([1, 16, 28, 28], [96, 16, 1, 1], False, [1, 1], [0, 0], [1, 1], 1, CONTIGUOUS),
        ([1, 96, 28, 28], [96, 1, 3, 3], False, [2, 2], [1, 1], [1, 1], 96, CONTIGUOUS),
        ([1, 144, 14, 14], [144, 1, 3, 3], True, [1, 1], [1, 1], [1, 1], 144, CONTIGUOUS),
        ([1, 960, 7, 7], [960, 1, 3, 3], False, [1, 1], [1, 1], [1, 1], 960, CONTIGUOUS),
        ([1, 144, 14, 14], [24, 144, 1, 1], True, [1, 1], [0, 0], [1, 1], 1, CONTIGUOUS),
        # Grouped, dilated, depthwise with a channel multiplier, odd sizes.
        ([2, 16, 11, 13], [32, 4, 3, 3], True, [1, 1], [1, 1], [1, 1], 4, CONTIGUOUS),
        ([1, 6, 17, 15], [10, 6, 3, 3], True, [1, 1], [2, 2], [2, 2], 1, CONTIGUOUS),
        ([1, 5, 16, 17], [5, 1, 3, 3], True, [3, 3], [2, 2], [2, 2], 5, CONTIGUOUS),
        ([1, 8, 12, 9], [16, 1, 5, 5], True, [1, 1], [2, 2], [1, 1], 8, CHANNELS_LAST),
        ([3, 5, 1, 19], [13, 5, 1, 3], True, [1, 1], [0, 1], [1, 1], 1, CONTIGUOUS),
    ]
    for x_shape, w_shape, has_bias, stride, padding, dilation, groups, layout in configs:
        x = random_values(x_shape, torch.float32, gen)
        w = random_values(w_shape, torch.float32, gen)
        b = random_values([w_shape[0]], torch.float32, gen) if has_bias else None
        ref = F.conv2d(x, w, b, stride, padding, dilation, groups)
        ref64 = F.conv2d(x.double(), w.double(), b.double() if has_bias else None, stride, padding, dilation, groups)
        bound = F.conv2d(x.double().abs(), w.double().abs(), b.double().abs() if has_bias else None,
                         stride, padding, dilation, groups)
        depth = w_shape[1] * w_shape[2] * w_shape[3] + 1
        spec, out = r.tensor_out(torch.float32, ref.shape, layout)
        bias_arg = r.tensor_in(b) if has_bias else {"none": None}
        suite.expect(f"convolution x{x_shape} w{w_shape} s{stride} p{padding} d{dilation} g{groups} {layout}",
                     "aten::convolution.out",
                     [r.tensor_in(x, layout), r.tensor_in(w, layout), bias_arg, {"int_list": stride},
                      {"int_list": padding}, {"int_list": dilation}, {"bool": False}, {"int_list": [0, 0]},
                      {"int": groups}, spec],
                     lambda out=out, ref=ref, ref64=ref64, bound=bound, depth=depth: both(
                         lambda: within_bound(r.read(out), ref, bound),
                         lambda: correctly_rounded(suite, "convolution", r.read(out), ref64, bound, depth)))


def midpoint_cases(suite, gen):
    """Sums of 1, 2^-24 and 2^-50: just above the midpoint 1 + 2^-24 between the
    floats 1 and 1 + 2^-23, which float32 sums land on (and round to 1); rounded
    once from float64 they give 1 + 2^-23. Random signs and positions. Every
    float64 partial sum of these terms is exact: no tolerance band."""
    r = suite.request
    F = torch.nn.functional
    terms = torch.tensor([1.0, 2.0 ** -24, 2.0 ** -50], dtype=torch.float64)
    for k in [3, 40, 700]:
        a = torch.zeros([6, k], dtype=torch.float64)
        for row in range(6):
            picks = torch.randperm(k, generator=gen)[:3]
            a[row, picks] = terms[torch.randperm(3, generator=gen)] * (1 if row % 2 else -1)
        a = a.float()
        b = torch.ones([k, 21])
        ref64 = torch.mm(a.double(), b.double())
        assert bool((ref64.float().abs() == 1 + 2.0 ** -23).all())
        bound = torch.mm(a.double().abs(), b.double())
        spec, out = r.tensor_out(torch.float32, [6, 21])
        suite.expect(f"mm next to a float32 midpoint, depth {k}", "aten::mm.out", [r.tensor_in(a), r.tensor_in(b), spec],
                     lambda out=out, ref64=ref64, bound=bound, k=k: correctly_rounded(suite, "mm", r.read(out), ref64,
                                                                                      bound, k, True))
        spec, out = r.tensor_out(torch.float32, [21, 6])
        suite.expect(f"linear next to a float32 midpoint, depth {k}", "aten::linear.out",
                     [r.tensor_in(b.t().contiguous()), r.tensor_in(a), {"none": None}, spec],
                     lambda out=out, ref64=ref64, bound=bound, k=k: correctly_rounded(
                         suite, "linear", r.read(out), ref64.t(), bound.t(), k, True))
    # Convolutions of ones whose kernels hold the three terms: depthwise
    # (strided, dilated), grouped, full, over several depth blocks.
    for x_shape, w_shape, stride, padding, dilation, groups in [
            ([1, 8, 9, 10], [8, 1, 3, 3], 1, 1, 1, 8),
            ([1, 8, 12, 11], [8, 1, 3, 3], 2, 1, 1, 8),
            ([1, 4, 13, 12], [4, 1, 3, 3], 1, 2, 2, 4),
            ([1, 8, 9, 9], [12, 2, 3, 3], 1, 1, 1, 4),
            ([1, 64, 7, 7], [9, 64, 3, 3], 1, 1, 1, 1),
            ([1, 16, 6, 7], [10, 16, 1, 1], 1, 0, 1, 1)]:
        x = torch.ones(x_shape)
        taps = w_shape[1] * w_shape[2] * w_shape[3]
        w = torch.zeros([w_shape[0], taps], dtype=torch.float64)
        for oc in range(w_shape[0]):
            picks = torch.randperm(taps, generator=gen)[:3]
            w[oc, picks] = terms[torch.randperm(3, generator=gen)]
        w = w.float().reshape(w_shape)
        ref64 = F.conv2d(x.double(), w.double(), None, stride, padding, dilation, groups)
        bound = F.conv2d(x.double(), w.double().abs(), None, stride, padding, dilation, groups)
        spec, out = r.tensor_out(torch.float32, ref64.shape)
        suite.expect(f"convolution next to a float32 midpoint x{x_shape} w{w_shape} s{stride} p{padding} "
                     f"d{dilation} g{groups}", "aten::convolution.out",
                     [r.tensor_in(x), r.tensor_in(w), {"none": None}, {"int_list": [stride]}, {"int_list": [padding]},
                      {"int_list": [dilation]}, {"bool": False}, {"int_list": [0, 0]}, {"int": groups}, spec],
                     lambda out=out, ref64=ref64, bound=bound, taps=taps: correctly_rounded(
                         suite, "convolution", r.read(out), ref64, bound, taps, True))


def pool_cases(suite, gen):
    r = suite.request
    configs = [
        # shape, kernel, stride, padding, dilation, ceil_mode, layout
        ([1, 1, 4, 4], [2, 2], [], [0, 0], [1, 1], False, CONTIGUOUS),
        ([2, 3, 9, 8], [3, 3], [2, 2], [1, 1], [1, 1], False, CONTIGUOUS),
        ([2, 3, 9, 8], [3, 3], [2, 2], [1, 1], [1, 1], True, CONTIGUOUS),
        ([3, 7, 7], [2, 3], [2, 1], [1, 0], [2, 1], True, CONTIGUOUS),
        ([1, 2, 5, 6], [3], [1], [1], [2], False, CONTIGUOUS),
        ([2, 4, 8, 8], [2, 2], [2, 2], [0, 0], [1, 1], False, CHANNELS_LAST),
        ([1, 3, 10, 7], [3, 2], [3, 2], [1, 1], [1, 2], True, CHANNELS_LAST),
        ([0, 3, 6, 6], [2, 2], [], [0, 0], [1, 1], False, CONTIGUOUS),
    ]
    for shape, kernel, stride, padding, dilation, ceil_mode, layout in configs:
        # Rounded values make ties, which test which index PyTorch keeps.
        x = torch.round(random_values(shape, torch.float32, gen) * 2) / 2
        if layout is CONTIGUOUS and x.numel() >= 8:
            flat = x.view(-1)
            flat[3], flat[4], flat[-1] = float("nan"), -float("inf"), float("nan")
        ref, ref_indices = torch.ops.aten.max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil_mode)
        spec, out = r.tensor_out(torch.float32, ref.shape, layout)
        ind_spec, ind = r.tensor_out(torch.int64, ref.shape, layout)
        x_arg = r.tensor_in(x, layout)

        def check(out=out, ind=ind, ref=ref, ref_indices=ref_indices):
            ok, why = same_bits(r.read(out), ref)
            if not ok:
                return ok, "values: " + why
            ok, why = same_bits(r.read(ind), ref_indices)
            return ok, "" if ok else "indices: " + why
        suite.expect(f"max_pool2d {shape} k{kernel} s{stride} p{padding} d{dilation} ceil={ceil_mode} {layout}",
                     "aten::max_pool2d_with_indices.out",
                     [x_arg, {"int_list": kernel}, {"int_list": stride}, {"int_list": padding},
                      {"int_list": dilation}, {"bool": ceil_mode}, spec, ind_spec], check)


def softmax_cases(suite, gen):
    r = suite.request
    for shape, dim in [([4, 10], -1), ([4, 10], 0), ([2, 3, 50], 2), ([2, 3, 5], 1), ([7], 0), ([], 0),
                       ([3, 0], 1), ([1, 1000], 1)]:
        x = random_values(shape, torch.float32, gen) * 4
        if x.dim() == 2 and x.shape[1] == 10:
            x[0, :] += 80.0  # large inputs: only max subtraction keeps exp finite
            x[1, 3] = -float("inf")
            x[2, 5] = float("nan")
        ref = torch.ops.aten._softmax(x, dim, False)
        spec, out = r.tensor_out(torch.float32, ref.shape)
        suite.expect(f"softmax {shape} dim={dim}", "aten::_softmax.out",
                     [r.tensor_in(x), {"int": dim}, {"bool": False}, spec],
                     lambda out=out, ref=ref: within_bound(r.read(out), ref, ref.abs()))
    x = random_values([2, 3, 4, 5], torch.float32, gen)
    ref = torch.ops.aten._softmax(x, 1, False)
    spec, out = r.tensor_out(torch.float32, ref.shape, CHANNELS_LAST)
    suite.expect("softmax channels-last dim=1", "aten::_softmax.out",
                 [r.tensor_in(x, CHANNELS_LAST), {"int": 1}, {"bool": False}, spec],
                 lambda out=out, ref=ref: within_bound(r.read(out), ref, ref.abs()))

def attention_reference(q, k, v, mask, fill, scale, divisor):
    """softmax(where(mask, q @ k^T * scale / divisor, fill)) @ v, each key/value head repeated for its query heads."""
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    scores = q @ k.transpose(-2, -1) * scale / divisor
    if mask is not None:
        scores = torch.where(mask, scores, fill)
    p = torch.softmax(scores, dim=-1)
    return p @ v, p


def attention_cases(suite, gen):
    """et_portable::attention against PyTorch's own chain: within RTOL of softmax(scores) @ |value|."""
    r = suite.request
    # query [B, H, T, D], key/value heads, positions S, value features, mask shape, scale, divisor, key layout
    for b, h, kv, t, s, d, dv, mask_shape, scale, divisor, key_order in [
            (1, 12, 12, 1, 256, 64, 64, [1, 256], 1.0, 8.0, CONTIGUOUS),
            (1, 8, 2, 5, 13, 21, 7, [5, 13], 1.0, 4.58257569495584, CONTIGUOUS),
            (2, 4, 1, 3, 9, 16, 16, [2, 1, 3, 9], 0.25, 1.0, (0, 1, 3, 2)),
            (1, 2, 2, 4, 6, 8, 5, None, 1.0, 2.0, CONTIGUOUS)]:
        q = random_values([b, h, t, d], torch.float32, gen)
        k = random_values([b, kv, s, d], torch.float32, gen)
        v = random_values([b, kv, s, dv], torch.float32, gen)
        mask = None if mask_shape is None else torch.rand(mask_shape, generator=gen) < 0.8
        if mask is not None:
            mask[..., 0] = True  # every row attends somewhere
        fill = torch.tensor(-float("inf"))
        ref, _ = attention_reference(q, k, v, mask, fill, scale, divisor)
        ref64, p64 = attention_reference(q.double(), k.double(), v.double(), mask, fill.double(), scale, divisor)
        bound = p64 @ v.double().abs().repeat_interleave(h // kv, dim=1)
        spec, out = r.tensor_out(torch.float32, ref.shape)
        masking = [{"none": None}, {"none": None}] if mask is None else [r.tensor_in(mask), r.tensor_in(fill)]
        suite.expect(f"attention q{[b, h, t, d]} kv heads {kv} S {s} Dv {dv} mask {mask_shape} key order {key_order}",
                     "et_portable::attention.out",
                     [r.tensor_in(q), r.tensor_in(k, key_order), r.tensor_in(v)] + masking +
                     [{"double": scale}, {"double": divisor}, spec],
                     lambda out=out, ref=ref, ref64=ref64, bound=bound: both(
                         lambda: within_bound(r.read(out), ref, bound),
                         lambda: within_bound(r.read(out), ref64.float(), bound)))


ARITHMETIC = [torch.float32, torch.float64, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
FLOATING = [torch.float32, torch.float64]


def scalar_arg(value):
    return {"double": value} if isinstance(value, float) else {"int": value}


def expect_same(suite, name, op, args, out, ref):
    suite.expect(name, op, args, lambda: same_bits(suite.request.read(out), ref))


def expect_one_rounding(suite, name, op, args, out, ref, bound):
    eps = torch.finfo(ref.dtype).eps
    suite.expect(name, op, args, lambda: within_bound(suite.request.read(out), ref, bound, eps))


def conversion_cases(suite, gen):
    """copy.out converting to and from float16 (a 16-bit cache), against Tensor.to: ties, the largest half,
    overflow, subnormals, infinities, NaN, signed zeros, and integers and bools both ways."""
    r = suite.request
    edges = torch.tensor([0.0, -0.0, 1.0, -2.5, 1 / 3, 65504.0, 65519.996, 65520.0, -1e6, 6.1035156e-05,
                          6.0e-08, 2.9802322e-08, 2.9802326e-08, 1e-10, 1.00048828125, 1.000732421875,
                          float("inf"), -float("inf"), float("nan")], dtype=torch.float64)
    sources = {torch.float32: torch.cat([edges.float(), random_values([61], torch.float32, gen)]),
               torch.float64: torch.cat([edges, random_values([61], torch.float64, gen)]),
               torch.int64: torch.tensor([0, 1, -7, 2049, 65519, 65520, 70000, -70000]),
               torch.int32: torch.tensor([0, 3, -4097, 4097]), torch.bool: torch.tensor([True, False, True])}
    for src_dtype, src in sources.items():
        ref = src.to(torch.float16)
        spec, out = r.tensor_out(torch.float16, ref.shape)
        expect_same(suite, f"copy {DTYPES[src_dtype]} -> float16", "aten::copy.out",
                    [r.tensor_in(torch.zeros(ref.shape, dtype=torch.float16)), r.tensor_in(src), {"bool": False}, spec],
                    out, ref)
    halves = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(torch.float16)  # every bit pattern
    for out_dtype in (torch.float32, torch.float64):
        ref = halves.to(out_dtype)
        spec, out = r.tensor_out(out_dtype, ref.shape)
        expect_same(suite, f"copy every float16 -> {DTYPES[out_dtype]}", "aten::copy.out",
                    [r.tensor_in(torch.zeros(ref.shape, dtype=out_dtype)), r.tensor_in(halves), {"bool": False}, spec],
                    out, ref)
    finite = torch.tensor([0.0, -0.0, 2.75, -3.5, 1000.0, -60000.0], dtype=torch.float16)
    for out_dtype in (torch.int32, torch.int64, torch.bool):
        ref = finite.to(out_dtype)
        spec, out = r.tensor_out(out_dtype, ref.shape)
        expect_same(suite, f"copy float16 -> {DTYPES[out_dtype]}", "aten::copy.out",
                    [r.tensor_in(torch.zeros(ref.shape, dtype=out_dtype)), r.tensor_in(finite), {"bool": False}, spec],
                    out, ref)
    x = random_values([3, 1, 4], torch.float32, gen)
    ref = x.expand(3, 2, 4).to(torch.float16)
    spec, out = r.tensor_out(torch.float16, ref.shape)
    expect_same(suite, "copy float32 -> float16 broadcast", "aten::copy.out",
                [r.tensor_in(torch.zeros(ref.shape, dtype=torch.float16)), r.tensor_in(x), {"bool": False}, spec],
                out, ref)


def arithmetic_cases(suite, gen):
    """sub, div and the Scalar overloads of add, sub, mul and div."""
    r = suite.request
    shapes = [([2, 3], [2, 3]), ([4, 5], [5]), ([3, 1], [1, 4]), ([], [3]), ([0, 3], [3]), ([8, 33], [33])]
    for dtype in ARITHMETIC:
        floating = dtype.is_floating_point
        for a_shape, b_shape in shapes:
            a = random_values(a_shape, dtype, gen, specials=True)
            b = random_values(b_shape, dtype, gen, specials=True)
            out_shape = torch.broadcast_shapes(a.shape, b.shape)
            for alpha in [1, 2, 0.37] if floating else [1, 3, -2]:
                spec, out = r.tensor_out(dtype, out_shape)
                args = [r.tensor_in(a), r.tensor_in(b), scalar_arg(alpha), spec]
                ref = torch.sub(a, b, alpha=alpha)
                name = f"sub {DTYPES[dtype]} {a_shape}-{b_shape} alpha={alpha}"
                if alpha == 1 or not floating:
                    expect_same(suite, name, "aten::sub.out", args, out, ref)
                else:
                    bound = a.double().abs() + 2 * abs(alpha) * b.double().abs()
                    expect_one_rounding(suite, name, "aten::sub.out", args, out, ref, bound)
            if floating:
                spec, out = r.tensor_out(dtype, out_shape)
                expect_same(suite, f"div {DTYPES[dtype]} {a_shape}/{b_shape}", "aten::div.out",
                            [r.tensor_in(a), r.tensor_in(b), spec], out, torch.div(a, b))
        x = random_values([3, 7, 5], dtype, gen, specials=True)
        # Integral operands beyond the dtype wrap, as aten's wrapped numbers do.
        others = [2.5, -0.1, 3, 1e300, -7] if floating else [5, -3, 300, -129, 2**40 + 3]
        for other in others:
            for alpha in [1, 2, 0.5] if floating else [1, -3]:
                for op, fn in [("add", torch.ops.aten.add.Scalar), ("sub", torch.ops.aten.sub.Scalar)]:
                    ref = fn(x, other, alpha)
                    spec, out = r.tensor_out(dtype, x.shape)
                    args = [r.tensor_in(x), scalar_arg(other), scalar_arg(alpha), spec]
                    name = f"{op}.Scalar {DTYPES[dtype]} other={other} alpha={alpha}"
                    converted = torch.tensor(other, dtype=torch.float64).to(dtype).double() if floating else 0
                    if alpha == 1 or not floating or not torch.isfinite(torch.as_tensor(converted)):
                        expect_same(suite, name, f"aten::{op}.Scalar_out", args, out, ref)
                    else:
                        bound = x.double().abs() + 2 * abs(alpha) * abs(float(converted))
                        expect_one_rounding(suite, name, f"aten::{op}.Scalar_out", args, out, ref, bound)
            spec, out = r.tensor_out(dtype, x.shape)
            expect_same(suite, f"mul.Scalar {DTYPES[dtype]} other={other}", "aten::mul.Scalar_out",
                        [r.tensor_in(x), scalar_arg(other), spec], out, torch.ops.aten.mul.Scalar(x, other))
            if floating:
                spec, out = r.tensor_out(dtype, x.shape)
                expect_same(suite, f"div.Scalar {DTYPES[dtype]} other={other}", "aten::div.Scalar_out",
                            [r.tensor_in(x), scalar_arg(other), spec], out, torch.ops.aten.div.Scalar(x, other))
    x = random_values([2, 3, 4, 5], torch.float32, gen, specials=True)
    y = random_values([2, 3, 4, 5], torch.float32, gen, specials=True)
    for op, ref in [("aten::sub.out", torch.sub(x, y)), ("aten::div.out", torch.div(x, y))]:
        spec, out = r.tensor_out(torch.float32, x.shape, CHANNELS_LAST)
        args = [r.tensor_in(x, CHANNELS_LAST), r.tensor_in(y)] + ([{"int": 1}] if op == "aten::sub.out" else [])
        expect_same(suite, f"{op} channels-last", op, args + [spec], out, ref)


def activation_inputs(dtype, gen):
    """Values across the whole range that matters to the activations: the
    thresholds of hardswish (-3, 3), saturation of sigmoid and tanh, tiny
    and subnormal values, and the special values."""
    parts = [
        torch.randn(20000, generator=gen, dtype=torch.float64) * 3,
        torch.randn(5000, generator=gen, dtype=torch.float64) * 30,
        (torch.rand(20000, generator=gen, dtype=torch.float64) - 0.5) * 1500,
        torch.logspace(-45, 1, 2000, dtype=torch.float64) * torch.where(
            torch.rand(2000, generator=gen) < 0.5, -1.0, 1.0).double(),
        torch.linspace(-3.5, 3.5, 4001, dtype=torch.float64),
        torch.tensor([0.0, -0.0, 3.0, -3.0, 6.0, 1e-300, -1e-300, 88.72, -88.72, 103.9, -103.9, 709.7, -709.7,
                      745.2, -745.2, float("inf"), -float("inf"), float("nan")], dtype=torch.float64),
    ]
    return torch.cat(parts).to(dtype)


def activation_cases(suite, gen):
    r = suite.request
    for dtype in FLOATING:
        x = activation_inputs(dtype, gen)
        exact = [
            ("hardswish", [], torch.nn.functional.hardswish(x)),
            ("hardsigmoid", [], torch.nn.functional.hardsigmoid(x)),
            ("relu", [], torch.relu(x)),
        ]
        for slope in [0.01, 0.2, -1.5, 0.0, 3]:
            exact.append(("leaky_relu", [scalar_arg(slope)], torch.ops.aten.leaky_relu(x, slope)))
        for low, high in [(-1, 1), (0, 6), (0.0, 6.0), (-2.5, 0.25), (2, -2)]:
            exact.append(("hardtanh", [scalar_arg(low), scalar_arg(high)], torch.ops.aten.hardtanh(x, low, high)))
        for low, high in [(-1.5, None), (None, 0.7), (-0.5, 2), (3, -3), (0, None)]:
            args = [scalar_arg(v) if v is not None else {"none": None} for v in (low, high)]
            exact.append(("clamp", args, torch.clamp(x, low, high)))
        for op, args, ref in exact:
            spec, out = r.tensor_out(dtype, x.shape)
            expect_same(suite, f"{op} {DTYPES[dtype]} {args}", f"aten::{op}.out", [r.tensor_in(x)] + args + [spec],
                        out, ref)
        for op, ref in [("sigmoid", torch.sigmoid(x)), ("tanh", torch.tanh(x))]:
            spec, out = r.tensor_out(dtype, x.shape)
            suite.expect(f"{op} {DTYPES[dtype]}", f"aten::{op}.out", [r.tensor_in(x), spec],
                         lambda op=op, out=out, ref=ref: within_ulps(suite, f"{op} {DTYPES[ref.dtype]}",
                                                                     r.read(out), ref, ULPS[op]))
    for dtype in [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]:
        x = random_values([4, 33], dtype, gen)
        for low, high in [(0, 6), (-100, 100), (-1.5, 2.7), (3, -3)]:
            if dtype == torch.uint8 and min(low, high) < 0:
                continue
            ref = torch.ops.aten.hardtanh(x, low, high)
            spec, out = r.tensor_out(dtype, x.shape)
            expect_same(suite, f"hardtanh {DTYPES[dtype]} {low},{high}", "aten::hardtanh.out",
                        [r.tensor_in(x), scalar_arg(low), scalar_arg(high), spec], out, ref)
        for low, high in [(-5, None), (None, 9), (-20, 20), (50, -50)]:
            ref = torch.clamp(x, low, high)
            spec, out = r.tensor_out(dtype, x.shape)
            args = [scalar_arg(v) if v is not None else {"none": None} for v in (low, high)]
            expect_same(suite, f"clamp {DTYPES[dtype]} {low},{high}", "aten::clamp.out",
                        [r.tensor_in(x)] + args + [spec], out, ref)
    x = activation_inputs(torch.float32, gen)[:4 * 5 * 6 * 7].reshape(4, 5, 6, 7)
    for op, args, ref in [("hardswish", [], torch.nn.functional.hardswish(x)),
                          ("hardtanh", [{"int": 0}, {"int": 6}], torch.nn.functional.relu6(x)),
                          ("sigmoid", [], torch.sigmoid(x))]:
        spec, out = r.tensor_out(torch.float32, x.shape)
        args = [r.tensor_in(x, CHANNELS_LAST)] + args + [spec]
        if op == "sigmoid":
            suite.expect(f"{op} channels-last", f"aten::{op}.out", args,
                         lambda out=out, ref=ref: within_ulps(suite, "sigmoid float32", r.read(out), ref,
                                                              ULPS["sigmoid"]))
        else:
            expect_same(suite, f"{op} channels-last", f"aten::{op}.out", args, out, ref)


def average_pool_cases(suite, gen):
    r = suite.request
    configs = [
        # shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override, layout
        ([1, 1, 4, 4], [2, 2], [], [0, 0], False, True, None, CONTIGUOUS),
        ([2, 3, 9, 8], [3, 3], [2, 2], [1, 1], False, True, None, CONTIGUOUS),
        ([2, 3, 9, 8], [3, 3], [2, 2], [1, 1], True, False, None, CONTIGUOUS),
        ([2, 3, 9, 8], [3, 3], [2, 2], [1, 1], True, True, None, CONTIGUOUS),
        ([3, 7, 7], [2, 3], [2, 1], [1, 0], True, True, None, CONTIGUOUS),
        ([1, 2, 5, 6], [3], [1], [1], False, False, None, CONTIGUOUS),
        ([2, 4, 8, 8], [2, 2], [2, 2], [0, 0], False, True, 3, CHANNELS_LAST),
        ([1, 3, 10, 7], [3, 2], [3, 2], [1, 1], True, False, None, CHANNELS_LAST),
        ([1, 8, 7, 7], [7, 7], [], [0], False, True, None, CONTIGUOUS),
        ([2, 2, 6, 6], [3, 3], [1, 1], [1, 1], False, True, -2, CONTIGUOUS),
        ([0, 3, 6, 6], [2, 2], [], [0, 0], False, True, None, CONTIGUOUS),
    ]
    for shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor, layout in configs:
        for dtype in [torch.float32, torch.float64, torch.int64]:
            x = random_values(shape, dtype, gen) if dtype != torch.int64 else \
                torch.randint(-1000, 1000, shape, generator=gen)
            ref = torch.ops.aten.avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor)
            spec, out = r.tensor_out(dtype, ref.shape, layout)
            divisor_arg = {"none": None} if divisor is None else {"int": divisor}
            expect_same(suite, f"avg_pool2d {DTYPES[dtype]} {shape} k{kernel} s{stride} p{padding} ceil={ceil_mode} "
                        f"pad={count_include_pad} div={divisor} {layout}", "aten::avg_pool2d.out",
                        [r.tensor_in(x, layout), {"int_list": kernel}, {"int_list": stride}, {"int_list": padding},
                         {"bool": ceil_mode}, {"bool": count_include_pad}, divisor_arg, spec], out, ref)
    for shape, size, layout in [([2, 3, 9, 9], [1, 1], CONTIGUOUS), ([2, 3, 9, 9], [4, 3], CONTIGUOUS),
                                ([1, 2, 7, 5], [5, 7], CONTIGUOUS), ([3, 7, 7], [2, 2], CONTIGUOUS),
                                ([2, 16, 7, 7], [1, 1], CHANNELS_LAST), ([1, 4, 10, 13], [3, 5], CHANNELS_LAST),
                                ([0, 3, 6, 6], [2, 2], CONTIGUOUS), ([1, 0, 4, 4], [2, 2], CONTIGUOUS),
                                ([1, 2, 4, 4], [0, 3], CONTIGUOUS)]:
        for dtype in FLOATING:
            x = random_values(shape, dtype, gen)
            ref = torch.ops.aten._adaptive_avg_pool2d(x, size)
            spec, out = r.tensor_out(dtype, ref.shape, layout)
            expect_same(suite, f"adaptive_avg_pool2d {DTYPES[dtype]} {shape}->{size} {layout}",
                        "aten::adaptive_avg_pool2d.out", [r.tensor_in(x, layout), {"int_list": size}, spec], out, ref)


def trailing_dims(shape, dim):
    """Whether `dim` (None or [] is every dimension) names the last len(dim) dimensions of `shape`."""
    if not dim:
        return True
    wrapped = sorted(d % len(shape) for d in dim) if shape else []
    return wrapped == list(range(len(shape) - len(wrapped), len(shape)))


def mean_cases(suite, gen):
    r = suite.request
    configs = [
        # global average pooling sizes (aten's cascade: short rows, 8-float
        # vectors, blocks of 16 and the next level)
        ([1, 72, 16, 16], [-1, -2], True, None, torch.float32, CONTIGUOUS),
        ([2, 40, 7, 7], [-1, -2], True, None, torch.float32, CONTIGUOUS),
        ([3, 5, 2, 3], [2, 3], False, None, torch.float32, CONTIGUOUS),
        ([1, 4, 300, 300], [-1, -2], True, None, torch.float32, CONTIGUOUS),
        # shape, dim, keepdim, dtype (None: out's), out dtype, layout
        ([2, 3, 5, 7], [-1, -2], True, None, torch.float32, CONTIGUOUS),
        ([2, 16, 7, 7], [2, 3], False, None, torch.float32, CHANNELS_LAST),
        ([2, 3, 5, 7], None, False, None, torch.float32, CONTIGUOUS),
        ([2, 3, 5, 7], [], True, None, torch.float32, CONTIGUOUS),
        ([4, 1000], [1], False, None, torch.float32, CONTIGUOUS),
        ([3, 100000], [-1], True, None, torch.float32, CONTIGUOUS),
        ([6, 5, 4], [0, 2], False, None, torch.float64, CONTIGUOUS),
        ([6, 5, 4], [1], True, torch.float64, torch.float64, CONTIGUOUS),
        ([3, 0, 2], [1], False, None, torch.float32, CONTIGUOUS),
        ([], [0], False, None, torch.float32, CONTIGUOUS),
        ([5, 6], [0], False, None, torch.float32, CONTIGUOUS),
    ]
    for shape, dim, keepdim, dtype, out_dtype, layout in configs:
        for in_dtype in [torch.float32, torch.float64, torch.int32]:
            if in_dtype == torch.int32 and dtype is None:
                continue
            if in_dtype == torch.int32:
                x = torch.randint(-10**6, 10**6, shape, generator=gen, dtype=torch.int32)
            else:
                x = random_values(shape, in_dtype, gen) + (100 if len(shape) == 2 else 0)
            ref = torch.ops.aten.mean(x.to(out_dtype), dim, keepdim)
            scale = torch.ops.aten.mean(x.double().abs(), dim, keepdim)
            spec, out = r.tensor_out(out_dtype, ref.shape)
            dtype_arg = {"none": None} if dtype is None else {"scalar_type": DTYPES[dtype]}
            dim_arg = {"none": None} if dim is None else {"int_list": dim}
            # A float32 mean over trailing dimensions of a contiguous tensor
            # follows aten's order of additions: PyTorch's own bits under its
            # default and avx2 capabilities (8-float vectors).
            exact = (in_dtype == out_dtype == torch.float32 and layout == CONTIGUOUS and dtype is None and
                     trailing_dims(shape, dim) and aten_capabilities.active(torch) in ("NO AVX", "AVX2"))
            suite.expect(f"mean {DTYPES[in_dtype]}->{DTYPES[out_dtype]} {shape} dim={dim} keepdim={keepdim} {layout}"
                         + (" (bit for bit)" if exact else ""),
                         "aten::mean.out", [r.tensor_in(x, layout), dim_arg, {"bool": keepdim}, dtype_arg, spec],
                         (lambda out=out, ref=ref: same_bits(r.read(out), ref)) if exact else
                         (lambda out=out, ref=ref, scale=scale: within_ulps_of_scale(
                             suite, f"mean {DTYPES[ref.dtype]}", r.read(out), ref, scale, MEAN_ULPS)))
    x = random_values([2, 3, 4], torch.float32, gen, specials=True)
    ref = torch.mean(x, [2])
    spec, out = r.tensor_out(torch.float32, ref.shape)
    suite.expect("mean with NaN and infinities", "aten::mean.out",
                 [r.tensor_in(x), {"int_list": [2]}, {"bool": False}, {"none": None}, spec],
                 lambda: within_ulps_of_scale(suite, "mean float32", r.read(out), ref,
                                              torch.mean(x.double().abs(), [2]), MEAN_ULPS))


def more_copy_cases(suite, gen):
    """slice_copy, constant_pad_nd, cat and upsample_nearest2d."""
    r = suite.request
    for dtype in [torch.float32, torch.float16, torch.int8, torch.int64, torch.bool]:
        x = random_values([4, 10, 6], dtype, gen) if dtype != torch.bool else \
            torch.rand([4, 10, 6], generator=gen) > 0.5
        for dim, start, end, step in [(1, None, None, 1), (1, 2, 8, 3), (1, -3, None, 2), (-1, 1, -1, 2),
                                      (0, 5, 2, 1), (1, -100, 100, 4), (2, None, 3, 1), (0, 1, 2, 1),
                                      (1, 3, 2**62, 1), (2, -2**62, 4, 7)]:
            ref = torch.ops.aten.slice_copy.Tensor(x, dim, start, end, step)
            spec, out = r.tensor_out(dtype, ref.shape)
            args = [r.tensor_in(x), {"int": dim}] + [{"none": None} if v is None else {"int": v} for v in (start, end)]
            expect_same(suite, f"slice_copy {DTYPES[dtype]} dim={dim} {start}:{end}:{step}",
                        "aten::slice_copy.Tensor_out", args + [{"int": step}, spec], out, ref)
        for pad in [[1, 2], [1, 1, 2, 0], [-1, 2, 0, -2], [0, 0, 1, 1, 2, 2], [], [-2, -3]]:
            values = [0, 1.5, -3] if dtype != torch.bool else [0, 1]
            for value in values:
                ref = torch.constant_pad_nd(x, pad, value)
                spec, out = r.tensor_out(dtype, ref.shape)
                expect_same(suite, f"constant_pad_nd {DTYPES[dtype]} {pad} value={value}", "aten::constant_pad_nd.out",
                            [r.tensor_in(x), {"int_list": pad}, scalar_arg(value), spec], out, ref)
    x = random_values([2, 3, 5, 4], torch.float32, gen)
    ref = torch.constant_pad_nd(x, [1, 1, 1, 1], 0.0)
    spec, out = r.tensor_out(torch.float32, ref.shape, CHANNELS_LAST)
    expect_same(suite, "constant_pad_nd channels-last", "aten::constant_pad_nd.out",
                [r.tensor_in(x, CHANNELS_LAST), {"int_list": [1, 1, 1, 1]}, {"int": 0}, spec], out, ref)
    ref = torch.ops.aten.slice_copy.Tensor(x, 1, 1, 3, 1)
    spec, out = r.tensor_out(torch.float32, ref.shape, CHANNELS_LAST)
    expect_same(suite, "slice_copy channels-last", "aten::slice_copy.Tensor_out",
                [r.tensor_in(x, CHANNELS_LAST), {"int": 1}, {"int": 1}, {"int": 3}, {"int": 1}, spec], out, ref)
    for dtype in [torch.float32, torch.int8, torch.float16, torch.bool]:
        for shapes, dim in [([[2, 3], [4, 3]], 0), ([[2, 3], [2, 1], [2, 0], [2, 5]], 1), ([[1, 2, 2, 2], [1, 3, 2, 2]], 1),
                            ([[0], [3, 2], [0], [1, 2]], 0), ([[2, 2], [2, 2]], -1), ([[0], [0]], 0)]:
            parts = [random_values(shape, dtype, gen) if dtype != torch.bool else
                     torch.rand(shape, generator=gen) > 0.5 for shape in shapes]
            ref = torch.cat(parts, dim)
            spec, out = r.tensor_out(dtype, ref.shape)
            expect_same(suite, f"cat {DTYPES[dtype]} {shapes} dim={dim}", "aten::cat.out",
                        [{"tensor_list": [r.tensor_in(p)["tensor"] for p in parts]}, {"int": dim}, spec], out, ref)
    parts = [random_values([2, c, 3, 3], torch.float32, gen) for c in (1, 4, 2)]
    ref = torch.cat(parts, 1)
    spec, out = r.tensor_out(torch.float32, ref.shape, CHANNELS_LAST)
    expect_same(suite, "cat channels-last along channels", "aten::cat.out",
                [{"tensor_list": [r.tensor_in(p, CHANNELS_LAST)["tensor"] for p in parts]}, {"int": 1}, spec], out, ref)
    for shape, size, scales, layout in [([1, 2, 3, 4], [6, 8], (None, None), CONTIGUOUS),
                                        ([2, 3, 4, 5], [7, 3], (None, None), CONTIGUOUS),
                                        ([1, 1, 5, 5], [5, 5], (None, None), CONTIGUOUS),
                                        ([1, 2, 2, 3], [3, 5], (1.3, 2.2), CONTIGUOUS),
                                        ([1, 2, 2, 3], [3, 5], (-1.0, 0.0), CONTIGUOUS),
                                        ([2, 3, 7, 6], [13, 11], (None, None), CHANNELS_LAST),
                                        ([0, 3, 4, 4], [8, 8], (None, None), CONTIGUOUS)]:
        for dtype in [torch.float32, torch.float64, torch.uint8]:
            x = random_values(shape, dtype, gen)
            ref = torch.ops.aten.upsample_nearest2d(x, size, *scales)
            spec, out = r.tensor_out(dtype, ref.shape, layout)
            scale_args = [{"none": None} if v is None else {"double": v} for v in scales]
            expect_same(suite, f"upsample_nearest2d {DTYPES[dtype]} {shape}->{size} scales={scales} {layout}",
                        "aten::upsample_nearest2d.out",
                        [r.tensor_in(x, layout), {"int_list": size}] + scale_args + [spec], out, ref)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    aten_capabilities.check_active(torch)
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    suite = Suite(sys.argv[1])
    for cases in (elementwise_cases, arithmetic_cases, activation_cases, copy_cases, more_copy_cases, conversion_cases, matmul_cases, linear_cases,
                  conv_cases, midpoint_cases, pool_cases, average_pool_cases, mean_cases, softmax_cases,
                  attention_cases):
        cases(suite, gen)
    return suite.run()


if __name__ == "__main__":
    sys.exit(main())
