// Vectorised unpacking of int4 values stored two per byte (see
// vector_kernels.h), compiled once per Highway target and dispatched at run
// time. Integer work only: every target gives the same bytes.
#define HWY_TARGET_INCLUDE "nibbles_simd.cpp"
#include "common/hwy_per_target.h"

#include "vector_kernels.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::quantized::simd)

// Byte m holds element 2m in its high nibble and 2m+1 in its low one, each
// stored with a +8 offset; the subtraction wraps in u8 lanes to the int8
// bit pattern of nibble - 8.
void UnpackNibbles(const uint8_t* packed, std::size_t bytes, int8_t* out) {
  const hn::ScalableTag<uint8_t> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto offset = hn::Set(d, uint8_t{8});
  const auto low_mask = hn::Set(d, uint8_t{0x0F});
  auto* dst = reinterpret_cast<uint8_t*>(out);
  std::size_t m = 0;
  for (; m + lanes <= bytes; m += lanes) {
    const auto v = hn::LoadU(d, packed + m);
    const auto high = hn::Sub(hn::ShiftRight<4>(v), offset);
    const auto low = hn::Sub(hn::And(v, low_mask), offset);
    hn::StoreInterleaved2(high, low, d, dst + 2 * m);
  }
  for (; m < bytes; ++m) {
    out[2 * m] = static_cast<int8_t>((packed[m] >> 4) - 8);
    out[2 * m + 1] = static_cast<int8_t>((packed[m] & 0x0F) - 8);
  }
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::quantized::simd)

#if HWY_ONCE
namespace et_ops::kernels::quantized::simd {

HWY_EXPORT(UnpackNibbles);

void unpack_nibbles(const uint8_t* packed, std::size_t bytes, int8_t* out) {
  HWY_DYNAMIC_DISPATCH(UnpackNibbles)(packed, bytes, out);
}

}  // namespace et_ops::kernels::quantized::simd
#endif  // HWY_ONCE
