// The quantization parameters of an int8 operator as the program gives
// them, checked once, and the requantization XNNPACK is asked for.
#ifndef ET_OPS_SRC_KERNELS_XNNPACK_QUANTIZATION_H
#define ET_OPS_SRC_KERNELS_XNNPACK_QUANTIZATION_H

#include <cstdint>
#include <optional>
#include <vector>

#include "engine.h"

namespace et_ops::kernels::xnnpack::detail {

// One int8 tensor's scale and zero point, as XNNPACK takes them.
struct QuantParams {
  float scale = 1.0f;
  int8_t zero_point = 0;
};

// Checks (scale, zero_point) of the tensor called `name`; reported when invalid.
std::optional<QuantParams> quant_params(KernelContext& ctx, const char* op, const char* name, double scale,
                                        int64_t zero_point);

// The output's scale, zero point and clamp (quantized units).
struct OutputParams {
  QuantParams q;
  int8_t min = INT8_MIN;
  int8_t max = INT8_MAX;
};
std::optional<OutputParams> output_params(KernelContext& ctx, const char* op, double scale, int64_t zero_point,
                                          int64_t output_min, int64_t output_max);

// The weights' per-output-channel scales (a float32 constant of `channels`
// elements, or of 1 for a per-tensor scale), each valid, and every
// requantization scale input_scale * weight_scale / output_scale within
// what XNNPACK accepts ([2^-32, 256)).
std::optional<std::vector<float>> checked_weight_scales(KernelContext& ctx, const char* op, TensorRef scales,
                                                int64_t channels, float input_scale, float output_scale);

// The float32 bias (a constant of `channels` elements, or none) as int32
// accumulator units: round-half-even of bias / (input_scale * weight_scale),
// saturated, as PyTorch's quantized engines quantize it.
std::optional<std::vector<int32_t>> quantized_bias(KernelContext& ctx, const char* op,
                                                   const std::optional<TensorRef>& bias, int64_t channels,
                                                   float input_scale, const std::vector<float>& weight_scales);

}  // namespace et_ops::kernels::xnnpack::detail

#endif  // ET_OPS_SRC_KERNELS_XNNPACK_QUANTIZATION_H
