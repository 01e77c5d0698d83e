// Argument checks and dtype dispatch shared by every quantized kernel.
// Each check reports through the context, naming the operator, the argument
// and the offending value, and returns false; kernels stop at the first
// false.
#ifndef ET_OPS_SRC_KERNELS_QUANTIZED_CHECKS_H
#define ET_OPS_SRC_KERNELS_QUANTIZED_CHECKS_H

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "et_ops/dtype.h"
#include "et_ops/half.h"
#include "et_ops/kernel_context.h"
#include "et_ops/tensor.h"
#include "kernels/common/tensor_checks.h"

namespace et_ops::kernels::quantized::detail {

using kernels::detail::check_dtype;
using kernels::detail::check_tensor;
using kernels::detail::dtype_of;
using kernels::detail::fail;
using kernels::detail::is_dense;
using kernels::detail::shape_string;
using kernels::detail::Tag;

struct IntRange {
  int64_t lo;
  int64_t hi;
};

// Bounds of the quantized integer dtypes (u8, i8, i16, u16, i32); nullopt
// for every other dtype.
inline std::optional<IntRange> quantized_bounds(DType t) {
  switch (t) {
    case DType::UInt8: return IntRange{0, 255};
    case DType::Int8: return IntRange{-128, 127};
    case DType::Int16: return IntRange{-32768, 32767};
    case DType::UInt16: return IntRange{0, 65535};
    case DType::Int32: return IntRange{INT32_MIN, INT32_MAX};
    default: return std::nullopt;
  }
}

inline bool check_quantized_dtype(KernelContext& ctx, const char* op, const char* what, DType t) {
  if (quantized_bounds(t)) return true;
  return fail(ctx, op, "Unsupported dtype: {} is {}; expected one of uint8, int8, int16, uint16, int32", what,
              dtype_name(t));
}

// quant_min <= quant_max, both within the bounds of `t`.
inline bool check_quant_range(KernelContext& ctx, const char* op, DType t, int64_t quant_min, int64_t quant_max) {
  auto bounds = quantized_bounds(t);
  if (!bounds) return check_quantized_dtype(ctx, op, "dtype", t);
  if (quant_min < bounds->lo)
    return fail(ctx, op, "quant_min {} is below the lower bound {} of {}", quant_min, bounds->lo, dtype_name(t));
  if (quant_max > bounds->hi)
    return fail(ctx, op, "quant_max {} is above the upper bound {} of {}", quant_max, bounds->hi, dtype_name(t));
  if (quant_min > quant_max)
    return fail(ctx, op, "invalid quantization range: quant_min {} > quant_max {}", quant_min, quant_max);
  return true;
}

inline bool check_scale(KernelContext& ctx, const char* op, const char* what, double scale) {
  if (std::isfinite(scale) && scale > 0) return true;
  return fail(ctx, op, "{} must be finite and > 0, got {}", what, scale);
}

// Our rule (reference §1.6): out must already have exactly the shape of `like`.
inline bool check_same_shape(KernelContext& ctx, const char* op, const char* what, TensorRef t, TensorRef like,
                             const char* like_name) {
  if (t.same_shape(like)) return true;
  return fail(ctx, op, "{} has shape {}, expected {} (the shape of {}); outputs are never resized", what,
              shape_string(t), shape_string(like), like_name);
}

// Normalises a possibly negative axis; reports one out of range.
inline std::optional<int64_t> normalize_axis(KernelContext& ctx, const char* op, int64_t axis, int64_t dim) {
  if (dim < 1) {
    fail(ctx, op, "input must have at least one dimension");
    return std::nullopt;
  }
  if (axis < -dim || axis >= dim) {
    fail(ctx, op, "axis {} is out of range for a {}-dimensional input", axis, dim);
    return std::nullopt;
  }
  return axis < 0 ? axis + dim : axis;
}

// ---- dtype dispatch ----

// Calls f(Tag<T>{}) with the C++ storage type of a quantized integer dtype.
template <typename F>
bool dispatch_quantized(DType t, F&& f) {
  switch (t) {
    case DType::UInt8: f(Tag<uint8_t>{}); return true;
    case DType::Int8: f(Tag<int8_t>{}); return true;
    case DType::Int16: f(Tag<int16_t>{}); return true;
    case DType::UInt16: f(Tag<uint16_t>{}); return true;
    case DType::Int32: f(Tag<int32_t>{}); return true;
    default: return false;
  }
}

// Calls f(Tag<T>{}) with the storage type of a floating dtype (float,
// double, Half, BFloat16).
template <typename F>
bool dispatch_floating(DType t, F&& f) {
  switch (t) {
    case DType::Float32: f(Tag<float>{}); return true;
    case DType::Float64: f(Tag<double>{}); return true;
    case DType::Float16: f(Tag<Half>{}); return true;
    case DType::BFloat16: f(Tag<BFloat16>{}); return true;
    default: return false;
  }
}

// The float dtypes of group-wise tables (embeddings, group dequantize):
// f32, f16, bf16.
inline bool is_float32_or_narrower(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16;
}

// Calls f(Tag<T>{}) for f32, f16 or bf16 (f32 for any other dtype: callers
// check is_float32_or_narrower first).
template <typename F>
void dispatch_float32_or_narrower(DType t, F&& f) {
  switch (t) {
    case DType::Float16: f(Tag<Half>{}); break;
    case DType::BFloat16: f(Tag<BFloat16>{}); break;
    default: f(Tag<float>{}); break;
  }
}

// Widening of a floating storage value to float (exact for f32/f16/bf16).
inline float to_f32(float v) { return v; }
inline float to_f32(Half v) { return v.to_float(); }
inline float to_f32(BFloat16 v) { return v.to_float(); }

// Narrowing of a binary32 value to a floating storage type, one rounding.
template <typename T>
T from_f32(float v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else if constexpr (std::is_same_v<T, double>) return static_cast<double>(v);
  else return T::from_float(v);
}

// Narrowing of a binary64 value: to f16/bf16 through binary32 (reference §1.2).
template <typename T>
T from_f64(double v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else return from_f32<T>(static_cast<float>(v));
}

// sat(t, qmin, qmax) of reference §1.3: clamp in the float domain, NaN -> qmin.
// Compared in binary64, where every float value and every bound of a
// quantized dtype is exact (so the i32 bounds are exact too, D5).
template <typename Float>
int64_t saturate(Float t, int64_t quant_min, int64_t quant_max) {
  const double v = static_cast<double>(t);
  if (!(v >= static_cast<double>(quant_min))) return quant_min;  // NaN and below
  if (v > static_cast<double>(quant_max)) return quant_max;
  return static_cast<int64_t>(v);
}

// ---- layout ----

// Two dense tensors of one shape whose strides agree on every dimension that
// matters map each logical index to the same memory offset, so elementwise
// work can run over memory in order.
inline bool same_layout(TensorRef a, TensorRef b) {
  if (!a.same_shape(b)) return false;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (a.size(d) > 1 && a.stride(d) != b.stride(d)) return false;
  return true;
}

// Memory offset of the element at logical (row-major) position `flat`.
inline int64_t flat_offset(TensorRef t, int64_t flat) {
  int64_t offset = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    offset += (flat % t.size(d)) * t.stride(d);
    flat /= t.size(d);
  }
  return offset;
}

// Reads a tensor of T as a flat array in logical order, whatever its layout
// (scales and zero points are "flat arrays, whatever their shape").
template <typename T>
class FlatElements {
 public:
  explicit FlatElements(TensorRef t)
      : tensor_(t), data_(static_cast<const T*>(t.data())), contiguous_(t.is_contiguous()) {}
  T operator[](int64_t i) const { return data_[contiguous_ ? i : flat_offset(tensor_, i)]; }

 private:
  TensorRef tensor_;
  const T* data_;
  bool contiguous_;
};

// An integer tensor (i32 or i64) read as int64 values in logical order.
class FlatIntegers {
 public:
  explicit FlatIntegers(TensorRef t) : is_i64_(t.dtype() == DType::Int64), i32_(t), i64_(t) {}
  int64_t operator[](int64_t i) const { return is_i64_ ? i64_[i] : static_cast<int64_t>(i32_[i]); }

 private:
  bool is_i64_;
  FlatElements<int32_t> i32_;
  FlatElements<int64_t> i64_;
};

// A floating tensor (f32 or f64) read as double values in logical order.
class FlatScales {
 public:
  explicit FlatScales(TensorRef t) : is_f64_(t.dtype() == DType::Float64), f32_(t), f64_(t) {}
  double operator[](int64_t i) const { return is_f64_ ? f64_[i] : static_cast<double>(f32_[i]); }

 private:
  bool is_f64_;
  FlatElements<float> f32_;
  FlatElements<double> f64_;
};

// Every one of `count` scales finite and > 0 (reference §1.7); names the
// first bad one by its flat index.
template <typename Scales>
bool check_scales(KernelContext& ctx, const char* op, const char* what, const Scales& scales, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    const double s = scales[i];
    if (!(std::isfinite(s) && s > 0)) return fail(ctx, op, "{}[{}] must be finite and > 0, got {}", what, i, s);
  }
  return true;
}

// Logical rows: the innermost dimension (a 0-dim tensor is one row of one).
inline int64_t row_length(TensorRef t) { return t.dim() > 0 ? t.size(t.dim() - 1) : 1; }
inline int64_t row_stride(TensorRef t) { return t.dim() > 0 ? t.stride(t.dim() - 1) : 1; }

// Memory offset of the first element of logical row `row`.
inline int64_t row_offset(TensorRef t, int64_t row) {
  if (t.is_contiguous()) return row * row_length(t);
  int64_t offset = 0;
  for (int64_t d = t.dim() - 2; d >= 0; --d) {
    offset += (row % t.size(d)) * t.stride(d);
    row /= t.size(d);
  }
  return offset;
}

// Visits tensors of one shape in logical (row-major) order, one row at a
// time: visit(row, index, offsets), where `index` is the logical index of
// the row's first element and offsets[k] its memory offset in tensors[k].
// Within a row, elements of tensors[k] are row_stride(tensors[k]) apart.
template <std::size_t K, typename Visit>
void for_each_row(const TensorRef (&tensors)[K], Visit&& visit) {
  const TensorRef& shape = tensors[0];
  if (shape.numel() == 0) return;
  int64_t index[ET_OPS_MAX_DIMS] = {};
  int64_t offsets[K] = {};
  const int64_t rows = shape.numel() / row_length(shape);
  const int64_t outer_dims = shape.dim() > 0 ? shape.dim() - 1 : 0;
  for (int64_t row = 0; row < rows; ++row) {
    visit(row, static_cast<const int64_t*>(index), static_cast<const int64_t*>(offsets));
    for (int64_t d = outer_dims - 1; d >= 0; --d) {
      if (shape.size(d) == 1) continue;  // never advances; its stride may be anything
      ++index[d];
      for (std::size_t k = 0; k < K; ++k) offsets[k] += tensors[k].stride(d);
      if (index[d] < shape.size(d)) break;
      for (std::size_t k = 0; k < K; ++k) offsets[k] -= shape.size(d) * tensors[k].stride(d);
      index[d] = 0;
    }
  }
}

// Visits input and out (one shape) in runs of elements that share one
// channel along `axis`: run(in_offset, in_stride, out_offset, out_stride,
// count, channel), offsets and strides in elements.
template <typename Run>
void for_each_channel_run(TensorRef input, TensorRef out, int64_t axis, Run&& run) {
  const int64_t channels = input.size(axis);
  if (same_layout(input, out)) {
    // Dense layout: memory holds blocks of stride(axis) elements that share
    // one channel, and the channels of consecutive blocks cycle.
    const int64_t block = channels == 1 ? input.numel() : input.stride(axis);
    for (int64_t start = 0, b = 0; start < input.numel(); start += block, ++b) run(start, 1, start, 1, block, b % channels);
    return;
  }
  const TensorRef tensors[] = {input, out};
  const bool channel_along_row = axis == input.dim() - 1;
  for_each_row(tensors, [&](int64_t, const int64_t* index, const int64_t* offsets) {
    if (!channel_along_row) {
      run(offsets[0], row_stride(input), offsets[1], row_stride(out), row_length(input), index[axis]);
      return;
    }
    for (int64_t j = 0; j < row_length(input); ++j)
      run(offsets[0] + j * row_stride(input), 1, offsets[1] + j * row_stride(out), 1, 1, j);
  });
}

}  // namespace et_ops::kernels::quantized::detail

#endif  // ET_OPS_SRC_KERNELS_QUANTIZED_CHECKS_H
