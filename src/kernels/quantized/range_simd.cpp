// Vectorised clipped range of f32 elements (see vector_kernels.h), compiled
// once per Highway target and dispatched at run time. Minima and maxima are
// exact, so every target gives the same values.
#define HWY_TARGET_INCLUDE "range_simd.cpp"
#include "common/hwy_per_target.h"

#include "vector_kernels.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::quantized::simd)

bool ClippedRange(const float* x, std::size_t n, float* low, float* high) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  const hn::RebindToUnsigned<decltype(d)> du;
  auto lo = hn::Zero(d), hi = hn::Zero(d);
  auto nan = hn::Zero(du);  // all ones in the lanes where a NaN was seen
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(d, x + i);
    nan = hn::Or(nan, hn::BitCast(du, hn::VecFromMask(d, hn::IsNaN(v))));
    lo = hn::Min(lo, v);
    hi = hn::Max(hi, v);
  }
  float l = hn::GetLane(hn::MinOfLanes(d, lo)), h = hn::GetLane(hn::MaxOfLanes(d, hi));
  bool has_nan = !hn::AllFalse(du, hn::Ne(nan, hn::Zero(du)));
  for (; i < n; ++i) {
    has_nan = has_nan || x[i] != x[i];
    if (x[i] < l) l = x[i];
    if (x[i] > h) h = x[i];
  }
  // Zeros of either sign give +0: the range of a signed zero is that of 0.
  *low = l < 0.0f ? l : 0.0f;
  *high = h > 0.0f ? h : 0.0f;
  return has_nan;
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::quantized::simd)

#if HWY_ONCE
namespace et_ops::kernels::quantized::simd {

HWY_EXPORT(ClippedRange);

bool clipped_range(const float* x, std::size_t n, float* low, float* high) {
  return HWY_DYNAMIC_DISPATCH(ClippedRange)(x, n, low, high);
}

}  // namespace et_ops::kernels::quantized::simd
#endif  // HWY_ONCE
