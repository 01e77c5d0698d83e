// What conv2d and linear share: both run as an XNNPACK qc8 (int8, one
// weight scale per output channel) NHWC convolution. The prepared state
// holds the weights reordered for XNNPACK, the bias in accumulator units
// and the requantization parameters; each run state creates its own
// operator from it (XNNPACK packs the weights then).
#ifndef ET_OPS_SRC_KERNELS_XNNPACK_CONVOLUTION_H
#define ET_OPS_SRC_KERNELS_XNNPACK_CONVOLUTION_H

#include <array>
#include <memory>
#include <vector>

#include "engine.h"
#include "quantization.h"

namespace et_ops::kernels::xnnpack::detail {

struct ConvolutionGeometry {
  std::size_t batch = 1, in_height = 1, in_width = 1, in_channels = 0;
  std::size_t out_channels = 0, groups = 1;
  uint32_t kernel_height = 1, kernel_width = 1;
  uint32_t stride_height = 1, stride_width = 1;
  uint32_t padding_height = 0, padding_width = 0;
  uint32_t dilation_height = 1, dilation_width = 1;
  int64_t out_height = 1, out_width = 1;
};

// A 1x1 kernel without padding or strides: output pixel i reads input pixel
// i alone, whatever the image's shape (a matrix product over the pixels).
inline bool is_pointwise(const ConvolutionGeometry& g) {
  return g.kernel_height == 1 && g.kernel_width == 1 && g.stride_height == 1 && g.stride_width == 1 &&
         g.padding_height == 0 && g.padding_width == 0;
}

class OnednnConvolution;

struct ConvolutionState {
  const char* op = "";
  ConvolutionGeometry geometry;
  std::vector<int8_t> weights;  // [groups][group output channels][kh][kw][group input channels]
  std::vector<float> weight_scales;
  std::vector<int32_t> bias;
  QuantParams input;
  OutputParams output;
  int64_t input_numel = 0, output_numel = 0;  // what every run's tensors hold
  // conv2d's accumulators on oneDNN instead of XNNPACK (same bytes), where it is exact and faster.
  std::shared_ptr<const OnednnConvolution> onednn;
};

// Makes a run state's XNNPACK operator for the state; null (reported) on failure.
std::unique_ptr<RunStateOperator> create_convolution(KernelContext& ctx, const ConvolutionState& state);

// Runs it: input and out hold the state's element counts.
bool run_convolution(KernelContext& ctx, const ConvolutionState& state, RunStateOperator& instance,
                     const RunEnvironment& env, TensorRef input, TensorRef out);

}  // namespace et_ops::kernels::xnnpack::detail

#endif  // ET_OPS_SRC_KERNELS_XNNPACK_CONVOLUTION_H
