// IEEE binary16 and bfloat16 storage types with exact conversions:
// widening to float is exact; narrowing from float rounds to nearest even,
// overflows to infinity and keeps NaN a NaN.
#ifndef ET_OPS_HALF_H
#define ET_OPS_HALF_H

#include <cstdint>
#include <cstring>

namespace et_ops {

namespace detail {
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace detail

struct Half {
  uint16_t bits = 0;

  static Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }

  // Round-to-nearest-even from binary32.
  static Half from_float(float f) {
    const uint32_t x = detail::float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7FFFFFFFu;
    if (abs >= 0x7F800000u)  // inf or NaN
      return from_bits(static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x0200u | ((abs >> 13) & 0x3FFu) : 0u)));
    if (abs >= 0x477FF000u)  // rounds to >= 65520: overflow
      return from_bits(static_cast<uint16_t>(sign | 0x7C00u));
    if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
      // Scale so that the half subnormal unit (2^-24) becomes 1, then round.
      const int exponent = static_cast<int>(abs >> 23);
      if (exponent < 102) return from_bits(static_cast<uint16_t>(sign));  // < 2^-25: rounds to zero
      const uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
      const int shift = 126 - exponent;  // bits to drop so the unit is 2^-24
      const uint32_t kept = mantissa >> shift;
      const uint32_t rest = mantissa & ((1u << shift) - 1u);
      const uint32_t half_way = 1u << (shift - 1);
      uint32_t result = kept;
      if (rest > half_way || (rest == half_way && (kept & 1u))) ++result;
      return from_bits(static_cast<uint16_t>(sign | result));
    }
    // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits.
    uint32_t result = ((abs >> 13) - (112u << 10));
    const uint32_t rest = abs & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;
    return from_bits(static_cast<uint16_t>(sign | result));
  }

  float to_float() const {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exponent = (bits >> 10) & 0x1Fu;
    const uint32_t mantissa = bits & 0x3FFu;
    if (exponent == 0x1F) return detail::bits_float(sign | 0x7F800000u | (mantissa << 13));
    if (exponent != 0) return detail::bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
    if (mantissa == 0) return detail::bits_float(sign);
    // Subnormal half: exact in binary32.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-08f;  // 2^-24
    return sign ? -magnitude : magnitude;
  }
};

struct BFloat16 {
  uint16_t bits = 0;

  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }

  // Round-to-nearest-even on the upper 16 bits; NaN becomes 0x7FC0 (signed).
  static BFloat16 from_float(float f) {
    const uint32_t x = detail::float_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return from_bits(static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7FC0u));
    const uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);
    return from_bits(static_cast<uint16_t>((x + rounding) >> 16));
  }

  float to_float() const { return detail::bits_float(static_cast<uint32_t>(bits) << 16); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit storage types");

}  // namespace et_ops

#endif  // ET_OPS_HALF_H
