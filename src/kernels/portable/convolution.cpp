// aten::convolution.out: 2-D convolution on float32 with groups, stride,
// padding and dilation, accumulated in float64. Transposed convolution is
// not supported.
//
// Every output element is the sum described in gemm.h: from +0.0 in
// float64, the exact products input * weight over (input channel, kernel
// row, kernel column) in increasing order, taps in the padding counting as
// input 0.0, then the bias, rounded once to float32. Three paths compute
// that same sum, so they give the same bits:
//   - depthwise (one input channel per group, as MobileNet's 3x3 layers):
//     a direct kernel (depthwise.h);
//   - 1x1, stride 1, no padding: the input channels are the matrix that
//     multiplies the weights (gemm.h);
//   - everything else: the weights times the patch matrix (gemm.h).
#include <cstdint>

#include "checks.h"
#include "depthwise.h"
#include "et_ops/kernels/portable.h"
#include "gemm.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::Pair;
using detail::Shape;

// A spatial parameter of 1 or 2 values; one value applies to both
// dimensions, as aten's expand_param_if_needed.
bool spatial_pair(KernelContext& ctx, const char* name, IntList list, int64_t min_value, Pair& pair) {
  const char* op = op_name::convolution_out;
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
  const char* op = op_name::convolution_out;
  if (!detail::check_int_list(ctx, op, "output_padding", output_padding)) return false;
  bool zeros = output_padding.size() <= 2;
  for (int64_t v : output_padding) zeros = zeros && v == 0;
  if (zeros) return true;
  return detail::fail(ctx, op, "output_padding {} must be empty or zeros (at most 2) for a non-transposed convolution",
                      detail::list_string(output_padding));
}

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
    return detail::fail(ctx, op_name::convolution_out, "the {} extent overflows (input {}, padding {}, dilation {}, kernel {})",
                        axis, in, padding, dilation, kernel);
  if (padded < span)
    return detail::fail(ctx, op_name::convolution_out,
                        "the padded input {} ({} + 2 * padding {}) is smaller than the dilated kernel {} "
                        "(dilation {} * (kernel {} - 1) + 1) along {}",
                        padded, in, padding, span, dilation, kernel, axis);
  out = (padded - span) / stride + 1;
  return true;
}

bool check_shapes(KernelContext& ctx, TensorRef input, TensorRef weight, std::optional<TensorRef> bias,
                  Geometry& g) {
  const char* op = op_name::convolution_out;
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

// The depthwise path, when one output row's band fits its buffer.
bool convolve_depthwise(const Geometry& g, TensorRef input, TensorRef weight, const float* bias,
                        int64_t bias_stride, TensorRef out) {
  detail::Depthwise c{};
  c.input = input.data_as<const float>();
  c.weight = weight.data_as<const float>();
  c.bias = bias;
  c.bias_stride = bias_stride;
  c.out = out.data_as<float>();
  for (int d = 0; d < 4; ++d) {
    c.input_strides[d] = input.stride(d);
    c.weight_strides[d] = weight.stride(d);
    c.out_strides[d] = out.stride(d);
  }
  c.batch = g.batch;
  c.channels = g.in_channels;
  c.multiplier = g.out_channels / g.groups;
  c.in_h = g.in_h, c.in_w = g.in_w, c.out_h = g.out_h, c.out_w = g.out_w;
  c.kernel_h = g.kernel_h, c.kernel_w = g.kernel_w;
  c.stride_h = g.stride.h, c.stride_w = g.stride.w, c.padding_h = g.padding.h, c.padding_w = g.padding.w;
  c.dilation_h = g.dilation.h, c.dilation_w = g.dilation.w;
  return detail::depthwise_convolution(c);
}

// Pixel (h, w) of an H x W plane at h * stride(2) + w * stride(3) as one
// flat index times a stride, if the layout allows (0 when it does not).
int64_t flat_pixel_stride(TensorRef t) {
  if (t.size(3) == 1) return t.stride(2);
  if (t.size(2) == 1 || t.stride(2) == t.size(3) * t.stride(3)) return t.stride(3);
  return 0;
}

// Output channels from oc0 of image n as the product's rows, pixels as its
// columns: one flat run of columns when the layout allows, else row by row.
detail::GemmOut pixel_columns(TensorRef out, int64_t n, int64_t oc0) {
  float* origin = out.data_as<float>() + n * out.stride(0) + oc0 * out.stride(1);
  const int64_t flat = flat_pixel_stride(out);
  const int64_t pixels = out.size(2) * out.size(3);
  if (flat != 0) return detail::GemmOut{origin, out.stride(1), flat, pixels, 0};
  return detail::GemmOut{origin, out.stride(1), out.stride(3), out.size(3), out.stride(2)};
}

// The right operand of one image and group: the input channels themselves
// for a 1x1 convolution with stride 1 and no padding, else its patches.
detail::GemmRhs patch_operand(const Geometry& g, TensorRef input, int64_t n, int64_t first_channel) {
  detail::GemmRhs rhs{};
  const float* origin = input.data_as<const float>() + n * input.stride(0) + first_channel * input.stride(1);
  const int64_t pixel_stride = flat_pixel_stride(input);
  const bool pointwise = g.kernel_h == 1 && g.kernel_w == 1 && g.stride.h == 1 && g.stride.w == 1 &&
                         g.padding.h == 0 && g.padding.w == 0 && pixel_stride != 0;
  if (pointwise) {
    rhs.kind = detail::GemmRhs::Kind::Matrix;
    rhs.matrix = detail::GemmMatrix{origin, input.stride(1), pixel_stride};
    return rhs;
  }
  rhs.kind = detail::GemmRhs::Kind::Patches;
  rhs.patches = detail::GemmPatches{origin, input.stride(1), input.stride(2), input.stride(3), g.in_h, g.in_w,
                                    g.kernel_h, g.kernel_w, g.out_w, g.stride.h, g.stride.w, g.padding.h,
                                    g.padding.w, g.dilation.h, g.dilation.w};
  return rhs;
}

// out[n, group's channels] = weight[group's channels] x patches, per image and group.
void convolve_by_products(const Geometry& g, TensorRef input, TensorRef weight, const float* bias,
                          int64_t bias_stride, TensorRef out) {
  const int64_t in_per_group = g.in_channels / g.groups;
  const int64_t out_per_group = g.out_channels / g.groups;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t group = 0; group < g.groups; ++group) {
      const int64_t oc0 = group * out_per_group;
      detail::Gemm p{};
      p.rows = out_per_group;
      p.cols = g.out_h * g.out_w;
      p.depth = in_per_group * g.kernel_h * g.kernel_w;
      // An empty reduction (no input channels) reads neither operand; their
      // data may then be null, so no offset is applied.
      p.a = detail::GemmLhs{p.depth == 0 ? nullptr : weight.data_as<const float>() + oc0 * weight.stride(0),
                            weight.stride(0),
                            {in_per_group, g.kernel_h, g.kernel_w},
                            {weight.stride(1), weight.stride(2), weight.stride(3)}};
      if (p.depth > 0) p.b = patch_operand(g, input, n, group * in_per_group);
      p.out = pixel_columns(out, n, oc0);
      if (bias != nullptr)
        p.bias = detail::GemmBias{bias + oc0 * bias_stride, bias_stride, 0};
      detail::gemm(p);
    }
}

void convolve(const Geometry& g, TensorRef input, TensorRef weight, std::optional<TensorRef> bias, TensorRef out) {
  if (out.numel() == 0) return;
  const float* bias_data = bias ? bias->data_as<const float>() : nullptr;
  const int64_t bias_stride = bias ? bias->stride(0) : 0;
  if (g.in_channels == g.groups && convolve_depthwise(g, input, weight, bias_data, bias_stride, out)) return;
  convolve_by_products(g, input, weight, bias_data, bias_stride, out);
}

}  // namespace

bool convolution_out(KernelContext& ctx, TensorRef input, TensorRef weight, std::optional<TensorRef> bias,
                     IntList stride, IntList padding, IntList dilation, bool transposed, IntList output_padding,
                     int64_t groups, TensorRef out) {
  const char* op = op_name::convolution_out;
  if (transposed)
    return detail::fail(ctx, op, "transposed convolution (transposed = true) is not supported");
  Geometry g;
  g.groups = groups;
  const bool params_ok = detail::check_layer_tensors(ctx, op, input, weight, bias, out) &&
                         spatial_pair(ctx, "stride", stride, 1, g.stride) &&
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
  convolve(g, input, weight, bias, out);
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
