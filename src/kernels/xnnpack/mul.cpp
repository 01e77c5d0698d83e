// et_xnnpack::mul.out: int8 multiplication with broadcasting (an operand's
// dimension of size 1 repeats), computed as the reference path computes
// dequantize(self) * dequantize(other) -> quantize, in float32
// (reference_arithmetic.h): the same bytes, on every layout.
#include "kernels.h"

namespace et_ops::kernels::xnnpack {
namespace {

// The dimensions in out's memory order, outermost first.
void walk_order(TensorRef self, TensorRef other, TensorRef out, MulState& s) {
  const std::vector<int64_t> order = detail::dim_order_of(out);
  s.rank = out.dim();
  for (int64_t i = 0; i < s.rank; ++i) {
    const int64_t d = order[std::size_t(i)];
    s.sizes[i] = out.size(d);
    s.out_strides[i] = out.stride(d);
    s.self_strides[i] = self.size(d) == 1 ? 0 : self.stride(d);
    s.other_strides[i] = other.size(d) == 1 ? 0 : other.stride(d);
  }
}

float product(const MulState& s, int8_t a, int8_t b) {
  return s.self_values[std::size_t(a + 128)] * s.other_values[std::size_t(b + 128)];
}

// Dimension `level` onwards of the walk, from the given element offsets.
void multiply(const MulState& s, int64_t level, const int8_t* a, const int8_t* b, int8_t* out) {
  const int64_t n = s.sizes[level], sa = s.self_strides[level], sb = s.other_strides[level], so = s.out_strides[level];
  if (level + 1 == s.rank) {
    for (int64_t i = 0; i < n; ++i) out[i * so] = s.quantize(product(s, a[i * sa], b[i * sb]));
    return;
  }
  for (int64_t i = 0; i < n; ++i) multiply(s, level + 1, a + i * sa, b + i * sb, out + i * so);
}

}  // namespace

std::unique_ptr<MulState> mul_prepare(KernelContext& ctx, TensorRef self, double self_scale, int64_t self_zero_point,
                                      TensorRef other, double other_scale, int64_t other_zero_point,
                                      double output_scale, int64_t output_zero_point, int64_t output_min,
                                      int64_t output_max, TensorRef out) {
  using namespace detail;
  const char* op = op_name::mul_kernel;
  if (!check_broadcast(ctx, op, self, other, out, ET_OPS_MAX_DIMS, false) || !quant_params(ctx, op, "self", self_scale, self_zero_point) ||
      !quant_params(ctx, op, "other", other_scale, other_zero_point) ||
      !output_params(ctx, op, output_scale, output_zero_point, output_min, output_max))
    return nullptr;
  auto state = std::make_unique<MulState>();
  state->self_values = dequantized_values(self_scale, self_zero_point);
  state->other_values = dequantized_values(other_scale, other_zero_point);
  state->quantize = ReferenceQuantizer(output_scale, output_zero_point, output_min, output_max);
  state->numel = out.numel();
  state->self_numel = self.numel();
  state->other_numel = other.numel();
  walk_order(self, other, out, *state);
  return state;
}

bool mul_run(KernelContext& ctx, const MulState& s, const RunEnvironment&, TensorRef self, double, int64_t,
             TensorRef other, double, int64_t, double, int64_t, int64_t, int64_t, TensorRef out) {
  if (self.numel() != s.self_numel || other.numel() != s.other_numel || out.numel() != s.numel ||
      self.data() == nullptr || other.data() == nullptr || out.data() == nullptr)
    return detail::fail(ctx, op_name::mul_kernel, "the run's tensors are not those the kernel was prepared for");
  if (s.rank == 0) {
    *out.data_as<int8_t>() = s.quantize(product(s, *self.data_as<const int8_t>(), *other.data_as<const int8_t>()));
    return true;
  }
  multiply(s, 0, self.data_as<const int8_t>(), other.data_as<const int8_t>(), out.data_as<int8_t>());
  return true;
}

}  // namespace et_ops::kernels::xnnpack
