// Output pixels computed one at a time (see the header); the products
// compiled once per Highway target and dispatched at run time.
#define HWY_TARGET_INCLUDE "exact_pixels_simd.cpp"
#include "common/hwy_per_target.h"

#include <algorithm>

#include "exact_pixels.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::xnnpack::detail)

// One group's window of one output pixel: (input - zero point) per
// [kH][kW][C/groups], 0 where the window lies over the padding.
void GatherWindow(const ConvolutionGeometry& g, const int8_t* input, int32_t zero_point, int64_t image, int64_t oy,
                  int64_t ox, std::size_t group, int16_t* window) {
  const std::size_t group_channels = g.in_channels / g.groups;
  for (uint32_t ky = 0; ky < g.kernel_height; ++ky) {
    for (uint32_t kx = 0; kx < g.kernel_width; ++kx, window += group_channels) {
      const int64_t iy = oy * g.stride_height - int64_t(g.padding_height) + int64_t(ky) * g.dilation_height;
      const int64_t ix = ox * g.stride_width - int64_t(g.padding_width) + int64_t(kx) * g.dilation_width;
      if (iy < 0 || ix < 0 || iy >= int64_t(g.in_height) || ix >= int64_t(g.in_width)) {
        std::fill(window, window + group_channels, int16_t(0));
        continue;
      }
      const int8_t* from = input + ((std::size_t(image) * g.in_height + std::size_t(iy)) * g.in_width +
                                    std::size_t(ix)) * g.in_channels + group * group_channels;
      for (std::size_t c = 0; c < group_channels; ++c) window[c] = int16_t(int32_t(from[c]) - zero_point);
    }
  }
}

// sum(window[k] * weights[k]) for k < n, wrapping in int32 as XNNPACK's
// accumulators do (each pair of int16 products is exact in int32: the
// order of the sums changes nothing).
int32_t Dot(const int16_t* window, const int8_t* weights, std::size_t n) {
  uint32_t total = 0;
  std::size_t k = 0;
#if HWY_TARGET != HWY_SCALAR  // single lanes: the loop below is the whole product
  const hn::ScalableTag<int32_t> d32;
  const hn::Repartition<int16_t, decltype(d32)> d16;
  const hn::Rebind<int8_t, decltype(d16)> d8;
  const std::size_t lanes = hn::Lanes(d16);
  auto sum = hn::Zero(d32), odd = hn::Zero(d32);
  for (; k + lanes <= n; k += lanes) {
    const auto w = hn::PromoteTo(d16, hn::LoadU(d8, weights + k));
    sum = hn::ReorderWidenMulAccumulate(d32, hn::LoadU(d16, window + k), w, sum, odd);
  }
  total = static_cast<uint32_t>(hn::GetLane(hn::SumOfLanes(d32, hn::Add(sum, odd))));
#endif
  for (; k < n; ++k) total += static_cast<uint32_t>(int32_t(window[k]) * int32_t(weights[k]));
  return static_cast<int32_t>(total);
}

void ComputePixels(const ConvolutionGeometry& g, const int8_t* weights, int32_t input_zero_point,
                   const Requantization& q, const int8_t* input, const std::vector<std::size_t>& pixels,
                   PixelScratch& scratch, int8_t* out) {
  const std::size_t taps = std::size_t(g.kernel_height) * g.kernel_width;
  const std::size_t per_output = taps * (g.in_channels / g.groups), group_outputs = g.out_channels / g.groups;
  scratch.window.resize(per_output);
  scratch.accumulators.resize(g.out_channels);
  for (const std::size_t pixel : pixels) {
    const int64_t ox = int64_t(pixel % std::size_t(g.out_width));
    const int64_t oy = int64_t(pixel / std::size_t(g.out_width) % std::size_t(g.out_height));
    const int64_t image = int64_t(pixel / (std::size_t(g.out_width) * std::size_t(g.out_height)));
    for (std::size_t group = 0; group < g.groups; ++group) {
      GatherWindow(g, input, input_zero_point, image, oy, ox, group, scratch.window.data());
      for (std::size_t o = group * group_outputs; o < (group + 1) * group_outputs; ++o)
        scratch.accumulators[o] = Dot(scratch.window.data(), weights + o * per_output, per_output);
    }
    requantize(scratch.accumulators.data(), 1, g.out_channels, q, out + pixel * g.out_channels, g.out_channels);
  }
}

// acc[o] += sum over k < count of deltas[k] * weights[rows[k] + o], for
// o < n, wrapping in int32; each accumulator loaded and stored once.
void AddScaledRows(const int32_t* deltas, const std::size_t* rows, std::size_t count, const int8_t* weights,
                   std::size_t n, int32_t* acc) {
  std::size_t o = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<int32_t> d32;
  const hn::Rebind<int8_t, decltype(d32)> d8;
  const std::size_t lanes = hn::Lanes(d32);
  for (; o + lanes <= n; o += lanes) {
    auto sum = hn::LoadU(d32, acc + o);
    for (std::size_t k = 0; k < count; ++k)
      sum = hn::Add(sum, hn::Mul(hn::PromoteTo(d32, hn::LoadU(d8, weights + rows[k] + o)), hn::Set(d32, deltas[k])));
    hn::StoreU(sum, d32, acc + o);
  }
#endif
  for (; o < n; ++o) {
    uint32_t sum = uint32_t(acc[o]);
    for (std::size_t k = 0; k < count; ++k) sum += uint32_t(deltas[k] * int32_t(weights[rows[k] + o]));
    acc[o] = int32_t(sum);
  }
}

// The bytes at positions [first, last) lie in one input pixel and one
// group: their coordinates, the output pixels they reach and the
// accumulators there are visited once.
void CorrectPixelGroup(const ConvolutionGeometry& g, const int8_t* weights_by_tap, const ClampedBytes& clamped,
                       std::size_t first, std::size_t last, int64_t first_row, int64_t rows, CorrectionScratch& scratch,
                       int32_t* accumulators) {
  const std::size_t group_channels = g.in_channels / g.groups, group_outputs = g.out_channels / g.groups;
  const std::size_t per_output = std::size_t(g.kernel_height) * g.kernel_width * group_channels;
  const std::size_t pixel = clamped.positions[first] / g.in_channels;
  const std::size_t group = (clamped.positions[first] - pixel * g.in_channels) / group_channels;
  scratch.deltas.clear();
  scratch.rows.clear();
  for (std::size_t k = first; k < last; ++k) {
    const int8_t value = clamped.input[clamped.positions[k]];
    scratch.deltas.push_back(int32_t(value) - int32_t(std::clamp(value, clamped.low, clamped.high)));
    scratch.rows.push_back((clamped.positions[k] - pixel * g.in_channels - group * group_channels) * group_outputs);
  }
  const int64_t x = int64_t(pixel % g.in_width), y = int64_t(pixel / g.in_width % g.in_height);
  for (uint32_t ky = 0; ky < g.kernel_height; ++ky) {
    const int64_t ty = y + int64_t(g.padding_height) - int64_t(ky) * g.dilation_height;
    if (ty < 0 || ty % g.stride_height != 0 || ty / g.stride_height < first_row ||
        ty / g.stride_height >= first_row + rows)
      continue;
    for (uint32_t kx = 0; kx < g.kernel_width; ++kx) {
      const int64_t tx = x + int64_t(g.padding_width) - int64_t(kx) * g.dilation_width;
      if (tx < 0 || tx % g.stride_width != 0 || tx / g.stride_width >= g.out_width) continue;
      const std::size_t out_pixel = std::size_t(ty / g.stride_height - first_row) * std::size_t(g.out_width) +
                                    std::size_t(tx / g.stride_width);
      const std::size_t tap = (std::size_t(ky) * g.kernel_width + kx) * group_channels;
      AddScaledRows(scratch.deltas.data(), scratch.rows.data(), scratch.deltas.size(),
                    weights_by_tap + (group * per_output + tap) * group_outputs, group_outputs,
                    accumulators + out_pixel * g.out_channels + group * group_outputs);
    }
  }
}

void CorrectAccumulators(const ConvolutionGeometry& g, const int8_t* weights_by_tap, const ClampedBytes& clamped,
                         std::size_t image, int64_t first_row, int64_t rows, CorrectionScratch& scratch,
                         int32_t* accumulators) {
  const std::size_t group_channels = g.in_channels / g.groups;
  const std::vector<std::size_t>& positions = clamped.positions;
  // Only the bytes of the input rows that output rows [first_row, first_row + rows) read.
  const int64_t top = first_row * g.stride_height - int64_t(g.padding_height);
  const int64_t bottom = (first_row + rows - 1) * g.stride_height - int64_t(g.padding_height) +
                         int64_t(g.kernel_height - 1) * g.dilation_height + 1;
  const std::size_t row_bytes = std::size_t(g.in_width) * g.in_channels;
  const std::size_t image_start = image * g.in_height * row_bytes;
  const auto row_start = [&](int64_t y) {
    return image_start + std::size_t(std::clamp<int64_t>(y, 0, int64_t(g.in_height))) * row_bytes;
  };
  const std::size_t begin = std::size_t(
      std::lower_bound(positions.begin(), positions.end(), row_start(top)) - positions.begin());
  const std::size_t end = std::size_t(
      std::lower_bound(positions.begin(), positions.end(), row_start(bottom)) - positions.begin());
  for (std::size_t first = begin, last = begin; first < end; first = last) {
    const std::size_t pixel = positions[first] / g.in_channels;
    const std::size_t group_end = pixel * g.in_channels + ((positions[first] - pixel * g.in_channels) /
                                                           group_channels + 1) * group_channels;
    for (last = first + 1; last < end && positions[last] < group_end;) ++last;
    CorrectPixelGroup(g, weights_by_tap, clamped, first, last, first_row, rows, scratch, accumulators);
  }
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::xnnpack::detail)

#if HWY_ONCE
namespace et_ops::kernels::xnnpack::detail {

HWY_EXPORT(ComputePixels);
HWY_EXPORT(CorrectAccumulators);

void compute_pixels(const ConvolutionGeometry& g, const int8_t* weights, int32_t input_zero_point,
                    const Requantization& q, const int8_t* input, const std::vector<std::size_t>& pixels,
                    PixelScratch& scratch, int8_t* out) {
  HWY_DYNAMIC_DISPATCH(ComputePixels)(g, weights, input_zero_point, q, input, pixels, scratch, out);
}

namespace {

// Calls f(out) for each output coordinate of one dimension whose window
// reads input coordinate `in`.
template <typename F>
void outputs_reading(int64_t in, int64_t out_extent, uint32_t kernel, uint32_t stride, uint32_t padding,
                     uint32_t dilation, F f) {
  for (uint32_t k = 0; k < kernel; ++k) {
    const int64_t t = in + int64_t(padding) - int64_t(k) * int64_t(dilation);
    if (t >= 0 && t % stride == 0 && t / stride < out_extent) f(t / stride);
  }
}

}  // namespace

void pixels_reading(const ConvolutionGeometry& g, const std::vector<std::size_t>& positions,
                    std::vector<std::size_t>& pixels) {
  pixels.clear();
  if (is_pointwise(g)) {  // pixel i reads input pixel i: already in order
    for (const std::size_t position : positions)
      if (pixels.empty() || pixels.back() != position / g.in_channels) pixels.push_back(position / g.in_channels);
    return;
  }
  for (const std::size_t position : positions) {
    const std::size_t pixel = position / g.in_channels;
    const int64_t x = int64_t(pixel % g.in_width), y = int64_t(pixel / g.in_width % g.in_height);
    const int64_t image = int64_t(pixel / (g.in_width * g.in_height));
    outputs_reading(y, g.out_height, g.kernel_height, g.stride_height, g.padding_height, g.dilation_height,
                    [&](int64_t oy) {
                      outputs_reading(x, g.out_width, g.kernel_width, g.stride_width, g.padding_width,
                                      g.dilation_width, [&](int64_t ox) {
                                        pixels.push_back(std::size_t((image * g.out_height + oy) * g.out_width + ox));
                                      });
                    });
  }
  std::sort(pixels.begin(), pixels.end());
  pixels.erase(std::unique(pixels.begin(), pixels.end()), pixels.end());
}

std::vector<int8_t> weights_by_tap(const ConvolutionGeometry& g, const int8_t* weights) {
  const std::size_t group_channels = g.in_channels / g.groups, group_outputs = g.out_channels / g.groups;
  const std::size_t taps = std::size_t(g.kernel_height) * g.kernel_width, per_output = taps * group_channels;
  std::vector<int8_t> by_tap(g.out_channels * per_output);
  for (std::size_t group = 0; group < g.groups; ++group)
    for (std::size_t o = 0; o < group_outputs; ++o)
      for (std::size_t k = 0; k < per_output; ++k)
        by_tap[(group * per_output + k) * group_outputs + o] = weights[(group * group_outputs + o) * per_output + k];
  return by_tap;
}

void correct_accumulators(const ConvolutionGeometry& g, const int8_t* weights_by_tap, const ClampedBytes& clamped,
                          std::size_t image, int64_t first_row, int64_t rows, CorrectionScratch& scratch,
                          int32_t* accumulators) {
  HWY_DYNAMIC_DISPATCH(CorrectAccumulators)(g, weights_by_tap, clamped, image, first_row, rows, scratch,
                                            accumulators);
}

}  // namespace et_ops::kernels::xnnpack::detail
#endif  // HWY_ONCE
