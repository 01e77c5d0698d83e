// aten::add, sub, mul, div and pow, each with a tensor and a Scalar operand:
// elementwise arithmetic with PyTorch broadcasting, bit-exact with PyTorch's
// CPU kernels (except where PyTorch's own rounding of `self + alpha * other`
// depends on its vector path: see add_scaled; and pow with a general
// exponent, see Power).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::Shape;

// Integer arithmetic wraps modulo 2^bits as PyTorch's does; computing in
// uint64 leaves C++ no signed overflow to treat as undefined.
template <typename T>
T wrapping_add(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename T>
T wrapping_sub(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
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

template <typename T>
T subtract_values(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a - b;
  else return wrapping_sub(a, b);
}

// a + alpha * b. For floats PyTorch's AVX2/AVX-512 kernels compute
// fmadd(b, alpha, a), one rounding; std::fma reproduces that exactly (its
// scalar loops round alpha * b first, so PyTorch itself differs by one
// rounding between its paths).
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

// Shared by every operator here: structure, a supported dtype, one dtype
// for all three tensors, the broadcast shape, out of exactly that shape, and
// no partial aliasing.
bool check_binary(KernelContext& ctx, const char* op, TensorRef self, TensorRef other, TensorRef out,
                  detail::DtypeCheck supported, Shape& shape) {
  return detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "other", other) &&
         detail::check_tensor(ctx, op, "out", out) && supported(ctx, op, "self", self) &&
         detail::check_same_dtype(ctx, op, "other", other, "self", self) &&
         detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
         detail::broadcast_shape(ctx, op, "self", self, "other", other, shape) &&
         detail::check_out_shape(ctx, op, "out", out, shape, "the broadcast shape of self and other") &&
         detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::ExactAllowed) &&
         detail::check_no_overlap(ctx, op, "out", out, "other", other, Alias::ExactAllowed);
}

// out = self + alpha * other once the operands are checked and alpha is
// converted; alpha of 1 and -1 (sub's default) need no multiplication.
template <typename T>
void run_add(TensorRef self, TensorRef other, TensorRef out, const Shape& shape, T alpha) {
  if (alpha == T(1)) {
    run_binary<T>(self, other, out, shape, [](T a, T b) { return add_values(a, b); });
  } else if (std::is_signed_v<T> && alpha == T(-1)) {
    run_binary<T>(self, other, out, shape, [](T a, T b) { return subtract_values(a, b); });
  } else {
    run_binary<T>(self, other, out, shape, [alpha](T a, T b) { return add_scaled(a, b, alpha); });
  }
}

// The Scalar `other` as a 0-dim tensor of self's dtype, then `run(ref)`.
template <typename T, typename Run>
void with_scalar_operand(KernelContext& ctx, const char* op, Scalar other, Run&& run) {
  T value{};
  if (!detail::operand_to(ctx, op, "other", other, value)) return;
  const detail::ScalarTensor<T> operand(value);
  run(operand.ref());
}

// aten's sub is add with -alpha; an int64 alpha negates modulo 2^64 as
// aten's Scalar negation does, and the conversion check then applies to
// the negated value.
Scalar negated(Scalar alpha) {
  if (alpha.is_integral()) return Scalar(static_cast<int64_t>(0 - static_cast<uint64_t>(alpha.to_int())));
  return Scalar(-alpha.to_double());
}

// add.out and sub.out with their checked alpha ("alpha" or "-alpha").
bool add_tensors(KernelContext& ctx, const char* op, TensorRef self, TensorRef other, const char* alpha_name,
                 Scalar alpha, TensorRef out) {
  Shape shape;
  if (!check_binary(ctx, op, self, other, out, detail::check_arithmetic_dtype, shape)) return false;
  detail::dispatch_arithmetic(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T alpha_value{};
    if (detail::scalar_to(ctx, op, alpha_name, alpha, alpha_value)) run_add<T>(self, other, out, shape, alpha_value);
  });
  return ctx.ok();
}

// add.Scalar_out and sub.Scalar_out: as above with other a 0-dim tensor.
bool add_scalar(KernelContext& ctx, const char* op, TensorRef self, Scalar other, const char* alpha_name,
                Scalar alpha, TensorRef out) {
  const bool valid = detail::check_unary(ctx, op, self, out, detail::check_arithmetic_dtype);
  if (!valid) return false;
  const Shape shape = detail::shape_of(self);
  detail::dispatch_arithmetic(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T alpha_value{};
    if (!detail::scalar_to(ctx, op, alpha_name, alpha, alpha_value)) return;
    with_scalar_operand<T>(ctx, op, other, [&](TensorRef operand) { run_add<T>(self, operand, out, shape, alpha_value); });
  });
  return ctx.ok();
}

struct Multiply {
  template <typename T>
  T operator()(T a, T b) const {
    return multiply_values(a, b);
  }
};

struct Divide {
  template <typename T>
  T operator()(T a, T b) const {
    return a / b;
  }
};

// self ** exponent in binary64, rounded once: within an ulp or so of the
// exact power (PyTorch's powf, scalar or vectorised, is within one ulp too).
// glibc's binary64 pow is accurate to about half an ulp of binary64 with or
// without FMA, so the rounded result is the same on every CPU but where the
// exact power lies within that of a float32 rounding boundary.
struct Power {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  }
};

// The dtypes an operator takes: every arithmetic one, or floating only.
template <bool kFloatingOnly, typename F>
bool dispatch_dtype(DType t, F&& f) {
  if constexpr (kFloatingOnly) return detail::dispatch_floating(t, f);
  else return detail::dispatch_arithmetic(t, f);
}

template <bool kFloatingOnly>
constexpr detail::DtypeCheck kSupported =
    kFloatingOnly ? detail::DtypeCheck(detail::check_floating_dtype) : detail::DtypeCheck(detail::check_arithmetic_dtype);

// out = combine(self, other) for tensor operands (mul, div).
template <bool kFloatingOnly, typename Combine>
bool combine_tensors(KernelContext& ctx, const char* op, TensorRef self, TensorRef other, TensorRef out,
                     Combine combine) {
  Shape shape;
  if (!check_binary(ctx, op, self, other, out, kSupported<kFloatingOnly>, shape)) return false;
  dispatch_dtype<kFloatingOnly>(self.dtype(), [&](auto tag) {
    run_binary<typename decltype(tag)::type>(self, other, out, shape, combine);
  });
  return ctx.ok();
}

// out = combine(self, other) for a Scalar other (mul.Scalar, div.Scalar).
template <bool kFloatingOnly, typename Combine>
bool combine_with_scalar(KernelContext& ctx, const char* op, TensorRef self, Scalar other, TensorRef out,
                         Combine combine) {
  if (!detail::check_unary(ctx, op, self, out, kSupported<kFloatingOnly>)) return false;
  const Shape shape = detail::shape_of(self);
  dispatch_dtype<kFloatingOnly>(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    with_scalar_operand<T>(ctx, op, other,
                           [&](TensorRef operand) { run_binary<T>(self, operand, out, shape, combine); });
  });
  return ctx.ok();
}

// pow with a Scalar exponent as aten computes it: 0 fills ones, 1 copies,
// and 0.5, -0.5, -1, 2, 3 and -2 are sqrt, 1 / sqrt, 1 / x, x * x,
// x * x * x and 1 / (x * x) in the element type (bit-exact with PyTorch);
// any other exponent is Power.
template <typename T>
void run_pow_scalar(TensorRef self, double exponent, TensorRef out) {
  const detail::ScalarTensor<T> unused(T(0));
  const TensorRef operand = unused.ref();
  const Shape shape = detail::shape_of(self);
  const auto run = [&](auto f) { run_binary<T>(self, operand, out, shape, [f](T a, T) { return f(a); }); };
  if (exponent == 0.0) run([](T) { return T(1); });
  else if (exponent == 1.0) run([](T a) { return a; });
  else if (exponent == 0.5) run([](T a) { return std::sqrt(a); });
  else if (exponent == -0.5) run([](T a) { return T(1) / std::sqrt(a); });
  else if (exponent == -1.0) run([](T a) { return T(1) / a; });
  else if (exponent == 2.0) run([](T a) { return a * a; });
  else if (exponent == 3.0) run([](T a) { return a * a * a; });
  else if (exponent == -2.0) run([](T a) { return T(1) / (a * a); });
  else run([exponent](T a) { return static_cast<T>(std::pow(static_cast<double>(a), exponent)); });
}

}  // namespace

bool add_out(KernelContext& ctx, TensorRef self, TensorRef other, Scalar alpha, TensorRef out) {
  return add_tensors(ctx, op_name::add_out, self, other, "alpha", alpha, out);
}

bool add_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, Scalar alpha, TensorRef out) {
  return add_scalar(ctx, op_name::add_scalar_out, self, other, "alpha", alpha, out);
}

bool sub_out(KernelContext& ctx, TensorRef self, TensorRef other, Scalar alpha, TensorRef out) {
  return add_tensors(ctx, op_name::sub_out, self, other, "-alpha", negated(alpha), out);
}

bool sub_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, Scalar alpha, TensorRef out) {
  return add_scalar(ctx, op_name::sub_scalar_out, self, other, "-alpha", negated(alpha), out);
}

bool mul_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out) {
  return combine_tensors<false>(ctx, op_name::mul_out, self, other, out, Multiply{});
}

bool mul_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out) {
  return combine_with_scalar<false>(ctx, op_name::mul_scalar_out, self, other, out, Multiply{});
}

// True division: PyTorch promotes integers to floating point, which an out
// of self's dtype cannot hold, so only floating dtypes are accepted.
bool div_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out) {
  return combine_tensors<true>(ctx, op_name::div_out, self, other, out, Divide{});
}

bool div_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out) {
  return combine_with_scalar<true>(ctx, op_name::div_scalar_out, self, other, out, Divide{});
}

bool pow_tensor_tensor_out(KernelContext& ctx, TensorRef self, TensorRef exponent, TensorRef out) {
  const char* op = op_name::pow_tensor_tensor_out;
  Shape shape;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "exponent", exponent) &&
                     detail::check_tensor(ctx, op, "out", out) && detail::check_floating_dtype(ctx, op, "self", self) &&
                     detail::check_same_dtype(ctx, op, "exponent", exponent, "self", self) &&
                     detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
                     detail::broadcast_shape(ctx, op, "self", self, "exponent", exponent, shape) &&
                     detail::check_out_shape(ctx, op, "out", out, shape, "the broadcast shape of self and exponent") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::ExactAllowed) &&
                     detail::check_no_overlap(ctx, op, "out", out, "exponent", exponent, Alias::ExactAllowed);
  if (!valid) return false;
  detail::dispatch_floating(self.dtype(), [&](auto tag) {
    run_binary<typename decltype(tag)::type>(self, exponent, out, shape, Power{});
  });
  return ctx.ok();
}

bool pow_tensor_scalar_out(KernelContext& ctx, TensorRef self, Scalar exponent, TensorRef out) {
  if (!detail::check_unary(ctx, op_name::pow_tensor_scalar_out, self, out, detail::check_floating_dtype)) return false;
  detail::dispatch_floating(self.dtype(), [&](auto tag) {
    run_pow_scalar<typename decltype(tag)::type>(self, exponent.to_double(), out);
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
