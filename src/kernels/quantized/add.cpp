// quantized_decomposed::add.out (reference §8): dequantize a and b per
// tensor to f32, add in f32, quantize per tensor with PyTorch's reciprocal.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "checks.h"
#include "et_ops/kernels/quantized.h"
#include "vector_kernels.h"

namespace et_ops::kernels::quantized {
namespace {

using detail::check_same_shape;
using detail::check_scale;
using detail::check_tensor;
using detail::fail;
using detail::for_each_row;
using detail::row_length;
using detail::row_stride;
using detail::saturate;
using detail::Tag;
using simd::QuantizedAdd;

// ---- checks (reference §8.3) ----

bool check_same_dtype(KernelContext& ctx, const char* what, TensorRef t, TensorRef a) {
  if (t.dtype() == a.dtype()) return true;
  return fail(ctx, op_name::add_out, "{} has dtype {} but a has dtype {}; a, b and out must share one dtype", what,
              dtype_name(t.dtype()), dtype_name(a.dtype()));
}

bool check_add_dtype(KernelContext& ctx, DType dtype) {
  switch (dtype) {
    case DType::UInt8:
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64: return true;
    default:
      return fail(ctx, op_name::add_out, "Unsupported dtype: a is {}; expected one of uint8, int8, int16, int32, int64",
                  dtype_name(dtype));
  }
}

// 0 <= quant_min <= quant_max <= 255 (ET), and within the dtype's bounds
// (ours, D25: int8 cannot hold 128..255).
bool check_add_range(KernelContext& ctx, const char* prefix, int64_t quant_min, int64_t quant_max, DType dtype) {
  if (quant_min < 0 || quant_min > quant_max || quant_max > 255)
    return fail(ctx, op_name::add_out, "invalid quantization range: {0}_quant_min {1} and {0}_quant_max {2} must satisfy 0 <= "
                "{0}_quant_min <= {0}_quant_max <= 255", prefix, quant_min, quant_max);
  const auto bounds = detail::quantized_bounds(dtype);
  if (bounds && quant_max > bounds->hi)
    return fail(ctx, op_name::add_out, "{}_quant_max {} is above the upper bound {} of {}", prefix, quant_max, bounds->hi,
                dtype_name(dtype));
  return true;
}

// ---- scalar definition (§8.2) ----

template <typename T>
T add_element(T a, T b, const QuantizedAdd& p) {
  const float da = (static_cast<float>(a) - p.a_zero_point) * p.a_scale;
  const float db = (static_cast<float>(b) - p.b_zero_point) * p.b_scale;
  const float acc = da + db;
  const float t = std::nearbyint(acc * p.inv) + p.out_zero_point;
  return static_cast<T>(saturate(t, p.quant_min, p.quant_max));
}

// n elements, `stride` apart in each tensor.
template <typename T>
void add_run(const T* a, int64_t a_stride, const T* b, int64_t b_stride, T* out, int64_t out_stride, int64_t n,
             const QuantizedAdd& p) {
  if (a_stride == 1 && b_stride == 1 && out_stride == 1 &&
      simd::add(detail::dtype_of<T>(), a, b, static_cast<std::size_t>(n), p, out))
    return;
  for (int64_t i = 0; i < n; ++i) out[i * out_stride] = add_element(a[i * a_stride], b[i * b_stride], p);
}

// Calls f(Tag<T>) with the storage type of an add dtype.
template <typename F>
void dispatch_add(DType dtype, F&& f) {
  switch (dtype) {
    case DType::UInt8: f(Tag<uint8_t>{}); break;
    case DType::Int8: f(Tag<int8_t>{}); break;
    case DType::Int16: f(Tag<int16_t>{}); break;
    case DType::Int32: f(Tag<int32_t>{}); break;
    case DType::Int64: f(Tag<int64_t>{}); break;
    default: break;
  }
}

}  // namespace

bool add_out(KernelContext& ctx, TensorRef a, double a_scale, int64_t a_zero_point, int64_t a_quant_min,
             int64_t a_quant_max, TensorRef b, double b_scale, int64_t b_zero_point, int64_t b_quant_min,
             int64_t b_quant_max, double out_scale, int64_t out_zero_point, int64_t out_quant_min,
             int64_t out_quant_max, TensorRef out) {
  const char* op = op_name::add_out;
  if (!check_tensor(ctx, op, "a", a) || !check_tensor(ctx, op, "b", b) || !check_tensor(ctx, op, "out", out))
    return false;
  if (!check_same_shape(ctx, op, "b", b, a, "a") || !check_same_shape(ctx, op, "out", out, a, "a")) return false;
  if (!check_same_dtype(ctx, "b", b, a) || !check_same_dtype(ctx, "out", out, a)) return false;
  if (!check_add_dtype(ctx, a.dtype())) return false;
  if (!check_add_range(ctx, "a", a_quant_min, a_quant_max, a.dtype()) ||
      !check_add_range(ctx, "b", b_quant_min, b_quant_max, a.dtype()) ||
      !check_add_range(ctx, "out", out_quant_min, out_quant_max, a.dtype()))
    return false;
  if (!check_scale(ctx, op, "a_scale", a_scale) || !check_scale(ctx, op, "b_scale", b_scale) ||
      !check_scale(ctx, op, "out_scale", out_scale))
    return false;

  // The dequantize steps round scales and zero points to f32 (§4.3); the
  // quantize step uses the binary64 reciprocal rounded to f32 (§3.3, D24).
  const QuantizedAdd p{static_cast<float>(a_zero_point), static_cast<float>(a_scale),
                       static_cast<float>(b_zero_point), static_cast<float>(b_scale),
                       static_cast<float>(1.0 / out_scale),   static_cast<float>(out_zero_point),
                       out_quant_min,                         out_quant_max};
  dispatch_add(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* pa = a.data_as<const T>();
    const auto* pb = b.data_as<const T>();
    auto* po = out.data_as<T>();
    if (detail::same_layout(a, out) && detail::same_layout(b, out)) {  // one run over memory in order
      add_run(pa, 1, pb, 1, po, 1, a.numel(), p);
      return;
    }
    const TensorRef tensors[] = {a, b, out};
    for_each_row(tensors, [&](int64_t, const int64_t*, const int64_t* offsets) {
      add_run(pa + offsets[0], row_stride(a), pb + offsets[1], row_stride(b), po + offsets[2], row_stride(out),
              row_length(a), p);
    });
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::quantized
