// The conversion loops of float16_simd.h, compiled once per Highway target
// and dispatched at run time: whole vectors, then single lanes, so the tail
// performs the very same operations without touching memory past n.
#define HWY_TARGET_INCLUDE "float16_simd.cpp"
#include "common/hwy_per_target.h"

#include "float16_simd.h"
#include "float16_vectors-inl.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::portable::simd)

// out[i] = narrow(in[i]) as uint16 patterns.
template <class D, class Narrow>
HWY_INLINE void NarrowLanes(D df, const float* in, uint16_t* out, std::size_t n, const Narrow& narrow) {
  const hn::Rebind<uint16_t, D> d16;
  const hn::RebindToSigned<D> di;
  const std::size_t lanes = hn::Lanes(df);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes)
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, narrow(df, hn::LoadU(df, in + i)))), d16, out + i);
  const hn::CappedTag<float, 1> d1;
  const hn::Rebind<uint16_t, decltype(d1)> d16_1;
  const hn::RebindToSigned<decltype(d1)> di1;
  for (; i < n; ++i) hn::StoreU(hn::DemoteTo(d16_1, hn::BitCast(di1, narrow(d1, hn::LoadU(d1, in + i)))), d16_1, out + i);
}

// out[i] = widen(in[i]) from uint16 patterns.
template <class D, class Widen>
HWY_INLINE void WidenLanes(D df, const uint16_t* in, float* out, std::size_t n, const Widen& widen) {
  const hn::Rebind<uint16_t, D> d16;
  const hn::RebindToUnsigned<D> du;
  const std::size_t lanes = hn::Lanes(df);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(widen(df, hn::PromoteTo(du, hn::LoadU(d16, in + i))), df, out + i);
  const hn::CappedTag<float, 1> d1;
  const hn::Rebind<uint16_t, decltype(d1)> d16_1;
  const hn::RebindToUnsigned<decltype(d1)> du1;
  for (; i < n; ++i) hn::StoreU(widen(d1, hn::PromoteTo(du1, hn::LoadU(d16_1, in + i))), d1, out + i);
}

// The lanes hold patterns below 2^16: DemoteTo (from int32) keeps them as they are.
void NarrowToFloat16(const float* in, uint16_t* out, std::size_t n) {
  NarrowLanes(hn::ScalableTag<float>(), in, out, n, [](auto d, auto x) { return NarrowFloat16(d, x); });
}
void NarrowToBFloat16(const float* in, uint16_t* out, std::size_t n) {
  NarrowLanes(hn::ScalableTag<float>(), in, out, n, [](auto d, auto x) { return NarrowBFloat16(d, x); });
}
void WidenFromFloat16(const uint16_t* in, float* out, std::size_t n) {
  WidenLanes(hn::ScalableTag<float>(), in, out, n, [](auto d, auto bits) { return WidenFloat16(d, bits); });
}
void WidenFromBFloat16(const uint16_t* in, float* out, std::size_t n) {
  WidenLanes(hn::ScalableTag<float>(), in, out, n, [](auto d, auto bits) { return WidenBFloat16(d, bits); });
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::portable::simd)

#if HWY_ONCE
namespace et_ops::kernels::portable::simd {

HWY_EXPORT(NarrowToFloat16);
HWY_EXPORT(NarrowToBFloat16);
HWY_EXPORT(WidenFromFloat16);
HWY_EXPORT(WidenFromBFloat16);

void narrow_to_float16(const float* in, uint16_t* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(NarrowToFloat16)(in, out, n);
}
void narrow_to_bfloat16(const float* in, uint16_t* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(NarrowToBFloat16)(in, out, n);
}
void widen_float16(const uint16_t* in, float* out, std::size_t n) { HWY_DYNAMIC_DISPATCH(WidenFromFloat16)(in, out, n); }
void widen_bfloat16(const uint16_t* in, float* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(WidenFromBFloat16)(in, out, n);
}

}  // namespace et_ops::kernels::portable::simd
#endif  // HWY_ONCE
