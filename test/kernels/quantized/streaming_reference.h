// Test-side tools for the streaming quantized kernels (quantize, dequantize,
// add): an independent scalar reference of reference §3, §4 and §8 written
// without the library's code (its own rounding, saturation and 16-bit float
// conversions via GCC's _Float16), tensors with arbitrary dim orders built
// from logical values, error assertions, and (simd_targets.h) a loop over
// every Highway target the library was compiled for.
#ifndef ET_OPS_TEST_KERNELS_QUANTIZED_STREAMING_REFERENCE_H
#define ET_OPS_TEST_KERNELS_QUANTIZED_STREAMING_REFERENCE_H

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/half.h"
#include "et_ops/kernel_context.h"
#include "et_ops/kernels/quantized.h"
#include "et_ops/tensor.h"
#include "et_ops/value.h"
#include "simd_targets.h"
#include "test_util.h"

namespace et_ops::test {

// ---- store kinds ----

// Runs f under every Highway target twice: with every run written by
// non-temporal stores (threshold 0) and with none (SIZE_MAX), whatever the
// machine's cache size; restores the default threshold afterwards.
template <typename F>
void for_each_store_kind_and_simd_target(F&& f) {
  struct Restore {
    ~Restore() { kernels::quantized::reset_streaming_threshold_bytes(); }
  } restore;
  for (std::size_t threshold : {std::size_t{0}, std::numeric_limits<std::size_t>::max()}) {
    kernels::quantized::set_streaming_threshold_bytes(threshold);
    INFO((threshold == 0 ? "non-temporal stores" : "ordinary stores"));
    for_each_simd_target(f);
  }
}

// ---- independent 16-bit float conversions ----

inline float ref_half_to_float(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);
}

inline uint16_t ref_float_to_half(float f) {
  const auto h = static_cast<_Float16>(f);  // GCC: round to nearest even
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

inline float ref_bfloat16_to_float(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

// Nearest bfloat16 by comparing distances in binary64 (exact for these
// operands), ties to the even significand; NaN becomes 0x7FC0 with its sign.
inline uint16_t ref_float_to_bfloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7FC0u);
  const auto below = static_cast<uint16_t>(bits >> 16);  // truncation: toward zero
  if ((below & 0x7FFFu) == 0x7F80u) return below;        // infinity
  const auto above = static_cast<uint16_t>(below + 1);   // next magnitude (may be infinity)
  const double x = std::fabs(static_cast<double>(f));
  const double lo = std::fabs(static_cast<double>(ref_bfloat16_to_float(below)));
  // The magnitude above the largest finite bf16 is "infinity"; its midpoint
  // with the largest finite is where IEEE rounding overflows.
  const double hi = (above & 0x7FFFu) == 0x7F80u ? lo + std::ldexp(1.0, 127 - 7) : std::fabs(static_cast<double>(ref_bfloat16_to_float(above)));
  if (x - lo < hi - x) return below;
  if (x - lo > hi - x) return above;
  return (below & 1u) ? above : below;
}

template <typename T>
float ref_widen(T x) {
  if constexpr (std::is_same_v<T, Half>) return ref_half_to_float(x.bits);
  else if constexpr (std::is_same_v<T, BFloat16>) return ref_bfloat16_to_float(x.bits);
  else return static_cast<float>(x);
}

template <typename T>
T ref_narrow(float v) {
  if constexpr (std::is_same_v<T, Half>) return Half::from_bits(ref_float_to_half(v));
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16::from_bits(ref_float_to_bfloat16(v));
  else if constexpr (std::is_same_v<T, double>) return static_cast<double>(v);
  else return v;
}

// ---- reference arithmetic ----

// Round half to even, written with floor instead of the rounding mode.
inline double ref_rne(double v) {
  if (!std::isfinite(v)) return v;
  const double below = std::floor(v);
  const double frac = v - below;  // exact
  if (frac < 0.5) return below;
  if (frac > 0.5) return below + 1.0;
  return std::fmod(below, 2.0) == 0.0 ? below : below + 1.0;
}

// sat of reference §1.3.
inline int64_t ref_sat(double t, int64_t quant_min, int64_t quant_max) {
  if (std::isnan(t)) return quant_min;
  if (t <= static_cast<double>(quant_min)) return quant_min;
  if (t >= static_cast<double>(quant_max)) return quant_max;
  return static_cast<int64_t>(t);
}

// §3.3.
template <typename In>
int64_t ref_quantize_per_tensor(In x, double scale, int64_t zero_point, int64_t quant_min, int64_t quant_max) {
  const float inv = static_cast<float>(1.0 / scale);
  float v;
  if constexpr (std::is_same_v<In, double>) v = static_cast<float>(x * static_cast<double>(inv));
  else v = ref_widen(x) * inv;
  const auto r = static_cast<float>(ref_rne(v));
  const float t = r + static_cast<float>(zero_point);
  return ref_sat(t, quant_min, quant_max);
}

template <typename In>
double ref_widen_f64(In x) {
  if constexpr (std::is_same_v<In, double>) return x;
  else return static_cast<double>(ref_widen(x));
}

// §3.4.
template <typename In>
int64_t ref_quantize_per_channel(In x, double scale, int64_t zero_point, int64_t quant_min, int64_t quant_max) {
  const double v = ref_widen_f64(x) * (1.0 / scale);
  const double t = ref_rne(v) + static_cast<double>(zero_point);
  return ref_sat(t, quant_min, quant_max);
}

// §3.5.
template <typename In>
int64_t ref_quantize_per_token(In x, double scale, int64_t zero_point, int64_t quant_min, int64_t quant_max) {
  const double v = ref_widen_f64(x) * (1.0 / scale);
  const double u = v + static_cast<double>(zero_point);
  return ref_sat(ref_rne(u), quant_min, quant_max);
}

// q - zp formed exactly (|q - zp| < 2^64 fits a 64-bit significand), then
// rounded once to binary64 or binary32.
inline double ref_difference_f64(int64_t q, int64_t zp) {
  return static_cast<double>(static_cast<long double>(q) - static_cast<long double>(zp));
}
inline float ref_difference_f32(int64_t q, int64_t zp) {
  return static_cast<float>(static_cast<long double>(q) - static_cast<long double>(zp));
}

// §4.3.
template <typename Out>
Out ref_dequantize_per_tensor(int64_t q, double scale, int64_t zero_point) {
  if constexpr (std::is_same_v<Out, double>) {
    return ref_difference_f64(q, zero_point) * scale;
  } else {
    const float y = (static_cast<float>(q) - static_cast<float>(zero_point)) * static_cast<float>(scale);
    return ref_narrow<Out>(y);
  }
}

// §4.4 / §4.5 with f64 scales.
template <typename Out>
Out ref_dequantize_f64_scale(int64_t q, double scale, int64_t zero_point) {
  const double w = ref_difference_f64(q, zero_point) * scale;
  if constexpr (std::is_same_v<Out, double>) return w;
  else return ref_narrow<Out>(static_cast<float>(w));
}

// §4.4 / §4.5 with f32 scales.
template <typename Out>
Out ref_dequantize_f32_scale(int64_t q, float scale, int64_t zero_point) {
  const float w = ref_difference_f32(q, zero_point) * scale;
  return ref_narrow<Out>(w);
}

struct RefAddParams {
  double a_scale;
  int64_t a_zero_point;
  double b_scale;
  int64_t b_zero_point;
  double out_scale;
  int64_t out_zero_point;
  int64_t out_quant_min;
  int64_t out_quant_max;
};

// §8.2.
inline int64_t ref_add(int64_t a, int64_t b, const RefAddParams& p) {
  const float da = (static_cast<float>(a) - static_cast<float>(p.a_zero_point)) * static_cast<float>(p.a_scale);
  const float db = (static_cast<float>(b) - static_cast<float>(p.b_zero_point)) * static_cast<float>(p.b_scale);
  const float acc = da + db;
  const float v = acc * static_cast<float>(1.0 / p.out_scale);
  const float t = static_cast<float>(ref_rne(v)) + static_cast<float>(p.out_zero_point);
  return ref_sat(t, p.out_quant_min, p.out_quant_max);
}

// ---- element types ----

template <typename T>
constexpr bool is_float_type() {
  return std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> ||
         std::is_same_v<T, BFloat16>;
}

template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return ref_narrow<T>(static_cast<float>(v));
  else return static_cast<T>(v);
}

template <typename T>
std::string type_label() {
  return std::string(dtype_name(dtype_of<T>()));
}

template <typename Q>
int64_t lowest() {
  return static_cast<int64_t>(std::numeric_limits<Q>::min());
}
template <typename Q>
int64_t highest() {
  return static_cast<int64_t>(std::numeric_limits<Q>::max());
}

template <typename T>
struct TypeTag {
  using type = T;
};

template <typename F>
void for_each_float_type(F&& f) {
  f(TypeTag<float>{});
  f(TypeTag<double>{});
  f(TypeTag<Half>{});
  f(TypeTag<BFloat16>{});
}

template <typename F>
void for_each_quantized_type(F&& f) {
  f(TypeTag<uint8_t>{});
  f(TypeTag<int8_t>{});
  f(TypeTag<int16_t>{});
  f(TypeTag<uint16_t>{});
  f(TypeTag<int32_t>{});
}

// A printable form of an element (16-bit floats with their bits).
template <typename T>
std::string show(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    const float f = std::is_same_v<T, Half> ? ref_half_to_float(v.bits) : ref_bfloat16_to_float(v.bits);
    return fmt::format("{} (bits {:#06x})", f, v.bits);
  } else if constexpr (std::is_floating_point_v<T>) {
    return fmt::format("{}", v);
  } else {
    return std::to_string(static_cast<int64_t>(v));
  }
}

// ---- random data ----

inline int64_t uniform_int(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
inline double uniform_real(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
// Log-uniform positive value in [lo, hi].
inline double log_uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::exp(uniform_real(rng, std::log(lo), std::log(hi)));
}

// A random shape of rank 0..4 whose sizes include 0, 1 and lengths past
// several vector widths (with ragged tails); about 1 in 12 shapes is empty.
inline std::vector<int64_t> random_shape(std::mt19937_64& rng, int64_t max_rank = 4) {
  const auto rank = static_cast<std::size_t>(uniform_int(rng, 0, max_rank));
  std::vector<int64_t> sizes(rank);
  for (auto& s : sizes) {
    const int64_t kind = uniform_int(rng, 0, 11);
    s = kind == 0 ? 0 : kind <= 2 ? 1 : kind <= 8 ? uniform_int(rng, 2, 9) : uniform_int(rng, 10, 77);
  }
  while (numel_of(sizes) > 40000) {
    auto& largest = *std::max_element(sizes.begin(), sizes.end());
    largest = std::max<int64_t>(1, largest / 2);
  }
  return sizes;
}

// ---- the C ABI ----

// The fallback kernel of `op` from the library's manifest.
inline et_ops_kernel_fn manifest_kernel(std::string_view op) {
  const et_ops_manifest& m = kernels::quantized::manifest();
  for (std::size_t i = 0; i < m.record_count; ++i)
    if (op == et_ops_manifest_record(&m, i)->op) return et_ops_manifest_record(&m, i)->fn;
  FAIL("operator not in the manifest: " << op);
  return nullptr;
}

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_KERNELS_QUANTIZED_STREAMING_REFERENCE_H
