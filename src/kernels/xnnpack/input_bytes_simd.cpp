// input_bytes.h, compiled once per Highway target and dispatched at run time.
#define HWY_TARGET_INCLUDE "input_bytes_simd.cpp"
#include "common/hwy_per_target.h"

#include "input_bytes.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::xnnpack::detail)

ByteRange ShiftBytes(const int8_t* in, uint8_t* out, std::size_t n, int8_t start, int8_t high) {
  const hn::ScalableTag<int8_t> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const std::size_t lanes = hn::Lanes(d);
  const auto low_end = hn::Set(d, start), high_end = hn::Set(d, high);
  auto low = hn::Set(d, INT8_MAX), top = hn::Set(d, INT8_MIN);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(d, in + i);
    low = hn::Min(low, v), top = hn::Max(top, v);
    const auto clamped = hn::Min(hn::Max(v, low_end), high_end);
    hn::StoreU(hn::BitCast(du, hn::Sub(clamped, low_end)), du, out + i);
  }
  ByteRange range;
  if (i > 0) {  // the lanes' extremes (Highway reduces no 8-bit lanes on every target)
    HWY_ALIGN int8_t lows[hn::MaxLanes(d)], tops[hn::MaxLanes(d)];
    hn::Store(low, d, lows), hn::Store(top, d, tops);
    for (std::size_t k = 0; k < lanes; ++k) range.add({lows[k], tops[k]});
  }
  for (; i < n; ++i) {
    range.add({in[i], in[i]});
    const int8_t clamped = in[i] < start ? start : in[i] > high ? high : in[i];
    out[i] = static_cast<uint8_t>(static_cast<uint8_t>(clamped) - static_cast<uint8_t>(start));
  }
  return range;
}

bool FindOutside(const int8_t* in, std::size_t n, int8_t low, int8_t high, std::size_t limit,
                 std::vector<std::size_t>& positions) {
  const hn::ScalableTag<int8_t> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto vlow = hn::Set(d, low), vhigh = hn::Set(d, high);
  auto scan = [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k)
      if (in[k] < low || in[k] > high) positions.push_back(k);
    return positions.size() <= limit;
  };
  // A vector's lanes outside as bits, read set bit by set bit: bytes beyond
  // the window may be a few percent of an 8-bit activation's.
  HWY_ALIGN uint8_t bits[(hn::MaxLanes(d) + 7) / 8 + 8] = {};
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(d, in + i);
    const auto outside = hn::Or(hn::Lt(v, vlow), hn::Gt(v, vhigh));
    if (hn::AllFalse(d, outside)) continue;
    hn::StoreMaskBits(d, outside, bits);
    for (std::size_t b = 0; b < (lanes + 7) / 8; ++b)
      for (unsigned set = bits[b]; set != 0; set &= set - 1)
        positions.push_back(i + 8 * b + std::size_t(__builtin_ctz(set)));
    if (positions.size() > limit) return false;
  }
  return scan(i, n);
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::xnnpack::detail)

#if HWY_ONCE
namespace et_ops::kernels::xnnpack::detail {

HWY_EXPORT(ShiftBytes);
HWY_EXPORT(FindOutside);

ByteRange shift_bytes(const int8_t* in, uint8_t* out, std::size_t n, int8_t start, int8_t high) {
  return HWY_DYNAMIC_DISPATCH(ShiftBytes)(in, out, n, start, high);
}

bool find_outside(const int8_t* in, std::size_t n, int8_t low, int8_t high, std::size_t limit,
                  std::vector<std::size_t>& positions) {
  return HWY_DYNAMIC_DISPATCH(FindOutside)(in, n, low, high, limit, positions);
}

}  // namespace et_ops::kernels::xnnpack::detail
#endif  // HWY_ONCE
