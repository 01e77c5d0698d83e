// The prepared low-bit linears (lowbit_linear.cpp): their load-time state,
// the prepare and run functions, and the prepared-kernel functions of each
// operator (prepared_forms.h registers them).
#ifndef ET_OPS_SRC_KERNELS_QUANTIZED_LOWBIT_LINEAR_H
#define ET_OPS_SRC_KERNELS_QUANTIZED_LOWBIT_LINEAR_H

#include <cstdint>
#include <memory>
#include <optional>

#include "et_ops/kernel_library.h"
#include "et_ops/kernels/quantized_operators.h"
#include "lowbit_layout.h"

namespace et_ops::kernels::quantized {

struct LowbitOperator {
  const char* op;
  bool four_bit;  // int4 weights two per byte (embedding_4bit's layout), else int8
  bool dynamic;   // activations quantized per token (8da*), else float activations
};

inline constexpr LowbitOperator k8da4w{op_name::linear_8da4w_out, true, true};
inline constexpr LowbitOperator k8da8w{op_name::linear_8da8w_out, false, true};
inline constexpr LowbitOperator kInt4{op_name::linear_int4_out, true, false};
inline constexpr LowbitOperator kInt8{op_name::linear_int8_out, false, false};

struct LowbitLinear {
  LowbitOperator op;
  lowbit::PackedWeights weights;
};

// Checks the arguments and repacks the constant weights; null after failing ctx.
std::unique_ptr<LowbitLinear> prepare_lowbit_linear(KernelContext& ctx, const LowbitOperator& o, TensorRef input,
                                                    TensorRef weight, TensorRef scales, int64_t group_size,
                                                    std::optional<TensorRef> bias, TensorRef out);

// out = the operator on `input`, the blocks split over env's threads.
bool run_lowbit_linear(KernelContext& ctx, const LowbitLinear& state, const RunEnvironment& env, TensorRef input,
                       std::optional<TensorRef> bias, TensorRef out);

// The operators whose schema has a group_size (int4 weights).
template <const LowbitOperator& O>
struct GroupedLinearKernel {
  static constexpr bool exists = true;
  static std::unique_ptr<LowbitLinear> prepare_fn(KernelContext& ctx, TensorRef input, TensorRef weight,
                                                  TensorRef scales, int64_t group_size, std::optional<TensorRef> bias,
                                                  TensorRef out) {
    return prepare_lowbit_linear(ctx, O, input, weight, scales, group_size, bias, out);
  }
  static bool run_fn(KernelContext& ctx, const LowbitLinear& state, const RunEnvironment& env, TensorRef input,
                     TensorRef, TensorRef, int64_t, std::optional<TensorRef> bias, TensorRef out) {
    return run_lowbit_linear(ctx, state, env, input, bias, out);
  }
  static constexpr auto prepare = &prepare_fn;
  static constexpr auto instantiate = nullptr;
  static constexpr auto run = &run_fn;
};

// The per-channel operators (int8 weights: one group of K).
template <const LowbitOperator& O>
struct ChannelLinearKernel {
  static constexpr bool exists = true;
  static std::unique_ptr<LowbitLinear> prepare_fn(KernelContext& ctx, TensorRef input, TensorRef weight,
                                                  TensorRef scales, std::optional<TensorRef> bias, TensorRef out) {
    const int64_t in = input.dim() >= 1 ? input.size(input.dim() - 1) : 0;
    return prepare_lowbit_linear(ctx, O, input, weight, scales, in, bias, out);
  }
  static bool run_fn(KernelContext& ctx, const LowbitLinear& state, const RunEnvironment& env, TensorRef input,
                     TensorRef, TensorRef, std::optional<TensorRef> bias, TensorRef out) {
    return run_lowbit_linear(ctx, state, env, input, bias, out);
  }
  static constexpr auto prepare = &prepare_fn;
  static constexpr auto instantiate = nullptr;
  static constexpr auto run = &run_fn;
};

}  // namespace et_ops::kernels::quantized

#endif  // ET_OPS_SRC_KERNELS_QUANTIZED_LOWBIT_LINEAR_H
