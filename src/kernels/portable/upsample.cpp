// aten::upsample_nearest2d.out: each output element copies its nearest
// source element, chosen exactly as PyTorch's CPU kernel chooses it (in
// float32 arithmetic, with the exact shortcuts for equal and doubled
// sizes). Every dtype: elements are moved as bytes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

// The float32 factor from output to input index: 1 / scale when a positive
// scale is given, else input / output.
float source_scale(std::optional<double> scale, int64_t in, int64_t out) {
  if (scale && *scale > 0.0) return static_cast<float>(1.0 / *scale);
  return static_cast<float>(in) / static_cast<float>(out);
}

// PyTorch's nearest_idx. A scale so small that 1 / scale overflows float32
// makes o * scale infinite (or NaN for o = 0), which PyTorch converts to an
// integer with undefined behaviour; here it means the last (or first) row.
int64_t source_index(int64_t o, int64_t in, int64_t out, float scale) {
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  const float position = std::floor(static_cast<float>(o) * scale);
  if (std::isnan(position)) return 0;
  if (!(position < 9.2e18f)) return in - 1;  // beyond int64 (or infinite)
  return std::min(static_cast<int64_t>(position), in - 1);
}

bool check_sizes(KernelContext& ctx, TensorRef self, IntList output_size) {
  const char* op = op_name::upsample_nearest2d_out;
  if (self.dim() != 4)
    return detail::fail(ctx, op, "self must be 4-D [N, C, H, W], got shape {}", detail::shape_string(self));
  for (int64_t d = 1; d < 4; ++d)
    if (self.size(d) == 0)
      return detail::fail(ctx, op, "self of shape {} is empty in dimension {}; only the batch may be 0",
                          detail::shape_string(self), d);
  if (!detail::check_int_list(ctx, op, "output_size", output_size)) return false;
  if (output_size.size() != 2 || output_size[0] <= 0 || output_size[1] <= 0)
    return detail::fail(ctx, op, "output_size must hold 2 values greater than 0, got {}",
                        detail::list_string(output_size));
  return true;
}

template <std::size_t N>
void upsample(TensorRef self, TensorRef out, float scale_h, float scale_w) {
  const int64_t in_h = self.size(2);
  const int64_t in_w = self.size(3);
  const int64_t out_h = out.size(2);
  const int64_t out_w = out.size(3);
  const auto* src = static_cast<const unsigned char*>(self.data());
  auto* dst = static_cast<unsigned char*>(out.data());
  for (int64_t n = 0; n < self.size(0); ++n)
    for (int64_t c = 0; c < self.size(1); ++c) {
      const int64_t in_plane = n * self.stride(0) + c * self.stride(1);
      const int64_t out_plane = n * out.stride(0) + c * out.stride(1);
      for (int64_t oh = 0; oh < out_h; ++oh) {
        const int64_t in_row = in_plane + source_index(oh, in_h, out_h, scale_h) * self.stride(2);
        const int64_t out_row = out_plane + oh * out.stride(2);
        for (int64_t ow = 0; ow < out_w; ++ow) {
          const int64_t from = in_row + source_index(ow, in_w, out_w, scale_w) * self.stride(3);
          std::memcpy(dst + (out_row + ow * out.stride(3)) * static_cast<int64_t>(N),
                      src + from * static_cast<int64_t>(N), N);
        }
      }
    }
}

}  // namespace

bool upsample_nearest2d_out(KernelContext& ctx, TensorRef self, IntList output_size, std::optional<double> scales_h,
                            std::optional<double> scales_w, TensorRef out) {
  const char* op = op_name::upsample_nearest2d_out;
  const bool structure_ok = detail::check_tensor(ctx, op, "self", self) &&
                            detail::check_tensor(ctx, op, "out", out) &&
                            detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
                            check_sizes(ctx, self, output_size);
  if (!structure_ok) return false;
  detail::Shape shape = detail::shape_of(self);
  shape.sizes[2] = output_size[0];
  shape.sizes[3] = output_size[1];
  const bool valid = detail::check_out_shape(ctx, op, "out", out, shape, "self's N and C, then output_size") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden);
  if (!valid) return false;
  const float scale_h = source_scale(scales_h, self.size(2), output_size[0]);
  const float scale_w = source_scale(scales_w, self.size(3), output_size[1]);
  detail::dispatch_element_size(dtype_size(self.dtype()), [&](auto size_tag) {
    upsample<decltype(size_tag)::value>(self, out, scale_h, scale_w);
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
