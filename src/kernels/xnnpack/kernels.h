// The kernels of libet_kernels_xnnpack.so, all prepared kernels (see
// et_ops/kernel_library.h): prepare checks every argument once when a
// program loads and keeps what the runs need; instantiate makes a run
// state's XNNPACK operator; run sets it up for the run state's tensors and
// thread pool (once) and runs it.
#ifndef ET_OPS_SRC_KERNELS_XNNPACK_KERNELS_H
#define ET_OPS_SRC_KERNELS_XNNPACK_KERNELS_H

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "et_ops/kernels/xnnpack_operators.h"
#include "convolution.h"
#include "onednn_convolution.h"
#include "engine.h"
#include "quantization.h"
#include "reference_arithmetic.h"

namespace et_ops::kernels::xnnpack {

using Conv2dState = detail::ConvolutionState;
using LinearState = detail::ConvolutionState;

// An addition, broadcasting: the operands' sizes in out's memory order
// (outermost first), as XNNPACK broadcasts them.
struct AddState {
  detail::QuantParams self, other;
  detail::OutputParams output;
  std::size_t rank = 0;
  std::array<std::size_t, XNN_MAX_TENSOR_DIMS> self_shape{}, other_shape{};
  int64_t self_numel = 0, other_numel = 0, out_numel = 0;
};

struct PoolingState {
  std::size_t batch = 0, channels = 0, height = 0, width = 0;
  uint32_t kernel_height = 1, kernel_width = 1, stride_height = 1, stride_width = 1;
  uint32_t padding_height = 0, padding_width = 0, dilation_height = 1, dilation_width = 1;
  uint32_t extra_bottom = 0, extra_right = 0;  // ceil_mode's trailing padding beyond `padding`
  detail::QuantParams input;
  detail::OutputParams output;
  int64_t input_numel = 0, output_numel = 0;
};

// A table of the 256 outputs of an int8 activation.
struct LookupState {
  std::array<int8_t, 256> table{};
  int64_t numel = 0;
};

// A broadcasting multiplication, walked in out's memory order: dimension i
// of `order` (outermost first) has size sizes[i] and steps of out_strides[i],
// self_strides[i] and other_strides[i] elements (0 where broadcast).
struct MulState {
  std::array<float, 256> self_values{}, other_values{};
  detail::ReferenceQuantizer quantize{1.0, 0, INT8_MIN, INT8_MAX};
  int64_t rank = 0, numel = 0, self_numel = 0, other_numel = 0;
  std::array<int64_t, ET_OPS_MAX_DIMS> sizes{}, out_strides{}, self_strides{}, other_strides{};
};

// A concatenation as blocks: for each of `outer` steps, block_bytes[i]
// bytes of tensors[i] in turn.
struct CatState {
  int64_t outer = 1, out_numel = 0;
  std::vector<int64_t> block_bytes, numels;
};

struct LayoutState {
  int64_t numel = 0;
};

using detail::RunStateOperator;

// A conv2d run state's part: oneDNN's buffers when the prepared state
// runs there, else an XNNPACK operator.
struct Conv2dInstance {
  std::unique_ptr<RunStateOperator> xnnpack;
  detail::OnednnRunStateHandle onednn;
  // The output pixels oneDNN leaves to XNNPACK, and their input pixels, gathered.
  std::vector<int8_t> gathered_input, gathered_output;
};

// ---- conv2d ----
std::unique_ptr<Conv2dState> conv2d_prepare(KernelContext& ctx, TensorRef input, double input_scale,
                                            int64_t input_zero_point, TensorRef weight, TensorRef weight_scales,
                                            std::optional<TensorRef> bias, IntList stride, IntList padding,
                                            IntList dilation, int64_t groups, double output_scale,
                                            int64_t output_zero_point, int64_t output_min, int64_t output_max,
                                            TensorRef out);
std::unique_ptr<Conv2dInstance> conv2d_instantiate(KernelContext& ctx, const Conv2dState& state, TensorRef, double,
                                                   int64_t, TensorRef, TensorRef, std::optional<TensorRef>, IntList,
                                                   IntList, IntList, int64_t, double, int64_t, int64_t, int64_t,
                                                   TensorRef);
bool conv2d_run(KernelContext& ctx, const Conv2dState& state, Conv2dInstance& instance, const RunEnvironment& env,
                TensorRef input, double, int64_t, TensorRef, TensorRef, std::optional<TensorRef>, IntList, IntList,
                IntList, int64_t, double, int64_t, int64_t, int64_t, TensorRef out);

// ---- linear ----
std::unique_ptr<LinearState> linear_prepare(KernelContext& ctx, TensorRef input, double input_scale,
                                            int64_t input_zero_point, TensorRef weight, TensorRef weight_scales,
                                            std::optional<TensorRef> bias, double output_scale,
                                            int64_t output_zero_point, int64_t output_min, int64_t output_max,
                                            TensorRef out);
std::unique_ptr<RunStateOperator> linear_instantiate(KernelContext& ctx, const LinearState& state, TensorRef, double,
                                                     int64_t, TensorRef, TensorRef, std::optional<TensorRef>, double,
                                                     int64_t, int64_t, int64_t, TensorRef);
bool linear_run(KernelContext& ctx, const LinearState& state, RunStateOperator& instance, const RunEnvironment& env,
                TensorRef input, double, int64_t, TensorRef, TensorRef, std::optional<TensorRef>, double, int64_t,
                int64_t, int64_t, TensorRef out);

// ---- add ----
std::unique_ptr<AddState> add_prepare(KernelContext& ctx, TensorRef self, double self_scale, int64_t self_zero_point,
                                      TensorRef other, double other_scale, int64_t other_zero_point,
                                      double output_scale, int64_t output_zero_point, int64_t output_min,
                                      int64_t output_max, TensorRef out);
std::unique_ptr<RunStateOperator> add_instantiate(KernelContext& ctx, const AddState& state, TensorRef, double, int64_t,
                                                  TensorRef, double, int64_t, double, int64_t, int64_t, int64_t,
                                                  TensorRef);
bool add_run(KernelContext& ctx, const AddState& state, RunStateOperator& instance, const RunEnvironment& env,
             TensorRef self, double, int64_t, TensorRef other, double, int64_t, double, int64_t, int64_t, int64_t,
             TensorRef out);

// ---- pooling ----
std::unique_ptr<PoolingState> adaptive_avg_pool2d_prepare(KernelContext& ctx, TensorRef self, double self_scale,
                                                          int64_t self_zero_point, IntList output_size,
                                                          double output_scale, int64_t output_zero_point,
                                                          int64_t output_min, int64_t output_max, TensorRef out);
std::unique_ptr<RunStateOperator> adaptive_avg_pool2d_instantiate(KernelContext& ctx, const PoolingState& state,
                                                                  TensorRef, double, int64_t, IntList, double, int64_t,
                                                                  int64_t, int64_t, TensorRef);
bool adaptive_avg_pool2d_run(KernelContext& ctx, const PoolingState& state, RunStateOperator& instance,
                             const RunEnvironment& env, TensorRef self, double, int64_t, IntList, double, int64_t,
                             int64_t, int64_t, TensorRef out);
std::unique_ptr<PoolingState> max_pool2d_prepare(KernelContext& ctx, TensorRef self, IntList kernel_size,
                                                 IntList stride, IntList padding, IntList dilation, bool ceil_mode,
                                                 TensorRef out);
std::unique_ptr<RunStateOperator> max_pool2d_instantiate(KernelContext& ctx, const PoolingState& state, TensorRef,
                                                         IntList, IntList, IntList, IntList, bool, TensorRef);
bool max_pool2d_run(KernelContext& ctx, const PoolingState& state, RunStateOperator& instance,
                    const RunEnvironment& env, TensorRef self, IntList, IntList, IntList, IntList, bool, TensorRef out);

// ---- activations (activation.cpp) ----
#define ET_XNNPACK_LOOKUP_DECLARATIONS(name)                                                                      \
  std::unique_ptr<LookupState> name##_prepare(KernelContext& ctx, TensorRef self, double self_scale,              \
                                              int64_t self_zero_point, double output_scale,                       \
                                              int64_t output_zero_point, int64_t output_min, int64_t output_max,  \
                                              TensorRef out);                                                     \
  bool name##_run(KernelContext& ctx, const LookupState& state, const RunEnvironment& env, TensorRef self, double, \
                  int64_t, double, int64_t, int64_t, int64_t, TensorRef out);
ET_XNNPACK_LOOKUP_DECLARATIONS(hardswish)
ET_XNNPACK_LOOKUP_DECLARATIONS(hardsigmoid)
ET_XNNPACK_LOOKUP_DECLARATIONS(sigmoid)
#undef ET_XNNPACK_LOOKUP_DECLARATIONS

// ---- mul ----
std::unique_ptr<MulState> mul_prepare(KernelContext& ctx, TensorRef self, double self_scale, int64_t self_zero_point,
                                      TensorRef other, double other_scale, int64_t other_zero_point,
                                      double output_scale, int64_t output_zero_point, int64_t output_min,
                                      int64_t output_max, TensorRef out);
bool mul_run(KernelContext& ctx, const MulState& state, const RunEnvironment& env, TensorRef self, double, int64_t,
             TensorRef other, double, int64_t, double, int64_t, int64_t, int64_t, TensorRef out);

// ---- cat ----
std::unique_ptr<CatState> cat_prepare(KernelContext& ctx, TensorList tensors, int64_t dim, TensorRef out);
bool cat_run(KernelContext& ctx, const CatState& state, const RunEnvironment& env, TensorList tensors, int64_t dim,
             TensorRef out);

// ---- layout ----
std::unique_ptr<LayoutState> convert_layout_prepare(KernelContext& ctx, TensorRef self, TensorRef out);
bool convert_layout_run(KernelContext& ctx, const LayoutState& state, const RunEnvironment& env, TensorRef self,
                        TensorRef out);

// The functions of each operator, as operators.def names them.
#define ET_XNNPACK_PREPARED(name, instantiate_fn)             \
  struct name##_kernel {                                        \
    static constexpr auto prepare = &name##_prepare;            \
    static constexpr auto instantiate = instantiate_fn;         \
    static constexpr auto run = &name##_run;                    \
  };
ET_XNNPACK_PREPARED(conv2d, &conv2d_instantiate)
ET_XNNPACK_PREPARED(linear, &linear_instantiate)
ET_XNNPACK_PREPARED(add, &add_instantiate)
ET_XNNPACK_PREPARED(adaptive_avg_pool2d, &adaptive_avg_pool2d_instantiate)
ET_XNNPACK_PREPARED(max_pool2d, &max_pool2d_instantiate)
ET_XNNPACK_PREPARED(hardswish, nullptr)
ET_XNNPACK_PREPARED(hardsigmoid, nullptr)
ET_XNNPACK_PREPARED(sigmoid, nullptr)
ET_XNNPACK_PREPARED(mul, nullptr)
ET_XNNPACK_PREPARED(cat, nullptr)
ET_XNNPACK_PREPARED(convert_layout, nullptr)
#undef ET_XNNPACK_PREPARED

}  // namespace et_ops::kernels::xnnpack

#endif  // ET_OPS_SRC_KERNELS_XNNPACK_KERNELS_H
