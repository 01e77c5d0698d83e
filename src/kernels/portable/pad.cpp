// aten::constant_pad_nd.out: pads (or, with negative entries, crops) the
// trailing dimensions of self, filling new elements with a constant. Every
// dtype: elements are moved as bytes; the constant is converted to the
// dtype as aten's fill_ converts it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "checks.h"
#include "et_ops/half.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Shape;

// How many elements each dimension gains before and after (negative: loses).
struct Padding {
  int64_t before[ET_OPS_MAX_DIMS] = {};
  int64_t after[ET_OPS_MAX_DIMS] = {};
};

// pad = [last_before, last_after, previous_before, previous_after, ...] as
// aten reads it; a negative entry crops, and may not crop more than there
// is. When anything is added, every padded dimension must keep at least one
// element (aten's rule); a pure crop may leave none.
bool resolve_padding(KernelContext& ctx, TensorRef self, IntList pad, Padding& p, Shape& shape) {
  const char* op = op_name::constant_pad_nd_out;
  if (!detail::check_int_list(ctx, op, "pad", pad)) return false;
  if (pad.size() % 2 != 0)
    return detail::fail(ctx, op, "pad {} has {} entries; it needs an even number (a pair per dimension)",
                        detail::list_string(pad), pad.size());
  if (pad.size() / 2 > self.dim())
    return detail::fail(ctx, op, "pad {} pads {} dimensions, but self is {}-D", detail::list_string(pad),
                        pad.size() / 2, self.dim());
  shape = detail::shape_of(self);
  bool grows = false;
  for (int64_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t d = self.dim() - 1 - i;
    p.before[d] = pad[2 * i];
    p.after[d] = pad[2 * i + 1];
    grows = grows || p.before[d] > 0 || p.after[d] > 0;
    const int64_t size = self.size(d);
    const int64_t kept = size + std::min<int64_t>(p.before[d], 0);  // no overflow: size >= 0
    if (kept < 0 || kept + std::min<int64_t>(p.after[d], 0) < 0)
      return detail::fail(ctx, op, "pad {} crops more than the {} elements of dimension {}", detail::list_string(pad),
                          size, d);
    if (__builtin_add_overflow(size, p.before[d], &shape.sizes[d]) ||
        __builtin_add_overflow(shape.sizes[d], p.after[d], &shape.sizes[d]))
      return detail::fail(ctx, op, "pad {} overflows the size of dimension {}", detail::list_string(pad), d);
  }
  for (int64_t i = 0; grows && i < pad.size() / 2; ++i) {
    const int64_t d = self.dim() - 1 - i;
    if (shape.sizes[d] <= 0)
      return detail::fail(ctx, op, "pad {} leaves dimension {} (of size {}) empty; padding needs every padded "
                          "dimension non-empty", detail::list_string(pad), d, self.size(d));
  }
  return true;
}

// A 16-bit float value: beyond the largest finite value is an overflow.
template <typename T>
bool narrow_float(KernelContext& ctx, Scalar value, double largest, DType dtype, T& result) {
  const double v = value.to_double();
  if (std::isfinite(v) && std::fabs(v) > largest)
    return detail::fail(ctx, op_name::constant_pad_nd_out, "value = {} cannot be converted to {} without overflow", v, dtype_name(dtype));
  result = T::from_float(static_cast<float>(v));
  return true;
}

// The fill value's bytes in `dtype`.
bool fill_bytes(KernelContext& ctx, DType dtype, Scalar value, unsigned char (&bytes)[8]) {
  const auto store = [&](auto v) {
    std::memcpy(bytes, &v, sizeof v);
    return true;
  };
  switch (dtype) {
    case DType::Float16: {
      Half h;
      return narrow_float(ctx, value, 65504.0, dtype, h) && store(h);
    }
    case DType::BFloat16: {
      BFloat16 b;
      return narrow_float(ctx, value, 3.3895313892515355e38, dtype, b) && store(b);
    }
    case DType::Bool: return store(static_cast<uint8_t>(value.is_integral() ? value.to_int() != 0 : value.to_double() != 0));
    case DType::UInt16: {
      Scalar integral = value;
      uint16_t v = 0;
      return detail::truncate_to_int64(ctx, op_name::constant_pad_nd_out, "value", value, integral) &&
             detail::scalar_to(ctx, op_name::constant_pad_nd_out, "value", integral, v) && store(v);
    }
    default: break;
  }
  bool ok = false;
  detail::dispatch_arithmetic(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Scalar converted = value;
    T v{};
    // A floating value for an integral dtype truncates toward zero, as fill_.
    if constexpr (!std::is_floating_point_v<T>)
      if (!detail::truncate_to_int64(ctx, op_name::constant_pad_nd_out, "value", value, converted)) return;
    ok = detail::scalar_to(ctx, op_name::constant_pad_nd_out, "value", converted, v) && store(v);
  });
  return ok;
}

template <std::size_t N>
void fill(TensorRef out, const unsigned char* value) {
  auto* dst = static_cast<unsigned char*>(out.data());
  for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(dst + i * static_cast<int64_t>(N), value, N);
}

// The part of self that survives the crops, copied to its place in out.
template <std::size_t N>
void copy_interior(TensorRef self, const Padding& p, TensorRef out) {
  detail::StridedLoop<2> loop;
  loop.dim = self.dim();
  int64_t in_offset = 0;
  int64_t out_offset = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    loop.sizes[d] = self.size(d) + std::min<int64_t>(p.before[d], 0) + std::min<int64_t>(p.after[d], 0);
    loop.strides[0][d] = out.stride(d);
    loop.strides[1][d] = self.stride(d);
    in_offset += std::max<int64_t>(-p.before[d], 0) * self.stride(d);
    out_offset += std::max<int64_t>(p.before[d], 0) * out.stride(d);
  }
  if (loop.numel() == 0) return;
  loop.coalesce();
  detail::copy_strided<N>(loop, static_cast<unsigned char*>(out.data()) + out_offset * static_cast<int64_t>(N),
                          static_cast<const unsigned char*>(self.data()) + in_offset * static_cast<int64_t>(N));
}

}  // namespace

bool constant_pad_nd_out(KernelContext& ctx, TensorRef self, IntList pad, Scalar value, TensorRef out) {
  const char* op = op_name::constant_pad_nd_out;
  Padding padding;
  Shape shape;
  unsigned char bytes[8] = {};
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                     detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
                     resolve_padding(ctx, self, pad, padding, shape) &&
                     detail::check_out_shape(ctx, op, "out", out, shape, "self's shape with pad applied") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden) &&
                     fill_bytes(ctx, self.dtype(), value, bytes);
  if (!valid) return false;
  detail::dispatch_element_size(dtype_size(self.dtype()), [&](auto size_tag) {
    constexpr std::size_t kSize = decltype(size_tag)::value;
    fill<kSize>(out, bytes);
    copy_interior<kSize>(self, padding, out);
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
