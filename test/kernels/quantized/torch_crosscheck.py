#!/usr/bin/env python3
"""Bit-exact cross-check of the streaming quantized kernels against PyTorch.

Usage: torch_crosscheck.py LIBRARY
  LIBRARY is libet_kernels_quantized.so. The script loads it with ctypes,
  takes its manifest (the loadable-library entry point of et_ops/abi.h) and
  calls the C-ABI kernels on numpy arrays, so the C argument unpacking is
  exercised too. It needs numpy and torch (Debian's /usr/bin/python3).
  Without ATEN_CPU_CAPABILITY in its environment it runs itself once per
  capability this CPU supports (test/aten_capabilities.py): PyTorch's
  results must match under every one of them.

Two kinds of comparison, each only where PyTorch computes the same thing:

1. PyTorch's own quantized tensors (torch.quantize_per_tensor,
   torch.quantize_per_channel, Tensor.dequantize). ATen quantizes with
   inv = 1.0f / (float)scale and adds the zero point in integers, unlike the
   reference (fl32(fl64(1/scale)), zero point added in binary32, D1). The two
   agree when the scale is a power of two (1/scale is exact everywhere) and
   |x / scale| <= 2^24, so quantize is compared only with power-of-two scales,
   finite inputs and moderate ranges. ATen dequantizes as
   fl32((q - zp) * fl32(scale)), which equals the reference for 8-bit and
   16-bit values with small zero points, and for per-channel f64 scales that
   are binary32 values (then fl64(d * s) is exact), so dequantize is compared
   with any scale (per tensor) or with f32-valued scales (per channel).

2. The decomposed reference expressions of torch/ao/quantization/fx/
   _decomposed.py (which torch 1.13 does not ship), evaluated with torch
   1.13 tensor ops: x * (1.0 / scale), round, + zp, clamp, cast; and
   (q - zp) * scale. These are the reference's definitions (§3, §4, §8), so
   they are compared with random scales and zero points. Excluded: NaN
   inputs (PyTorch casts NaN to an integer: undefined), the full int32 range
   (PyTorch clamps with fl32(2^31 - 1) = 2^31 and overflows, D5), and f16
   per-tensor dequantize with |q|, |zp| or |q - zp| > 2048 (D7).
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import aten_capabilities  # noqa: E402  (test/aten_capabilities.py)

if __name__ == "__main__" and aten_capabilities.requested() is None:
    sys.exit(aten_capabilities.run_under_each())

import numpy as np  # noqa: E402
import torch  # noqa: E402

# ---- the C ABI (et_ops/abi.h) ----

DTYPES = {
    np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2,
    np.dtype(np.int8): 4, np.dtype(np.uint8): 5, np.dtype(np.int16): 6,
    np.dtype(np.uint16): 7, np.dtype(np.int32): 8, np.dtype(np.int64): 9,
}
VALUE_NONE, VALUE_INT, VALUE_DOUBLE, VALUE_SCALAR_TYPE, VALUE_TENSOR = 0, 1, 2, 4, 6


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("sizes", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("dim_order", ctypes.POINTER(ctypes.c_uint8)),
                ("numel", ctypes.c_int64), ("dtype", ctypes.c_int32), ("dim", ctypes.c_int32)]


class IntList(ctypes.Structure):
    _fields_ = [("data", ctypes.POINTER(ctypes.c_int64)), ("size", ctypes.c_int64)]


class ValueUnion(ctypes.Union):
    _fields_ = [("i", ctypes.c_int64), ("d", ctypes.c_double), ("b", ctypes.c_int64),
                ("scalar_type", ctypes.c_int64), ("int_list", IntList), ("tensor", ctypes.POINTER(Tensor))]


class Value(ctypes.Structure):
    _fields_ = [("tag", ctypes.c_int32), ("reserved", ctypes.c_int32), ("u", ValueUnion)]


class Context(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("failed", ctypes.c_int32), ("message", ctypes.c_char * 1024)]


KernelFn = ctypes.CFUNCTYPE(None, ctypes.POINTER(Context), ctypes.POINTER(ctypes.POINTER(Value)), ctypes.c_size_t)


class Record(ctypes.Structure):
    _fields_ = [("op", ctypes.c_char_p), ("key", ctypes.c_char_p), ("fn", KernelFn), ("schema", ctypes.c_char_p),
                ("fingerprint", ctypes.c_char_p)]


class Manifest(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("record_size", ctypes.c_uint32), ("component", ctypes.c_char_p),
                ("version", ctypes.c_char_p), ("records", ctypes.POINTER(Record)), ("record_count", ctypes.c_size_t)]


class Kernels:
    """The library's C-ABI kernels, callable with numpy arrays and Python scalars."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        entry = self.lib.et_ops_kernel_library_manifest
        entry.restype = ctypes.POINTER(Manifest)
        manifest = entry().contents
        assert manifest.record_size >= ctypes.sizeof(Record), "record size smaller than et_ops/abi.h's"
        base = ctypes.cast(manifest.records, ctypes.c_void_p).value
        records = [Record.from_address(base + i * manifest.record_size) for i in range(manifest.record_count)]
        self.fns = {record.op.decode(): record.fn for record in records}

    def call(self, op, *args):
        keep = []
        values = (Value * len(args))()
        for value, arg in zip(values, args):
            if arg is None:
                value.tag = VALUE_NONE
            elif isinstance(arg, np.ndarray):
                value.tag = VALUE_TENSOR
                value.u.tensor = ctypes.pointer(self._tensor(arg, keep))
                keep.append(value.u.tensor)
            elif isinstance(arg, ScalarType):
                value.tag = VALUE_SCALAR_TYPE
                value.u.scalar_type = DTYPES[np.dtype(arg.dtype)]
            elif isinstance(arg, float):
                value.tag = VALUE_DOUBLE
                value.u.d = arg
            else:
                value.tag = VALUE_INT
                value.u.i = int(arg)
        pointers = (ctypes.POINTER(Value) * len(args))(*[ctypes.pointer(v) for v in values])
        context = Context(ctypes.sizeof(Context), 0, b"")
        self.fns[op](ctypes.byref(context), pointers, len(args))
        if context.failed:
            raise RuntimeError(f"{op}: {context.message.decode()}")

    @staticmethod
    def _tensor(array, keep):
        itemsize = array.dtype.itemsize
        strides = [s // itemsize for s in array.strides]
        order = sorted(range(array.ndim), key=lambda d: -strides[d])
        sizes = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
        stride_array = (ctypes.c_int64 * max(array.ndim, 1))(*strides)
        dim_order = (ctypes.c_uint8 * max(array.ndim, 1))(*order)
        keep.extend([sizes, stride_array, dim_order, array])
        return Tensor(array.ctypes.data, sizes, stride_array, dim_order, array.size, DTYPES[array.dtype], array.ndim)


class ScalarType:
    def __init__(self, dtype):
        self.dtype = dtype


# ---- helpers ----

RNG = np.random.default_rng(20240917)
FAILURES = []
COMPARED = {}

BOUNDS = {np.uint8: (0, 255), np.int8: (-128, 127), np.int16: (-32768, 32767), np.uint16: (0, 65535),
          np.int32: (-2**31, 2**31 - 1)}
TORCH_DTYPES = {np.uint8: torch.uint8, np.int8: torch.int8, np.int16: torch.int16, np.int32: torch.int32,
                np.float32: torch.float32, np.float64: torch.float64, np.float16: torch.float16}


def compare(name, got, want):
    got = np.ascontiguousarray(got)
    want = np.ascontiguousarray(np.asarray(want).astype(got.dtype))
    COMPARED[name] = COMPARED.get(name, 0) + got.size
    same = got.view(np.uint8).reshape(-1) == want.view(np.uint8).reshape(-1)
    if not same.all():
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        i = int(bad[0]) if bad.size else 0
        FAILURES.append(f"{name}: {bad.size} of {got.size} differ; first at {i}: "
                        f"got {got.reshape(-1)[i]!r}, torch {want.reshape(-1)[i]!r}")


def layout(array):
    """The same logical array in a random dense layout (C, Fortran or permuted)."""
    if array.ndim < 2 or RNG.integers(3) == 0:
        return np.ascontiguousarray(array)
    perm = RNG.permutation(array.ndim)
    return np.ascontiguousarray(array.transpose(perm)).transpose(np.argsort(perm))


def empty_like_layout(shape, dtype):
    return layout(np.zeros(shape, dtype=dtype))


def random_shape():
    rank = int(RNG.integers(1, 4))
    return tuple(int(RNG.integers(1, 40)) for _ in range(rank))


def random_scale(power_of_two=False):
    """Log-uniform, or a power of two (always when asked, else one time in
    three) so that (k + 0.5) * scale inputs are exact ties."""
    if power_of_two or RNG.integers(3) == 0:
        return float(2.0 ** int(RNG.integers(-10, 4)))
    return float(np.exp(RNG.uniform(np.log(1e-4), np.log(1e2))))


def inputs_for(shape, scale, zp, qmin, qmax, dtype=np.float32):
    lo = (qmin - zp - 10) * scale
    hi = (qmax - zp + 10) * scale
    x = RNG.uniform(lo, hi, size=shape)
    ties = (RNG.integers(-200, 200, size=shape) + 0.5) * scale
    x = np.where(RNG.integers(4, size=shape) == 0, ties, x)
    if dtype == np.float16:
        x = np.clip(x, -65504, 65504)
    return x.astype(dtype)


# ---- 1. PyTorch's quantized tensors ----

def check_builtin_quantize_per_tensor(k):
    for qdtype, npdtype in [(torch.quint8, np.uint8), (torch.qint8, np.int8), (torch.qint32, np.int32)]:
        for _ in range(20):
            shape = random_shape()
            scale = random_scale(power_of_two=True)
            qmin, qmax = BOUNDS[npdtype] if npdtype is not np.int32 else (-2**20, 2**20)
            zp = int(RNG.integers(qmin, qmax + 1)) if npdtype is not np.int32 else int(RNG.integers(-1000, 1000))
            x = inputs_for(shape, scale, zp, qmin, qmax)
            out = empty_like_layout(shape, npdtype)
            lo, hi = BOUNDS[npdtype]
            k.call("quantized_decomposed::quantize_per_tensor.out", layout(x), scale, zp, lo, hi,
                   ScalarType(npdtype), out)
            want = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, qdtype).int_repr().numpy()
            compare(f"torch.quantize_per_tensor {qdtype}", out, want)


def check_builtin_quantize_per_channel(k):
    for qdtype, npdtype in [(torch.quint8, np.uint8), (torch.qint8, np.int8)]:
        for _ in range(20):
            shape = random_shape()
            axis = int(RNG.integers(len(shape)))
            qmin, qmax = BOUNDS[npdtype]
            scales = np.array([random_scale(power_of_two=True) for _ in range(shape[axis])])
            zps = RNG.integers(qmin, qmax + 1, size=shape[axis]).astype(np.int64)
            x = inputs_for(shape, float(scales.mean()), int(zps.mean()), qmin, qmax)
            out = empty_like_layout(shape, npdtype)
            k.call("quantized_decomposed::quantize_per_channel.out", layout(x), scales, zps, axis, qmin, qmax,
                   ScalarType(npdtype), out)
            want = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(scales), torch.from_numpy(zps),
                                              axis, qdtype).int_repr().numpy()
            compare(f"torch.quantize_per_channel {qdtype}", out, want)


def check_builtin_dequantize(k):
    for qdtype, npdtype in [(torch.quint8, np.uint8), (torch.qint8, np.int8), (torch.qint32, np.int32)]:
        for _ in range(20):
            shape = random_shape()
            scale = random_scale()
            lo, hi = BOUNDS[npdtype]
            zp = int(RNG.integers(lo, hi + 1)) if npdtype is not np.int32 else int(RNG.integers(-1000, 1000))
            vlo, vhi = (lo, hi) if npdtype is not np.int32 else (-2**24, 2**24)
            q = RNG.integers(vlo, vhi + 1, size=shape).astype(npdtype)
            tq = torch._make_per_tensor_quantized_tensor(torch.from_numpy(q), scale, zp)
            assert tq.dtype == qdtype
            out = empty_like_layout(shape, np.float32)
            k.call("quantized_decomposed::dequantize_per_tensor.out", layout(q), scale, zp, lo, hi,
                   ScalarType(npdtype), None, out)
            compare(f"Tensor.dequantize {qdtype}", out, tq.dequantize().numpy())
        if npdtype is np.int32:
            continue
        for _ in range(20):
            shape = random_shape()
            axis = int(RNG.integers(len(shape)))
            lo, hi = BOUNDS[npdtype]
            scales = np.array([float(np.float32(random_scale())) for _ in range(shape[axis])])
            zps = RNG.integers(lo, hi + 1, size=shape[axis]).astype(np.int64)
            q = RNG.integers(lo, hi + 1, size=shape).astype(npdtype)
            tq = torch._make_per_channel_quantized_tensor(torch.from_numpy(q), torch.from_numpy(scales),
                                                          torch.from_numpy(zps), axis)
            out = empty_like_layout(shape, np.float32)
            k.call("quantized_decomposed::dequantize_per_channel.out", layout(q), scales, zps, axis, lo, hi,
                   ScalarType(npdtype), None, out)
            compare(f"Tensor.dequantize per-channel {qdtype}", out, tq.dequantize().numpy())


# ---- 2. the decomposed reference expressions ----

def quantize_reference(x, inv, zp, qmin, qmax, npdtype, zp_before_round=False):
    t = x * inv
    t = torch.round(t + zp) if zp_before_round else torch.round(t) + zp
    # Through int64: torch 1.13 has no uint16, and the clamped values are exact.
    return torch.clamp(t, qmin, qmax).to(torch.int64).numpy().astype(npdtype)


def random_range(npdtype):
    lo, hi = BOUNDS[npdtype]
    if npdtype is np.int32:
        lo, hi = -2**30, 2**30
    if RNG.integers(2):
        a, b = sorted(RNG.integers(lo, hi + 1, size=2))
        return int(a), int(b)
    return lo, hi


def check_reference_quantize(k):
    for npdtype in [np.uint8, np.int8, np.int16, np.uint16, np.int32]:
        for in_dtype in [np.float32, np.float16, np.float64]:
            for _ in range(6):
                shape = random_shape()
                qmin, qmax = random_range(npdtype)
                scale = random_scale()
                zp = int(RNG.integers(qmin, qmax + 1))
                x = inputs_for(shape, scale, zp, qmin, qmax, in_dtype)
                out = empty_like_layout(shape, npdtype)
                k.call("quantized_decomposed::quantize_per_tensor.out", layout(x), scale, zp, qmin, qmax,
                       ScalarType(npdtype), out)
                tx = torch.from_numpy(x)
                if in_dtype == np.float64:  # ET's f64 rule: product in binary64, rounded to binary32
                    v = (tx * float(np.float32(1.0 / scale))).to(torch.float32)
                    want = quantize_reference(v, 1.0, zp, qmin, qmax, npdtype)
                else:
                    want = quantize_reference(tx.to(torch.float32), 1.0 / scale, zp, qmin, qmax, npdtype)
                compare(f"reference quantize_per_tensor {np.dtype(in_dtype).name}->{np.dtype(npdtype).name}", out, want)

                axis = int(RNG.integers(len(shape)))
                scales = np.array([random_scale() for _ in range(shape[axis])])
                zps = RNG.integers(qmin, qmax + 1, size=shape[axis]).astype(np.int64)
                view = [1] * len(shape)
                view[axis] = shape[axis]
                out = empty_like_layout(shape, npdtype)
                k.call("quantized_decomposed::quantize_per_channel.out", layout(x), scales, zps, axis, qmin, qmax,
                       ScalarType(npdtype), out)
                inv = 1.0 / torch.from_numpy(scales).reshape(view)
                want = quantize_reference(tx.to(torch.float32) if in_dtype == np.float16 else tx, inv,
                                          torch.from_numpy(zps).reshape(view), qmin, qmax, npdtype)
                compare(f"reference quantize_per_channel {np.dtype(in_dtype).name}->{np.dtype(npdtype).name}", out, want)

                token_shape = shape[:-1] + (1,)
                scales = np.array([random_scale() for _ in range(int(np.prod(token_shape)))]).reshape(token_shape)
                zps = RNG.integers(qmin, qmax + 1, size=token_shape).astype(np.int64)
                out = empty_like_layout(shape, npdtype)
                k.call("quantized_decomposed::quantize_per_token.out", layout(x), layout(scales), zps, qmin, qmax,
                       ScalarType(npdtype), out)
                want = quantize_reference(tx.to(torch.float32) if in_dtype == np.float16 else tx,
                                          1.0 / torch.from_numpy(scales), torch.from_numpy(zps), qmin, qmax, npdtype,
                                          zp_before_round=True)
                compare(f"reference quantize_per_token {np.dtype(in_dtype).name}->{np.dtype(npdtype).name}", out, want)


def check_reference_dequantize(k):
    for npdtype in [np.uint8, np.int8, np.int16, np.uint16, np.int32]:
        lo, hi = BOUNDS[npdtype]
        for out_dtype in [np.float32, np.float64, np.float16]:
            for _ in range(6):
                shape = random_shape()
                vlo, vhi = (lo, hi) if npdtype is not np.int32 else (-2**24, 2**24)
                if out_dtype == np.float16:  # D7: PyTorch's f16 arithmetic agrees only below 2048
                    vlo, vhi = max(vlo, -1000), min(vhi, 1000)
                q = RNG.integers(vlo, vhi + 1, size=shape).astype(npdtype)
                scale = random_scale()
                zp = int(RNG.integers(vlo, vhi + 1))
                tq = torch.from_numpy(q.astype(np.int64))
                out = empty_like_layout(shape, out_dtype)
                k.call("quantized_decomposed::dequantize_per_tensor.out", layout(q), scale, zp, lo, hi,
                       ScalarType(npdtype), ScalarType(out_dtype), out)
                compute = torch.float64 if out_dtype == np.float64 else torch.float32
                want = ((tq.to(compute) - zp) * scale).to(TORCH_DTYPES[out_dtype]).numpy()
                compare(f"reference dequantize_per_tensor {np.dtype(npdtype).name}->{np.dtype(out_dtype).name}", out,
                        want)

                axis = int(RNG.integers(len(shape)))
                view = [1] * len(shape)
                view[axis] = shape[axis]
                scale_dtype = [np.float32, np.float64][int(RNG.integers(2))]
                scales = np.array([random_scale() for _ in range(shape[axis])]).astype(scale_dtype)
                zp_dtype = [np.int32, np.int64][int(RNG.integers(2))]
                zps = RNG.integers(vlo, vhi + 1, size=shape[axis]).astype(zp_dtype)
                out = empty_like_layout(shape, out_dtype)
                k.call("quantized_decomposed::dequantize_per_channel.out", layout(q), scales, zps, axis, lo, hi,
                       ScalarType(npdtype), None, out)
                d = tq - torch.from_numpy(zps.astype(np.int64)).reshape(view)
                want = (d * torch.from_numpy(scales).reshape(view)).to(TORCH_DTYPES[out_dtype]).numpy()
                compare(f"reference dequantize_per_channel {np.dtype(scale_dtype).name} scales "
                        f"{np.dtype(npdtype).name}->{np.dtype(out_dtype).name}", out, want)

                token_shape = shape[:-1] + (1,)
                scales = np.array([random_scale() for _ in range(int(np.prod(token_shape)))]).reshape(token_shape)
                scales = scales.astype(scale_dtype)
                zps = RNG.integers(vlo, vhi + 1, size=token_shape).astype(zp_dtype)
                out = empty_like_layout(shape, out_dtype)
                k.call("quantized_decomposed::dequantize_per_token.out", layout(q), layout(scales), zps, lo, hi,
                       ScalarType(npdtype), ScalarType(out_dtype), out)
                d = tq - torch.from_numpy(zps.astype(np.int64))
                want = (d * torch.from_numpy(scales)).to(TORCH_DTYPES[out_dtype]).numpy()
                compare(f"reference dequantize_per_token {np.dtype(scale_dtype).name} scales "
                        f"{np.dtype(npdtype).name}->{np.dtype(out_dtype).name}", out, want)


def unpack_int4(packed):
    """embedding_4bit's layout: element 2m in the high nibble of byte m, +8 offset."""
    high = (packed >> 4).astype(np.int64) - 8
    low = (packed & 0x0F).astype(np.int64) - 8
    return np.stack([high, low], axis=-1).reshape(packed.shape[0], -1)


def check_reference_group_dequantize(k):
    """The decomposed reference's dequantize_per_channel_group:
    w.reshape(-1, group_size).sub(zp).mul(scales).reshape_as(w).to(output_dtype), with int64 zero points (an
    int8 zero-point tensor would make PyTorch subtract in int8 and wrap, which the kernel does not)."""
    for four_bit in [False, True]:
        for npdtype in ([np.uint8] if four_bit else [np.int8, np.uint8]):
            for scale_dtype in [np.float32, np.float16]:
                for out_dtype in [np.float32, np.float16]:
                    for with_zp in [False, True]:
                        rows, groups = int(RNG.integers(1, 9)), int(RNG.integers(1, 5))
                        group_size = int(RNG.choice([2, 8, 32, 64]))
                        cols = groups * group_size
                        if four_bit:
                            lo, hi = -8, 7
                            packed = RNG.integers(0, 256, size=(rows, cols // 2)).astype(np.uint8)
                            ints = unpack_int4(packed)
                        else:
                            lo, hi = BOUNDS[npdtype]
                            packed = RNG.integers(lo, hi + 1, size=(rows, cols)).astype(npdtype)
                            ints = packed.astype(np.int64)
                        scales = RNG.uniform(0.001, 1.0, size=(rows, groups)).astype(scale_dtype)
                        zps = RNG.integers(lo, hi + 1, size=(rows, groups)).astype(np.int64) if with_zp else None
                        out = empty_like_layout((rows, cols), out_dtype)
                        if four_bit:
                            k.call("quantized_decomposed::dequantize_per_channel_group_4bit.out", layout(packed),
                                   scales, zps, lo, hi, group_size, ScalarType(out_dtype), out)
                        else:
                            k.call("quantized_decomposed::dequantize_per_channel_group.out", layout(packed), scales,
                                   zps, lo, hi, ScalarType(npdtype), group_size, ScalarType(out_dtype), out)
                        grouped = torch.from_numpy(ints).reshape(-1, group_size)
                        zp = torch.from_numpy(zps).reshape(-1, 1) if with_zp else torch.zeros([], dtype=torch.int32)
                        want = grouped.sub(zp).mul(torch.from_numpy(scales).reshape(-1, 1)).reshape(rows, cols)
                        want = want.to(TORCH_DTYPES[out_dtype]).numpy()
                        compare(f"reference dequantize_per_channel_group{'_4bit' if four_bit else ''} "
                                f"{np.dtype(scale_dtype).name}->{np.dtype(out_dtype).name}", out, want)


def check_reference_add(k):
    for _ in range(40):
        shape = random_shape()
        a = layout(RNG.integers(0, 256, size=shape).astype(np.uint8))
        b = layout(RNG.integers(0, 256, size=shape).astype(np.uint8))
        a_scale, b_scale, out_scale = random_scale(), random_scale(), random_scale()
        a_zp, b_zp, out_zp = (int(v) for v in RNG.integers(0, 256, size=3))
        qmin, qmax = sorted(int(v) for v in RNG.integers(0, 256, size=2))
        out = empty_like_layout(shape, np.uint8)
        k.call("quantized_decomposed::add.out", a, a_scale, a_zp, 0, 255, b, b_scale, b_zp, 0, 255, out_scale, out_zp,
               qmin, qmax, out)
        da = (torch.from_numpy(np.ascontiguousarray(a)).to(torch.float32) - a_zp) * a_scale
        db = (torch.from_numpy(np.ascontiguousarray(b)).to(torch.float32) - b_zp) * b_scale
        want = quantize_reference(da + db, 1.0 / out_scale, out_zp, qmin, qmax, np.uint8)
        compare("reference add (dequantize, add, quantize)", out, want)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    aten_capabilities.check_active(torch)
    torch.manual_seed(0)
    kernels = Kernels(sys.argv[1])
    check_builtin_quantize_per_tensor(kernels)
    check_builtin_quantize_per_channel(kernels)
    check_builtin_dequantize(kernels)
    check_reference_quantize(kernels)
    check_reference_dequantize(kernels)
    check_reference_add(kernels)
    check_reference_group_dequantize(kernels)
    families = {}
    for name, count in COMPARED.items():
        family = " ".join(name.split()[:2])
        families[family] = families.get(family, 0) + count
    for family, count in sorted(families.items()):
        print(f"{count:8d} elements  {family}")
    if FAILURES:
        print("\nMISMATCHES:")
        for failure in FAILURES:
            print("  " + failure)
        return 1
    print(f"\nall {sum(COMPARED.values())} elements bit-identical (torch {torch.__version__}, "
          f"CPU capability {aten_capabilities.active(torch)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
