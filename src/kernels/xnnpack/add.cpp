// et_xnnpack::add.out: int8 elementwise addition with requantization and a
// fused clamp (add + relu is add with output_min at the zero point); an
// operand's dimension of size 1 repeats (XNNPACK broadcasts).
#include "kernels.h"

namespace et_ops::kernels::xnnpack {

std::unique_ptr<AddState> add_prepare(KernelContext& ctx, TensorRef self, double self_scale, int64_t self_zero_point,
                                      TensorRef other, double other_scale, int64_t other_zero_point,
                                      double output_scale, int64_t output_zero_point, int64_t output_min,
                                      int64_t output_max, TensorRef out) {
  using namespace detail;
  if (!initialize(ctx, op_name::add_kernel) || !check_broadcast(ctx, op_name::add_kernel, self, other, out, XNN_MAX_TENSOR_DIMS, true)) return nullptr;
  const auto a = quant_params(ctx, op_name::add_kernel, "self", self_scale, self_zero_point);
  const auto b = a ? quant_params(ctx, op_name::add_kernel, "other", other_scale, other_zero_point) : std::nullopt;
  const auto o = b ? output_params(ctx, op_name::add_kernel, output_scale, output_zero_point, output_min, output_max) : std::nullopt;
  if (!o) return nullptr;
  // XNNPACK's limits on the ratios of the scales, reported by name.
  for (const auto& [name, ratio] : {std::pair{"self_scale / output_scale", a->scale / o->q.scale},
                                    std::pair{"other_scale / output_scale", b->scale / o->q.scale}})
    if (!(ratio >= 0x1.0p-10f && ratio < 256.0f)) {
      fail(ctx, op_name::add_kernel, "{} = {} is outside the range XNNPACK adds ([2^-10, 256))", name, ratio);
      return nullptr;
    }
  auto state = std::make_unique<AddState>();
  state->self = *a;
  state->other = *b;
  state->output = *o;
  const std::vector<int64_t> order = dim_order_of(out);
  state->rank = order.size();
  for (std::size_t i = 0; i < order.size(); ++i) {
    state->self_shape[i] = static_cast<std::size_t>(self.size(order[i]));
    state->other_shape[i] = static_cast<std::size_t>(other.size(order[i]));
  }
  state->self_numel = self.numel();
  state->other_numel = other.numel();
  state->out_numel = out.numel();
  return state;
}

std::unique_ptr<detail::RunStateOperator> add_instantiate(KernelContext& ctx, const AddState& s, TensorRef, double,
                                                          int64_t, TensorRef, double, int64_t, double, int64_t,
                                                          int64_t, int64_t, TensorRef) {
  return detail::create_operator(ctx, op_name::add_kernel, "xnn_create_add_nd_qs8", [&](xnn_operator_t* made) {
    return xnn_create_add_nd_qs8(s.self.zero_point, s.self.scale, s.other.zero_point, s.other.scale,
                                 s.output.q.zero_point, s.output.q.scale, s.output.min, s.output.max, 0, made);
  });
}

bool add_run(KernelContext& ctx, const AddState& s, detail::RunStateOperator& instance, const RunEnvironment& env,
             TensorRef self, double, int64_t, TensorRef other, double, int64_t, double, int64_t, int64_t, int64_t,
             TensorRef out) {
  if (self.numel() != s.self_numel || other.numel() != s.other_numel || out.numel() != s.out_numel || self.data() == nullptr ||
      other.data() == nullptr || out.data() == nullptr)
    return detail::fail(ctx, op_name::add_kernel, "the run's tensors are not those the kernel was prepared for");
  return instance.run(ctx, op_name::add_kernel, env, self.data(), other.data(), out.data(), [&](xnn_operator_t op, pthreadpool_t pool) {
    return xnn_setup_add_nd_qs8(op, s.rank, s.self_shape.data(), s.rank, s.other_shape.data(),
                                self.data_as<const int8_t>(), other.data_as<const int8_t>(), out.data_as<int8_t>(), pool);
  });
}

}  // namespace et_ops::kernels::xnnpack
