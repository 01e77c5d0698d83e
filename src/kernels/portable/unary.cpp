// Unary math: aten::sqrt, rsqrt and exp on floating point (the vectorised
// loops of activation_simd.cpp: sqrt and 1 / sqrt as PyTorch rounds them,
// exp in binary64 rounded once) and aten::neg on every arithmetic dtype.
#include <cstdint>

#include "activation_simd.h"
#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

template <simd::Unary unary>
bool floating_unary(KernelContext& ctx, const char* op, TensorRef self, TensorRef out) {
  if (!detail::check_unary(ctx, op, self, out, detail::check_floating_dtype)) return false;
  detail::dispatch_floating(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::map_contiguous<T>(self, out, [&](const T* in, T* o, std::size_t n) {
      simd::apply<unary>(in, o, n, simd::UnaryParams{});
    });
  });
  return ctx.ok();
}

}  // namespace

bool sqrt_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  return floating_unary<simd::Unary::Sqrt>(ctx, op_name::sqrt_out, self, out);
}

bool rsqrt_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  return floating_unary<simd::Unary::Rsqrt>(ctx, op_name::rsqrt_out, self, out);
}

bool exp_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  return floating_unary<simd::Unary::Exp>(ctx, op_name::exp_out, self, out);
}

// Integers negate modulo 2^bits, as PyTorch's do.
bool neg_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  if (!detail::check_unary(ctx, op_name::neg_out, self, out, detail::check_arithmetic_dtype)) return false;
  detail::dispatch_arithmetic(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::map_contiguous<T>(self, out, [](const T* in, T* o, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) {
        if constexpr (std::is_floating_point_v<T>) o[i] = -in[i];
        else o[i] = static_cast<T>(0 - static_cast<uint64_t>(in[i]));
      }
    });
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
