// Pooling over the last two dimensions of [C, H, W] or [N, C, H, W]:
// aten::max_pool2d_with_indices.out (float32: the maximum of each window and
// its flat index within the H * W plane, as PyTorch's CPU kernel picks them:
// first maximum wins; a NaN always wins, the last NaN most),
// aten::avg_pool2d.out and aten::adaptive_avg_pool2d.out (each window summed
// in row-major order in the element type, then divided, as PyTorch's CPU
// kernels do, so results are bit-exact with them).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::floor_div;
using detail::Pair;
using detail::Shape;

// A parameter of 1 or 2 values (one value applies to both dimensions), each
// at least min_value and, as in aten (which narrows them to int), at most
// INT32_MAX. An empty list takes `fallback` when one is given.
bool pool_pair(KernelContext& ctx, const char* op, const char* name, IntList list, int64_t min_value,
               const Pair* fallback, Pair& pair) {
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
bool output_extent(KernelContext& ctx, const char* op, const char* axis, int64_t in, int64_t kernel, int64_t stride,
                   int64_t padding, int64_t dilation, bool ceil_mode, int64_t& out) {
  int64_t numerator = 0;
  int64_t padded = 0;
  const int64_t span = dilation * (kernel - 1) + 1;  // both at most INT32_MAX: fits
  if (__builtin_add_overflow(in, 2 * padding, &numerator) || __builtin_add_overflow(in, padding, &padded) ||
      __builtin_add_overflow(numerator, ceil_mode ? stride - 1 : 0, &numerator))
    return detail::fail(ctx, op, "the {} extent overflows (input {}, padding {})", axis, in, padding);
  out = floor_div(numerator - span, stride) + 1;
  if (ceil_mode && (out - 1) * stride >= padded) --out;
  return true;
}

struct Geometry {
  int64_t planes = 0;  // N * C
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  Pair kernel, stride, padding, dilation;
};

// self is [C, H, W] or [N, C, H, W] and non-empty from dimension
// `first_nonempty` (counted from the end: 3 for C, H and W, 2 for H and W).
bool check_self(KernelContext& ctx, const char* op, TensorRef self, int64_t first_nonempty) {
  if (self.dim() != 3 && self.dim() != 4)
    return detail::fail(ctx, op, "self must be 3-D [C, H, W] or 4-D [N, C, H, W], got shape {}",
                        detail::shape_string(self));
  for (int64_t d = self.dim() - first_nonempty; d < self.dim(); ++d)
    if (self.size(d) == 0)
      return detail::fail(ctx, op, "self of shape {} is empty in dimension {}; only {} may be 0",
                          detail::shape_string(self), d,
                          first_nonempty == 3 ? "a batch dimension" : "the batch and channel dimensions");
  return true;
}

// The window parameters (each 1 or 2 values), padding at most half the
// window, and an output of at least one element per plane.
bool resolve_geometry(KernelContext& ctx, const char* op, TensorRef self, IntList kernel_size, IntList stride,
                      IntList padding, IntList dilation, bool ceil_mode, Geometry& g) {
  if (!(pool_pair(ctx, op, "kernel_size", kernel_size, 1, nullptr, g.kernel) &&
        pool_pair(ctx, op, "stride", stride, 1, &g.kernel, g.stride) &&
        pool_pair(ctx, op, "padding", padding, 0, nullptr, g.padding) &&
        pool_pair(ctx, op, "dilation", dilation, 1, nullptr, g.dilation)))
    return false;
  if (g.padding.h > g.kernel.h / 2 || g.padding.w > g.kernel.w / 2)
    return detail::fail(ctx, op, "padding [{}, {}] must be at most half of kernel_size [{}, {}]", g.padding.h,
                        g.padding.w, g.kernel.h, g.kernel.w);
  const int64_t rank = self.dim();
  g.planes = self.numel() / (self.size(rank - 1) * self.size(rank - 2));
  g.in_h = self.size(rank - 2);
  g.in_w = self.size(rank - 1);
  if (!(output_extent(ctx, op, "height", g.in_h, g.kernel.h, g.stride.h, g.padding.h, g.dilation.h, ceil_mode,
                      g.out_h) &&
        output_extent(ctx, op, "width", g.in_w, g.kernel.w, g.stride.w, g.padding.w, g.dilation.w, ceil_mode,
                      g.out_w)))
    return false;
  if (g.out_h < 1 || g.out_w < 1)
    return detail::fail(ctx, op, "the output size [{}, {}] computed for input [{}, {}] is too small (at least 1)",
                        g.out_h, g.out_w, g.in_h, g.in_w);
  return true;
}

// self's leading sizes, then the pooled height and width.
Shape pooled_shape(TensorRef self, int64_t out_h, int64_t out_w) {
  Shape shape = detail::shape_of(self);
  shape.sizes[shape.dim - 2] = out_h;
  shape.sizes[shape.dim - 1] = out_w;
  return shape;
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

constexpr const char* kPooledShape = "self's leading sizes, then the pooled height and width";

// ---- average pooling ----

// avg_pool2d's dtypes, as aten's CPU kernel: float32, float64 and int64.
template <typename F>
bool dispatch_average(DType t, F&& f) {
  if (t == DType::Int64) {
    f(detail::Tag<int64_t>{});
    return true;
  }
  return detail::dispatch_floating(t, f);
}

bool check_average_dtype(KernelContext& ctx, TensorRef self) {
  if (dispatch_average(self.dtype(), [](auto) {})) return true;
  return detail::fail(ctx, op_name::avg_pool2d_out, "self has dtype {}, which is not supported; expected one of float32, float64, "
                      "int64", dtype_name(self.dtype()));
}

bool check_divisor(KernelContext& ctx, std::optional<int64_t> divisor_override) {
  if (!divisor_override || *divisor_override != 0) return true;
  return detail::fail(ctx, op_name::avg_pool2d_out, "divisor_override = 0; a divisor must not be zero");
}

struct AverageRule {
  bool count_include_pad;
  std::optional<int64_t> divisor_override;
};

// sum / divisor as aten computes it: in the element type for floats (the
// divisor converted), truncating integer division for int64 (with
// INT64_MIN / -1 wrapping instead of trapping).
template <typename T>
T divide(T sum, int64_t divisor) {
  if constexpr (std::is_floating_point_v<T>) {
    return sum / static_cast<T>(divisor);
  } else {
    if (divisor == -1) return static_cast<T>(0 - static_cast<uint64_t>(sum));
    return sum / divisor;
  }
}

template <typename T>
T accumulate(T sum, T value) {
  if constexpr (std::is_floating_point_v<T>) return sum + value;
  else return static_cast<T>(static_cast<uint64_t>(sum) + static_cast<uint64_t>(value));
}

// The average of one window: its elements summed in row-major order from
// 0, divided by the window size (clipped to the input unless padding
// counts) or the override. A window wholly in padding averages to 0.
template <typename T>
T average_window(const Geometry& g, const AverageRule& rule, TensorRef self, const T* in_plane, int64_t oh,
                 int64_t ow) {
  int64_t h0 = oh * g.stride.h - g.padding.h;
  int64_t w0 = ow * g.stride.w - g.padding.w;
  int64_t h1 = std::min(h0 + g.kernel.h, g.in_h + g.padding.h);
  int64_t w1 = std::min(w0 + g.kernel.w, g.in_w + g.padding.w);
  const int64_t padded_size = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, g.in_h);
  w1 = std::min(w1, g.in_w);
  if (h0 >= h1 || w0 >= w1) return T(0);
  const int64_t row_stride = self.stride(self.dim() - 2);
  const int64_t col_stride = self.stride(self.dim() - 1);
  T sum = 0;
  for (int64_t ih = h0; ih < h1; ++ih)
    for (int64_t iw = w0; iw < w1; ++iw) sum = accumulate(sum, in_plane[ih * row_stride + iw * col_stride]);
  const int64_t divisor = rule.divisor_override ? *rule.divisor_override
                          : rule.count_include_pad ? padded_size
                                                   : (h1 - h0) * (w1 - w0);
  // aten's kernel adds the quotient to a zeroed output: -0.0 becomes 0.0.
  return accumulate(T(0), divide(sum, divisor));
}

template <typename T>
void avg_pool(const Geometry& g, const AverageRule& rule, TensorRef self, TensorRef out) {
  const T* in = self.data_as<const T>();
  T* values = out.data_as<T>();
  const int64_t rank = self.dim();
  for (int64_t plane = 0; plane < g.planes; ++plane) {
    const T* in_plane = in + plane_offset(self, plane);
    T* out_plane = values + plane_offset(out, plane);
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        out_plane[oh * out.stride(rank - 2) + ow * out.stride(rank - 1)] =
            average_window(g, rule, self, in_plane, oh, ow);
  }
}

// ---- adaptive average pooling ----

// PyTorch's start_index and end_index: output i of `out` covers inputs
// floor(i * in / out) up to ceil((i + 1) * in / out), exclusive. 128-bit
// products cannot overflow.
__extension__ using Int128 = __int128;

int64_t window_start(int64_t i, int64_t out, int64_t in) {
  return static_cast<int64_t>(static_cast<Int128>(i) * in / out);
}
int64_t window_end(int64_t i, int64_t out, int64_t in) {
  return static_cast<int64_t>(((static_cast<Int128>(i) + 1) * in + out - 1) / out);
}

// Each output is the row-major sum of its window divided by the window's
// height, then by its width (two roundings, as aten's CPU kernel).
template <typename T>
void adaptive_avg_pool(TensorRef self, TensorRef out) {
  const int64_t rank = self.dim();
  const int64_t in_h = self.size(rank - 2);
  const int64_t in_w = self.size(rank - 1);
  const int64_t out_h = out.size(rank - 2);
  const int64_t out_w = out.size(rank - 1);
  if (out.numel() == 0) return;
  const int64_t planes = self.numel() / (in_h * in_w);
  const int64_t row_stride = self.stride(rank - 2);
  const int64_t col_stride = self.stride(rank - 1);
  const T* in = self.data_as<const T>();
  T* values = out.data_as<T>();
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* in_plane = in + plane_offset(self, plane);
    T* out_plane = values + plane_offset(out, plane);
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const int64_t h0 = window_start(oh, out_h, in_h);
      const int64_t h1 = window_end(oh, out_h, in_h);
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const int64_t w0 = window_start(ow, out_w, in_w);
        const int64_t w1 = window_end(ow, out_w, in_w);
        T sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) sum += in_plane[ih * row_stride + iw * col_stride];
        out_plane[oh * out.stride(rank - 2) + ow * out.stride(rank - 1)] =
            sum / static_cast<T>(h1 - h0) / static_cast<T>(w1 - w0);
      }
    }
  }
}

}  // namespace

bool max_pool2d_with_indices_out(KernelContext& ctx, TensorRef self, IntList kernel_size, IntList stride,
                                 IntList padding, IntList dilation, bool ceil_mode, TensorRef out, TensorRef indices) {
  const char* op = op_name::max_pool2d_with_indices_out;
  Geometry g;
  const bool args_ok = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                       detail::check_tensor(ctx, op, "indices", indices) &&
                       detail::check_dtype(ctx, op, "self", self, DType::Float32) &&
                       detail::check_dtype(ctx, op, "out", out, DType::Float32) &&
                       detail::check_dtype(ctx, op, "indices", indices, DType::Int64) &&
                       check_self(ctx, op, self, 3) &&
                       resolve_geometry(ctx, op, self, kernel_size, stride, padding, dilation, ceil_mode, g);
  if (!args_ok) return false;
  const Shape shape = pooled_shape(self, g.out_h, g.out_w);
  const bool outputs_ok = detail::check_out_shape(ctx, op, "out", out, shape, kPooledShape) &&
                          detail::check_out_shape(ctx, op, "indices", indices, shape, kPooledShape) &&
                          detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::Forbidden) &&
                          detail::check_no_overlap(ctx, op, "indices", indices, "self", self, Alias::Forbidden) &&
                          detail::check_no_overlap(ctx, op, "out", out, "indices", indices, Alias::Forbidden);
  if (!outputs_ok) return false;
  max_pool(g, self, out, indices);
  return ctx.ok();
}

bool avg_pool2d_out(KernelContext& ctx, TensorRef self, IntList kernel_size, IntList stride, IntList padding,
                    bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override,
                    TensorRef out) {
  const char* op = op_name::avg_pool2d_out;
  static constexpr int64_t kNoDilation[] = {1};
  Geometry g;
  const bool valid =
      detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
      check_average_dtype(ctx, self) && detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
      check_self(ctx, op, self, 3) &&
      resolve_geometry(ctx, op, self, kernel_size, stride, padding, IntList(kNoDilation, 1), ceil_mode, g) &&
      check_divisor(ctx, divisor_override) &&
      detail::check_out_shape(ctx, op, "out", out, pooled_shape(self, g.out_h, g.out_w), kPooledShape) &&
      detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::Forbidden);
  if (!valid) return false;
  const AverageRule rule{count_include_pad, divisor_override};
  dispatch_average(self.dtype(), [&](auto tag) { avg_pool<typename decltype(tag)::type>(g, rule, self, out); });
  return ctx.ok();
}

bool adaptive_avg_pool2d_out(KernelContext& ctx, TensorRef self, IntList output_size, TensorRef out) {
  const char* op = op_name::adaptive_avg_pool2d_out;
  const bool structure_ok = detail::check_tensor(ctx, op, "self", self) &&
                            detail::check_tensor(ctx, op, "out", out) &&
                            detail::check_floating_dtype(ctx, op, "self", self) &&
                            detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
                            check_self(ctx, op, self, 2) && detail::check_int_list(ctx, op, "output_size", output_size);
  if (!structure_ok) return false;
  if (output_size.size() != 2 || output_size[0] < 0 || output_size[1] < 0)
    return detail::fail(ctx, op, "output_size must hold 2 values of at least 0, got {}",
                        detail::list_string(output_size));
  const bool valid =
      detail::check_out_shape(ctx, op, "out", out, pooled_shape(self, output_size[0], output_size[1]),
                              "self's leading sizes, then output_size") &&
      detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::Forbidden);
  if (!valid) return false;
  detail::dispatch_floating(self.dtype(),
                            [&](auto tag) { adaptive_avg_pool<typename decltype(tag)::type>(self, out); });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
