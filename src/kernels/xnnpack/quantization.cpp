// Checking quantization parameters and quantizing the bias.
#include "quantization.h"

#include <cmath>

namespace et_ops::kernels::xnnpack::detail {

std::optional<QuantParams> quant_params(KernelContext& ctx, const char* op, const char* name, double scale,
                                        int64_t zero_point) {
  const std::string scale_name = std::string(name) + "_scale";
  const std::string zero_point_name = std::string(name) + "_zero_point";
  if (!check_scale(ctx, op, scale_name.c_str(), scale)) return std::nullopt;
  if (!check_zero_point(ctx, op, zero_point_name.c_str(), zero_point)) return std::nullopt;
  return QuantParams{static_cast<float>(scale), static_cast<int8_t>(zero_point)};
}

std::optional<OutputParams> output_params(KernelContext& ctx, const char* op, double scale, int64_t zero_point,
                                          int64_t output_min, int64_t output_max) {
  const std::optional<QuantParams> q = quant_params(ctx, op, "output", scale, zero_point);
  if (!q || !check_output_range(ctx, op, output_min, output_max)) return std::nullopt;
  return OutputParams{*q, static_cast<int8_t>(output_min), static_cast<int8_t>(output_max)};
}

std::optional<std::vector<float>> checked_weight_scales(KernelContext& ctx, const char* op, TensorRef scales,
                                                int64_t channels, float input_scale, float output_scale) {
  if (!check_constant(ctx, op, "weight_scales", scales) || !check_dtype(ctx, op, "weight_scales", scales, DType::Float32))
    return std::nullopt;
  if (scales.dim() != 1 || (scales.numel() != channels && scales.numel() != 1)) {
    fail(ctx, op, "weight_scales must have 1 or {} elements (one per output channel), got sizes {}", channels,
         shape_string(scales));
    return std::nullopt;
  }
  std::vector<float> out(static_cast<std::size_t>(channels));
  const float* data = scales.data_as<const float>();
  for (int64_t c = 0; c < channels; ++c) {
    const float s = data[scales.numel() == 1 ? 0 : c];
    if (!(std::isfinite(s) && s >= std::numeric_limits<float>::min())) {
      fail(ctx, op, "weight_scales[{}] must be a positive, finite scale, got {}", c, s);
      return std::nullopt;
    }
    const float requantization = input_scale * s / output_scale;
    if (!(requantization >= 0x1.0p-32f && requantization < 256.0f)) {
      fail(ctx, op,
           "input_scale * weight_scales[{}] / output_scale = {} is outside the range XNNPACK requantizes "
           "([2^-32, 256))",
           c, requantization);
      return std::nullopt;
    }
    out[static_cast<std::size_t>(c)] = s;
  }
  return out;
}

std::optional<std::vector<int32_t>> quantized_bias(KernelContext& ctx, const char* op,
                                                   const std::optional<TensorRef>& bias, int64_t channels,
                                                   float input_scale, const std::vector<float>& weight_scales) {
  std::vector<int32_t> out(static_cast<std::size_t>(channels), 0);
  if (!bias) return out;
  if (!check_constant(ctx, op, "bias", *bias) || !check_dtype(ctx, op, "bias", *bias, DType::Float32))
    return std::nullopt;
  if (bias->dim() != 1 || bias->numel() != channels) {
    fail(ctx, op, "bias must have sizes [{}] (one per output channel), got {}", channels, shape_string(*bias));
    return std::nullopt;
  }
  const float* data = bias->data_as<const float>();
  for (int64_t c = 0; c < channels; ++c) {
    if (!std::isfinite(data[c])) {
      fail(ctx, op, "bias[{}] is not finite ({})", c, data[c]);
      return std::nullopt;
    }
    const double scale = static_cast<double>(input_scale) * weight_scales[static_cast<std::size_t>(c)];
    const double q = std::nearbyint(static_cast<double>(data[c]) / scale);  // round half to even
    out[static_cast<std::size_t>(c)] = static_cast<int32_t>(std::fmin(std::fmax(q, INT32_MIN), INT32_MAX));
  }
  return out;
}

}  // namespace et_ops::kernels::xnnpack::detail
