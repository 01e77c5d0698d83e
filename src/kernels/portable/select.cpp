// Elementwise selection: aten::where.self_out (condition ? self : other)
// and aten::masked_fill.Scalar_out (mask ? value : self), for every dtype
// (elements are moved, never converted, but for masked_fill's value).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::Shape;

// shape = broadcast(shape, t), PyTorch's rule; `names` says what shape came from.
bool broadcast_into(KernelContext& ctx, const char* op, Shape& shape, const char* names, const char* name,
                    TensorRef t) {
  Shape result;
  result.dim = shape.dim > t.dim() ? shape.dim : t.dim();
  for (int64_t i = 0; i < result.dim; ++i) {
    const int64_t sd = shape.dim - result.dim + i;
    const int64_t td = t.dim() - result.dim + i;
    const int64_t a = sd >= 0 ? shape.sizes[sd] : 1;
    const int64_t b = td >= 0 ? t.size(td) : 1;
    if (a != b && a != 1 && b != 1)
      return detail::fail(ctx, op, "{} of shape {} cannot be broadcast with {} (shape {}): sizes {} and {} at dimension {}",
                          name, detail::shape_string(t), names, detail::shape_string(shape), b, a, i);
    result.sizes[i] = a == 1 ? b : a;
  }
  shape = result;
  return true;
}

template <std::size_t N>
void run_where(TensorRef condition, TensorRef self, TensorRef other, TensorRef out) {
  const TensorRef operands[4] = {out, condition, self, other};
  const auto loop = detail::broadcast_loop(detail::shape_of(out), operands);
  auto* o = static_cast<unsigned char*>(out.data());
  const bool* c = condition.data_as<const bool>();
  const auto* a = static_cast<const unsigned char*>(self.data());
  const auto* b = static_cast<const unsigned char*>(other.data());
  detail::for_each_row(loop, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    for (int64_t j = 0; j < length; ++j) {
      const bool take_self = detail::load(c + offset[1] + j * step[1]);
      const unsigned char* from = take_self ? a + (offset[2] + j * step[2]) * N : b + (offset[3] + j * step[3]) * N;
      std::memcpy(o + (offset[0] + j * step[0]) * N, from, N);
    }
  });
}

// masked_fill's value as aten's Scalar::to<T>: a floating value truncates
// toward zero for an integral self, and must fit T; any nonzero is true.
template <typename T>
bool fill_value(KernelContext& ctx, const char* op, Scalar value, T& result) {
  if constexpr (std::is_same_v<T, bool>) {
    result = value.is_integral() ? value.to_int() != 0 : value.to_double() != 0.0;
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    return detail::scalar_to(ctx, op, "value", value, result);
  } else {
    Scalar integral(int64_t{0});
    return detail::truncate_to_int64(ctx, op, "value", value, integral) &&
           detail::scalar_to(ctx, op, "value", integral, result);
  }
}

template <typename T>
void run_masked_fill(TensorRef self, TensorRef mask, T value, TensorRef out) {
  const TensorRef operands[3] = {out, self, mask};
  const auto loop = detail::broadcast_loop(detail::shape_of(out), operands);
  T* o = out.data_as<T>();
  const T* a = self.data_as<const T>();
  const bool* m = mask.data_as<const bool>();
  detail::for_each_row(loop, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    for (int64_t j = 0; j < length; ++j) {
      T* target = o + offset[0] + j * step[0];
      if (detail::load(m + offset[2] + j * step[2])) *target = value;
      else if (a != o || step[0] != step[1] || offset[0] != offset[1]) *target = detail::load(a + offset[1] + j * step[1]);
    }
  });
}

}  // namespace

bool where_self_out(KernelContext& ctx, TensorRef condition, TensorRef self, TensorRef other, TensorRef out) {
  const char* op = op_name::where_self_out;
  Shape shape = detail::shape_of(condition);
  const bool valid =
      detail::check_tensor(ctx, op, "condition", condition) && detail::check_tensor(ctx, op, "self", self) &&
      detail::check_tensor(ctx, op, "other", other) && detail::check_tensor(ctx, op, "out", out) &&
      detail::check_dtype(ctx, op, "condition", condition, DType::Bool) &&
      detail::check_same_dtype(ctx, op, "other", other, "self", self) &&
      detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
      broadcast_into(ctx, op, shape, "condition", "self", self) &&
      broadcast_into(ctx, op, shape, "condition and self", "other", other) &&
      detail::check_out_shape(ctx, op, "out", out, shape, "the broadcast shape of condition, self and other") &&
      detail::check_no_overlap(ctx, op, "out", out, "condition", condition, Alias::Forbidden) &&
      detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::ExactAllowed) &&
      detail::check_no_overlap(ctx, op, "out", out, "other", other, Alias::ExactAllowed);
  if (!valid) return false;
  detail::dispatch_element_size(dtype_size(out.dtype()), [&](auto size) {
    run_where<decltype(size)::value>(condition, self, other, out);
  });
  return ctx.ok();
}

// When out is self, only the masked elements are written.
bool masked_fill_scalar_out(KernelContext& ctx, TensorRef self, TensorRef mask, Scalar value, TensorRef out) {
  const char* op = op_name::masked_fill_scalar_out;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "mask", mask) &&
                     detail::check_tensor(ctx, op, "out", out) &&
                     detail::check_comparable_dtype(ctx, op, "self", self) &&
                     detail::check_dtype(ctx, op, "mask", mask, DType::Bool) &&
                     detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
                     detail::check_broadcastable_to(ctx, op, "mask", mask, detail::shape_of(self), "self") &&
                     detail::check_out_shape(ctx, op, "out", out, detail::shape_of(self), "the shape of self") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::ExactAllowed) &&
                     detail::check_no_overlap(ctx, op, "out", out, "mask", mask, Alias::Forbidden);
  if (!valid) return false;
  detail::dispatch_comparable(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T converted{};
    if (fill_value(ctx, op, value, converted)) run_masked_fill<T>(self, mask, converted, out);
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
