// requantize.h, compiled once per Highway target and dispatched at run time.
#define HWY_TARGET_INCLUDE "requantize_simd.cpp"
#include "common/hwy_per_target.h"

#include <cmath>

#include "requantize.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::xnnpack::detail)

// One element, as every lane computes it (the vector loop's tail).
int8_t RequantizeOne(int32_t acc, std::size_t c, const Requantization& r, float lo, float hi) {
  const auto sum = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(r.bias[c]));
  const float scaled = std::fmin(std::fmax(static_cast<float>(sum) * r.scale[c], lo), hi);
  return static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(scaled)) + r.zero_point);
}

void Requantize(const int32_t* acc, std::size_t pixels, std::size_t channels, const Requantization& r, int8_t* out,
                std::size_t out_stride) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<int8_t, decltype(di)> d8;
  const std::size_t lanes = hn::Lanes(df);
  const float lo = static_cast<float>(r.min - r.zero_point), hi = static_cast<float>(r.max - r.zero_point);
  const auto vlo = hn::Set(df, lo), vhi = hn::Set(df, hi);
  // x + 1.5 * 2^23 rounds x (|x| < 2^22: here at most 255) to an integer, half to even as nearbyint() does,
  // in the low bits of its representation: no conversion to int32 and its out-of-range fix-ups.
  const auto magic = hn::Set(df, 12582912.0f);
  const auto magic_bits = hn::Set(di, 0x4B400000 - r.zero_point);
  const int32_t* const bias = r.bias;  // locals: the int8 stores below may alias anything else
  const float* const scale = r.scale;
  for (std::size_t p = 0; p < pixels; ++p) {
    const int32_t* a = acc + p * channels;
    int8_t* o = out + p * out_stride;
    std::size_t c = 0;
    for (; c + lanes <= channels; c += lanes) {
      const auto sum = hn::Add(hn::LoadU(di, a + c), hn::LoadU(di, bias + c));
      const auto scaled = hn::Mul(hn::ConvertTo(df, sum), hn::LoadU(df, scale + c));
      const auto clamped = hn::Min(hn::Max(scaled, vlo), vhi);
      const auto quantized = hn::Sub(hn::BitCast(di, hn::Add(clamped, magic)), magic_bits);
      hn::StoreU(hn::DemoteTo(d8, quantized), d8, o + c);
    }
    for (; c < channels; ++c) o[c] = RequantizeOne(a[c], c, r, lo, hi);
  }
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::xnnpack::detail)

#if HWY_ONCE
namespace et_ops::kernels::xnnpack::detail {

HWY_EXPORT(Requantize);

void requantize(const int32_t* acc, std::size_t pixels, std::size_t channels, const Requantization& r, int8_t* out,
                std::size_t out_stride) {
  HWY_DYNAMIC_DISPATCH(Requantize)(acc, pixels, channels, r, out, out_stride);
}

}  // namespace et_ops::kernels::xnnpack::detail
#endif  // HWY_ONCE
