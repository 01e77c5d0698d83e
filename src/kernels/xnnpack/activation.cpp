// et_xnnpack::hardswish.out, hardsigmoid.out and sigmoid.out: int8
// activations through a 256-entry table, made when the kernel is prepared
// by the reference path's own arithmetic (dequantize, the float32 function
// as the portable kernels compute it, quantize: reference_arithmetic.h), so
// the operator gives the reference path's bytes on every input.
#include <algorithm>
#include <cmath>

#include "kernels.h"
#include "reference_arithmetic.h"

namespace et_ops::kernels::xnnpack {
namespace {

// min(max(x + 3, 0), 6), as the portable kernels write it.
float relu_six_of_x_plus_three(float x) {
  float t = x + 3.0f;
  t = t < 0.0f ? 0.0f : t;
  return 6.0f < t ? 6.0f : t;
}

float hardswish(float x) { return (x * relu_six_of_x_plus_three(x)) / 6.0f; }
float hardsigmoid(float x) { return relu_six_of_x_plus_three(x) / 6.0f; }
// 1 / (1 + e), e = e^-x computed in binary64 and rounded to float32.
float sigmoid(float x) { return 1.0f / (1.0f + static_cast<float>(std::exp(-static_cast<double>(x)))); }

std::unique_ptr<LookupState> lookup_prepare(KernelContext& ctx, const char* op, float (*function)(float),
                                            TensorRef self, double self_scale, int64_t self_zero_point,
                                            double output_scale, int64_t output_zero_point, int64_t output_min,
                                            int64_t output_max, TensorRef out) {
  using namespace detail;
  if (!check_elementwise(ctx, op, {"self", "out"}, {self, out}) ||
      !quant_params(ctx, op, "self", self_scale, self_zero_point) ||
      !output_params(ctx, op, output_scale, output_zero_point, output_min, output_max))
    return nullptr;
  auto state = std::make_unique<LookupState>();
  const std::array<float, 256> x = dequantized_values(self_scale, self_zero_point);
  const ReferenceQuantizer quantize(output_scale, output_zero_point, output_min, output_max);
  for (std::size_t i = 0; i < x.size(); ++i) state->table[i] = quantize(function(x[i]));
  state->numel = self.numel();
  return state;
}

// The table applied element by element: the run's tensors are checked as at
// preparation (int8, one shape, one dense layout), as the loop reads and
// writes numel bytes of each.
bool lookup_run(KernelContext& ctx, const char* op, const LookupState& s, TensorRef self, TensorRef out) {
  if (!detail::check_elementwise(ctx, op, {"self", "out"}, {self, out})) return false;
  if (self.numel() != s.numel || self.data() == nullptr || out.data() == nullptr)
    return detail::fail(ctx, op, "the run's self {} or out {} is not the tensor the kernel was prepared for",
                        detail::shape_string(self), detail::shape_string(out));
  std::transform(self.data_as<const int8_t>(), self.data_as<const int8_t>() + s.numel, out.data_as<int8_t>(),
                 [&](int8_t q) { return s.table[std::size_t(q + 128)]; });
  return true;
}

}  // namespace

#define ET_XNNPACK_LOOKUP(name)                                                                                   \
  std::unique_ptr<LookupState> name##_prepare(KernelContext& ctx, TensorRef self, double self_scale,              \
                                              int64_t self_zero_point, double output_scale,                       \
                                              int64_t output_zero_point, int64_t output_min, int64_t output_max,  \
                                              TensorRef out) {                                                    \
    return lookup_prepare(ctx, op_name::name##_kernel, &name, self, self_scale, self_zero_point, output_scale,   \
                          output_zero_point, output_min, output_max, out);                                        \
  }                                                                                                               \
  bool name##_run(KernelContext& ctx, const LookupState& state, const RunEnvironment&, TensorRef self, double,    \
                  int64_t, double, int64_t, int64_t, int64_t, TensorRef out) {                                    \
    return lookup_run(ctx, op_name::name##_kernel, state, self, out);                                             \
  }
ET_XNNPACK_LOOKUP(hardswish)
ET_XNNPACK_LOOKUP(hardsigmoid)
ET_XNNPACK_LOOKUP(sigmoid)
#undef ET_XNNPACK_LOOKUP

}  // namespace et_ops::kernels::xnnpack
