// aten::abs: the magnitude of every element. Floating point clears the sign
// bit (-0.0 becomes 0.0, NaN stays NaN); a signed integer's lowest value has
// no positive counterpart and stays itself, as PyTorch's two's-complement
// negation leaves it.
#include <cmath>
#include <type_traits>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

template <typename T>
T magnitude(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fabs(x);
  } else if constexpr (std::is_unsigned_v<T>) {
    return x;
  } else {
    using U = std::make_unsigned_t<T>;  // negation in unsigned arithmetic: the lowest value wraps to itself
    return x < 0 ? static_cast<T>(static_cast<U>(U(0) - static_cast<U>(x))) : x;
  }
}

}  // namespace

bool abs_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  if (!detail::check_unary(ctx, op_name::abs_out, self, out, detail::check_arithmetic_dtype)) return false;
  detail::dispatch_arithmetic(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::map_contiguous<T>(self, out, [](const T* in, T* o, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) o[i] = magnitude(in[i]);
    });
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
