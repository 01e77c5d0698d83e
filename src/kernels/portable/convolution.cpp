// aten::convolution.out: direct 2-D convolution on float32 with groups,
// stride, padding and dilation, accumulated in float32. Transposed
// convolution is not supported.
//
// Each output element sums its taps in (input channel, kernel row, kernel
// column) order from 0, then adds the bias. PyTorch (oneDNN / im2col+GEMM)
// sums in other orders, so results agree with it to rounding.
#include <cstdint>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::floor_div;
using detail::Pair;
using detail::Shape;

constexpr const char* kConvolutionOp = "aten::convolution.out";

// A spatial parameter of 1 or 2 values; one value applies to both
// dimensions, as aten's expand_param_if_needed.
bool spatial_pair(KernelContext& ctx, const char* name, IntList list, int64_t min_value, Pair& pair) {
  const char* op = kConvolutionOp;
  if (!detail::check_int_list(ctx, op, name, list)) return false;
  if (list.size() != 1 && list.size() != 2)
    return detail::fail(ctx, op, "{} must hold 1 or 2 values for a 2-D convolution, got {}", name,
                        detail::list_string(list));
  pair = Pair{list[0], list[list.size() - 1]};
  if (pair.h < min_value || pair.w < min_value)
    return detail::fail(ctx, op, "{} must be {}, got {}", name, min_value > 0 ? "positive" : "non-negative",
                        detail::list_string(list));
  return true;
}

// Non-transposed convolution has no use for output_padding; anything but
// zeros means the caller expected a transposed convolution.
bool check_output_padding(KernelContext& ctx, IntList output_padding) {
  const char* op = kConvolutionOp;
  if (!detail::check_int_list(ctx, op, "output_padding", output_padding)) return false;
  bool zeros = output_padding.size() <= 2;
  for (int64_t v : output_padding) zeros = zeros && v == 0;
  if (zeros) return true;
  return detail::fail(ctx, op, "output_padding {} must be empty or zeros (at most 2) for a non-transposed convolution",
                      detail::list_string(output_padding));
}

int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

struct Geometry {
  int64_t batch = 0, in_channels = 0, in_h = 0, in_w = 0;
  int64_t out_channels = 0, kernel_h = 0, kernel_w = 0, out_h = 0, out_w = 0, groups = 1;
  Pair stride, padding, dilation;
};

// (in + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1, with every
// step checked for overflow and a kernel that does not fit reported.
bool output_extent(KernelContext& ctx, const char* axis, int64_t in, int64_t kernel, int64_t stride, int64_t padding,
                   int64_t dilation, int64_t& out) {
  int64_t padded = 0;
  int64_t span = 0;
  if (__builtin_mul_overflow(padding, 2, &padded) || __builtin_add_overflow(in, padded, &padded) ||
      __builtin_mul_overflow(dilation, kernel - 1, &span) || __builtin_add_overflow(span, 1, &span))
    return detail::fail(ctx, kConvolutionOp, "the {} extent overflows (input {}, padding {}, dilation {}, kernel {})",
                        axis, in, padding, dilation, kernel);
  if (padded < span)
    return detail::fail(ctx, kConvolutionOp,
                        "the padded input {} ({} + 2 * padding {}) is smaller than the dilated kernel {} "
                        "(dilation {} * (kernel {} - 1) + 1) along {}",
                        padded, in, padding, span, dilation, kernel, axis);
  out = (padded - span) / stride + 1;
  return true;
}

bool check_shapes(KernelContext& ctx, TensorRef input, TensorRef weight, std::optional<TensorRef> bias,
                  Geometry& g) {
  const char* op = kConvolutionOp;
  if (input.dim() != 4)
    return detail::fail(ctx, op, "input must be 4-D [N, C, H, W] (only 2-D convolution is supported), got shape {}",
                        detail::shape_string(input));
  if (!detail::check_rank(ctx, op, "weight", weight, 4)) return false;
  g.batch = input.size(0);
  g.in_channels = input.size(1);
  g.in_h = input.size(2);
  g.in_w = input.size(3);
  g.out_channels = weight.size(0);
  g.kernel_h = weight.size(2);
  g.kernel_w = weight.size(3);
  if (g.groups <= 0) return detail::fail(ctx, op, "groups must be positive, got {}", g.groups);
  if (g.kernel_h <= 0 || g.kernel_w <= 0)
    return detail::fail(ctx, op, "weight of shape {} has an empty kernel", detail::shape_string(weight));
  if (g.out_channels % g.groups != 0)
    return detail::fail(ctx, op, "weight of shape {} has {} output channels, which groups = {} does not divide",
                        detail::shape_string(weight), g.out_channels, g.groups);
  if (weight.size(1) > 0 && g.groups > INT64_MAX / weight.size(1))
    return detail::fail(ctx, op, "groups = {} times weight.size(1) = {} overflows", g.groups, weight.size(1));
  if (weight.size(1) * g.groups != g.in_channels)
    return detail::fail(ctx, op,
                        "weight of shape {} with groups = {} expects input with {} channels, but input of shape {} has {}",
                        detail::shape_string(weight), g.groups, weight.size(1) * g.groups,
                        detail::shape_string(input), g.in_channels);
  if (bias && !(bias->dim() == 1 && bias->size(0) == g.out_channels))
    return detail::fail(ctx, op, "bias must have shape [{}] (the output channels of weight), got {}", g.out_channels,
                        detail::shape_string(*bias));
  return output_extent(ctx, "height", g.in_h, g.kernel_h, g.stride.h, g.padding.h, g.dilation.h, g.out_h) &&
         output_extent(ctx, "width", g.in_w, g.kernel_w, g.stride.w, g.padding.w, g.dilation.w, g.out_w);
}

struct Range {
  int64_t begin = 0;
  int64_t end = 0;
};

// Output positions o in [0, out_size) whose input position
// o * stride - padding + tap_offset lies in [0, in_size).
Range valid_range(int64_t in_size, int64_t out_size, int64_t stride, int64_t padding, int64_t tap_offset) {
  const int64_t first = ceil_div(padding - tap_offset, stride);
  const int64_t last = floor_div(in_size - 1 + padding - tap_offset, stride);
  Range range{first < 0 ? 0 : first, last + 1 > out_size ? out_size : last + 1};
  if (range.end < range.begin) range.end = range.begin;
  return range;
}

// Adds weight_value times one shifted input plane (kernel tap kh, kw) into
// one output plane.
void accumulate_tap(const Geometry& g, TensorRef input, TensorRef out, const float* in_plane, float* out_plane,
                    float weight_value, int64_t kh, int64_t kw) {
  const int64_t tap_h = kh * g.dilation.h;
  const int64_t tap_w = kw * g.dilation.w;
  const Range rows = valid_range(g.in_h, g.out_h, g.stride.h, g.padding.h, tap_h);
  const Range cols = valid_range(g.in_w, g.out_w, g.stride.w, g.padding.w, tap_w);
  if (rows.begin == rows.end || cols.begin == cols.end) return;  // the tap only ever meets padding
  const int64_t in_row_stride = input.stride(2), in_col_stride = input.stride(3);
  const int64_t out_row_stride = out.stride(2), out_col_stride = out.stride(3);
  const bool unit_steps = in_col_stride == 1 && out_col_stride == 1 && g.stride.w == 1;
  for (int64_t oh = rows.begin; oh < rows.end; ++oh) {
    const int64_t ih = oh * g.stride.h - g.padding.h + tap_h;
    const float* in_row = in_plane + ih * in_row_stride;
    float* out_row = out_plane + oh * out_row_stride;
    if (unit_steps) {
      const float* in_start = in_row + (cols.begin - g.padding.w + tap_w);
      float* out_start = out_row + cols.begin;
      for (int64_t j = 0; j < cols.end - cols.begin; ++j) out_start[j] += weight_value * in_start[j];
    } else {
      for (int64_t ow = cols.begin; ow < cols.end; ++ow)
        out_row[ow * out_col_stride] += weight_value * in_row[(ow * g.stride.w - g.padding.w + tap_w) * in_col_stride];
    }
  }
}

void fill_plane(const Geometry& g, TensorRef out, float* out_plane, float value) {
  for (int64_t oh = 0; oh < g.out_h; ++oh)
    for (int64_t ow = 0; ow < g.out_w; ++ow) out_plane[oh * out.stride(2) + ow * out.stride(3)] = value;
}

void add_to_plane(const Geometry& g, TensorRef out, float* out_plane, float value) {
  for (int64_t oh = 0; oh < g.out_h; ++oh)
    for (int64_t ow = 0; ow < g.out_w; ++ow) out_plane[oh * out.stride(2) + ow * out.stride(3)] += value;
}

void convolve(const Geometry& g, TensorRef input, TensorRef weight, const float* bias, TensorRef out) {
  if (g.batch == 0 || g.out_channels == 0 || g.out_h == 0 || g.out_w == 0) return;
  const float* in = input.data_as<const float>();
  const float* w = weight.data_as<const float>();
  float* o = out.data_as<float>();
  const int64_t in_per_group = g.in_channels / g.groups;
  const int64_t out_per_group = g.out_channels / g.groups;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oc = 0; oc < g.out_channels; ++oc) {
      float* out_plane = o + n * out.stride(0) + oc * out.stride(1);
      fill_plane(g, out, out_plane, 0.0f);
      const int64_t first_in_channel = (oc / out_per_group) * in_per_group;
      for (int64_t icl = 0; icl < in_per_group; ++icl) {
        const float* in_plane = in + n * input.stride(0) + (first_in_channel + icl) * input.stride(1);
        for (int64_t kh = 0; kh < g.kernel_h; ++kh)
          for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
            const float weight_value =
                w[oc * weight.stride(0) + icl * weight.stride(1) + kh * weight.stride(2) + kw * weight.stride(3)];
            accumulate_tap(g, input, out, in_plane, out_plane, weight_value, kh, kw);
          }
      }
      if (bias != nullptr) add_to_plane(g, out, out_plane, bias[oc]);
    }
}

}  // namespace

bool convolution_out(KernelContext& ctx, TensorRef input, TensorRef weight, std::optional<TensorRef> bias,
                     IntList stride, IntList padding, IntList dilation, bool transposed, IntList output_padding,
                     int64_t groups, TensorRef out) {
  const char* op = kConvolutionOp;
  if (transposed)
    return detail::fail(ctx, op, "transposed convolution (transposed = true) is not supported");
  Geometry g;
  g.groups = groups;
  const bool tensors_ok =
      detail::check_tensor(ctx, op, "input", input) && detail::check_tensor(ctx, op, "weight", weight) &&
      (!bias || detail::check_tensor(ctx, op, "bias", *bias)) && detail::check_tensor(ctx, op, "out", out) &&
      detail::check_dtype(ctx, op, "input", input, DType::Float32) &&
      detail::check_dtype(ctx, op, "weight", weight, DType::Float32) &&
      (!bias || detail::check_dtype(ctx, op, "bias", *bias, DType::Float32)) &&
      detail::check_dtype(ctx, op, "out", out, DType::Float32);
  const bool params_ok = tensors_ok && spatial_pair(ctx, "stride", stride, 1, g.stride) &&
                         spatial_pair(ctx, "padding", padding, 0, g.padding) &&
                         spatial_pair(ctx, "dilation", dilation, 1, g.dilation) &&
                         check_output_padding(ctx, output_padding) && check_shapes(ctx, input, weight, bias, g);
  if (!params_ok) return false;
  Shape shape;
  shape.dim = 4;
  shape.sizes[0] = g.batch;
  shape.sizes[1] = g.out_channels;
  shape.sizes[2] = g.out_h;
  shape.sizes[3] = g.out_w;
  const bool out_ok =
      detail::check_out_shape(ctx, op, "out", out, shape, "[N, C_out, H_out, W_out] of this convolution") &&
      detail::check_no_overlap(ctx, op, "out", out, "input", input, Alias::Forbidden) &&
      detail::check_no_overlap(ctx, op, "out", out, "weight", weight, Alias::Forbidden) &&
      (!bias || detail::check_no_overlap(ctx, op, "out", out, "bias", *bias, Alias::Forbidden));
  if (!out_ok) return false;
  convolve(g, input, weight, bias ? bias->data_as<const float>() : nullptr, out);
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
