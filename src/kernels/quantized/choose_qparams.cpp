// choose_qparams.Tensor_out and choose_qparams_per_token_asymmetric.out
// (reference §5): PyTorch's determine_qparams numerics in binary32, with our
// added errors for NaN input, empty input and non-finite scales.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "checks.h"
#include "per_token.h"
#include "vector_kernels.h"
#include "et_ops/kernels/quantized.h"

namespace et_ops::kernels::quantized {
namespace {

using detail::check_dtype;
using detail::check_tensor;
using detail::fail;
using detail::row_offset;
using detail::shape_string;

// The clipped range [min(x, 0), max(x, 0)] of some elements. Zeros are +0,
// so a signed zero in the input never changes a result.
struct ClippedRange {
  float low = 0.0f;
  float high = 0.0f;
  bool has_nan = false;

  void add(float x) {
    if (std::isnan(x)) has_nan = true;
    else if (x < low) low = x;
    else if (x > high) high = x;
  }
};

ClippedRange row_range(TensorRef input, int64_t row) {
  const float* data = input.data_as<const float>() + row_offset(input, row);
  const int64_t length = input.dim() == 0 ? 1 : input.size(input.dim() - 1);
  const int64_t stride = input.dim() == 0 ? 1 : input.stride(input.dim() - 1);
  ClippedRange range;
  if (stride == 1) {
    range.has_nan = simd::clipped_range(data, static_cast<std::size_t>(length), &range.low, &range.high);
    return range;
  }
  for (int64_t j = 0; j < length; ++j) range.add(data[j * stride]);
  return range;
}

ClippedRange whole_range(TensorRef input) {
  ClippedRange range;
  const int64_t length = input.dim() == 0 ? 1 : input.size(input.dim() - 1);
  if (length == 0) return range;
  const int64_t rows = input.numel() / length;
  for (int64_t row = 0; row < rows; ++row) {
    ClippedRange part = row_range(input, row);
    range.add(part.low);
    range.add(part.high);
    range.has_nan = range.has_nan || part.has_nan;
  }
  return range;
}

// ---- choose_qparams.Tensor_out ----

struct QParams {
  double scale;
  int64_t zero_point;
};

// The structural promises (checks.h) of the three tensors, before any of
// their sizes, strides or elements are used.
bool check_structures(KernelContext& ctx, const char* op, TensorRef input, TensorRef scale_out,
                      TensorRef zero_point_out) {
  return check_tensor(ctx, op, "input", input) && check_tensor(ctx, op, "scale_out", scale_out) &&
         check_tensor(ctx, op, "zero_point_out", zero_point_out);
}

bool check_tensor_args(KernelContext& ctx, TensorRef input, int64_t quant_min, int64_t quant_max,
                       TensorRef scale_out, TensorRef zero_point_out) {
  if (!check_structures(ctx, op_name::choose_qparams_tensor_out, input, scale_out, zero_point_out)) return false;
  if (quant_min >= quant_max)
    return fail(ctx, op_name::choose_qparams_tensor_out, "quant_min {} must be less than quant_max {}", quant_min, quant_max);
  constexpr int64_t lo = std::numeric_limits<int32_t>::min();
  constexpr int64_t hi = std::numeric_limits<int32_t>::max();
  if (quant_min < lo || quant_max > hi)
    return fail(ctx, op_name::choose_qparams_tensor_out, "quant_min {} and quant_max {} must fit in int32", quant_min, quant_max);
  if (!check_dtype(ctx, op_name::choose_qparams_tensor_out, "input", input, DType::Float32)) return false;
  if (!check_dtype(ctx, op_name::choose_qparams_tensor_out, "scale_out", scale_out, DType::Float64)) return false;
  if (!check_dtype(ctx, op_name::choose_qparams_tensor_out, "zero_point_out", zero_point_out, DType::Int64)) return false;
  if (scale_out.numel() != 1)
    return fail(ctx, op_name::choose_qparams_tensor_out, "scale_out must have exactly one element, got shape {}", shape_string(scale_out));
  if (zero_point_out.numel() != 1)
    return fail(ctx, op_name::choose_qparams_tensor_out, "zero_point_out must have exactly one element, got shape {}",
                shape_string(zero_point_out));
  if (input.numel() == 0) return fail(ctx, op_name::choose_qparams_tensor_out, "input is empty; there is no range to choose from");
  return true;
}

// Steps 3-8 of §5.2 on the clipped range; false (error reported) when the
// scale is not finite.
bool tensor_qparams(KernelContext& ctx, ClippedRange range, int64_t quant_min, int64_t quant_max, float eps,
                    QParams& result) {
  const float levels = static_cast<float>(quant_max - quant_min);
  float scale = (range.high - range.low) / levels;
  if (scale < eps) scale = eps;
  if (!std::isfinite(scale))
    return fail(ctx, op_name::choose_qparams_tensor_out, "input range [{}, {}] with eps {} gives a non-finite scale {}", range.low,
                range.high, eps, scale);
  if (scale == 0.0f) {
    // Degenerate (ours): ET's fallback instead of PyTorch's 0/0.
    const bool min_is_closer = std::llabs(quant_min) < std::llabs(quant_max);
    result = QParams{0.1, min_is_closer ? quant_min : quant_max};
    return true;
  }
  const float rounded = std::nearbyint(range.low / scale);
  // |rounded| stays near quant_max - quant_min; clamp in binary64, where it is exact.
  double zero_point = static_cast<double>(quant_min) - static_cast<double>(rounded);
  if (zero_point < static_cast<double>(quant_min)) zero_point = static_cast<double>(quant_min);
  if (zero_point > static_cast<double>(quant_max)) zero_point = static_cast<double>(quant_max);
  result = QParams{static_cast<double>(scale), static_cast<int64_t>(zero_point)};
  return true;
}

// ---- choose_qparams_per_token_asymmetric.out ----

bool check_per_token_output(KernelContext& ctx, TensorRef input, TensorRef out, const char* name) {
  bool matches = out.dim() == input.dim() && out.size(out.dim() - 1) == 1;
  for (int64_t d = 0; matches && d + 1 < input.dim(); ++d) matches = out.size(d) == input.size(d);
  if (matches) return true;
  std::string expected = "[";
  for (int64_t d = 0; d + 1 < input.dim(); ++d) expected += fmt::format("{}, ", input.size(d));
  return fail(ctx, op_name::choose_qparams_per_token_asymmetric_out, "{} has shape {}, expected {}1] (input shape {} with the last dimension 1)", name,
              shape_string(out), expected, shape_string(input));
}

bool check_per_token_args(KernelContext& ctx, TensorRef input, TensorRef scale_out, TensorRef zero_point_out) {
  if (!check_structures(ctx, op_name::choose_qparams_per_token_asymmetric_out, input, scale_out, zero_point_out)) return false;
  if (input.dim() < 1) return fail(ctx, op_name::choose_qparams_per_token_asymmetric_out, "input must have at least one dimension");
  if (input.size(input.dim() - 1) < 1)
    return fail(ctx, op_name::choose_qparams_per_token_asymmetric_out, "input has shape {}: tokens of zero elements have no range",
                shape_string(input));
  if (!check_per_token_output(ctx, input, scale_out, "scale_out")) return false;
  if (!check_per_token_output(ctx, input, zero_point_out, "zero_point_out")) return false;
  if (!check_dtype(ctx, op_name::choose_qparams_per_token_asymmetric_out, "input", input, DType::Float32)) return false;
  if (!check_dtype(ctx, op_name::choose_qparams_per_token_asymmetric_out, "scale_out", scale_out, DType::Float64)) return false;
  return check_dtype(ctx, op_name::choose_qparams_per_token_asymmetric_out, "zero_point_out", zero_point_out, DType::Int64);
}

// §5.3 steps 3-8 for one token, in binary32.
bool token_qparams(KernelContext& ctx, ClippedRange range, int64_t token, QParams& result) {
  constexpr float kMinScale = 1.1920928955078125e-07f;  // 2^-23, float32 machine epsilon
  constexpr float kQMin = -128.0f;
  constexpr float kQMax = 127.0f;
  float scale = (range.high - range.low) / 255.0f;
  if (!std::isfinite(scale))
    return fail(ctx, op_name::choose_qparams_per_token_asymmetric_out, "input token {} has range [{}, {}], which gives a non-finite scale", token,
                range.low, range.high);
  if (scale < kMinScale) scale = kMinScale;
  const float descaled_min = range.low / scale;
  const float descaled_max = range.high / scale;
  const float error_sum = (kQMin + descaled_min) + (kQMax + descaled_max);
  float zero_point = error_sum > 0.0f ? kQMin - descaled_min : kQMax - descaled_max;
  zero_point = std::nearbyint(std::fmin(std::fmax(zero_point, kQMin), kQMax));
  result = QParams{static_cast<double>(scale), static_cast<int64_t>(zero_point)};
  return true;
}

}  // namespace

bool choose_qparams_tensor_out(KernelContext& ctx, TensorRef input, int64_t quant_min, int64_t quant_max,
                               double eps, DType /*dtype: unused and unchecked, as in ET*/, TensorRef scale_out,
                               TensorRef zero_point_out) {
  if (!check_tensor_args(ctx, input, quant_min, quant_max, scale_out, zero_point_out)) return false;
  if (std::isnan(eps)) return fail(ctx, op_name::choose_qparams_tensor_out, "eps must not be NaN");
  const ClippedRange range = whole_range(input);
  if (range.has_nan) return fail(ctx, op_name::choose_qparams_tensor_out, "input contains NaN; its range is undefined");
  QParams params{};
  if (!tensor_qparams(ctx, range, quant_min, quant_max, static_cast<float>(eps), params)) return false;
  *scale_out.data_as<double>() = params.scale;
  *zero_point_out.data_as<int64_t>() = params.zero_point;
  return true;
}

bool detail::choose_qparams_per_token(KernelContext& ctx, TensorRef input, TensorRef scale_out,
                                      TensorRef zero_point_out) {
  if (!check_per_token_args(ctx, input, scale_out, zero_point_out)) return false;
  const int64_t tokens = input.numel() / input.size(input.dim() - 1);
  for (int64_t token = 0; token < tokens; ++token) {
    const ClippedRange range = row_range(input, token);
    if (range.has_nan) return fail(ctx, op_name::choose_qparams_per_token_asymmetric_out, "input token {} contains NaN; its range is undefined", token);
    QParams params{};
    if (!token_qparams(ctx, range, token, params)) return false;
    scale_out.data_as<double>()[row_offset(scale_out, token)] = params.scale;
    zero_point_out.data_as<int64_t>()[row_offset(zero_point_out, token)] = params.zero_point;
  }
  return true;
}

bool choose_qparams_per_token_asymmetric_out(KernelContext& ctx, TensorRef input, DType /*dtype: unused, as in ET*/,
                                             TensorRef scale_out, TensorRef zero_point_out) {
  return detail::choose_qparams_per_token(ctx, input, scale_out, zero_point_out);
}

}  // namespace et_ops::kernels::quantized
