// The depthwise convolution kernel behind aten::convolution.out (one
// input channel per group, as MobileNet's 3x3 layers): a direct kernel,
// vectorised across neighbouring output pixels, that sums each output's
// taps in the order of the convolution's contract (see convolution.cpp).
#ifndef ET_OPS_SRC_KERNELS_PORTABLE_DEPTHWISE_H
#define ET_OPS_SRC_KERNELS_PORTABLE_DEPTHWISE_H

#include <cstdint>

namespace et_ops::kernels::portable::detail {

// A depthwise convolution: output channel oc reads input channel
// oc / multiplier only. Strides are in elements, in (N, C, H, W) order.
struct Depthwise {
  const float* input;
  int64_t input_strides[4];
  const float* weight;
  int64_t weight_strides[4];
  const float* bias;  // or null
  int64_t bias_stride;
  float* out;
  int64_t out_strides[4];
  int64_t batch, channels, multiplier;
  int64_t in_h, in_w, out_h, out_w, kernel_h, kernel_w;
  int64_t stride_h, stride_w, padding_h, padding_w, dilation_h, dilation_w;
};

// Writes every element of out; false (having written nothing) when the
// input rows are too wide, or the kernel too large, for its band buffers:
// the caller then computes the same sum as a matrix product.
bool depthwise_convolution(const Depthwise& convolution);

}  // namespace et_ops::kernels::portable::detail

#endif  // ET_OPS_SRC_KERNELS_PORTABLE_DEPTHWISE_H
