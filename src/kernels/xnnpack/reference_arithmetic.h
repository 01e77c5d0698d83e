// The reference path's arithmetic on one element, for int8 operators that
// must give its bytes exactly: the program's dequantize, float32 operator
// and quantize, done in scalar float32 (no FMA contraction: numerics_args),
// so every CPU and thread count gives the same bytes.
//   dequantize: fl32(fl32(q - zp) * fl32(scale))
//   quantize:   clamp(rne(fl32(x * fl32(1.0 / scale))) + zp, min, max), NaN to min
// with the reciprocal of the double scale rounded once to float32, as the
// reference's quantize_per_tensor computes it.
#ifndef ET_OPS_SRC_KERNELS_XNNPACK_REFERENCE_ARITHMETIC_H
#define ET_OPS_SRC_KERNELS_XNNPACK_REFERENCE_ARITHMETIC_H

#include <array>
#include <cstdint>

namespace et_ops::kernels::xnnpack::detail {

// The 256 values an int8 tensor of (scale, zero_point) dequantizes to,
// indexed by the stored value + 128.
inline std::array<float, 256> dequantized_values(double scale, int64_t zero_point) {
  std::array<float, 256> values{};
  const float s = static_cast<float>(scale), zp = static_cast<float>(zero_point);
  for (int q = -128; q <= 127; ++q) values[std::size_t(q + 128)] = (static_cast<float>(q) - zp) * s;
  return values;
}

// Quantizing float32 values to int8 as the reference's quantize_per_tensor.
class ReferenceQuantizer {
 public:
  ReferenceQuantizer(double scale, int64_t zero_point, int64_t min, int64_t max)
      : inverse_(static_cast<float>(1.0 / scale)), zero_point_(static_cast<float>(zero_point)),
        min_(static_cast<float>(min)), max_(static_cast<float>(max)) {}

  int8_t operator()(float x) const {
    float v = x * inverse_;
    if (v != v) return static_cast<int8_t>(min_);  // NaN saturates to the minimum, as the reference's
    // Beyond +-2^22 every value saturates (|zero point| <= 128), so the
    // clamp changes no result and keeps the rounding below exact: adding
    // and subtracting 1.5 * 2^23 rounds half to even in float32.
    v = v < -kBound ? -kBound : (v > kBound ? kBound : v);
    float t = ((v + kRound) - kRound) + zero_point_;
    t = t < min_ ? min_ : (t > max_ ? max_ : t);
    return static_cast<int8_t>(t);
  }

 private:
  static constexpr float kBound = 4194304.0f;   // 2^22
  static constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  float inverse_, zero_point_, min_, max_;
};

}  // namespace et_ops::kernels::xnnpack::detail

#endif  // ET_OPS_SRC_KERNELS_XNNPACK_REFERENCE_ARITHMETIC_H
