// The vectorised activation loops (see activation_simd.h), compiled once per
// Highway target and dispatched at run time.
#define HWY_TARGET_INCLUDE "activation_simd.cpp"
#include "common/hwy_per_target.h"

#include <type_traits>

#include "activation_simd.h"
#include "vector_math-inl.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::portable::simd)

// out[i] = f(d, in[i..]) in whole vectors of `d`, then single lanes, so the
// tail performs the very same operations without touching memory past n.
template <typename T, class D, class F>
HWY_INLINE void MapLanes(D d, const T* in, T* out, std::size_t n, const F& f) {
  const hn::CappedTag<T, 1> d1;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(d, hn::LoadU(d, in + i)), d, out + i);
  for (; i < n; ++i) hn::StoreU(f(d1, hn::LoadU(d1, in + i)), d1, out + i);
}

// math(dd, x) evaluated in binary64 lanes and returned as lanes of d's type
// (float32 lanes are widened exactly and the result rounded once).
template <class D, class Math>
HWY_INLINE hn::VFromD<D> InBinary64(D d, hn::VFromD<D> x, const Math& math) {
  if constexpr (std::is_same_v<hn::TFromD<D>, double>) {
    return math(d, x);
  } else {
    const hn::Rebind<double, D> dd;
    return DemoteToFloat(d, math(dd, hn::PromoteTo(dd, x)));
  }
}

// min(max(x + 3, 0), 6) as PyTorch writes it: NaN passes through.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V ReluSixOfXPlusThree(D d, V x) {
  using T = hn::TFromD<D>;
  const V zero = hn::Zero(d);
  const V six = hn::Set(d, T(6));
  V t = hn::Add(x, hn::Set(d, T(3)));
  t = hn::IfThenElse(hn::Lt(t, zero), zero, t);
  return hn::IfThenElse(hn::Lt(six, t), six, t);
}

// e^x in binary64 lanes (the callers round it once to their element type).
struct ExpOf {
  template <class DD, class V>
  HWY_INLINE V operator()(DD dd, V v) const { return Exp(dd, v); }
};

template <Unary op, typename T>
void ApplyTyped(const T* in, T* out, std::size_t n, const UnaryParams& params) {
  // Lanes computed in binary64 come as many per vector as a binary64 vector holds.
  const hn::Rebind<T, hn::ScalableTag<double>> d_wide;
  const hn::ScalableTag<T> d;
  if constexpr (op == Unary::Exp) {
    MapLanes(d_wide, in, out, n, [](auto dt, auto x) { return InBinary64(dt, x, ExpOf()); });
  } else if constexpr (op == Unary::Sigmoid) {
    MapLanes(d_wide, in, out, n, [](auto dt, auto x) {
      const auto one = hn::Set(dt, T(1));
      return hn::Div(one, hn::Add(one, InBinary64(dt, hn::Neg(x), ExpOf())));
    });
  } else if constexpr (op == Unary::Tanh) {
    MapLanes(d_wide, in, out, n, [](auto dt, auto x) {
      return InBinary64(dt, x, [](auto dd, auto v) { return Tanh(dd, v); });
    });
  } else if constexpr (op == Unary::Hardswish) {
    MapLanes(d, in, out, n, [](auto dt, auto x) {
      return hn::Div(hn::Mul(x, ReluSixOfXPlusThree(dt, x)), hn::Set(dt, T(6)));
    });
  } else if constexpr (op == Unary::Hardsigmoid) {
    MapLanes(d, in, out, n, [](auto dt, auto x) { return hn::Div(ReluSixOfXPlusThree(dt, x), hn::Set(dt, T(6))); });
  } else if constexpr (op == Unary::LeakyRelu) {
    const auto slope = static_cast<T>(params.slope);
    MapLanes(d, in, out, n, [slope](auto dt, auto x) {
      return hn::IfThenElse(hn::Gt(x, hn::Zero(dt)), x, hn::Mul(x, hn::Set(dt, slope)));
    });
  } else if constexpr (op == Unary::Clamp) {
    const auto lo = static_cast<T>(params.lo);
    const auto hi = static_cast<T>(params.hi);
    const bool has_lo = params.has_lo;
    const bool has_hi = params.has_hi;
    MapLanes(d, in, out, n, [=](auto dt, auto x) {
      if (has_lo) x = hn::IfThenElse(hn::Lt(x, hn::Set(dt, lo)), hn::Set(dt, lo), x);
      if (has_hi) x = hn::IfThenElse(hn::Lt(hn::Set(dt, hi), x), hn::Set(dt, hi), x);
      return x;
    });
  } else if constexpr (op == Unary::Sqrt) {
    MapLanes(d, in, out, n, [](auto, auto x) { return hn::Sqrt(x); });
  } else if constexpr (op == Unary::Rsqrt) {
    MapLanes(d, in, out, n, [](auto dt, auto x) { return hn::Div(hn::Set(dt, T(1)), hn::Sqrt(x)); });
  } else if constexpr (op == Unary::Silu) {
    MapLanes(d_wide, in, out, n, [](auto dt, auto x) {
      return hn::Div(x, hn::Add(hn::Set(dt, T(1)), InBinary64(dt, hn::Neg(x), ExpOf())));
    });
  } else if constexpr (op == Unary::Gelu) {
    // PyTorch's formula and constants, in the element type but for erf.
    MapLanes(d_wide, in, out, n, [](auto dt, auto x) {
      const auto erf = InBinary64(dt, hn::Mul(x, hn::Set(dt, static_cast<T>(0.70710678118654752440))),
                                  [](auto dd, auto v) { return Erf(dd, v); });
      return hn::Mul(hn::Mul(x, hn::Set(dt, T(0.5))), hn::Add(hn::Set(dt, T(1)), erf));
    });
  } else {
    static_assert(op == Unary::GeluTanh, "every Unary has its loop");
    MapLanes(d_wide, in, out, n, [](auto dt, auto x) {
      const auto beta = hn::Set(dt, static_cast<T>(1.41421356237309504880 * 1.12837916709551257390 * 0.5));
      const auto cube = hn::Mul(hn::Mul(x, x), x);
      const auto inner = hn::Mul(beta, hn::Add(x, hn::Mul(hn::Set(dt, static_cast<T>(0.044715)), cube)));
      const auto tanh = InBinary64(dt, inner, [](auto dd, auto v) { return Tanh(dd, v); });
      return hn::Mul(hn::Mul(hn::Set(dt, T(0.5)), x), hn::Add(hn::Set(dt, T(1)), tanh));
    });
  }
  (void)d, (void)d_wide, (void)params;
}

// NameF32 and NameF64: the loops of one Unary, exported for dispatch.
#define ET_OPS_PORTABLE_UNARY_LOOPS(name)                                                      \
  void name##F32(const float* in, float* out, std::size_t n, const UnaryParams& params) {     \
    ApplyTyped<Unary::name>(in, out, n, params);                                              \
  }                                                                                           \
  void name##F64(const double* in, double* out, std::size_t n, const UnaryParams& params) {   \
    ApplyTyped<Unary::name>(in, out, n, params);                                              \
  }
ET_OPS_PORTABLE_UNARY_OPS(ET_OPS_PORTABLE_UNARY_LOOPS)
#undef ET_OPS_PORTABLE_UNARY_LOOPS

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::portable::simd)

#if HWY_ONCE
namespace et_ops::kernels::portable::simd {

#define ET_OPS_PORTABLE_DISPATCH_UNARY(name)                                                              \
  HWY_EXPORT(name##F32);                                                                                    \
  HWY_EXPORT(name##F64);                                                                                    \
  template <>                                                                                               \
  void apply<Unary::name>(const float* in, float* out, std::size_t n, const UnaryParams& params) {          \
    HWY_DYNAMIC_DISPATCH(name##F32)(in, out, n, params);                                                    \
  }                                                                                                         \
  template <>                                                                                               \
  void apply<Unary::name>(const double* in, double* out, std::size_t n, const UnaryParams& params) {        \
    HWY_DYNAMIC_DISPATCH(name##F64)(in, out, n, params);                                                    \
  }
ET_OPS_PORTABLE_UNARY_OPS(ET_OPS_PORTABLE_DISPATCH_UNARY)
#undef ET_OPS_PORTABLE_DISPATCH_UNARY

}  // namespace et_ops::kernels::portable::simd
#endif  // HWY_ONCE
