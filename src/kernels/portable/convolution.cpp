// aten::convolution.out: 2-D convolution on float32 with groups, stride,
// padding and dilation, accumulated in float32. Transposed convolution is
// not supported.
//
// Every output element is the sum described in gemm.h: from +0.0, the
// products input * weight over (input channel, kernel row, kernel column)
// in increasing order, taps in the padding counting as input 0.0, then the
// bias. Three paths compute that same sum, so they give the same bits:
//   - depthwise (one input channel per group, as MobileNet's 3x3 layers):
//     a direct kernel on a zero-padded copy of a band of input rows, split
//     into stride phases so that neighbouring outputs read neighbouring
//     inputs (per-target code in this file);
//   - 1x1, stride 1, no padding: the input channels are the matrix that
//     multiplies the weights (gemm.h);
//   - everything else: the weights times the patch matrix (gemm.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "convolution.cpp"
#include <hwy/foreach_target.h>  // must precede highway.h
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "checks.h"
#include "et_ops/kernels/portable.h"
#include "gemm.h"

#ifndef ET_OPS_PORTABLE_CONVOLUTION_SHARED
#define ET_OPS_PORTABLE_CONVOLUTION_SHARED
namespace et_ops::kernels::portable::conv {

// A depthwise convolution: output channel oc reads input channel
// oc / multiplier only. Strides are in elements, in (N, C, H, W) order.
struct Depthwise {
  const float* input;
  int64_t input_strides[4];
  const float* weight;
  int64_t weight_strides[4];
  const float* bias;  // or null
  int64_t bias_stride;
  float* out;
  int64_t out_strides[4];
  int64_t batch, channels, multiplier;
  int64_t in_h, in_w, out_h, out_w, kernel_h, kernel_w;
  int64_t stride_h, stride_w, padding_h, padding_w, dilation_h, dilation_w;
};

}  // namespace et_ops::kernels::portable::conv
#endif  // ET_OPS_PORTABLE_CONVOLUTION_SHARED

// ---- per-target depthwise kernel ----
HWY_BEFORE_NAMESPACE();
namespace et_ops::kernels::portable::conv {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// The padded input band and the band's outputs live on the stack (64 KiB
// and 32 KiB): a 112 x 112 plane takes two bands, a 56 x 56 one.
constexpr int64_t kBandFloats = 16384;
constexpr int64_t kOutFloats = 8192;
constexpr int64_t kMaxTaps = 128;
constexpr int64_t kMaxStride = 8;
// Output vectors computed together: enough independent sums to hide the
// latency of the additions.
constexpr int kGroup = 8;

int64_t lanes() { return static_cast<int64_t>(hn::Lanes(DF())); }
using detail::ceil_div;

// A band of input rows, zero-padded and split into stride_h x stride_w
// phase planes: plane (a, b) row i column t holds padded pixel
// (pr0 + a + i * stride_h, b + t * stride_w), where padded pixel (ph, pw)
// is input pixel (ph - padding_h, pw - padding_w), or 0.0 outside the
// input. Output pixel (r, ow) of the band then reads tap (kh, kw) at plane
// ((kh * dilation_h) % stride_h, (kw * dilation_w) % stride_w), row
// r + (kh * dilation_h) / stride_h, column ow + (kw * dilation_w) / stride_w:
// neighbouring outputs read neighbouring floats, so one vector computes
// `lanes()` outputs of a flattened (row, column) index q = r * row_len + ow
// (columns past out_w are computed and dropped).
struct BandLayout {
  int64_t row_len;     // floats per plane row (>= out_w)
  int64_t plane_rows;  // rows per plane
  int64_t plane_size;  // floats per plane, with slack for the last vector's reads
  int64_t out_rows;    // output rows per band
  // Per column phase q: the plane columns [first, end) that hold input
  // columns (the others stay 0.0).
  int64_t first[kMaxStride], end[kMaxStride];
};

// False when the band's buffers cannot hold one output row (very wide
// inputs, kernels or strides): the caller then takes the matrix-product path.
bool plan_band(const Depthwise& c, BandLayout& b) {
  if (c.kernel_h * c.kernel_w > kMaxTaps || c.stride_w > kMaxStride) return false;
  const int64_t padded_w = c.in_w + 2 * c.padding_w;
  const int64_t reach_h = (c.kernel_h - 1) * c.dilation_h / c.stride_h;
  const int64_t reach_w = (c.kernel_w - 1) * c.dilation_w / c.stride_w;
  b.row_len = ceil_div(padded_w, c.stride_w);
  if (b.row_len > kOutFloats / 2 || c.stride_h > kBandFloats / b.row_len) return false;
  const int64_t planes = c.stride_h * c.stride_w;
  const int64_t slack = reach_w + 2 * lanes();
  // Output rows R need planes * ((R + reach_h) * row_len + slack) input floats
  // and R * row_len + lanes() output floats.
  const int64_t by_input = (kBandFloats / planes - slack) / b.row_len - reach_h;
  const int64_t by_output = (kOutFloats - lanes()) / b.row_len;
  b.out_rows = std::min({c.out_h, by_input, by_output});
  if (b.out_rows < 1) return false;
  b.plane_rows = b.out_rows + reach_h;
  b.plane_size = b.plane_rows * b.row_len + slack;
  for (int64_t q = 0; q < c.stride_w; ++q) {
    // Plane columns t whose input column q + t * stride_w - padding_w is in [0, in_w).
    b.first[q] = std::min(b.row_len, ceil_div(std::max<int64_t>(0, c.padding_w - q), c.stride_w));
    b.end[q] = std::max(b.first[q],
                        std::min(b.row_len, ceil_div(std::max<int64_t>(0, c.padding_w + c.in_w - q), c.stride_w)));
  }
  return true;
}

// Plane columns [t0, t1) of column phase q, from input row `src`.
void copy_columns(const Depthwise& c, const float* src, int64_t step, int64_t q, int64_t t0, int64_t t1,
                  float* row) {
  const float* from = src + (q + t0 * c.stride_w - c.padding_w) * step;
  const int64_t from_step = c.stride_w * step;
  float* to = row + t0;
  const int64_t count = t1 - t0;
  int64_t t = 0;
  if (from_step == 1) {
    const DF d;
    for (; t + lanes() <= count; t += lanes()) hn::StoreU(hn::LoadU(d, from + t), d, to + t);
  }
  for (; t < count; ++t) to[t] = from[t * from_step];
}

// The input columns of one padded row (input row `src`, column iw at
// src[iw * step]) into the stride_w column planes of its row phase
// (`plane_size` apart). Padding columns are never written: they stay 0.0.
void fill_row(const Depthwise& c, const BandLayout& b, const float* src, int64_t step, float* dst) {
  if (c.stride_w == 2 && step == 1) {
    // Both phases at once from pairs of neighbouring input columns
    // (2t - padding_w, 2t - padding_w + 1), where both lie in the input.
    const DF d;
    const int64_t n = lanes();
    const int64_t pairs_begin = std::max(b.first[0], b.first[1]);
    const int64_t pairs_end = std::max(pairs_begin, std::min(b.end[0], b.end[1]));
    int64_t t = pairs_begin;
    for (; t + n <= pairs_end; t += n) {
      VF even, odd;
      hn::LoadInterleaved2(d, src + 2 * t - c.padding_w, even, odd);
      hn::StoreU(even, d, dst + t);
      hn::StoreU(odd, d, dst + b.plane_size + t);
    }
    for (int64_t q = 0; q < 2; ++q) {
      float* row = dst + q * b.plane_size;
      copy_columns(c, src, step, q, b.first[q], std::min(b.end[q], pairs_begin), row);
      copy_columns(c, src, step, q, std::max(b.first[q], t), b.end[q], row);
    }
    return;
  }
  for (int64_t q = 0; q < c.stride_w; ++q) copy_columns(c, src, step, q, b.first[q], b.end[q], dst + q * b.plane_size);
}

// The input rows of one band: padded rows [pr0, pr0 + stride_h * plane_rows)
// of one input plane. The band starts all zero, and every plane of the
// same band position writes the same floats, so padding stays 0.0.
void fill_band(const Depthwise& c, const BandLayout& b, const float* plane, int64_t pr0, float* band) {
  for (int64_t r = 0; r < c.stride_h * b.plane_rows; ++r) {
    const int64_t ih = pr0 + r - c.padding_h;
    if (ih < 0 || ih >= c.in_h) continue;
    float* dst = band + (r % c.stride_h) * c.stride_w * b.plane_size + (r / c.stride_h) * b.row_len;
    fill_row(c, b, plane + ih * c.input_strides[2], c.input_strides[3], dst);
  }
}

// The taps in (kernel row, kernel column) order: where each tap's input
// sits relative to an output's flat index, and one output channel's weights.
struct Taps {
  int64_t count;
  int64_t offset[kMaxTaps];
  float weight[kMaxTaps];
};

void tap_offsets(const Depthwise& c, const BandLayout& b, Taps& taps) {
  taps.count = 0;
  for (int64_t kh = 0; kh < c.kernel_h; ++kh)
    for (int64_t kw = 0; kw < c.kernel_w; ++kw) {
      const int64_t row = kh * c.dilation_h, col = kw * c.dilation_w;
      const int64_t plane = (row % c.stride_h) * c.stride_w + col % c.stride_w;
      taps.offset[taps.count++] = plane * b.plane_size + row / c.stride_h * b.row_len + col / c.stride_w;
    }
}

void tap_weights(const Depthwise& c, int64_t oc, Taps& taps) {
  const float* w = c.weight + oc * c.weight_strides[0];
  int64_t t = 0;
  for (int64_t kh = 0; kh < c.kernel_h; ++kh)
    for (int64_t kw = 0; kw < c.kernel_w; ++kw) taps.weight[t++] = w[kh * c.weight_strides[2] + kw * c.weight_strides[3]];
}

// G vectors of outputs from flat index q: from +0.0, each tap's
// input * weight in order, then the bias.
template <int G>
void compute_vectors(const float* band, const Taps& taps, const float* bias, int64_t q, float* out) {
  const DF d;
  const int64_t n = lanes();
  VF sum[G];
  for (int g = 0; g < G; ++g) sum[g] = hn::Zero(d);
  for (int64_t t = 0; t < taps.count; ++t) {
    const VF w = hn::Set(d, taps.weight[t]);
    const float* in = band + taps.offset[t] + q;
    for (int g = 0; g < G; ++g) sum[g] = hn::Add(sum[g], hn::Mul(hn::LoadU(d, in + g * n), w));
  }
  if (bias != nullptr)
    for (int g = 0; g < G; ++g) sum[g] = hn::Add(sum[g], hn::Set(d, *bias));
  for (int g = 0; g < G; ++g) hn::Store(sum[g], d, out + q + g * n);
}

template <int G>
void compute_last_vectors(int64_t count, const float* band, const Taps& taps, const float* bias, int64_t q,
                          float* out) {
  if constexpr (G > 1) {
    if (count < G) return compute_last_vectors<G - 1>(count, band, taps, bias, q, out);
  }
  compute_vectors<G>(band, taps, bias, q, out);
}

// Output rows [oh0, oh0 + rows) of one output channel from its band.
void compute_band(const Depthwise& c, const BandLayout& b, const float* band, const Taps& taps, const float* bias,
                  int64_t oh0, int64_t rows, float* staging, float* out_plane) {
  const int64_t n = lanes();
  const int64_t vectors = ceil_div(rows * b.row_len, n);
  int64_t v = 0;
  for (; v + kGroup <= vectors; v += kGroup) compute_vectors<kGroup>(band, taps, bias, v * n, staging);
  if (v < vectors) compute_last_vectors<kGroup>(vectors - v, band, taps, bias, v * n, staging);
  const DF d;
  for (int64_t r = 0; r < rows; ++r) {
    const float* from = staging + r * b.row_len;
    float* to = out_plane + (oh0 + r) * c.out_strides[2];
    int64_t ow = 0;
    if (c.out_strides[3] == 1)
      for (; ow + n <= c.out_w; ow += n) hn::StoreU(hn::LoadU(d, from + ow), d, to + ow);
    for (; ow < c.out_w; ++ow) to[ow * c.out_strides[3]] = from[ow];
  }
}

bool DepthwiseConvolution(const Depthwise& c) {
  BandLayout b;
  if (!plan_band(c, b)) return false;
  HWY_ALIGN float band[kBandFloats];
  HWY_ALIGN float staging[kOutFloats];
  Taps taps;
  tap_offsets(c, b, taps);
  for (int64_t oh0 = 0; oh0 < c.out_h; oh0 += b.out_rows) {
    const int64_t rows = std::min(b.out_rows, c.out_h - oh0);
    std::fill(band, band + c.stride_h * c.stride_w * b.plane_size, 0.0f);
    for (int64_t n = 0; n < c.batch; ++n)
      for (int64_t ic = 0; ic < c.channels; ++ic) {
        fill_band(c, b, c.input + n * c.input_strides[0] + ic * c.input_strides[1], oh0 * c.stride_h, band);
        for (int64_t m = 0; m < c.multiplier; ++m) {
          const int64_t oc = ic * c.multiplier + m;
          tap_weights(c, oc, taps);
          compute_band(c, b, band, taps, c.bias != nullptr ? c.bias + oc * c.bias_stride : nullptr, oh0, rows,
                       staging, c.out + n * c.out_strides[0] + oc * c.out_strides[1]);
        }
      }
  }
  return true;
}

}  // namespace HWY_NAMESPACE
}  // namespace et_ops::kernels::portable::conv
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace et_ops::kernels::portable {
namespace conv {
HWY_EXPORT(DepthwiseConvolution);
}  // namespace conv
namespace {

using detail::Alias;
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

// The depthwise path, when one output row's band fits its buffer.
bool convolve_depthwise(const Geometry& g, TensorRef input, TensorRef weight, const float* bias,
                        int64_t bias_stride, TensorRef out) {
  conv::Depthwise c{};
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
  return HWY_DYNAMIC_DISPATCH(conv::DepthwiseConvolution)(c);
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
        p.bias = detail::GemmBias{detail::GemmBias::Kind::PerRow, bias + oc0 * bias_stride, bias_stride};
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
  const char* op = kConvolutionOp;
  if (transposed)
    return detail::fail(ctx, op, "transposed convolution (transposed = true) is not supported");
  Geometry g;
  g.groups = groups;
  const bool params_ok = detail::check_layer_tensors(ctx, op, input, weight, bias, out) && spatial_pair(ctx, "stride", stride, 1, g.stride) &&
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
#endif  // HWY_ONCE
