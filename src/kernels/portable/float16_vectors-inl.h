// float16 and bfloat16 on Highway vectors of float32 lanes: the bit
// patterns (in uint32 lanes) widened exactly, and float32 narrowed to them
// rounding to nearest even, with the bits of et_ops::Half::from_float and
// BFloat16::from_float (infinities, NaN with its payload's top bits,
// overflow to infinity, subnormals) on every target. Highway's own
// conversions are exact only where the CPU has F16C: elsewhere its
// float16 widening turns infinities and NaN into finite numbers, and its
// narrowing truncates.
//
// Included once per Highway target (the guard toggles with
// HWY_TARGET_TOGGLE, as Highway's own -inl.h headers do).
#if defined(ET_OPS_PORTABLE_FLOAT16_VECTORS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ET_OPS_PORTABLE_FLOAT16_VECTORS_INL_H_
#undef ET_OPS_PORTABLE_FLOAT16_VECTORS_INL_H_
#else
#define ET_OPS_PORTABLE_FLOAT16_VECTORS_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace et_ops::kernels::portable::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// float16 bit patterns (uint32 lanes, high halves zero) as floats, exactly.
template <class DF, class VU>
HWY_INLINE hn::Vec<DF> WidenFloat16(DF df, VU bits) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto exponent = hn::And(hn::ShiftRight<10>(bits), hn::Set(du, 0x1Fu));
  const auto mantissa = hn::And(bits, hn::Set(du, 0x3FFu));
  const auto sign = hn::ShiftLeft<16>(hn::And(bits, hn::Set(du, 0x8000u)));
  const auto normal = hn::Or(hn::ShiftLeft<23>(hn::Add(exponent, hn::Set(du, 112u))), hn::ShiftLeft<13>(mantissa));
  const auto special = hn::Or(hn::Set(du, 0x7F800000u), hn::ShiftLeft<13>(mantissa));
  // A subnormal (or zero) is mantissa * 2^-24: exact, and a normal float.
  const auto subnormal = hn::BitCast(du, hn::Mul(hn::ConvertTo(df, hn::BitCast(di, mantissa)), hn::Set(df, 0x1p-24f)));
  auto magnitude = hn::IfThenElse(hn::Eq(exponent, hn::Zero(du)), subnormal, normal);
  magnitude = hn::IfThenElse(hn::Eq(exponent, hn::Set(du, 0x1Fu)), special, magnitude);
  return hn::BitCast(df, hn::Or(sign, magnitude));
}

// bfloat16 bit patterns (uint32 lanes, high halves zero) as floats, exactly.
template <class DF, class VU>
HWY_INLINE hn::Vec<DF> WidenBFloat16(DF df, VU bits) {
  return hn::BitCast(df, hn::ShiftLeft<16>(bits));
}

// Floats as float16 bit patterns (uint32 lanes), rounded to nearest even.
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<DF>> NarrowFloat16(DF df, hn::Vec<DF> x) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto bits = hn::BitCast(du, x);
  const auto abs = hn::And(bits, hn::Set(du, 0x7FFFFFFFu));
  const auto sign = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 0x8000u));
  // Normal: the exponent rebiased (127 to 15), the 13 dropped bits rounded
  // (up when above half, or at half with an odd result; a carry moves into
  // the exponent, up to infinity).
  const auto rebiased = hn::Sub(hn::ShiftRight<13>(abs), hn::Set(du, 112u << 10));
  const auto odd = hn::And(rebiased, hn::Set(du, 1u));
  const auto dropped = hn::And(abs, hn::Set(du, 0x1FFFu));
  const auto normal = hn::Add(rebiased, hn::ShiftRight<13>(hn::Add(hn::Add(dropped, hn::Set(du, 0x0FFFu)), odd)));
  // Below the smallest normal half (2^-14): adding 0.5 leaves x * 2^24,
  // rounded to nearest even by the addition, in the low mantissa bits.
  const auto half = hn::Set(df, 0.5f);
  const auto subnormal = hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(df, abs), half)), hn::BitCast(du, half));
  const auto nan = hn::Or(hn::Set(du, 0x7E00u), hn::And(hn::ShiftRight<13>(abs), hn::Set(du, 0x3FFu)));
  const auto magnitude = hn::BitCast(di, abs);  // below 2^31: signed comparisons order it
  auto h = hn::IfThenElse(hn::RebindMask(du, hn::Lt(magnitude, hn::Set(di, 0x38800000))), subnormal, normal);
  h = hn::IfThenElse(hn::RebindMask(du, hn::Gt(magnitude, hn::Set(di, 0x477FEFFF))), hn::Set(du, 0x7C00u), h);
  h = hn::IfThenElse(hn::RebindMask(du, hn::Gt(magnitude, hn::Set(di, 0x7F800000))), nan, h);
  return hn::Or(h, sign);
}

// Floats as bfloat16 bit patterns (uint32 lanes), rounded to nearest even;
// NaN becomes the quiet NaN of its sign.
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<DF>> NarrowBFloat16(DF df, hn::Vec<DF> x) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto bits = hn::BitCast(du, x);
  const auto odd = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const auto rounded = hn::ShiftRight<16>(hn::Add(hn::Add(bits, hn::Set(du, 0x7FFFu)), odd));
  const auto nan = hn::Or(hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 0x8000u)), hn::Set(du, 0x7FC0u));
  const auto is_nan = hn::RebindMask(du, hn::Gt(hn::BitCast(di, hn::And(bits, hn::Set(du, 0x7FFFFFFFu))),
                                                hn::Set(di, 0x7F800000)));
  (void)df;
  return hn::IfThenElse(is_nan, nan, rounded);
}

}  // namespace HWY_NAMESPACE
}  // namespace et_ops::kernels::portable::simd
HWY_AFTER_NAMESPACE();

#endif  // ET_OPS_PORTABLE_FLOAT16_VECTORS_INL_H_
