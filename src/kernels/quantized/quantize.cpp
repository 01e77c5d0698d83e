// quantize_per_tensor (.out, .Tensor_out), quantize_per_channel and
// quantize_per_token (reference §3): checks, the scalar definitions, and the
// layout handling around the vectorised loops of quantize_simd.cpp.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "checks.h"
#include "per_token.h"
#include "et_ops/kernels/quantized.h"
#include "vector_kernels.h"

namespace et_ops::kernels::quantized {
namespace {

using detail::check_dtype;
using detail::check_quant_range;
using detail::check_same_shape;
using detail::check_scale;
using detail::check_scales;
using detail::check_tensor;
using detail::dispatch_floating;
using detail::dispatch_quantized;
using detail::fail;
using detail::FlatElements;
using detail::for_each_row;
using detail::row_length;
using detail::row_stride;
using detail::saturate;
using detail::Tag;
using simd::Binary64Quantize;
using simd::PerTensorQuantize;

// Runs shorter than this are not worth a dispatched vector call.
constexpr int64_t kMinVectorRun = 16;
// f16/bf16 inputs are widened (exactly) into blocks of this many floats.
constexpr std::size_t kWidenBlock = 512;

// ---- checks (reference §3.6) ----

// Every quantize check from "input dtype" on: input floating, out == dtype,
// dtype quantized, quant range within dtype and ordered.
bool check_quantize_args(KernelContext& ctx, const char* op, TensorRef input, int64_t quant_min, int64_t quant_max,
                         DType dtype, TensorRef out) {
  if (!is_floating(input.dtype()))
    return fail(ctx, op, "input must be float32, float64, float16 or bfloat16, got {}", dtype_name(input.dtype()));
  if (!check_dtype(ctx, op, "out", out, dtype)) return false;
  return check_quant_range(ctx, op, dtype, quant_min, quant_max);
}

// A scale or zero-point tensor of the given dtype and element count.
bool check_param_tensor(KernelContext& ctx, const char* op, const char* what, TensorRef t, DType dtype,
                        int64_t count, const char* count_text) {
  if (!check_dtype(ctx, op, what, t, dtype)) return false;
  if (t.numel() == count) return true;
  return fail(ctx, op, "{} has {} elements, expected {} ({})", what, t.numel(), count, count_text);
}

// ---- scalar definitions ----

template <typename In>
double widen(In x) {
  if constexpr (std::is_same_v<In, double>) return x;
  else return static_cast<double>(detail::to_f32(x));
}

// §3.3 step 2: fl32(x * inv); an f64 input forms the product in binary64.
template <typename In>
float scaled_f32(In x, float inv) {
  if constexpr (std::is_same_v<In, double>) return static_cast<float>(x * static_cast<double>(inv));
  else return detail::to_f32(x) * inv;
}

// §3.3 steps 2-5.
template <typename Q, typename In>
Q quantize_per_tensor_element(In x, const PerTensorQuantize& p) {
  const float t = std::nearbyint(scaled_f32(x, p.inv)) + p.zero_point;
  return static_cast<Q>(saturate(t, p.quant_min, p.quant_max));
}

// §3.4 (round, then add zp) and §3.5 (add zp, then round), in binary64.
template <typename Q, typename In>
Q quantize_binary64_element(In x, const Binary64Quantize& p) {
  const double v = widen(x) * p.inv;
  const double t = p.zero_point_before_rounding ? std::nearbyint(v + p.zero_point) : std::nearbyint(v) + p.zero_point;
  return static_cast<Q>(saturate(t, p.quant_min, p.quant_max));
}

// ---- runs: n elements sharing parameters, `stride` elements apart ----

template <typename In, typename Q>
void quantize_per_tensor_run(const In* in, int64_t in_stride, Q* out, int64_t out_stride, int64_t n,
                             const PerTensorQuantize& p, DType out_dtype) {
  const bool contiguous = in_stride == 1 && out_stride == 1;
  if constexpr (std::is_same_v<In, float>) {
    if (contiguous && simd::quantize_f32(in, static_cast<std::size_t>(n), p, out_dtype, out)) return;
  } else if constexpr (std::is_same_v<In, Half> || std::is_same_v<In, BFloat16>) {
    if (contiguous) {  // widening is exact, so the f32 loop gives the f32 result
      float block[kWidenBlock];
      bool vectorised = true;
      for (int64_t start = 0; start < n && vectorised; start += static_cast<int64_t>(kWidenBlock)) {
        const auto count = static_cast<std::size_t>(std::min<int64_t>(n - start, kWidenBlock));
        for (std::size_t i = 0; i < count; ++i) block[i] = detail::to_f32(in[start + static_cast<int64_t>(i)]);
        vectorised = simd::quantize_f32(block, count, p, out_dtype, out + start);
      }
      if (vectorised) return;
    }
  }
  for (int64_t i = 0; i < n; ++i) out[i * out_stride] = quantize_per_tensor_element<Q>(in[i * in_stride], p);
}

template <typename In, typename Q>
void quantize_binary64_run(const In* in, int64_t in_stride, Q* out, int64_t out_stride, int64_t n,
                           const Binary64Quantize& p, DType out_dtype) {
  if constexpr (std::is_same_v<In, float> || std::is_same_v<In, double>) {
    if (in_stride == 1 && out_stride == 1 && n >= kMinVectorRun &&
        simd::quantize_binary64(detail::dtype_of<In>(), in, static_cast<std::size_t>(n), p, out_dtype, out))
      return;
  }
  for (int64_t i = 0; i < n; ++i) out[i * out_stride] = quantize_binary64_element<Q>(in[i * in_stride], p);
}

// Calls f(Tag<In>, Tag<Q>) for the input's floating and out's quantized types.
template <typename F>
void dispatch_in_out(TensorRef input, TensorRef out, F&& f) {
  dispatch_floating(input.dtype(), [&](auto in_tag) {
    dispatch_quantized(out.dtype(), [&](auto out_tag) { f(in_tag, out_tag); });
  });
}

// ---- per tensor ----

bool quantize_per_tensor_impl(KernelContext& ctx, const char* op, TensorRef input, double scale, int64_t zero_point,
                              int64_t quant_min, int64_t quant_max, DType dtype, TensorRef out) {
  if (!check_tensor(ctx, op, "input", input) || !check_tensor(ctx, op, "out", out)) return false;
  if (!check_same_shape(ctx, op, "out", out, input, "input")) return false;
  if (!check_quantize_args(ctx, op, input, quant_min, quant_max, dtype, out)) return false;
  if (!check_scale(ctx, op, "scale", scale)) return false;

  // §3.3 step 1: the reciprocal in binary64, then rounded to binary32.
  const PerTensorQuantize p{static_cast<float>(1.0 / scale), static_cast<float>(zero_point), quant_min, quant_max};
  dispatch_in_out(input, out, [&](auto in_tag, auto out_tag) {
    using In = typename decltype(in_tag)::type;
    using Q = typename decltype(out_tag)::type;
    const auto* in = input.data_as<const In>();
    auto* q = out.data_as<Q>();
    if (detail::same_layout(input, out)) {  // one run over memory in order
      quantize_per_tensor_run(in, 1, q, 1, input.numel(), p, dtype);
      return;
    }
    const TensorRef tensors[] = {input, out};
    for_each_row(tensors, [&](int64_t, const int64_t*, const int64_t* offsets) {
      quantize_per_tensor_run(in + offsets[0], row_stride(input), q + offsets[1], row_stride(out),
                              row_length(input), p, dtype);
    });
  });
  return ctx.ok();
}

// ---- per channel / per token ----

// The binary64 parameters of channel or token c (reference §3.4 step 1).
Binary64Quantize binary64_params(const FlatElements<double>& scales, const FlatElements<int64_t>& zero_points,
                                 int64_t c, bool zero_point_before_rounding, int64_t quant_min, int64_t quant_max) {
  return Binary64Quantize{1.0 / scales[c], static_cast<double>(zero_points[c]), zero_point_before_rounding,
                          quant_min, quant_max};
}

template <typename In, typename Q>
void quantize_per_channel_typed(TensorRef input, TensorRef scales_t, TensorRef zero_points_t, int64_t axis,
                                int64_t quant_min, int64_t quant_max, DType dtype, TensorRef out) {
  const FlatElements<double> scales(scales_t);
  const FlatElements<int64_t> zero_points(zero_points_t);
  const auto params = [&](int64_t c) { return binary64_params(scales, zero_points, c, false, quant_min, quant_max); };
  const auto* in = input.data_as<const In>();
  auto* q = out.data_as<Q>();
  detail::for_each_channel_run(input, out, axis, [&](int64_t i, int64_t is, int64_t o, int64_t os, int64_t n, int64_t c) {
    quantize_binary64_run(in + i, is, q + o, os, n, params(c), dtype);
  });
}

template <typename In, typename Q>
void quantize_per_token_typed(TensorRef input, TensorRef scales_t, TensorRef zero_points_t, int64_t quant_min,
                              int64_t quant_max, DType dtype, TensorRef out) {
  const FlatElements<double> scales(scales_t);
  const FlatElements<int64_t> zero_points(zero_points_t);
  const auto* in = input.data_as<const In>();
  auto* q = out.data_as<Q>();
  // A token is one logical row, so rows enumerate tokens in order.
  const TensorRef tensors[] = {input, out};
  for_each_row(tensors, [&](int64_t token, const int64_t*, const int64_t* offsets) {
    quantize_binary64_run(in + offsets[0], row_stride(input), q + offsets[1], row_stride(out), row_length(input),
                          binary64_params(scales, zero_points, token, true, quant_min, quant_max), dtype);
  });
}

}  // namespace

bool quantize_per_tensor_out(KernelContext& ctx, TensorRef input, double scale, int64_t zero_point,
                             int64_t quant_min, int64_t quant_max, DType dtype, TensorRef out) {
  return quantize_per_tensor_impl(ctx, op_name::quantize_per_tensor_out, input, scale, zero_point, quant_min, quant_max, dtype, out);
}

bool quantize_per_tensor_tensor_out(KernelContext& ctx, TensorRef input, TensorRef scale, TensorRef zero_point,
                                    int64_t quant_min, int64_t quant_max, DType dtype, TensorRef out) {
  const char* op = op_name::quantize_per_tensor_tensor_out;
  if (!check_tensor(ctx, op, "scale", scale) || !check_tensor(ctx, op, "zero_point", zero_point)) return false;
  if (!check_param_tensor(ctx, op, "scale", scale, DType::Float64, 1, "a one-element tensor")) return false;
  if (!check_param_tensor(ctx, op, "zero_point", zero_point, DType::Int64, 1, "a one-element tensor")) return false;
  // One element sits at offset 0 whatever the strides.
  return quantize_per_tensor_impl(ctx, op, input, *scale.data_as<const double>(),
                                  *zero_point.data_as<const int64_t>(), quant_min, quant_max, dtype, out);
}

bool quantize_per_channel_out(KernelContext& ctx, TensorRef input, TensorRef scales, TensorRef zero_points,
                              int64_t axis, int64_t quant_min, int64_t quant_max, DType dtype, TensorRef out) {
  const char* op = op_name::quantize_per_channel_out;
  if (!check_tensor(ctx, op, "input", input) || !check_tensor(ctx, op, "scales", scales) ||
      !check_tensor(ctx, op, "zero_points", zero_points) || !check_tensor(ctx, op, "out", out))
    return false;
  if (!check_same_shape(ctx, op, "out", out, input, "input")) return false;
  const auto normalized = detail::normalize_axis(ctx, op, axis, input.dim());
  if (!normalized) return false;
  const int64_t channels = input.size(*normalized);
  if (!check_param_tensor(ctx, op, "scales", scales, DType::Float64, channels, "input.size(axis)")) return false;
  if (!check_param_tensor(ctx, op, "zero_points", zero_points, DType::Int64, channels, "input.size(axis)"))
    return false;
  if (!check_quantize_args(ctx, op, input, quant_min, quant_max, dtype, out)) return false;
  if (!check_scales(ctx, op, "scales", FlatElements<double>(scales), channels)) return false;

  dispatch_in_out(input, out, [&](auto in_tag, auto out_tag) {
    quantize_per_channel_typed<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(
        input, scales, zero_points, *normalized, quant_min, quant_max, dtype, out);
  });
  return ctx.ok();
}

bool detail::quantize_per_token(KernelContext& ctx, TensorRef input, TensorRef scales, TensorRef zero_points,
                                int64_t quant_min, int64_t quant_max, DType dtype, TensorRef out) {
  const char* op = op_name::quantize_per_token_out;
  if (!check_tensor(ctx, op, "input", input) || !check_tensor(ctx, op, "scales", scales) ||
      !check_tensor(ctx, op, "zero_points", zero_points) || !check_tensor(ctx, op, "out", out))
    return false;
  if (input.dim() < 1) return fail(ctx, op, "input must have at least one dimension, got a 0-dim tensor");
  if (!check_same_shape(ctx, op, "out", out, input, "input")) return false;
  // T = prod(sizes[:-1]); with N = 0 there are no elements but still T tokens.
  int64_t tokens = 1;
  for (int64_t d = 0; d + 1 < input.dim(); ++d) tokens *= input.size(d);
  if (!check_param_tensor(ctx, op, "scales", scales, DType::Float64, tokens, "the number of tokens")) return false;
  if (!check_param_tensor(ctx, op, "zero_points", zero_points, DType::Int64, tokens, "the number of tokens"))
    return false;
  if (!check_quantize_args(ctx, op, input, quant_min, quant_max, dtype, out)) return false;
  if (!check_scales(ctx, op, "scales", FlatElements<double>(scales), tokens)) return false;

  dispatch_in_out(input, out, [&](auto in_tag, auto out_tag) {
    quantize_per_token_typed<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(
        input, scales, zero_points, quant_min, quant_max, dtype, out);
  });
  return ctx.ok();
}

bool quantize_per_token_out(KernelContext& ctx, TensorRef input, TensorRef scales, TensorRef zero_points,
                            int64_t quant_min, int64_t quant_max, DType dtype, TensorRef out) {
  return detail::quantize_per_token(ctx, input, scales, zero_points, quant_min, quant_max, dtype, out);
}

}  // namespace et_ops::kernels::quantized
