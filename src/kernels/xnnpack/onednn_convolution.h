// conv2d on oneDNN where the CPU has int8 dot-product instructions (AVX-512
// VNNI, AVX-VNNI, AMX): their kernels add u8 x s8 products into int32
// exactly, two to five times faster than XNNPACK's (which has no such code).
// On other CPUs oneDNN's int8 kernels saturate 16-bit pair sums, so conv2d
// stays on XNNPACK there. Both give XNNPACK's bytes on every CPU:
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

  OnednnRunStateHandle instantiate() const;
  bool run(KernelContext& ctx, const char* op, OnednnRunState& instance, const RunEnvironment& env,
           const int8_t* input, int8_t* out) const;

 private:
  struct Layer;
  explicit OnednnConvolution(std::unique_ptr<Layer> layer);
  std::unique_ptr<Layer> layer_;
};

}  // namespace et_ops::kernels::xnnpack::detail

#endif  // ET_OPS_SRC_KERNELS_XNNPACK_ONEDNN_CONVOLUTION_H
