"""The values a graph's nodes lower to.

- `TensorValue`: a tensor of the program (an input, an intermediate, or a
  constant the program holds), with its static shape and .etp dtype; a
  quantized one also carries its quantization parameters.
- `Constant`: a tensor known at export time (a parameter, a buffer, a
  folded expression) that becomes a program constant only where an
  operator takes it as a tensor argument.
- Anything else (int, float, bool, None, tuples, torch.dtype) is a Python
  constant of the program: shape arithmetic, sizes, flags.
- `Deferred`: a tensor whose instructions are emitted where an operator
  first takes it as a tensor argument (a weight's dequantization, a
  transposed weight, a view): the operator that reads it may take its
  source instead (a linear layer takes the untransposed weight, a view of
  a view is one copy from the first view's source).
- `Unavailable`: what a node that could not be lowered stands for, so the
  lowering can go on and report every unsupported node at once.
"""

from dataclasses import dataclass

import torch

from ..errors import UsageTypeError

# torch dtype -> .etp dtype; quantized dtypes map to the integers that hold them.
ETP_DTYPES = {
    torch.float32: "float32", torch.float64: "float64", torch.float16: "float16", torch.bfloat16: "bfloat16",
    torch.int8: "int8", torch.uint8: "uint8", torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
    torch.bool: "bool", torch.quint8: "uint8", torch.qint8: "int8", torch.qint32: "int32",
}

QUANTIZED_DTYPES = (torch.quint8, torch.qint8, torch.qint32)


def etp_dtype(dtype):
    try:
        return ETP_DTYPES[dtype]
    except KeyError:
        raise UsageTypeError(f"dtype {dtype} has no .etp equivalent") from None


def quant_range(dtype):
    """(quant_min, quant_max) of a quantized torch dtype: its whole integer range."""
    info = torch.iinfo({torch.quint8: torch.uint8, torch.qint8: torch.int8, torch.qint32: torch.int32}[dtype])
    return info.min, info.max


@dataclass(frozen=True)
class PerTensorQParams:
    scale: float
    zero_point: int
    quant_min: int
    quant_max: int
    dtype: str  # .etp dtype of the quantized integers

    def as_dict(self):
        return {"scheme": "per-tensor affine", "scale": self.scale, "zero_point": self.zero_point,
                "quant_min": self.quant_min, "quant_max": self.quant_max, "dtype": self.dtype}


@dataclass(frozen=True)
class PerChannelQParams:
    scales: tuple  # floats
    zero_points: tuple  # ints
    axis: int
    quant_min: int
    quant_max: int
    dtype: str

    def as_dict(self):
        return {"scheme": "per-channel affine", "axis": self.axis, "scales": list(self.scales),
                "zero_points": list(self.zero_points), "quant_min": self.quant_min, "quant_max": self.quant_max,
                "dtype": self.dtype}


@dataclass(frozen=True)
class TensorValue:
    index: int  # the program's value index
    dtype: str
    shape: tuple
    qparams: object = None  # PerTensorQParams | PerChannelQParams for quantized integers


@dataclass(frozen=True, eq=False)
class Constant:
    tensor: torch.Tensor

    @property
    def is_quantized(self):
        return self.tensor.is_quantized


@dataclass(eq=False)
class Deferred:
    """A tensor emitted on first use: `emit(g)` returns its value; `source` is what it derives from."""

    emit: object  # g -> TensorValue | Constant
    dtype: str
    shape: tuple
    kind: str  # "dequantize" | "transpose" | "view"
    source: object = None  # the value it derives from (the untransposed weight, the quantized constant)


class Unavailable:
    """The value of a node that was not lowered."""


UNAVAILABLE = Unavailable()


def is_tensor(value):
    return isinstance(value, (TensorValue, Constant, Deferred))


def shape_of(value):
    """The shape of a TensorValue, a Deferred or a Constant."""
    return tuple(value.tensor.shape) if isinstance(value, Constant) else tuple(value.shape)


def dtype_of(value):
    """The .etp dtype of a TensorValue, a Deferred or a Constant."""
    return etp_dtype(value.tensor.dtype) if isinstance(value, Constant) else value.dtype


def qparams_of(quantized):
    """The quantization parameters of a quantized torch tensor."""
    quant_min, quant_max = quant_range(quantized.dtype)
    dtype = etp_dtype(quantized.dtype)
    if quantized.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return PerTensorQParams(float(quantized.q_scale()), int(quantized.q_zero_point()), quant_min, quant_max, dtype)
    if quantized.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
        return PerChannelQParams(tuple(float(s) for s in quantized.q_per_channel_scales()),
                                 tuple(int(z) for z in quantized.q_per_channel_zero_points()),
                                 int(quantized.q_per_channel_axis()), quant_min, quant_max, dtype)
    raise UsageTypeError(f"quantization scheme {quantized.qscheme()} is not supported")
