// et_xnnpack::conv2d.out: int8 2-D convolution (grouped and depthwise
// included) with per-channel weights, requantization and a fused clamp, on
// channels-last tensors; and the XNNPACK convolution linear shares.
#include "convolution.h"

#include <algorithm>

#include "engine_memory.h"
#include "kernels.h"
#include "onednn_convolution.h"

namespace et_ops::kernels::xnnpack {
namespace detail {

std::unique_ptr<RunStateOperator> create_convolution(KernelContext& ctx, const ConvolutionState& s) {
  const ConvolutionGeometry& g = s.geometry;
  return create_operator(ctx, s.op, "xnn_create_convolution2d_nhwc_qc8", [&](xnn_operator_t* made) {
    return xnn_create_convolution2d_nhwc_qc8(
        g.padding_height, g.padding_width, g.padding_height, g.padding_width, g.kernel_height, g.kernel_width,
        g.stride_height, g.stride_width, g.dilation_height, g.dilation_width, static_cast<uint32_t>(g.groups),
        g.in_channels / g.groups, g.out_channels / g.groups, g.in_channels, g.out_channels, s.input.zero_point,
        s.input.scale, s.weight_scales.data(), s.weights.data(), s.bias.data(), s.output.q.zero_point,
        s.output.q.scale, s.output.min, s.output.max, 0, made);
  });
}

bool run_convolution(KernelContext& ctx, const ConvolutionState& s, RunStateOperator& instance,
                     const RunEnvironment& env, TensorRef input, TensorRef out) {
  if (input.numel() != s.input_numel || out.numel() != s.output_numel || input.data() == nullptr ||
      out.data() == nullptr)
    return fail(ctx, s.op, "the run's input {} or out {} is not the tensor the kernel was prepared for",
                shape_string(input), shape_string(out));
  const ConvolutionGeometry& g = s.geometry;
  return instance.run(ctx, s.op, env, input.data(), nullptr, out.data(), [&](xnn_operator_t op, pthreadpool_t pool) {
    return xnn_setup_convolution2d_nhwc_qc8(op, g.batch, g.in_height, g.in_width, input.data_as<const int8_t>(),
                                            out.data_as<int8_t>(), pool);
  });
}

namespace {

// A pair argument (int[2]): two values, or one for both; each at least `min`.
bool pair_argument(KernelContext& ctx, const char* name, IntList list, int64_t min, uint32_t& first,
                   uint32_t& second) {
  if (list.size() != 1 && list.size() != 2)
    return fail(ctx, op_name::conv2d_kernel, "{} must have 1 or 2 values, got {}", name, list.size());
  const int64_t a = list[0], b = list[list.size() - 1];
  if (a < min || b < min || a > 1 << 20 || b > 1 << 20)
    return fail(ctx, op_name::conv2d_kernel, "{} must be at least {} (and at most 2^20), got [{}, {}]", name, min, a, b);
  first = static_cast<uint32_t>(a), second = static_cast<uint32_t>(b);
  return true;
}

bool geometry_of(KernelContext& ctx, TensorRef input, TensorRef weight, IntList stride, IntList padding,
                 IntList dilation, int64_t groups, ConvolutionGeometry& g) {
  if (!check_activation(ctx, op_name::conv2d_kernel, "input", input, 4) || !check_channels_last(ctx, op_name::conv2d_kernel, "input", input))
    return false;
  if (!check_constant(ctx, op_name::conv2d_kernel, "weight", weight) || !check_dtype(ctx, op_name::conv2d_kernel, "weight", weight, DType::Int8) ||
      !check_row_major(ctx, op_name::conv2d_kernel, "weight", weight))
    return false;
  if (weight.dim() != 4) return fail(ctx, op_name::conv2d_kernel, "weight must have 4 dimensions [O, C/groups, kH, kW], got {}", shape_string(weight));
  if (!pair_argument(ctx, "stride", stride, 1, g.stride_height, g.stride_width) ||
      !pair_argument(ctx, "padding", padding, 0, g.padding_height, g.padding_width) ||
      !pair_argument(ctx, "dilation", dilation, 1, g.dilation_height, g.dilation_width))
    return false;
  g.batch = static_cast<std::size_t>(input.size(0));
  g.in_channels = static_cast<std::size_t>(input.size(1));
  g.in_height = static_cast<std::size_t>(input.size(2));
  g.in_width = static_cast<std::size_t>(input.size(3));
  if (groups < 1 || input.size(1) % groups != 0 || weight.size(0) % groups != 0)
    return fail(ctx, op_name::conv2d_kernel, "groups ({}) must be positive and divide the input channels ({}) and weight's output channels ({})",
                groups, input.size(1), weight.size(0));
  g.groups = static_cast<std::size_t>(groups);
  if (weight.size(1) != input.size(1) / groups)
    return fail(ctx, op_name::conv2d_kernel, "weight {} must have C/groups = {} input channels in dimension 1", shape_string(weight),
                input.size(1) / groups);
  if (weight.size(0) <= 0 || weight.size(2) <= 0 || weight.size(3) <= 0 || weight.size(2) > 1 << 16 || weight.size(3) > 1 << 16)
    return fail(ctx, op_name::conv2d_kernel, "weight has an empty or oversized dimension ({})", shape_string(weight));
  g.out_channels = static_cast<std::size_t>(weight.size(0));
  g.kernel_height = static_cast<uint32_t>(weight.size(2));
  g.kernel_width = static_cast<uint32_t>(weight.size(3));
  return true;
}

// The output extent of one spatial dimension, or <= 0 when the window does not fit.
int64_t output_extent(std::size_t in, uint32_t kernel, uint32_t stride, uint32_t padding, uint32_t dilation) {
  const int64_t span = int64_t(dilation) * (int64_t(kernel) - 1) + 1;
  const int64_t padded = int64_t(in) + 2 * int64_t(padding);
  return padded < span ? 0 : (padded - span) / stride + 1;
}

// PyTorch's [O][C/g][kh][kw] as XNNPACK's [O][kh][kw][C/g].
std::vector<int8_t> xnnpack_weight_layout(TensorRef weight) {
  const int64_t o_count = weight.size(0), i_count = weight.size(1), taps = weight.size(2) * weight.size(3);
  const int8_t* in = weight.data_as<const int8_t>();
  std::vector<int8_t> out(static_cast<std::size_t>(weight.numel()));
  for (int64_t o = 0; o < o_count; ++o)
    for (int64_t i = 0; i < i_count; ++i)
      for (int64_t t = 0; t < taps; ++t) out[static_cast<std::size_t>((o * taps + t) * i_count + i)] = in[(o * i_count + i) * taps + t];
  return out;
}

}  // namespace
}  // namespace detail

std::unique_ptr<Conv2dState> conv2d_prepare(KernelContext& ctx, TensorRef input, double input_scale,
                                            int64_t input_zero_point, TensorRef weight, TensorRef weight_scales,
                                            std::optional<TensorRef> bias, IntList stride, IntList padding,
                                            IntList dilation, int64_t groups, double output_scale,
                                            int64_t output_zero_point, int64_t output_min, int64_t output_max,
                                            TensorRef out) {
  using namespace detail;
  if (!initialize(ctx, op_name::conv2d_kernel)) return nullptr;
  auto state = std::make_unique<Conv2dState>();
  state->op = op_name::conv2d_kernel;
  ConvolutionGeometry& g = state->geometry;
  if (!geometry_of(ctx, input, weight, stride, padding, dilation, groups, g)) return nullptr;
  const std::optional<QuantParams> in = quant_params(ctx, op_name::conv2d_kernel, "input", input_scale, input_zero_point);
  const std::optional<OutputParams> o = in ? output_params(ctx, op_name::conv2d_kernel, output_scale, output_zero_point, output_min, output_max) : std::nullopt;
  if (!o) return nullptr;
  state->input = *in;
  state->output = *o;
  auto scales = detail::checked_weight_scales(ctx, op_name::conv2d_kernel, weight_scales, int64_t(g.out_channels), in->scale, o->q.scale);
  if (!scales) return nullptr;
  auto quantized = quantized_bias(ctx, op_name::conv2d_kernel, bias, int64_t(g.out_channels), in->scale, *scales);
  if (!quantized) return nullptr;
  const int64_t out_height = output_extent(g.in_height, g.kernel_height, g.stride_height, g.padding_height, g.dilation_height);
  const int64_t out_width = output_extent(g.in_width, g.kernel_width, g.stride_width, g.padding_width, g.dilation_width);
  if (out_height <= 0 || out_width <= 0) {
    fail(ctx, op_name::conv2d_kernel, "the {}x{} kernel (dilation [{}, {}]) does not fit the padded {}x{} input", g.kernel_height,
         g.kernel_width, g.dilation_height, g.dilation_width, g.in_height + 2 * g.padding_height,
         g.in_width + 2 * g.padding_width);
    return nullptr;
  }
  g.out_height = out_height, g.out_width = out_width;
  const int64_t expected[4] = {int64_t(g.batch), int64_t(g.out_channels), out_height, out_width};
  if (!check_dtype(ctx, op_name::conv2d_kernel, "out", out, DType::Int8) || !check_output_sizes(ctx, op_name::conv2d_kernel, out, expected, 4) ||
      !check_channels_last(ctx, op_name::conv2d_kernel, "out", out))
    return nullptr;
  if (!check_convolution_memory(ctx, op_name::conv2d_kernel, g)) return nullptr;
  state->weights = xnnpack_weight_layout(weight);
  state->weight_scales = std::move(*scales);
  state->bias = std::move(*quantized);
  state->input_numel = input.numel();
  state->output_numel = out.numel();
  state->onednn = OnednnConvolution::create(*state);
  return state;
}

std::unique_ptr<Conv2dInstance> conv2d_instantiate(KernelContext& ctx, const Conv2dState& state, TensorRef, double,
                                                   int64_t, TensorRef, TensorRef, std::optional<TensorRef>, IntList,
                                                   IntList, IntList, int64_t, double, int64_t, int64_t, int64_t,
                                                   TensorRef) {
  auto instance = std::make_unique<Conv2dInstance>();
  if (state.onednn) instance->onednn = state.onednn->instantiate();
  if (!state.onednn || state.onednn->seven_bit_input()) {  // XNNPACK runs what oneDNN declines
    instance->xnnpack = detail::create_convolution(ctx, state);
    if (!instance->xnnpack) return nullptr;
  }
  return instance;
}

namespace {

// The output pixels oneDNN left to XNNPACK (a pointwise layer without
// padding or strides: pixel i reads input pixel i), gathered into one row
// of an image, run and scattered back: XNNPACK's bytes.
bool run_left_pixels(KernelContext& ctx, const Conv2dState& state, Conv2dInstance& instance,
                     const RunEnvironment& env, const int8_t* input, int8_t* out) {
  const std::vector<std::size_t>& pixels = state.onednn->pixels_left(*instance.onednn);
  const std::size_t in_channels = state.geometry.in_channels, out_channels = state.geometry.out_channels;
  instance.gathered_input.resize(pixels.size() * in_channels);
  instance.gathered_output.resize(pixels.size() * out_channels);
  int8_t* gathered = instance.gathered_input.data();
  for (const std::size_t pixel : pixels)
    gathered = std::copy_n(input + pixel * in_channels, in_channels, gathered);
  instance.xnnpack->forget_setup();
  const bool ran = instance.xnnpack->run(
      ctx, state.op, env, instance.gathered_input.data(), nullptr, instance.gathered_output.data(),
      [&](xnn_operator_t op, pthreadpool_t pool) {
        return xnn_setup_convolution2d_nhwc_qc8(op, 1, 1, pixels.size(), instance.gathered_input.data(),
                                                instance.gathered_output.data(), pool);
      });
  instance.xnnpack->forget_setup();  // a run of the whole layer sets it up again
  if (!ran) return false;
  const int8_t* computed = instance.gathered_output.data();
  for (const std::size_t pixel : pixels) {
    std::copy_n(computed, out_channels, out + pixel * out_channels);
    computed += out_channels;
  }
  return true;
}

}  // namespace

bool conv2d_run(KernelContext& ctx, const Conv2dState& state, Conv2dInstance& instance, const RunEnvironment& env,
                TensorRef input, double, int64_t, TensorRef, TensorRef, std::optional<TensorRef>, IntList, IntList,
                IntList, int64_t, double, int64_t, int64_t, int64_t, TensorRef out) {
  if (!instance.onednn) return detail::run_convolution(ctx, state, *instance.xnnpack, env, input, out);
  if (input.numel() != state.input_numel || out.numel() != state.output_numel || input.data() == nullptr ||
      out.data() == nullptr)
    return detail::fail(ctx, state.op, "the run's input {} or out {} is not the tensor the kernel was prepared for",
                        detail::shape_string(input), detail::shape_string(out));
  switch (state.onednn->run(ctx, state.op, *instance.onednn, env, input.data_as<const int8_t>(), out.data_as<int8_t>())) {
    case detail::OnednnOutcome::ran: return true;
    case detail::OnednnOutcome::ran_but_pixels:
      return run_left_pixels(ctx, state, instance, env, input.data_as<const int8_t>(), out.data_as<int8_t>());
    case detail::OnednnOutcome::failed: return false;
    case detail::OnednnOutcome::declined: break;
  }
  return detail::run_convolution(ctx, state, *instance.xnnpack, env, input, out);
}

}  // namespace et_ops::kernels::xnnpack
