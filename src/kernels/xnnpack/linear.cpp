// et_xnnpack::linear.out: int8 linear with per-channel (or per-tensor)
// weights and requantization, as a 1x1 XNNPACK convolution over the
// input's rows (XNNPACK's int8 fully-connected operator has one weight
// scale only).
#include "convolution.h"
#include "engine_memory.h"
#include "kernels.h"

namespace et_ops::kernels::xnnpack {
namespace {

bool check_linear_tensors(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef out) {
  using namespace detail;
  if (!check_dtype(ctx, op_name::linear_kernel, "input", input, DType::Int8) || !check_row_major(ctx, op_name::linear_kernel, "input", input))
    return false;
  if (input.dim() < 1 || input.size(input.dim() - 1) <= 0)
    return fail(ctx, op_name::linear_kernel, "input must have at least 1 dimension with features in the last, got {}", shape_string(input));
  if (!check_constant(ctx, op_name::linear_kernel, "weight", weight) || !check_dtype(ctx, op_name::linear_kernel, "weight", weight, DType::Int8) ||
      !check_row_major(ctx, op_name::linear_kernel, "weight", weight))
    return false;
  const int64_t features = input.size(input.dim() - 1);
  if (weight.dim() != 2 || weight.size(1) != features || weight.size(0) <= 0)
    return fail(ctx, op_name::linear_kernel, "weight must have sizes [out_features, {}] for input {}, got {}", features,
                shape_string(input), shape_string(weight));
  std::vector<int64_t> expected(input.sizes(), input.sizes() + input.dim());
  expected.back() = weight.size(0);
  return check_dtype(ctx, op_name::linear_kernel, "out", out, DType::Int8) &&
         check_output_sizes(ctx, op_name::linear_kernel, out, expected.data(), int64_t(expected.size())) &&
         check_row_major(ctx, op_name::linear_kernel, "out", out);
}

}  // namespace

std::unique_ptr<LinearState> linear_prepare(KernelContext& ctx, TensorRef input, double input_scale,
                                            int64_t input_zero_point, TensorRef weight, TensorRef weight_scales,
                                            std::optional<TensorRef> bias, double output_scale,
                                            int64_t output_zero_point, int64_t output_min, int64_t output_max,
                                            TensorRef out) {
  using namespace detail;
  if (!initialize(ctx, op_name::linear_kernel) || !check_linear_tensors(ctx, input, weight, out)) return nullptr;
  const std::optional<QuantParams> in = quant_params(ctx, op_name::linear_kernel, "input", input_scale, input_zero_point);
  const std::optional<OutputParams> o =
      in ? output_params(ctx, op_name::linear_kernel, output_scale, output_zero_point, output_min, output_max) : std::nullopt;
  if (!o) return nullptr;
  auto state = std::make_unique<LinearState>();
  state->op = op_name::linear_kernel;
  ConvolutionGeometry& g = state->geometry;
  g.in_channels = static_cast<std::size_t>(weight.size(1));
  g.out_channels = static_cast<std::size_t>(weight.size(0));
  g.batch = static_cast<std::size_t>(input.numel() / weight.size(1));  // the rows, as 1x1 images
  if (!check_convolution_memory(ctx, op_name::linear_kernel, g)) return nullptr;
  auto scales =
      detail::checked_weight_scales(ctx, op_name::linear_kernel, weight_scales, weight.size(0), in->scale, o->q.scale);
  if (!scales) return nullptr;
  auto quantized = quantized_bias(ctx, op_name::linear_kernel, bias, weight.size(0), in->scale, *scales);
  if (!quantized) return nullptr;
  state->input = *in;
  state->output = *o;
  // [O][I] is already XNNPACK's [O][1][1][I].
  state->weights.assign(weight.data_as<const int8_t>(), weight.data_as<const int8_t>() + weight.numel());
  state->weight_scales = std::move(*scales);
  state->bias = std::move(*quantized);
  state->input_numel = input.numel();
  state->output_numel = out.numel();
  return state;
}

std::unique_ptr<detail::RunStateOperator> linear_instantiate(KernelContext& ctx, const LinearState& state, TensorRef,
                                                             double, int64_t, TensorRef, TensorRef,
                                                             std::optional<TensorRef>, double, int64_t, int64_t,
                                                             int64_t, TensorRef) {
  return detail::create_convolution(ctx, state);
}

bool linear_run(KernelContext& ctx, const LinearState& state, detail::RunStateOperator& instance,
                const RunEnvironment& env, TensorRef input, double, int64_t, TensorRef, TensorRef,
                std::optional<TensorRef>, double, int64_t, int64_t, int64_t, TensorRef out) {
  return detail::run_convolution(ctx, state, instance, env, input, out);
}

}  // namespace et_ops::kernels::xnnpack
