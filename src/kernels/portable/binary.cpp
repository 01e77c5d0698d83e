// aten::add.out and aten::mul.out: elementwise arithmetic with PyTorch
// broadcasting, bit-exact with PyTorch's CPU kernels.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::Shape;

constexpr const char* kAddOp = "aten::add.out";
constexpr const char* kMulOp = "aten::mul.out";

// Integer arithmetic wraps modulo 2^bits as PyTorch's does; computing in
// uint64 leaves C++ no signed overflow to treat as undefined.
template <typename T>
T wrapping_add(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename T>
T wrapping_mul(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

template <typename T>
T add_values(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a + b;
  else return wrapping_add(a, b);
}

// a + alpha * b. For floats PyTorch's AVX2/AVX-512 kernels compute
// fmadd(b, alpha, a), one rounding; std::fma reproduces that exactly.
template <typename T>
T add_scaled(T a, T b, T alpha) {
  if constexpr (std::is_floating_point_v<T>) return std::fma(b, alpha, a);
  else return wrapping_add(a, wrapping_mul(b, alpha));
}

template <typename T>
T multiply_values(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a * b;
  else return wrapping_mul(a, b);
}

// out = combine(self, other) over the broadcast shape. The common layouts
// (all rows contiguous, or one operand a broadcast scalar along the row) get
// plain loops the compiler can vectorise.
template <typename T, typename Combine>
void run_binary(TensorRef self, TensorRef other, TensorRef out, const Shape& shape, Combine combine) {
  const TensorRef operands[3] = {out, self, other};
  const auto loop = detail::broadcast_loop(shape, operands);
  T* o = out.data_as<T>();
  const T* a = self.data_as<const T>();
  const T* b = other.data_as<const T>();
  detail::for_each_row(loop, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    T* o_row = o + offset[0];
    const T* a_row = a + offset[1];
    const T* b_row = b + offset[2];
    if (step[0] == 1 && step[1] == 1 && step[2] == 1) {
      for (int64_t j = 0; j < length; ++j) o_row[j] = combine(a_row[j], b_row[j]);
    } else if (step[0] == 1 && step[1] == 1 && step[2] == 0) {
      const T b_value = *b_row;
      for (int64_t j = 0; j < length; ++j) o_row[j] = combine(a_row[j], b_value);
    } else if (step[0] == 1 && step[1] == 0 && step[2] == 1) {
      const T a_value = *a_row;
      for (int64_t j = 0; j < length; ++j) o_row[j] = combine(a_value, b_row[j]);
    } else {
      for (int64_t j = 0; j < length; ++j) o_row[j * step[0]] = combine(a_row[j * step[1]], b_row[j * step[2]]);
    }
  });
}

// Shared by add and mul: structure, one dtype for all three tensors, the
// broadcast shape, out of exactly that shape, and no partial aliasing.
bool check_binary(KernelContext& ctx, const char* op, TensorRef self, TensorRef other, TensorRef out,
                  Shape& shape) {
  return detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "other", other) &&
         detail::check_tensor(ctx, op, "out", out) && detail::check_arithmetic_dtype(ctx, op, "self", self) &&
         detail::check_same_dtype(ctx, op, "other", other, "self", self) &&
         detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
         detail::broadcast_shape(ctx, op, "self", self, "other", other, shape) &&
         detail::check_out_shape(ctx, op, "out", out, shape, "the broadcast shape of self and other") &&
         detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::ExactAllowed) &&
         detail::check_no_overlap(ctx, op, "out", out, "other", other, Alias::ExactAllowed);
}

}  // namespace

bool add_out(KernelContext& ctx, TensorRef self, TensorRef other, Scalar alpha, TensorRef out) {
  Shape shape;
  if (!check_binary(ctx, kAddOp, self, other, out, shape)) return false;
  detail::dispatch_arithmetic(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T alpha_value{};
    if (!detail::scalar_to(ctx, kAddOp, "alpha", alpha, alpha_value)) return;
    if (alpha_value == T(1)) {
      run_binary<T>(self, other, out, shape, [](T a, T b) { return add_values(a, b); });
    } else {
      run_binary<T>(self, other, out, shape, [alpha_value](T a, T b) { return add_scaled(a, b, alpha_value); });
    }
  });
  return ctx.ok();
}

bool mul_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out) {
  Shape shape;
  if (!check_binary(ctx, kMulOp, self, other, out, shape)) return false;
  detail::dispatch_arithmetic(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_binary<T>(self, other, out, shape, [](T a, T b) { return multiply_values(a, b); });
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
