// XNNPACK's allocations, as its operators compute them (convolution-nhwc.c,
// max-pooling-nhwc.c), with the rounding of its widest x86 tiles: at most
// 16 output channels (nr), 8 input channels (kr) and 16 rows (mr) a tile.
#include "engine_memory.h"

#include "kernels.h"

#include <fmt/format.h>

#include <algorithm>

namespace et_ops::kernels::xnnpack::detail {
namespace {

constexpr uint64_t kTileRows = 16, kTileChannels = 16, kTileDepth = 8;
constexpr uint64_t kPointer = sizeof(void*);

uint64_t round_up(uint64_t n, uint64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

}  // namespace

RequestBytes convolution_packed_weights(const ConvolutionGeometry& g) {
  const uint64_t taps = uint64_t(g.kernel_height) * g.kernel_width;
  const uint64_t group_in = g.in_channels / g.groups, group_out = g.out_channels / g.groups;
  const RequestBytes per_channel =
      RequestBytes::product({taps, round_up(group_in, kTileDepth)}) + RequestBytes(sizeof(int32_t) + sizeof(float));
  return RequestBytes::product({g.groups, round_up(group_out, kTileChannels)}) * per_channel;
}

RequestBytes convolution_indirection(const ConvolutionGeometry& g) {
  if (is_pointwise(g)) return 0;
  const uint64_t taps = uint64_t(g.kernel_height) * g.kernel_width;
  const RequestBytes pixels = RequestBytes::product({uint64_t(g.out_height), uint64_t(g.out_width)}) + kTileRows;
  return RequestBytes::product({kPointer, taps}) * pixels;
}

RequestBytes max_pooling_indirection(uint32_t kernel_height, uint32_t kernel_width, uint32_t stride_width,
                                     uint32_t dilation_width, int64_t out_height, int64_t out_width) {
  const uint64_t taps = uint64_t(kernel_height) * kernel_width;
  const uint64_t step_width = dilation_width > 1 ? kernel_width : std::min(stride_width, kernel_width);
  const RequestBytes step_height =
      RequestBytes(taps) + RequestBytes::product({uint64_t(out_width - 1), step_width, kernel_height});
  return RequestBytes(kPointer) * (RequestBytes(kTileRows) + RequestBytes(uint64_t(out_height)) * step_height);
}

bool check_convolution_memory(KernelContext& ctx, const char* op, const ConvolutionGeometry& g) {
  const std::string geometry =
      fmt::format("{} groups of {} -> {} channels, a {}x{} kernel over {}x{} output pixels", g.groups,
                  g.in_channels / g.groups, g.out_channels / g.groups, g.kernel_height, g.kernel_width, g.out_height,
                  g.out_width);
  return kernels::detail::check_kernel_memory(ctx, op, "XNNPACK's packed weights", convolution_packed_weights(g),
                                              geometry) &&
         kernels::detail::check_kernel_memory(ctx, op, "XNNPACK's indirection buffer", convolution_indirection(g),
                                              geometry);
}

bool check_max_pooling_memory(KernelContext& ctx, const char* op, const PoolingState& s, int64_t out_height,
                              int64_t out_width) {
  return kernels::detail::check_kernel_memory(
      ctx, op, "XNNPACK's indirection buffer",
      max_pooling_indirection(s.kernel_height, s.kernel_width, s.stride_width, s.dilation_width, out_height, out_width),
      fmt::format("a {}x{} window (stride {}, dilation {}) over {}x{} output pixels", s.kernel_height,
                  s.kernel_width, s.stride_width, s.dilation_width, out_height, out_width));
}

}  // namespace et_ops::kernels::xnnpack::detail
