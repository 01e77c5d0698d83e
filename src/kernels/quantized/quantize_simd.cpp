// Vectorised quantize loops (see vector_kernels.h), compiled once per
// Highway target and dispatched at run time.
#define HWY_TARGET_INCLUDE "quantize_simd.cpp"
#include "common/hwy_per_target.h"

#include <cmath>
#include <type_traits>

#include "vector_kernels.h"
#include "vector_ops-inl.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::quantized::simd)

inline FloatBounds float_bounds(int64_t quant_min, int64_t quant_max) {
  float lo = static_cast<float>(quant_min);
  if (static_cast<double>(lo) < static_cast<double>(quant_min)) lo = std::nextafter(lo, INFINITY);
  float hi = static_cast<float>(quant_max);
  if (static_cast<double>(hi) > static_cast<double>(quant_max)) hi = std::nextafter(hi, -INFINITY);
  const bool exact = static_cast<double>(lo) == static_cast<double>(quant_min) &&
                     static_cast<double>(hi) == static_cast<double>(quant_max);
  const bool small = exact && quant_min > -(int64_t{1} << 22) && quant_max < (int64_t{1} << 22);
  return FloatBounds{lo, hi, small ? BoundsKind::kSmall : exact ? BoundsKind::kExact : BoundsKind::kInexact};
}

// §3.3 per lane: v = x * inv, r = rne(v), t = r + zp, then sat(t).
template <typename Q, BoundsKind kKind>
void QuantizeF32Loop(const float* in, std::size_t n, const PerTensorQuantize& p, Q* out) {
  const FloatBounds bounds = float_bounds(p.quant_min, p.quant_max);
  const auto qmin = static_cast<int32_t>(p.quant_min);
  const auto qmax = static_cast<int32_t>(p.quant_max);
  WriteEach(hn::ScalableTag<float>(), n, sizeof(float), out, [&](auto df, std::size_t i) {
    const hn::RebindToSigned<decltype(df)> di;
    PrefetchAhead(in, i, n, hn::Lanes(df));
    const auto v = hn::Mul(hn::LoadU(df, in + i), hn::Set(df, p.inv));
    const auto t = hn::Add(hn::Round(v), hn::Set(df, p.zero_point));
    return DemoteFromI32<Q>(di, SaturateF32<kKind>(df, t, bounds, qmin, qmax));
  });
}

// False (the caller then runs the scalar loop) for a range the loops do not
// take: only int32 has ranges beyond 2^22, as the kernel checks every range
// against its dtype, so the narrow dtypes need only the small-range loop.
template <typename Q>
bool QuantizeF32To(const float* in, std::size_t n, const PerTensorQuantize& p, void* out) {
  const BoundsKind kind = float_bounds(p.quant_min, p.quant_max).kind;
  if (kind == BoundsKind::kSmall) {
    QuantizeF32Loop<Q, BoundsKind::kSmall>(in, n, p, static_cast<Q*>(out));
    return true;
  }
  if constexpr (std::is_same_v<Q, int32_t>) {
    if (kind == BoundsKind::kExact)
      QuantizeF32Loop<Q, BoundsKind::kExact>(in, n, p, static_cast<Q*>(out));
    else
      QuantizeF32Loop<Q, BoundsKind::kInexact>(in, n, p, static_cast<Q*>(out));
    return true;
  }
  return false;
}

bool QuantizeF32(const float* in, std::size_t n, const PerTensorQuantize& p, DType out_dtype, void* out) {
  switch (out_dtype) {
    case DType::UInt8: return QuantizeF32To<uint8_t>(in, n, p, out);
    case DType::Int8: return QuantizeF32To<int8_t>(in, n, p, out);
    case DType::Int16: return QuantizeF32To<int16_t>(in, n, p, out);
    case DType::UInt16: return QuantizeF32To<uint16_t>(in, n, p, out);
    case DType::Int32: return QuantizeF32To<int32_t>(in, n, p, out);
    default: return false;
  }
}

// §3.4 / §3.5 per lane, in binary64. x is f32 (widened exactly) or f64.
template <typename In, typename Q, bool kZeroPointBeforeRounding>
void QuantizeBinary64Loop(const In* in, std::size_t n, const Binary64Quantize& p, Q* out) {
  const auto qmin = static_cast<double>(p.quant_min);
  const auto qmax = static_cast<double>(p.quant_max);
  WriteEach(hn::ScalableTag<double>(), n, sizeof(In), out, [&](auto dd, std::size_t i) {
    const hn::Rebind<int32_t, decltype(dd)> di;
    PrefetchAhead(in, i, n, hn::Lanes(dd));
    hn::VFromD<decltype(dd)> x;
    if constexpr (std::is_same_v<In, float>)
      x = hn::PromoteTo(dd, hn::LoadU(hn::Rebind<float, decltype(dd)>(), in + i));
    else
      x = hn::LoadU(dd, in + i);
    const auto v = hn::Mul(x, hn::Set(dd, p.inv));
    const auto zp = hn::Set(dd, p.zero_point);
    const auto t = kZeroPointBeforeRounding ? hn::Round(hn::Add(v, zp)) : hn::Add(hn::Round(v), zp);
    return DemoteFromI32<Q>(di, SaturateF64(dd, t, qmin, qmax));
  });
}

template <typename In, typename Q>
void QuantizeBinary64To(const void* in, std::size_t n, const Binary64Quantize& p, void* out) {
  if (p.zero_point_before_rounding)
    QuantizeBinary64Loop<In, Q, true>(static_cast<const In*>(in), n, p, static_cast<Q*>(out));
  else
    QuantizeBinary64Loop<In, Q, false>(static_cast<const In*>(in), n, p, static_cast<Q*>(out));
}

template <typename In>
bool QuantizeBinary64From(const void* in, std::size_t n, const Binary64Quantize& p, DType out_dtype, void* out) {
  switch (out_dtype) {
    case DType::UInt8: QuantizeBinary64To<In, uint8_t>(in, n, p, out); return true;
    case DType::Int8: QuantizeBinary64To<In, int8_t>(in, n, p, out); return true;
    case DType::Int16: QuantizeBinary64To<In, int16_t>(in, n, p, out); return true;
    case DType::UInt16: QuantizeBinary64To<In, uint16_t>(in, n, p, out); return true;
    case DType::Int32: QuantizeBinary64To<In, int32_t>(in, n, p, out); return true;
    default: return false;
  }
}

bool QuantizeBinary64(DType in_dtype, const void* in, std::size_t n, const Binary64Quantize& p, DType out_dtype,
                      void* out) {
  if (in_dtype == DType::Float32) return QuantizeBinary64From<float>(in, n, p, out_dtype, out);
  if (in_dtype == DType::Float64) return QuantizeBinary64From<double>(in, n, p, out_dtype, out);
  return false;
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::quantized::simd)

#if HWY_ONCE
namespace et_ops::kernels::quantized::simd {

HWY_EXPORT(QuantizeF32);
HWY_EXPORT(QuantizeBinary64);

bool quantize_f32(const float* in, std::size_t n, const PerTensorQuantize& params, DType out_dtype, void* out) {
  return HWY_DYNAMIC_DISPATCH(QuantizeF32)(in, n, params, out_dtype, out);
}

bool quantize_binary64(DType in_dtype, const void* in, std::size_t n, const Binary64Quantize& params,
                       DType out_dtype, void* out) {
  return HWY_DYNAMIC_DISPATCH(QuantizeBinary64)(in_dtype, in, n, params, out_dtype, out);
}

}  // namespace et_ops::kernels::quantized::simd
#endif  // HWY_ONCE
