// dequantize_per_tensor (.out, .Tensor_out), dequantize_per_channel and
// dequantize_per_token (reference §4): checks, the scalar definitions, and
// the layout handling around the vectorised loops of dequantize_simd.cpp.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "checks.h"
#include "et_ops/kernels/quantized.h"
#include "vector_kernels.h"

namespace et_ops::kernels::quantized {
namespace {

using detail::check_dtype;
using detail::check_quant_range;
using detail::check_quantized_dtype;
using detail::check_same_shape;
using detail::check_scale;
using detail::check_scales;
using detail::check_tensor;
using detail::dispatch_floating;
using detail::dispatch_quantized;
using detail::dtype_of;
using detail::fail;
using detail::FlatIntegers;
using detail::FlatScales;
using detail::for_each_row;
using detail::row_length;
using detail::row_stride;

// Runs shorter than this are not worth a dispatched vector call.
constexpr int64_t kMinVectorRun = 16;
// Outputs other than f32 are produced through blocks of this many floats.
constexpr int64_t kFloatBlock = 512;
// |zp| up to this keeps fl64(q) - fl64(zp) the exact integer q - zp.
constexpr int64_t kExactBinary64ZeroPoint = int64_t{1} << 52;
// |zp| up to this keeps fl32(q) - fl32(zp) exact for every 16-bit q.
constexpr int64_t kExactBinary32ZeroPoint = (int64_t{1} << 24) - 65535;

// ---- checks (reference §4.6) ----

// The per-tensor checks from "input dtype" on, shared by every overload.
bool check_dequantize_args(KernelContext& ctx, const char* op, TensorRef input, int64_t quant_min, int64_t quant_max,
                           DType dtype, std::optional<DType> out_dtype, const char* out_dtype_name, TensorRef out) {
  if (!check_quantized_dtype(ctx, op, "input", input.dtype())) return false;
  if (input.dtype() != dtype)
    return fail(ctx, op, "input has dtype {} but dtype is {}", dtype_name(input.dtype()), dtype_name(dtype));
  if (out_dtype && out.dtype() != *out_dtype)
    return fail(ctx, op, "out has dtype {} but {} is {}", dtype_name(out.dtype()), out_dtype_name,
                dtype_name(*out_dtype));
  if (quant_min > quant_max)
    return fail(ctx, op, "invalid quantization range: quant_min {} > quant_max {}", quant_min, quant_max);
  if (!is_floating(out.dtype()))
    return fail(ctx, op, "out must be float32, float64, float16 or bfloat16, got {}", dtype_name(out.dtype()));
  return check_quant_range(ctx, op, dtype, quant_min, quant_max);
}

// The checks on per-channel / per-token scales and zero points, given the
// number of channels or tokens they must hold.
bool check_dequantize_params(KernelContext& ctx, const char* op, TensorRef scales,
                             std::optional<TensorRef> zero_points, int64_t count, const char* count_text) {
  if (scales.numel() != count)
    return fail(ctx, op, "scales has {} elements, expected {} ({})", scales.numel(), count, count_text);
  if (!zero_points) return true;
  if (zero_points->dtype() != DType::Int32 && zero_points->dtype() != DType::Int64)
    return fail(ctx, op, "zero_points must be int32 or int64, got {}", dtype_name(zero_points->dtype()));
  if (zero_points->numel() != count)
    return fail(ctx, op, "zero_points has {} elements, expected {} ({})", zero_points->numel(), count, count_text);
  return true;
}

bool check_scales_dtype(KernelContext& ctx, const char* op, TensorRef scales) {
  if (scales.dtype() == DType::Float32 || scales.dtype() == DType::Float64) return true;
  return fail(ctx, op, "scales must be float32 or float64, got {}", dtype_name(scales.dtype()));
}

// ---- scalar definitions ----

// Which rule of §4 turns q into the output value.
enum class Rule {
  PerTensor,      // §4.3: f32 (then one rounding to f16/bf16), or binary64 for an f64 out
  Binary64Scale,  // §4.4 with f64 scales: w = fl64(d * s), then to the out dtype
  Binary32Scale,  // §4.4 with f32 scales: w = fl32(fl32(d) * s), then to the out dtype
};

struct Dequantize {
  Rule rule;
  int64_t zero_point;
  double scale;
  float zero_point_f32;  // fl32(zero_point)
  float scale_f32;       // fl32(scale); exact for f32 scales
};

Dequantize make_params(Rule rule, int64_t zero_point, double scale) {
  return Dequantize{rule, zero_point, scale, static_cast<float>(zero_point), static_cast<float>(scale)};
}

// The exact integer q - zp; when that overflows int64 it is formed in long
// double (exact: |q - zp| < 2^64) and rounded once on conversion.
bool exact_difference(int64_t q, int64_t zp, int64_t& d) { return !__builtin_sub_overflow(q, zp, &d); }

double difference_f64(int64_t q, int64_t zp) {
  int64_t d = 0;
  if (exact_difference(q, zp, d)) return static_cast<double>(d);
  return static_cast<double>(static_cast<long double>(q) - static_cast<long double>(zp));
}

float difference_f32(int64_t q, int64_t zp) {
  int64_t d = 0;
  if (exact_difference(q, zp, d)) return static_cast<float>(d);
  return static_cast<float>(static_cast<long double>(q) - static_cast<long double>(zp));
}

template <typename Out>
Out from_f32(float v) {
  return detail::from_f32<Out>(v);
}

template <typename Out, typename Q>
Out dequantize_element(Q q, const Dequantize& p) {
  switch (p.rule) {
    case Rule::PerTensor:
      if constexpr (std::is_same_v<Out, double>) {
        return difference_f64(q, p.zero_point) * p.scale;
      } else {
        return from_f32<Out>((static_cast<float>(q) - p.zero_point_f32) * p.scale_f32);
      }
    case Rule::Binary64Scale: return detail::from_f64<Out>(difference_f64(q, p.zero_point) * p.scale);
    case Rule::Binary32Scale: return from_f32<Out>(difference_f32(q, p.zero_point) * p.scale_f32);
  }
  return Out{};
}

// ---- vector paths ----

// Writes n values that `produce(start, count, floats)` computes in f32 into
// out: f32 directly, any other dtype through a block buffer with exactly one
// conversion per value. Returns false if `produce` declines.
template <typename Out, typename Produce>
bool emit_through_f32(Out* out, int64_t n, const Produce& produce) {
  if constexpr (std::is_same_v<Out, float>) {
    return produce(0, n, out);
  } else {
    float block[kFloatBlock];
    for (int64_t start = 0; start < n; start += kFloatBlock) {
      const int64_t count = std::min(n - start, kFloatBlock);
      if (!produce(start, count, block)) return false;
      for (int64_t i = 0; i < count; ++i) out[start + i] = from_f32<Out>(block[i]);
    }
    return true;
  }
}

// The vectorised equivalent of dequantize_element over a contiguous run, when
// one exists for these dtypes and parameters.
template <typename Q, typename Out>
bool dequantize_vectorised(const Q* in, Out* out, int64_t n, const Dequantize& p) {
  constexpr DType in_dtype = dtype_of<Q>();
  const auto count = [](int64_t c) { return static_cast<std::size_t>(c); };
  const auto in_f32 = [&](int64_t start, int64_t c, float* dst) {
    return simd::dequantize_to_f32(in_dtype, in + start, count(c), p.zero_point_f32, p.scale_f32, dst);
  };
  const auto in_binary64_to_f32 = [&](int64_t start, int64_t c, float* dst) {
    return simd::dequantize_binary64(in_dtype, in + start, count(c), static_cast<double>(p.zero_point), p.scale,
                                     DType::Float32, dst);
  };
  const bool small_zp64 = p.zero_point >= -kExactBinary64ZeroPoint && p.zero_point <= kExactBinary64ZeroPoint;
  switch (p.rule) {
    case Rule::PerTensor:
      if constexpr (std::is_same_v<Out, double>) {
        return small_zp64 && simd::dequantize_binary64(in_dtype, in, count(n), static_cast<double>(p.zero_point),
                                                       p.scale, DType::Float64, out);
      } else {
        return emit_through_f32(out, n, in_f32);
      }
    case Rule::Binary64Scale:
      if (!small_zp64) return false;
      if constexpr (std::is_same_v<Out, double> || std::is_same_v<Out, float>)
        return simd::dequantize_binary64(in_dtype, in, count(n), static_cast<double>(p.zero_point), p.scale,
                                         dtype_of<Out>(), out);
      else
        return emit_through_f32(out, n, in_binary64_to_f32);
    case Rule::Binary32Scale:
      // With 16-bit q and a small zp the per-tensor f32 formula computes
      // exactly fl32(fl32(q - zp) * s).
      if (std::is_same_v<Q, int32_t> || p.zero_point < -kExactBinary32ZeroPoint ||
          p.zero_point > kExactBinary32ZeroPoint)
        return false;
      return emit_through_f32(out, n, in_f32);
  }
  return false;
}

// n elements sharing parameters, `stride` elements apart.
template <typename Q, typename Out>
void dequantize_run(const Q* in, int64_t in_stride, Out* out, int64_t out_stride, int64_t n, const Dequantize& p) {
  if (in_stride == 1 && out_stride == 1 && n >= kMinVectorRun && dequantize_vectorised(in, out, n, p)) return;
  for (int64_t i = 0; i < n; ++i) out[i * out_stride] = dequantize_element<Out>(in[i * in_stride], p);
}

// Calls f(Tag<Q>, Tag<Out>) for the input's quantized and out's floating types.
template <typename F>
void dispatch_in_out(TensorRef input, TensorRef out, F&& f) {
  dispatch_quantized(input.dtype(), [&](auto in_tag) {
    dispatch_floating(out.dtype(), [&](auto out_tag) { f(in_tag, out_tag); });
  });
}

// ---- per tensor ----

bool dequantize_per_tensor_impl(KernelContext& ctx, const char* op, TensorRef input, double scale,
                                int64_t zero_point, int64_t quant_min, int64_t quant_max, DType dtype,
                                std::optional<DType> out_dtype, TensorRef out) {
  if (!check_tensor(ctx, op, "input", input) || !check_tensor(ctx, op, "out", out)) return false;
  if (!check_same_shape(ctx, op, "out", out, input, "input")) return false;
  if (!check_dequantize_args(ctx, op, input, quant_min, quant_max, dtype, out_dtype, "out_dtype", out)) return false;
  if (!check_scale(ctx, op, "scale", scale)) return false;

  const Dequantize p = make_params(Rule::PerTensor, zero_point, scale);
  dispatch_in_out(input, out, [&](auto in_tag, auto out_tag) {
    using Q = typename decltype(in_tag)::type;
    using Out = typename decltype(out_tag)::type;
    const auto* q = input.data_as<const Q>();
    auto* y = out.data_as<Out>();
    if (detail::same_layout(input, out)) {  // one run over memory in order
      dequantize_run(q, 1, y, 1, input.numel(), p);
      return;
    }
    const TensorRef tensors[] = {input, out};
    for_each_row(tensors, [&](int64_t, const int64_t*, const int64_t* offsets) {
      dequantize_run(q + offsets[0], row_stride(input), y + offsets[1], row_stride(out), row_length(input), p);
    });
  });
  return ctx.ok();
}

// ---- per channel / per token ----

// Parameters of channel or token c: scales f32 or f64, zero points i32, i64
// or absent (0).
class ChannelParams {
 public:
  ChannelParams(TensorRef scales, std::optional<TensorRef> zero_points)
      : scales_(scales),
        rule_(scales.dtype() == DType::Float64 ? Rule::Binary64Scale : Rule::Binary32Scale),
        zero_points_(zero_points ? *zero_points : scales),
        has_zero_points_(zero_points.has_value()) {}

  Dequantize operator()(int64_t c) const {
    return make_params(rule_, has_zero_points_ ? zero_points_[c] : 0, scales_[c]);
  }

 private:
  FlatScales scales_;
  Rule rule_;
  FlatIntegers zero_points_;  // unread when there are no zero points
  bool has_zero_points_;
};

template <typename Q, typename Out>
void dequantize_per_channel_typed(TensorRef input, const ChannelParams& params, int64_t axis, TensorRef out) {
  const auto* q = input.data_as<const Q>();
  auto* y = out.data_as<Out>();
  detail::for_each_channel_run(input, out, axis, [&](int64_t i, int64_t is, int64_t o, int64_t os, int64_t n, int64_t c) {
    dequantize_run(q + i, is, y + o, os, n, params(c));
  });
}

template <typename Q, typename Out>
void dequantize_per_token_typed(TensorRef input, const ChannelParams& params, TensorRef out) {
  const auto* q = input.data_as<const Q>();
  auto* y = out.data_as<Out>();
  // A token is one logical row, so rows enumerate tokens in order.
  const TensorRef tensors[] = {input, out};
  for_each_row(tensors, [&](int64_t token, const int64_t*, const int64_t* offsets) {
    dequantize_run(q + offsets[0], row_stride(input), y + offsets[1], row_stride(out), row_length(input),
                   params(token));
  });
}

bool check_optional_tensor(KernelContext& ctx, const char* op, const char* what, std::optional<TensorRef> t) {
  return !t || check_tensor(ctx, op, what, *t);
}

}  // namespace

bool dequantize_per_tensor_out(KernelContext& ctx, TensorRef input, double scale, int64_t zero_point,
                               int64_t quant_min, int64_t quant_max, DType dtype, std::optional<DType> out_dtype,
                               TensorRef out) {
  return dequantize_per_tensor_impl(ctx, op_name::dequantize_per_tensor_out, input, scale, zero_point, quant_min, quant_max, dtype,
                                    out_dtype, out);
}

bool dequantize_per_tensor_tensor_out(KernelContext& ctx, TensorRef input, TensorRef scale, TensorRef zero_point,
                                      int64_t quant_min, int64_t quant_max, DType dtype,
                                      std::optional<DType> out_dtype, TensorRef out) {
  const char* op = op_name::dequantize_per_tensor_tensor_out;
  if (!check_tensor(ctx, op, "scale", scale) || !check_tensor(ctx, op, "zero_point", zero_point)) return false;
  if (!check_dtype(ctx, op, "scale", scale, DType::Float64)) return false;
  if (!check_dtype(ctx, op, "zero_point", zero_point, DType::Int64)) return false;
  if (scale.numel() != 1) return fail(ctx, op, "scale must have exactly one element, got {}", scale.numel());
  if (zero_point.numel() != 1)
    return fail(ctx, op, "zero_point must have exactly one element, got {}", zero_point.numel());
  // One element sits at offset 0 whatever the strides.
  return dequantize_per_tensor_impl(ctx, op, input, *scale.data_as<const double>(),
                                    *zero_point.data_as<const int64_t>(), quant_min, quant_max, dtype, out_dtype,
                                    out);
}

bool dequantize_per_channel_out(KernelContext& ctx, TensorRef input, TensorRef scales,
                                std::optional<TensorRef> zero_points, int64_t axis, int64_t quant_min,
                                int64_t quant_max, DType dtype, std::optional<DType> out_dtype, TensorRef out) {
  const char* op = op_name::dequantize_per_channel_out;
  if (!check_tensor(ctx, op, "input", input) || !check_tensor(ctx, op, "scales", scales) ||
      !check_optional_tensor(ctx, op, "zero_points", zero_points) || !check_tensor(ctx, op, "out", out))
    return false;
  if (!check_same_shape(ctx, op, "out", out, input, "input")) return false;
  const auto normalized = detail::normalize_axis(ctx, op, axis, input.dim());
  if (!normalized) return false;
  const int64_t channels = input.size(*normalized);
  if (!check_dequantize_params(ctx, op, scales, zero_points, channels, "input.size(axis)")) return false;
  if (!check_dequantize_args(ctx, op, input, quant_min, quant_max, dtype, out_dtype, "out_dtype", out)) return false;
  if (!check_scales_dtype(ctx, op, scales)) return false;
  if (!check_scales(ctx, op, "scales", FlatScales(scales), channels)) return false;

  const ChannelParams params(scales, zero_points);
  dispatch_in_out(input, out, [&](auto in_tag, auto out_tag) {
    dequantize_per_channel_typed<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(
        input, params, *normalized, out);
  });
  return ctx.ok();
}

bool dequantize_per_token_out(KernelContext& ctx, TensorRef input, TensorRef scales, TensorRef zero_points,
                              int64_t quant_min, int64_t quant_max, DType dtype, DType output_dtype,
                              TensorRef out) {
  const char* op = op_name::dequantize_per_token_out;
  if (!check_tensor(ctx, op, "input", input) || !check_tensor(ctx, op, "scales", scales) ||
      !check_tensor(ctx, op, "zero_points", zero_points) || !check_tensor(ctx, op, "out", out))
    return false;
  if (input.dim() < 1) return fail(ctx, op, "input must have at least one dimension, got a 0-dim tensor");
  if (!check_same_shape(ctx, op, "out", out, input, "input")) return false;
  int64_t tokens = 1;
  for (int64_t d = 0; d + 1 < input.dim(); ++d) tokens *= input.size(d);
  if (!check_dequantize_params(ctx, op, scales, zero_points, tokens, "the number of tokens")) return false;
  if (!check_dequantize_args(ctx, op, input, quant_min, quant_max, dtype, output_dtype, "output_dtype", out))
    return false;
  if (!check_scales_dtype(ctx, op, scales)) return false;
  if (!check_scales(ctx, op, "scales", FlatScales(scales), tokens)) return false;

  const ChannelParams params(scales, zero_points);
  dispatch_in_out(input, out, [&](auto in_tag, auto out_tag) {
    dequantize_per_token_typed<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(input, params,
                                                                                                  out);
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::quantized
