// Vectorised quantized add (see vector_kernels.h), compiled once per
// Highway target and dispatched at run time.
#define HWY_TARGET_INCLUDE "add_simd.cpp"
#include "common/hwy_per_target.h"

#include "vector_kernels.h"
#include "vector_ops-inl.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::quantized::simd)

// §8.2 per lane: two f32 dequantizes, one f32 add, one per-tensor quantize.
// Every element is loaded before its output is stored and no store reaches
// an element not yet loaded, so out may alias a or b.
template <typename Q>
void AddLoop(const Q* a, const Q* b, std::size_t n, const QuantizedAdd& p, Q* out) {
  // add's ranges lie within [0, 255]: the float bounds are small integers.
  const FloatBounds bounds{static_cast<float>(p.quant_min), static_cast<float>(p.quant_max), BoundsKind::kSmall};
  const auto qmin = static_cast<int32_t>(p.quant_min);
  const auto qmax = static_cast<int32_t>(p.quant_max);
  WriteEach(hn::ScalableTag<float>(), n, 2 * sizeof(Q), out, [&](auto df, std::size_t i) {
    const hn::RebindToSigned<decltype(df)> di;
    PrefetchAhead(a, i, n, hn::Lanes(df));
    PrefetchAhead(b, i, n, hn::Lanes(df));
    const auto qa = hn::ConvertTo(df, LoadAsI32(di, a + i));
    const auto qb = hn::ConvertTo(df, LoadAsI32(di, b + i));
    const auto da = hn::Mul(hn::Sub(qa, hn::Set(df, p.a_zero_point)), hn::Set(df, p.a_scale));
    const auto db = hn::Mul(hn::Sub(qb, hn::Set(df, p.b_zero_point)), hn::Set(df, p.b_scale));
    const auto v = hn::Mul(hn::Add(da, db), hn::Set(df, p.inv));
    const auto t = hn::Add(hn::Round(v), hn::Set(df, p.out_zero_point));
    return DemoteFromI32<Q>(di, SaturateF32<BoundsKind::kSmall>(df, t, bounds, qmin, qmax));
  });
}

template <typename Q>
void AddAs(const void* a, const void* b, std::size_t n, const QuantizedAdd& p, void* out) {
  AddLoop(static_cast<const Q*>(a), static_cast<const Q*>(b), n, p, static_cast<Q*>(out));
}

bool Add(DType dtype, const void* a, const void* b, std::size_t n, const QuantizedAdd& p, void* out) {
  switch (dtype) {
    case DType::UInt8: AddAs<uint8_t>(a, b, n, p, out); return true;
    case DType::Int8: AddAs<int8_t>(a, b, n, p, out); return true;
    case DType::Int16: AddAs<int16_t>(a, b, n, p, out); return true;
    case DType::Int32: AddAs<int32_t>(a, b, n, p, out); return true;
    default: return false;
  }
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::quantized::simd)

#if HWY_ONCE
namespace et_ops::kernels::quantized::simd {

HWY_EXPORT(Add);

bool add(DType dtype, const void* a, const void* b, std::size_t n, const QuantizedAdd& params, void* out) {
  return HWY_DYNAMIC_DISPATCH(Add)(dtype, a, b, n, params, out);
}

}  // namespace et_ops::kernels::quantized::simd
#endif  // HWY_ONCE
