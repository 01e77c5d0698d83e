// Requantizing int32 accumulators of a channels-last convolution to int8
// with XNNPACK's own arithmetic (its fp32 requantization), so a convolution
// whose accumulators come from another engine gives XNNPACK's bytes:
//   out = clamp(rne(float(acc + bias[c]) * scale[c]), min - zp, max - zp) + zp
// in float32, acc + bias wrapping in int32. Vectorised with Highway; every
// lane does the scalar operations, so every target gives the same bytes.
#ifndef ET_OPS_SRC_KERNELS_XNNPACK_REQUANTIZE_H
#define ET_OPS_SRC_KERNELS_XNNPACK_REQUANTIZE_H

#include <cstddef>
#include <cstdint>

namespace et_ops::kernels::xnnpack::detail {

struct Requantization {
  const int32_t* bias;   // per channel, accumulator units
  const float* scale;    // per channel: input_scale * weight_scale / output_scale
  int32_t zero_point;    // the output's
  int32_t min, max;      // the output's clamp, quantized units
};

// acc is [pixels][channels]; pixel p's outputs start at out + p * out_stride.
void requantize(const int32_t* acc, std::size_t pixels, std::size_t channels, const Requantization& r, int8_t* out,
                std::size_t out_stride);

}  // namespace et_ops::kernels::xnnpack::detail

#endif  // ET_OPS_SRC_KERNELS_XNNPACK_REQUANTIZE_H
