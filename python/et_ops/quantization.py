"""Quantization parameters and the reference numerics of quantize/dequantize.

Activations: per-tensor affine int8 in [-128, 127]. A min/max observer sees
the float activations of the calibration set; the parameters follow
PyTorch's choose-qparams rule for affine quantization (torch.ao
``determine_qparams``, reference doc §5): the range is widened to include
0, ``scale = (max - min) / (quant_max - quant_min)`` in float32 (never below
float32 epsilon), ``zero_point = quant_min - rne(min / scale)`` clamped to
the range. 0.0 is therefore exactly representable (ReLU outputs, padding).

Weights: per-channel symmetric int8 in [-127, 127] along the output
channel, ``scale_c = max|w_c| / 127`` in float64, zero point 0. The
symmetric range [-127, 127] keeps -w representable for every w.

The functions below compute exactly what the kernels compute (reference doc
§3.3, §3.4, §4.3, §4.4), so a numpy simulation of a program is exact up to
the float summation order of matmuls and convolutions.
"""

import math
from dataclasses import dataclass

import numpy as np

ACTIVATION_DTYPE = "int8"
ACTIVATION_RANGE = (-128, 127)
WEIGHT_DTYPE = "int8"
WEIGHT_RANGE = (-127, 127)
FLOAT32_EPS = float(np.finfo(np.float32).eps)


@dataclass(frozen=True)
class TensorQParams:
    """Per-tensor affine quantization of one activation."""

    scale: float
    zero_point: int
    quant_min: int
    quant_max: int
    dtype: str

    def as_dict(self):
        return {
            "scale": self.scale,
            "zero_point": self.zero_point,
            "quant_min": self.quant_min,
            "quant_max": self.quant_max,
            "dtype": self.dtype,
        }


@dataclass(frozen=True)
class ChannelQParams:
    """Per-channel symmetric quantization of one weight tensor."""

    scales: np.ndarray  # float64 [C]
    zero_points: np.ndarray  # int64 [C], all 0
    axis: int
    quant_min: int
    quant_max: int
    dtype: str


class MinMaxObserver:
    """Running minimum and maximum of every value it sees (float64)."""

    def __init__(self):
        self.min = math.inf
        self.max = -math.inf

    def observe(self, values):
        values = np.asarray(values, dtype=np.float64)
        if not np.all(np.isfinite(values)):
            raise ValueError("calibration produced a non-finite activation")
        self.min = min(self.min, float(values.min()))
        self.max = max(self.max, float(values.max()))

    def qparams(self, quant_range=ACTIVATION_RANGE, dtype=ACTIVATION_DTYPE):
        if self.min > self.max:
            raise ValueError("observer saw no values")
        return choose_affine_qparams(self.min, self.max, *quant_range, dtype)


def choose_affine_qparams(min_value, max_value, quant_min, quant_max, dtype):
    """PyTorch's affine choose-qparams rule, evaluated in float32 as PyTorch does."""
    min_neg = np.float32(min(min_value, 0.0))
    max_pos = np.float32(max(max_value, 0.0))
    scale = np.float32(max_pos - min_neg) / np.float32(quant_max - quant_min)
    scale = max(scale, np.float32(FLOAT32_EPS))
    zero_point = quant_min - int(np.rint(min_neg / scale))
    zero_point = min(max(zero_point, quant_min), quant_max)
    return TensorQParams(float(scale), int(zero_point), quant_min, quant_max, dtype)


def choose_weight_qparams(weight, axis=0):
    """Per-channel symmetric int8 parameters for `weight` along `axis`."""
    weight = np.asarray(weight, dtype=np.float64)
    reduce_axes = tuple(d for d in range(weight.ndim) if d != axis)
    amax = np.abs(weight).max(axis=reduce_axes)
    quant_min, quant_max = WEIGHT_RANGE
    scales = np.maximum(amax / quant_max, FLOAT32_EPS)
    return ChannelQParams(
        scales=scales.astype(np.float64),
        zero_points=np.zeros(weight.shape[axis], dtype=np.int64),
        axis=axis,
        quant_min=quant_min,
        quant_max=quant_max,
        dtype=WEIGHT_DTYPE,
    )


def _saturate(t, quant_min, quant_max, dtype):
    """Clamp in the float domain (NaN -> quant_min), then convert (reference §1.3)."""
    t = np.where(np.isnan(t), quant_min, t)
    return np.clip(t, quant_min, quant_max).astype(dtype)


def quantize_per_tensor(x, q):
    """quantized_decomposed::quantize_per_tensor for a float32 input (reference §3.3)."""
    x = np.asarray(x, dtype=np.float32)
    inverse = np.float32(1.0 / q.scale)
    rounded = np.rint(x * inverse)
    shifted = rounded + np.float32(q.zero_point)
    return _saturate(shifted, q.quant_min, q.quant_max, q.dtype)


def dequantize_per_tensor(values, q):
    """quantized_decomposed::dequantize_per_tensor to float32 (reference §4.3)."""
    difference = np.asarray(values).astype(np.float32) - np.float32(q.zero_point)
    return difference * np.float32(q.scale)


def _channel_shape(ndim, axis, channels):
    shape = [1] * ndim
    shape[axis] = channels
    return shape


def quantize_per_channel(x, q):
    """quantized_decomposed::quantize_per_channel with float64 scales (reference §3.4)."""
    x = np.asarray(x, dtype=np.float32).astype(np.float64)
    shape = _channel_shape(x.ndim, q.axis, len(q.scales))
    inverse = (1.0 / q.scales).reshape(shape)
    rounded = np.rint(x * inverse)
    shifted = rounded + q.zero_points.reshape(shape).astype(np.float64)
    return _saturate(shifted, q.quant_min, q.quant_max, q.dtype)


def dequantize_per_channel(values, q):
    """quantized_decomposed::dequantize_per_channel, float64 scales, float32 out (reference §4.4)."""
    values = np.asarray(values).astype(np.int64)
    shape = _channel_shape(values.ndim, q.axis, len(q.scales))
    difference = values - q.zero_points.reshape(shape)
    return (difference * q.scales.reshape(shape)).astype(np.float32)
