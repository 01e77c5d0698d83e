// Elementwise activations and clamping: aten::relu, hardtanh (ReLU6),
// clamp, leaky_relu, hardswish, hardsigmoid, sigmoid, tanh, gelu (both
// approximations) and silu. Floating
// point goes through the vectorised loops of activation_simd.cpp (the same
// bits on every CPU); integers through plain loops.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>

#include "activation_simd.h"
#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using simd::Unary;
using simd::UnaryParams;

template <Unary op, typename T>
void run_vectorised(TensorRef self, TensorRef out, const UnaryParams& params) {
  detail::map_contiguous<T>(self, out, [&](const T* in, T* o, std::size_t n) { simd::apply<op>(in, o, n, params); });
}

// clamp on integers: the same rule as the vectorised Clamp.
template <typename T>
void run_integer_clamp(TensorRef self, TensorRef out, std::optional<T> lo, std::optional<T> hi) {
  detail::map_contiguous<T>(self, out, [&](const T* in, T* o, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      T t = in[i];
      if (lo && t < *lo) t = *lo;
      if (hi && *hi < t) t = *hi;
      o[i] = t;
    }
  });
}

// out = clamp(self, lo, hi) for an already checked call, with bounds of
// self's element type. With both bounds given, a NaN bound makes every
// element NaN (aten's clamp_out fills the result); a single NaN bound is
// never chosen.
template <typename T>
void run_clamp(TensorRef self, TensorRef out, std::optional<T> lo, std::optional<T> hi) {
  if constexpr (std::is_floating_point_v<T>) {
    if (lo && hi && (std::isnan(*lo) || std::isnan(*hi))) {
      detail::map_contiguous<T>(self, out, [](const T*, T* o, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) o[i] = std::numeric_limits<T>::quiet_NaN();
      });
      return;
    }
    run_vectorised<Unary::Clamp, T>(self, out, UnaryParams{0.0, lo.value_or(T(0)), hi.value_or(T(0)),
                                                           lo.has_value(), hi.has_value()});
  } else {
    run_integer_clamp<T>(self, out, lo, hi);
  }
}

// An optional bound converted to T (checked as aten converts Scalars).
template <typename T>
bool bound_to(KernelContext& ctx, const char* op, const char* name, std::optional<Scalar> bound,
              std::optional<T>& value) {
  if (!bound) return true;
  T converted{};
  if (!detail::scalar_to(ctx, op, name, *bound, converted)) return false;
  value = converted;
  return true;
}

// The kernels defined by one vectorised loop of floating point elements.
template <Unary unary>
bool floating_activation(KernelContext& ctx, const char* op, TensorRef self, TensorRef out,
                         const UnaryParams& params = {}) {
  if (!detail::check_unary(ctx, op, self, out, detail::check_floating_dtype)) return false;
  detail::dispatch_floating(self.dtype(),
                            [&](auto tag) { run_vectorised<unary, typename decltype(tag)::type>(self, out, params); });
  return ctx.ok();
}

}  // namespace

// PyTorch's relu is clamp_min(self, 0): NaN stays NaN, -0.0 stays -0.0 and
// unsigned values pass unchanged.
bool relu_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  if (!detail::check_unary(ctx, op_name::relu_out, self, out, detail::check_arithmetic_dtype)) return false;
  detail::dispatch_arithmetic(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_clamp<T>(self, out, T(0), std::nullopt);
  });
  return ctx.ok();
}

bool clamp_out(KernelContext& ctx, TensorRef self, std::optional<Scalar> min, std::optional<Scalar> max,
               TensorRef out) {
  const char* op = op_name::clamp_out;
  if (!detail::check_unary(ctx, op, self, out, detail::check_arithmetic_dtype)) return false;
  if (!min && !max) return detail::fail(ctx, op, "min and max are both none; at least one of them must be given");
  detail::dispatch_arithmetic(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::optional<T> lo;
    std::optional<T> hi;
    if (bound_to(ctx, op, "min", min, lo) && bound_to(ctx, op, "max", max, hi)) run_clamp<T>(self, out, lo, hi);
  });
  return ctx.ok();
}

bool hardtanh_out(KernelContext& ctx, TensorRef self, Scalar min_val, Scalar max_val, TensorRef out) {
  const char* op = op_name::hardtanh_out;
  if (!detail::check_unary(ctx, op, self, out, detail::check_arithmetic_dtype)) return false;
  const bool integral = !is_floating(self.dtype());
  // On integers aten takes the limits as int64 first (a floating limit truncates).
  if (integral && !(detail::truncate_to_int64(ctx, op, "min_val", min_val, min_val) &&
                    detail::truncate_to_int64(ctx, op, "max_val", max_val, max_val)))
    return false;
  const bool is_unsigned = self.dtype() == DType::UInt8;
  if (is_unsigned && (min_val.to_int() < 0 || max_val.to_int() < 0))
    return detail::fail(ctx, op, "min_val = {} and max_val = {}: an unsigned self needs limits of at least 0",
                        min_val.to_int(), max_val.to_int());
  detail::dispatch_arithmetic(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T lo{};
    T hi{};
    if (detail::scalar_to(ctx, op, "min_val", min_val, lo) && detail::scalar_to(ctx, op, "max_val", max_val, hi))
      run_clamp<T>(self, out, lo, hi);
  });
  return ctx.ok();
}

bool leaky_relu_out(KernelContext& ctx, TensorRef self, Scalar negative_slope, TensorRef out) {
  const char* op = op_name::leaky_relu_out;
  if (!detail::check_unary(ctx, op, self, out, detail::check_floating_dtype)) return false;
  detail::dispatch_floating(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T slope{};
    if (detail::scalar_to(ctx, op, "negative_slope", negative_slope, slope))
      run_vectorised<Unary::LeakyRelu, T>(self, out, UnaryParams{slope});
  });
  return ctx.ok();
}

bool hardswish_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  return floating_activation<Unary::Hardswish>(ctx, op_name::hardswish_out, self, out);
}

bool hardsigmoid_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  return floating_activation<Unary::Hardsigmoid>(ctx, op_name::hardsigmoid_out, self, out);
}

bool sigmoid_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  return floating_activation<Unary::Sigmoid>(ctx, op_name::sigmoid_out, self, out);
}

bool tanh_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  return floating_activation<Unary::Tanh>(ctx, op_name::tanh_out, self, out);
}

// approximate is "none" (the erf form) or "tanh", as in PyTorch.
bool gelu_out(KernelContext& ctx, TensorRef self, std::string_view approximate, TensorRef out) {
  const char* op = op_name::gelu_out;
  if (approximate == "none") return floating_activation<Unary::Gelu>(ctx, op, self, out);
  if (approximate == "tanh") return floating_activation<Unary::GeluTanh>(ctx, op, self, out);
  return detail::fail(ctx, op, "approximate = '{}' is not supported; expected 'none' or 'tanh'", approximate);
}

bool silu_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  return floating_activation<Unary::Silu>(ctx, op_name::silu_out, self, out);
}

}  // namespace et_ops::kernels::portable
