// exp, expm1 and tanh in binary64 on Highway vectors, built from IEEE
// additions, multiplications, divisions and roundings only: no fused
// multiply-add and no libm, so every target (and every CPU) gives the same
// bits, lane by lane, as the single-lane path does. About 1 ulp in binary64;
// rounded to binary32 they are correctly rounded but for ties closer than
// that (a few in 2^28). And the IEEE rounding of binary64 lanes to binary32
// on every target (DemoteToFloat).
//
// Included once per Highway target (the guard toggles with
// HWY_TARGET_TOGGLE, as Highway's own -inl.h headers do).
#if defined(ET_OPS_PORTABLE_VECTOR_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ET_OPS_PORTABLE_VECTOR_MATH_INL_H_
#undef ET_OPS_PORTABLE_VECTOR_MATH_INL_H_
#else
#define ET_OPS_PORTABLE_VECTOR_MATH_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace et_ops::kernels::portable::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ln 2 split so that k * kLn2High is exact for |k| < 2^11 (its low 21 bits
// are zero) and kLn2Low carries the rest (fdlibm's split).
constexpr double kLog2E = 1.4426950408889634;
constexpr double kLn2High = 6.93147180369123816490e-01;
constexpr double kLn2Low = 1.90821492927058770002e-10;

// x = k ln2 + r with k = round(x / ln2) and |r| <= ln2 / 2 (plus rounding);
// returns k (integer-valued) and p = e^r - 1 as the Taylor polynomial of
// degree 13 in Horner form, whose truncation error (r^14 / 14! < 2^-57) is
// below binary64's precision over that interval.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V ReduceExp(D d, V x, V& k) {
  k = hn::Round(hn::Mul(x, hn::Set(d, kLog2E)));
  const V r = hn::Sub(hn::Sub(x, hn::Mul(k, hn::Set(d, kLn2High))), hn::Mul(k, hn::Set(d, kLn2Low)));
  constexpr double kInverseFactorials[] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0,
                                           1.0 / 3628800.0,    1.0 / 362880.0,    1.0 / 40320.0,
                                           1.0 / 5040.0,       1.0 / 720.0,       1.0 / 120.0,
                                           1.0 / 24.0,         1.0 / 6.0,         1.0 / 2.0,
                                           1.0};
  V poly = hn::Set(d, kInverseFactorials[0]);
  for (std::size_t i = 1; i < sizeof(kInverseFactorials) / sizeof(kInverseFactorials[0]); ++i)
    poly = hn::Add(hn::Mul(poly, r), hn::Set(d, kInverseFactorials[i]));
  return hn::Mul(poly, r);
}

// 2^j for integer-valued j in [-1022, 1023]: adding 2^52 + 1023 leaves the
// biased exponent j + 1023 in the low mantissa bits, which a shift moves
// into the exponent field.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V Pow2(D d, V j) {
  const hn::RebindToUnsigned<D> du;
  const V biased = hn::Add(j, hn::Set(d, 4503599627370496.0 + 1023.0));
  return hn::BitCast(d, hn::ShiftLeft<52>(hn::BitCast(du, biased)));
}

// e^x. Inputs are first clamped to [-746, 710], beyond which e^x is 0 or
// infinite in binary64; 2^k is applied in two halves so that results near
// the ends of the range (k up to 1024, or subnormal results) round once.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V Exp(D d, V x) {
  V clamped = hn::IfThenElse(hn::Gt(x, hn::Set(d, 710.0)), hn::Set(d, 710.0), x);
  clamped = hn::IfThenElse(hn::Lt(clamped, hn::Set(d, -746.0)), hn::Set(d, -746.0), clamped);
  V k;
  const V p = ReduceExp(d, clamped, k);
  const V k_low = hn::Floor(hn::Mul(k, hn::Set(d, 0.5)));
  const V k_high = hn::Sub(k, k_low);
  const V y = hn::Mul(hn::Mul(hn::Add(hn::Set(d, 1.0), p), Pow2(d, k_low)), Pow2(d, k_high));
  return hn::IfThenElse(hn::Eq(x, x), y, x);  // NaN stays NaN
}

// e^y - 1 for y in [0, 40]: (2^k - 1) + 2^k p, where 2^k - 1 is exact;
// for y below ln2 / 2 (k = 0) it is p itself, with no cancellation.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V Expm1Small(D d, V y) {
  V k;
  const V p = ReduceExp(d, y, k);
  const V scale = Pow2(d, k);
  return hn::Add(hn::Sub(scale, hn::Set(d, 1.0)), hn::Mul(scale, p));
}

// tanh(x) = sign(x) * m / (m + 2) with m = e^(2|x|) - 1; beyond |x| = 20 the
// quotient rounds to 1. Keeps -0.0 and NaN.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V Tanh(D d, V x) {
  V y = hn::Mul(hn::Abs(x), hn::Set(d, 2.0));
  y = hn::IfThenElse(hn::Gt(y, hn::Set(d, 40.0)), hn::Set(d, 40.0), y);
  const V m = Expm1Small(d, y);
  const V t = hn::CopySign(hn::Div(m, hn::Add(m, hn::Set(d, 2.0))), x);
  return hn::IfThenElse(hn::Eq(x, x), t, x);
}

// erf(x): for |x| < 2 the Maclaurin series 2/sqrt(pi) sum (-1)^n x^(2n+1) /
// (n! (2n+1)), 32 terms (the first omitted one is below 2^-53 of the sum);
// from 2 on 1 - erfc(|x|), erfc by its continued fraction e^-x^2 / sqrt(pi) /
// (x + (1/2) / (x + (2/2) / (x + (3/2) / ...))) cut at 50 terms and
// evaluated from the bottom up; both within a few binary64 ulp. Keeps the
// sign (-0.0 too) and NaN.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V Erf(D d, V x) {
  constexpr double kTwoOverSqrtPi = 1.1283791670955126;
  constexpr double kOneOverSqrtPi = 0.5641895835477563;
  const V a = hn::Abs(x);
  const V small = hn::IfThenElse(hn::Lt(a, hn::Set(d, 2.0)), a, hn::Set(d, 2.0));
  const V minus_square = hn::Neg(hn::Mul(small, small));
  V term = small;
  V series = hn::Zero(d);
  for (int n = 0; n < 32; ++n) {
    series = hn::Add(series, hn::Div(term, hn::Set(d, 2.0 * n + 1.0)));
    term = hn::Div(hn::Mul(term, minus_square), hn::Set(d, n + 1.0));
  }
  series = hn::Mul(series, hn::Set(d, kTwoOverSqrtPi));
  // Beyond 6, erfc(x) is below 2^-53: erf(x) rounds to 1.
  V large = hn::IfThenElse(hn::Lt(a, hn::Set(d, 2.0)), hn::Set(d, 2.0), a);
  large = hn::IfThenElse(hn::Gt(large, hn::Set(d, 6.0)), hn::Set(d, 6.0), large);
  V fraction = large;
  for (int k = 50; k >= 1; --k) fraction = hn::Add(large, hn::Div(hn::Set(d, 0.5 * k), fraction));
  const V erfc = hn::Div(hn::Mul(Exp(d, hn::Neg(hn::Mul(large, large))), hn::Set(d, kOneOverSqrtPi)), fraction);
  const V magnitude = hn::IfThenElse(hn::Lt(a, hn::Set(d, 2.0)), series, hn::Sub(hn::Set(d, 1.0), erfc));
  const V result = hn::CopySign(magnitude, x);
  return hn::IfThenElse(hn::Eq(x, x), result, x);
}

// Binary64 lanes rounded to binary32 as IEEE conversion does (to nearest,
// ties to even; from 2^128 - 2^103 up, infinities included, to an
// infinity), on every target: the emulated targets' DemoteTo saturates at
// the largest float instead, so there the lanes that overflow are found in
// binary64 and carried over as a demoted 0/1 flag (masks of different lane
// sizes do not convert).
template <class DF, class VD>
HWY_INLINE hn::VFromD<DF> DemoteToFloat(DF d, VD wide) {
  const auto narrow = hn::DemoteTo(d, wide);
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  const hn::Rebind<double, DF> dd;
  const auto overflow = hn::Ge(hn::Abs(wide), hn::Set(dd, 3.4028235677973366e38));
  const auto flag = hn::DemoteTo(d, hn::IfThenElseZero(overflow, hn::Set(dd, 1.0)));
  return hn::IfThenElse(hn::Eq(flag, hn::Set(d, 1.0f)), hn::CopySign(hn::Inf(d), narrow), narrow);
#else
  return narrow;  // cvtpd2ps: IEEE rounding
#endif
}

// The float64 sums of float32 products (gemm, depthwise): a vector of
// doubles, and the floats one such vector rounds to.
using DD = hn::ScalableTag<double>;
using VD = hn::Vec<DD>;
using DH = hn::Rebind<float, DD>;

}  // namespace HWY_NAMESPACE
}  // namespace et_ops::kernels::portable::simd
HWY_AFTER_NAMESPACE();

#endif  // ET_OPS_PORTABLE_VECTOR_MATH_INL_H_
