// et_xnnpack::adaptive_avg_pool2d.out (to 1x1: global average pooling with
// requantization) and et_xnnpack::max_pool2d.out (int8, exact; floor or
// ceil rounding), on
// channels-last tensors.
#include <algorithm>

#include "engine_memory.h"
#include "kernels.h"

namespace et_ops::kernels::xnnpack {
namespace {

bool check_run_tensors(KernelContext& ctx, const char* op, const PoolingState& s, TensorRef self, TensorRef out) {
  if (self.numel() == s.input_numel && out.numel() == s.output_numel && self.data() != nullptr && out.data() != nullptr)
    return true;
  return detail::fail(ctx, op, "the run's self {} or out {} is not the tensor the kernel was prepared for",
                      detail::shape_string(self), detail::shape_string(out));
}

// kernel_size, stride, padding and dilation: 1 or 2 values each, at least `min`.
bool window_pair(KernelContext& ctx, const char* name, IntList list, int64_t min, uint32_t& first, uint32_t& second) {
  if (list.size() != 1 && list.size() != 2)
    return detail::fail(ctx, op_name::max_pool2d_kernel, "{} must have 1 or 2 values, got {}", name, list.size());
  const int64_t a = list[0], b = list[list.size() - 1];
  if (a < min || b < min || a > 1 << 16 || b > 1 << 16)
    return detail::fail(ctx, op_name::max_pool2d_kernel, "{} must be at least {} (and at most 2^16), got [{}, {}]", name, min, a, b);
  first = static_cast<uint32_t>(a), second = static_cast<uint32_t>(b);
  return true;
}

// A 1x1 window (padding 0) is a strided subsample, which XNNPACK's max
// pooling refuses: copied here, one channel row per output pixel.
bool is_subsample(const PoolingState& s) { return s.kernel_height == 1 && s.kernel_width == 1; }

void subsample(const PoolingState& s, const int8_t* in, int8_t* out) {
  const std::size_t out_height = (s.height - 1) / s.stride_height + 1, out_width = (s.width - 1) / s.stride_width + 1;
  for (std::size_t n = 0; n < s.batch; ++n)
    for (std::size_t y = 0; y < out_height; ++y)
      for (std::size_t x = 0; x < out_width; ++x, out += s.channels)
        std::copy_n(in + ((n * s.height + y * s.stride_height) * s.width + x * s.stride_width) * s.channels,
                    s.channels, out);
}

}  // namespace

std::unique_ptr<PoolingState> adaptive_avg_pool2d_prepare(KernelContext& ctx, TensorRef self, double self_scale,
                                                          int64_t self_zero_point, IntList output_size,
                                                          double output_scale, int64_t output_zero_point,
                                                          int64_t output_min, int64_t output_max, TensorRef out) {
  using namespace detail;
  if (!initialize(ctx, op_name::adaptive_avg_pool2d_kernel) || !check_activation(ctx, op_name::adaptive_avg_pool2d_kernel, "self", self, 4) ||
      !check_channels_last(ctx, op_name::adaptive_avg_pool2d_kernel, "self", self))
    return nullptr;
  if (output_size.size() != 2 || output_size[0] != 1 || output_size[1] != 1) {
    fail(ctx, op_name::adaptive_avg_pool2d_kernel, "output_size must be [1, 1] (global average pooling), got {}",
         kernels::detail::list_string(output_size.data(), output_size.size()));
    return nullptr;
  }
  const int64_t expected[4] = {self.size(0), self.size(1), 1, 1};
  if (!check_dtype(ctx, op_name::adaptive_avg_pool2d_kernel, "out", out, DType::Int8) || !check_output_sizes(ctx, op_name::adaptive_avg_pool2d_kernel, out, expected, 4))
    return nullptr;
  const auto in = quant_params(ctx, op_name::adaptive_avg_pool2d_kernel, "self", self_scale, self_zero_point);
  const auto o = in ? output_params(ctx, op_name::adaptive_avg_pool2d_kernel, output_scale, output_zero_point, output_min, output_max) : std::nullopt;
  if (!o) return nullptr;
  const float ratio = in->scale / (o->q.scale * float(self.size(2) * self.size(3)));
  if (!(ratio >= 0x1.0p-32f && ratio < 256.0f)) {
    fail(ctx, op_name::adaptive_avg_pool2d_kernel, "self_scale / (output_scale * {} pixels) = {} is outside the range XNNPACK requantizes",
         self.size(2) * self.size(3), ratio);
    return nullptr;
  }
  auto state = std::make_unique<PoolingState>();
  state->batch = static_cast<std::size_t>(self.size(0));
  state->channels = static_cast<std::size_t>(self.size(1));
  state->height = static_cast<std::size_t>(self.size(2));
  state->width = static_cast<std::size_t>(self.size(3));
  state->input = *in;
  state->output = *o;
  state->input_numel = self.numel();
  state->output_numel = out.numel();
  return state;
}

std::unique_ptr<detail::RunStateOperator> adaptive_avg_pool2d_instantiate(KernelContext& ctx, const PoolingState& s,
                                                                          TensorRef, double, int64_t, IntList, double,
                                                                          int64_t, int64_t, int64_t, TensorRef) {
  return detail::create_operator(ctx, op_name::adaptive_avg_pool2d_kernel, "xnn_create_global_average_pooling_nwc_qs8", [&](xnn_operator_t* made) {
    return xnn_create_global_average_pooling_nwc_qs8(s.channels, s.channels, s.channels, s.input.zero_point,
                                                     s.input.scale, s.output.q.zero_point, s.output.q.scale,
                                                     s.output.min, s.output.max, 0, made);
  });
}

bool adaptive_avg_pool2d_run(KernelContext& ctx, const PoolingState& s, detail::RunStateOperator& instance,
                             const RunEnvironment& env, TensorRef self, double, int64_t, IntList, double, int64_t,
                             int64_t, int64_t, TensorRef out) {
  if (!check_run_tensors(ctx, op_name::adaptive_avg_pool2d_kernel, s, self, out)) return false;
  return instance.run(ctx, op_name::adaptive_avg_pool2d_kernel, env, self.data(), nullptr, out.data(), [&](xnn_operator_t op, pthreadpool_t pool) {
    return xnn_setup_global_average_pooling_nwc_qs8(op, s.batch, s.height * s.width, self.data_as<const int8_t>(),
                                                    out.data_as<int8_t>(), pool);
  });
}

std::unique_ptr<PoolingState> max_pool2d_prepare(KernelContext& ctx, TensorRef self, IntList kernel_size,
                                                 IntList stride, IntList padding, IntList dilation, bool ceil_mode,
                                                 TensorRef out) {
  using namespace detail;
  if (!initialize(ctx, op_name::max_pool2d_kernel) || !check_activation(ctx, op_name::max_pool2d_kernel, "self", self, 4) ||
      !check_channels_last(ctx, op_name::max_pool2d_kernel, "self", self))
    return nullptr;
  auto state = std::make_unique<PoolingState>();
  PoolingState& s = *state;
  // PyTorch: an empty stride means the kernel size.
  if (!window_pair(ctx, "kernel_size", kernel_size, 1, s.kernel_height, s.kernel_width) ||
      !window_pair(ctx, "stride", stride.empty() ? kernel_size : stride, 1, s.stride_height, s.stride_width) ||
      !window_pair(ctx, "padding", padding, 0, s.padding_height, s.padding_width) ||
      !window_pair(ctx, "dilation", dilation, 1, s.dilation_height, s.dilation_width))
    return nullptr;
  if (2 * s.padding_height > s.kernel_height || 2 * s.padding_width > s.kernel_width) {
    fail(ctx, op_name::max_pool2d_kernel, "padding [{}, {}] must be at most half of kernel_size [{}, {}]", s.padding_height,
         s.padding_width, s.kernel_height, s.kernel_width);
    return nullptr;
  }
  s.batch = static_cast<std::size_t>(self.size(0));
  s.channels = static_cast<std::size_t>(self.size(1));
  s.height = static_cast<std::size_t>(self.size(2));
  s.width = static_cast<std::size_t>(self.size(3));
  // PyTorch's output extent; with ceil_mode a last, partial window that
  // starts inside the input (or its leading padding), which XNNPACK pools
  // as floor rounding over `extra` more rows (columns) of trailing padding.
  auto extent = [&](int64_t in, int64_t k, int64_t st, int64_t p, int64_t d, uint32_t& extra) {
    const int64_t span = d * (k - 1) + 1, padded = in + 2 * p;
    if (padded < span) return int64_t(0);
    int64_t out = (padded - span + (ceil_mode ? st - 1 : 0)) / st + 1;
    if (ceil_mode && (out - 1) * st >= in + p) --out;
    extra = static_cast<uint32_t>(std::max<int64_t>(0, (out - 1) * st + span - padded));
    return out;
  };
  const int64_t expected[4] = {
      self.size(0), self.size(1),
      extent(self.size(2), s.kernel_height, s.stride_height, s.padding_height, s.dilation_height, s.extra_bottom),
      extent(self.size(3), s.kernel_width, s.stride_width, s.padding_width, s.dilation_width, s.extra_right)};
  if (expected[2] <= 0 || expected[3] <= 0) {
    fail(ctx, op_name::max_pool2d_kernel, "the pooling window does not fit self {}", shape_string(self));
    return nullptr;
  }
  if (!check_dtype(ctx, op_name::max_pool2d_kernel, "out", out, DType::Int8) || !check_output_sizes(ctx, op_name::max_pool2d_kernel, out, expected, 4) ||
      !check_channels_last(ctx, op_name::max_pool2d_kernel, "out", out))
    return nullptr;
  if (!is_subsample(s) && !check_max_pooling_memory(ctx, op_name::max_pool2d_kernel, s, expected[2], expected[3])) return nullptr;
  s.input_numel = self.numel();
  s.output_numel = out.numel();
  return state;
}

std::unique_ptr<detail::RunStateOperator> max_pool2d_instantiate(KernelContext& ctx, const PoolingState& s, TensorRef,
                                                                 IntList, IntList, IntList, IntList, bool, TensorRef) {
  if (is_subsample(s)) return std::make_unique<detail::RunStateOperator>(nullptr);
  return detail::create_operator(ctx, op_name::max_pool2d_kernel, "xnn_create_max_pooling2d_nhwc_s8", [&](xnn_operator_t* made) {
    return xnn_create_max_pooling2d_nhwc_s8(s.padding_height, s.padding_width + s.extra_right,
                                            s.padding_height + s.extra_bottom, s.padding_width,
                                            s.kernel_height, s.kernel_width, s.stride_height, s.stride_width,
                                            s.dilation_height, s.dilation_width, s.channels, s.channels, s.channels,
                                            INT8_MIN, INT8_MAX, 0, made);
  });
}

bool max_pool2d_run(KernelContext& ctx, const PoolingState& s, detail::RunStateOperator& instance,
                    const RunEnvironment& env, TensorRef self, IntList, IntList, IntList, IntList, bool, TensorRef out) {
  if (!check_run_tensors(ctx, op_name::max_pool2d_kernel, s, self, out)) return false;
  if (is_subsample(s)) {
    subsample(s, self.data_as<const int8_t>(), out.data_as<int8_t>());
    return true;
  }
  return instance.run(ctx, op_name::max_pool2d_kernel, env, self.data(), nullptr, out.data(), [&](xnn_operator_t op, pthreadpool_t pool) {
    return xnn_setup_max_pooling2d_nhwc_s8(op, s.batch, s.height, s.width, self.data_as<const int8_t>(),
                                           out.data_as<int8_t>(), pool);
  });
}

}  // namespace et_ops::kernels::xnnpack
