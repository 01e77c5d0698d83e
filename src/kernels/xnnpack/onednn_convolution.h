// conv2d on oneDNN where its int8 kernels are exact, faster than XNNPACK's:
// - where the CPU has int8 dot-product instructions (AVX-512 VNNI,
//   AVX-VNNI, AMX), which add u8 x s8 products into int32 exactly, on any
//   input (two to five times XNNPACK's speed, which has no such code);
// - on AVX2 and AVX-512 without VNNI, whose kernels add pairs of products
//   into a saturating int16, on input whose bytes mostly lie in a window
//   of 128 values: each byte is given as its distance from the window's
//   start, at most 127, which no pair can saturate (127 * 128 * 2 < 2^15).
//   The bytes outside it (the tails of 8-bit activations, 7-bit ones
//   beyond their calibrated range) are clamped into it and made exact
//   again (exact_pixels.h): the output pixels they reach computed again
//   where they are few, else the int32 accumulators corrected (a fused
//   layer has that form too; a pointwise one hands the pixels to XNNPACK).
//   A run with more of them (a sixteenth of the layer's products, a
//   quarter of a pointwise layer's pixels) runs on XNNPACK.
// Both give XNNPACK's bytes on every CPU:
//
// - fused: oneDNN adds the bias and scales in float32 as XNNPACK does, then
//   clamps to [min - zp, max - zp], rounds half to even and adds the zero
//   point (post-ops), all exact where every accumulator, bias and partial
//   sum is an integer below 2^24 in magnitude, which the weights bound:
//   255 * sum|w| + |bias| <= 2^24 for every output channel;
// - otherwise oneDNN writes the int32 accumulators and requantize() applies
//   XNNPACK's arithmetic, for convolutions with many products per output
//   (where the accumulators' memory traffic costs little).
//
// A run state splits the output rows into one tile per thread of its pool.
#ifndef ET_OPS_SRC_KERNELS_XNNPACK_ONEDNN_CONVOLUTION_H
#define ET_OPS_SRC_KERNELS_XNNPACK_ONEDNN_CONVOLUTION_H

#include <memory>
#include <vector>

#include "convolution.h"
#include "requantize.h"

namespace et_ops::kernels::xnnpack::detail {

// A run state's part: the uint8 copy of the input and its tiles.
enum class ExactInput { none, seven_bits, any };
// What a run did: oneDNN computed the output, or all of it but the output
// pixels pixels_left() lists (XNNPACK computes those), failed (reported),
// or declined a 7-bit kernel's input of a wider range (XNNPACK runs it).
enum class OnednnOutcome { ran, ran_but_pixels, failed, declined };
struct OnednnRunState;
struct OnednnRunStateDeleter {
  void operator()(OnednnRunState* state) const;
};
using OnednnRunStateHandle = std::unique_ptr<OnednnRunState, OnednnRunStateDeleter>;

// The prepared part (read-only, shared by the run states of a program).
class OnednnConvolution {
 public:
  // Null when the convolution runs on XNNPACK: the CPU or oneDNN has no
  // exact int8 kernel for it, or neither way above applies. `state` is the
  // checked convolution (its weights in XNNPACK's layout).
  static std::unique_ptr<OnednnConvolution> create(const ConvolutionState& state);
  ~OnednnConvolution();

  // Whether runs whose input bytes span more than 128 values run on XNNPACK.
  bool seven_bit_input() const;
  OnednnRunStateHandle instantiate() const;
  OnednnOutcome run(KernelContext& ctx, const char* op, OnednnRunState& instance, const RunEnvironment& env,
                    const int8_t* input, int8_t* out) const;
  // After ran_but_pixels: the output pixels ((image * out_height + y) *
  // out_width + x, ascending) of a pointwise layer without padding or
  // strides left to XNNPACK (each reads the input pixel of its index).
  const std::vector<std::size_t>& pixels_left(const OnednnRunState& instance) const;

 private:
  struct Layer;
  explicit OnednnConvolution(std::unique_ptr<Layer> layer);
  std::unique_ptr<Layer> layer_;
};

}  // namespace et_ops::kernels::xnnpack::detail

#endif  // ET_OPS_SRC_KERNELS_XNNPACK_ONEDNN_CONVOLUTION_H
