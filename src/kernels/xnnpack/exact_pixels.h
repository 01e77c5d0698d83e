// Where oneDNN's 7-bit kernels read input bytes clamped into their window,
// the outputs those bytes reach are made exact again: output pixels
// computed one at a time, with exact int32 accumulators and XNNPACK's
// requantization (requantize.h), after a kernel that requantizes itself;
// or, before requantize(), int32 accumulators corrected by each byte's
// distance from its clamped value times the weights it meets.
#ifndef ET_OPS_SRC_KERNELS_XNNPACK_EXACT_PIXELS_H
#define ET_OPS_SRC_KERNELS_XNNPACK_EXACT_PIXELS_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "convolution.h"
#include "requantize.h"

namespace et_ops::kernels::xnnpack::detail {

// The output pixels ((image * out_height + y) * out_width + x) whose window
// holds any of the input elements at `positions` (indices into the
// channels-last input), ascending and without repeats.
void pixels_reading(const ConvolutionGeometry& g, const std::vector<std::size_t>& positions,
                    std::vector<std::size_t>& pixels);

// What computing pixels needs besides the layer: room for one pixel's
// window and accumulators, reused from run to run.
struct PixelScratch {
  std::vector<int16_t> window;  // input - zero point: within [-255, 255]
  std::vector<int32_t> accumulators;
};

// Writes every output channel of each of `pixels` to the channels-last
// `out`: weights in XNNPACK's layout [groups][O/groups][kH][kW][C/groups],
// the input's zero point, and the requantization (bias, scales, clamp).
void compute_pixels(const ConvolutionGeometry& g, const int8_t* weights, int32_t input_zero_point,
                    const Requantization& q, const int8_t* input, const std::vector<std::size_t>& pixels,
                    PixelScratch& scratch, int8_t* out);

// Input bytes clamped into [low, high], and where they are (indices into
// the channels-last input).
struct ClampedBytes {
  const int8_t* input;
  const std::vector<std::size_t>& positions;
  int8_t low, high;
};

// The weights of [groups][O/groups][kH][kW][C/groups] (XNNPACK's layout)
// as [groups][kH][kW][C/groups][O/groups]: what one input byte meets in
// each output channel of its group, side by side.
std::vector<int8_t> weights_by_tap(const ConvolutionGeometry& g, const int8_t* weights);

// Adds to the int32 accumulators of output rows [first_row, first_row +
// rows) of one image ([rows][out_width][out_channels], computed from the
// clamped bytes) what the bytes' own values add: (value - clamped value) *
// weight, for every output of those rows each byte reaches, wrapping in
// int32 as XNNPACK's accumulators do. `weights_by_tap` as weights_by_tap()
// gives them; vectorised over output channels (integer arithmetic: every
// target gives the same bytes).
// One input pixel's bytes beyond the window, while corrected.
struct CorrectionScratch {
  std::vector<int32_t> deltas;   // value - clamped value
  std::vector<std::size_t> rows;  // where each byte's weights start in its tap's rows
};

void correct_accumulators(const ConvolutionGeometry& g, const int8_t* weights_by_tap, const ClampedBytes& clamped,
                          std::size_t image, int64_t first_row, int64_t rows, CorrectionScratch& scratch,
                          int32_t* accumulators);

}  // namespace et_ops::kernels::xnnpack::detail

#endif  // ET_OPS_SRC_KERNELS_XNNPACK_EXACT_PIXELS_H
