// conv2d on oneDNN where the CPU has int8 dot-product instructions (AVX-512
// VNNI, AVX-VNNI, AMX): their kernels add u8 x s8 products into int32
// exactly, several times faster than XNNPACK's (which has no such code),
// and requantize() turns the exact accumulators into XNNPACK's bytes. On
// other CPUs oneDNN's int8 kernels saturate 16-bit pair sums, so conv2d
// stays on XNNPACK there; both give the same bytes everywhere.
//
// The int32 accumulators cost memory traffic XNNPACK's fused
// requantization does not: oneDNN is used only for convolutions with many
// products per output (see wants_onednn), and measured faster there.
#ifndef ET_OPS_SRC_KERNELS_XNNPACK_ONEDNN_CONVOLUTION_H
#define ET_OPS_SRC_KERNELS_XNNPACK_ONEDNN_CONVOLUTION_H

#include <memory>
#include <vector>

#include "convolution.h"
#include "requantize.h"

namespace et_ops::kernels::xnnpack::detail {

// A run state's part: the uint8 copy of the input and, per slice of output
// channels (one per thread), oneDNN's primitive, weights and buffers.
struct OnednnRunState;
struct OnednnRunStateDeleter {
  void operator()(OnednnRunState* state) const;
};
using OnednnRunStateHandle = std::unique_ptr<OnednnRunState, OnednnRunStateDeleter>;

// The prepared part (read-only, shared by the run states of a program).
class OnednnConvolution {
 public:
  // Null when the convolution runs on XNNPACK: the CPU or oneDNN has no
  // exact int8 kernel for it, or it has too few products per output.
  // `state` is the checked convolution (its weights in XNNPACK's layout).
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
