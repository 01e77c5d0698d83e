// aten::max_pool2d_with_indices.out on float32: the maximum of each window
// and its flat index within the H * W plane, as PyTorch's CPU kernel picks
// them (first maximum wins; a NaN always wins, the last NaN most).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::floor_div;
using detail::Pair;
using detail::Shape;

constexpr const char* kMaxPoolOp = "aten::max_pool2d_with_indices.out";

// A parameter of 1 or 2 values (one value applies to both dimensions), each
// at least min_value and, as in aten (which narrows them to int), at most
// INT32_MAX. An empty list takes `fallback` when one is given.
bool pool_pair(KernelContext& ctx, const char* name, IntList list, int64_t min_value, const Pair* fallback,
               Pair& pair) {
  const char* op = kMaxPoolOp;
  if (!detail::check_int_list(ctx, op, name, list)) return false;
  if (list.empty() && fallback != nullptr) {
    pair = *fallback;
    return true;
  }
  if (list.size() != 1 && list.size() != 2)
    return detail::fail(ctx, op, "{} must hold {}1 or 2 values, got {}", name, fallback ? "0, " : "",
                        detail::list_string(list));
  pair = Pair{list[0], list[list.size() - 1]};
  for (int64_t v : {pair.h, pair.w})
    if (v < min_value || v > std::numeric_limits<int32_t>::max())
      return detail::fail(ctx, op, "{} must hold values in [{}, {}], got {}", name, min_value,
                          std::numeric_limits<int32_t>::max(), detail::list_string(list));
  return true;
}

// aten's pooling_output_shape: floor (or ceil) of the window count, where in
// ceil mode the last window must start inside the input or left padding.
// Overflow is reported rather than wrapped.
bool output_extent(KernelContext& ctx, const char* axis, int64_t in, int64_t kernel, int64_t stride,
                   int64_t padding, int64_t dilation, bool ceil_mode, int64_t& out) {
  int64_t numerator = 0;
  int64_t padded = 0;
  const int64_t span = dilation * (kernel - 1) + 1;  // both at most INT32_MAX: fits
  if (__builtin_add_overflow(in, 2 * padding, &numerator) || __builtin_add_overflow(in, padding, &padded) ||
      __builtin_add_overflow(numerator, ceil_mode ? stride - 1 : 0, &numerator))
    return detail::fail(ctx, kMaxPoolOp, "the {} extent overflows (input {}, padding {})", axis, in, padding);
  out = floor_div(numerator - span, stride) + 1;
  if (ceil_mode && (out - 1) * stride >= padded) --out;
  return true;
}

struct Geometry {
  int64_t planes = 0;  // N * C
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  Pair kernel, stride, padding, dilation;
};

bool check_self(KernelContext& ctx, TensorRef self) {
  const char* op = kMaxPoolOp;
  if (self.dim() != 3 && self.dim() != 4)
    return detail::fail(ctx, op, "self must be 3-D [C, H, W] or 4-D [N, C, H, W], got shape {}",
                        detail::shape_string(self));
  for (int64_t d = self.dim() - 3; d < self.dim(); ++d)
    if (self.size(d) == 0)
      return detail::fail(ctx, op, "self of shape {} is empty in dimension {}; only a batch dimension may be 0",
                          detail::shape_string(self), d);
  return true;
}

bool resolve_geometry(KernelContext& ctx, TensorRef self, IntList kernel_size, IntList stride, IntList padding,
                      IntList dilation, bool ceil_mode, Geometry& g) {
  const char* op = kMaxPoolOp;
  if (!(pool_pair(ctx, "kernel_size", kernel_size, 1, nullptr, g.kernel) &&
        pool_pair(ctx, "stride", stride, 1, &g.kernel, g.stride) &&
        pool_pair(ctx, "padding", padding, 0, nullptr, g.padding) &&
        pool_pair(ctx, "dilation", dilation, 1, nullptr, g.dilation)))
    return false;
  if (g.padding.h > g.kernel.h / 2 || g.padding.w > g.kernel.w / 2)
    return detail::fail(ctx, op, "padding [{}, {}] must be at most half of kernel_size [{}, {}]", g.padding.h,
                        g.padding.w, g.kernel.h, g.kernel.w);
  const int64_t rank = self.dim();
  g.planes = self.numel() / (self.size(rank - 1) * self.size(rank - 2));
  g.in_h = self.size(rank - 2);
  g.in_w = self.size(rank - 1);
  if (!(output_extent(ctx, "height", g.in_h, g.kernel.h, g.stride.h, g.padding.h, g.dilation.h, ceil_mode, g.out_h) &&
        output_extent(ctx, "width", g.in_w, g.kernel.w, g.stride.w, g.padding.w, g.dilation.w, ceil_mode, g.out_w)))
    return false;
  if (g.out_h < 1 || g.out_w < 1)
    return detail::fail(ctx, op, "the output size [{}, {}] computed for input [{}, {}] is too small (at least 1)",
                        g.out_h, g.out_w, g.in_h, g.in_w);
  return true;
}

// Memory offset of plane p (the flattened leading dimensions) of t.
int64_t plane_offset(TensorRef t, int64_t plane) {
  const int64_t rank = t.dim();
  const int64_t channels = t.size(rank - 3);
  const int64_t channel_offset = (plane % channels) * t.stride(rank - 3);
  return rank == 4 ? (plane / channels) * t.stride(0) + channel_offset : channel_offset;
}

// One output element: PyTorch's cpu_max_pool loop, including its first
// index for a window that holds nothing but -inf.
void pool_window(const Geometry& g, TensorRef self, const float* in_plane, int64_t oh, int64_t ow, float& max_value,
                 int64_t& max_index) {
  int64_t h0 = oh * g.stride.h - g.padding.h;
  int64_t w0 = ow * g.stride.w - g.padding.w;
  const int64_t h1 = std::min(h0 + (g.kernel.h - 1) * g.dilation.h + 1, g.in_h);
  const int64_t w1 = std::min(w0 + (g.kernel.w - 1) * g.dilation.w + 1, g.in_w);
  if (h0 < 0) h0 += (-h0 + g.dilation.h - 1) / g.dilation.h * g.dilation.h;
  if (w0 < 0) w0 += (-w0 + g.dilation.w - 1) / g.dilation.w * g.dilation.w;
  max_index = h0 * g.in_w + w0;
  max_value = -std::numeric_limits<float>::infinity();
  const int64_t row_stride = self.stride(self.dim() - 2);
  const int64_t col_stride = self.stride(self.dim() - 1);
  for (int64_t ih = h0; ih < h1; ih += g.dilation.h)
    for (int64_t iw = w0; iw < w1; iw += g.dilation.w) {
      const float value = in_plane[ih * row_stride + iw * col_stride];
      if (value > max_value || std::isnan(value)) {
        max_value = value;
        max_index = ih * g.in_w + iw;
      }
    }
}

void max_pool(const Geometry& g, TensorRef self, TensorRef out, TensorRef indices) {
  const float* in = self.data_as<const float>();
  float* values = out.data_as<float>();
  int64_t* positions = indices.data_as<int64_t>();
  const int64_t rank = self.dim();
  for (int64_t plane = 0; plane < g.planes; ++plane) {
    const float* in_plane = in + plane_offset(self, plane);
    float* value_plane = values + plane_offset(out, plane);
    int64_t* index_plane = positions + plane_offset(indices, plane);
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        float max_value = 0.0f;
        int64_t max_index = 0;
        pool_window(g, self, in_plane, oh, ow, max_value, max_index);
        value_plane[oh * out.stride(rank - 2) + ow * out.stride(rank - 1)] = max_value;
        index_plane[oh * indices.stride(rank - 2) + ow * indices.stride(rank - 1)] = max_index;
      }
  }
}

}  // namespace

bool max_pool2d_with_indices_out(KernelContext& ctx, TensorRef self, IntList kernel_size, IntList stride,
                                 IntList padding, IntList dilation, bool ceil_mode, TensorRef out, TensorRef indices) {
  const char* op = kMaxPoolOp;
  Geometry g;
  const bool args_ok = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                       detail::check_tensor(ctx, op, "indices", indices) &&
                       detail::check_dtype(ctx, op, "self", self, DType::Float32) &&
                       detail::check_dtype(ctx, op, "out", out, DType::Float32) &&
                       detail::check_dtype(ctx, op, "indices", indices, DType::Int64) && check_self(ctx, self) &&
                       resolve_geometry(ctx, self, kernel_size, stride, padding, dilation, ceil_mode, g);
  if (!args_ok) return false;
  Shape shape = detail::shape_of(self);
  shape.sizes[shape.dim - 2] = g.out_h;
  shape.sizes[shape.dim - 1] = g.out_w;
  const char* what = "self's leading sizes, then the pooled height and width";
  const bool outputs_ok = detail::check_out_shape(ctx, op, "out", out, shape, what) &&
                          detail::check_out_shape(ctx, op, "indices", indices, shape, what) &&
                          detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::Forbidden) &&
                          detail::check_no_overlap(ctx, op, "indices", indices, "self", self, Alias::Forbidden) &&
                          detail::check_no_overlap(ctx, op, "out", out, "indices", indices, Alias::Forbidden);
  if (!outputs_ok) return false;
  max_pool(g, self, out, indices);
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
