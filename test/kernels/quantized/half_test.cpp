// et_ops::Half and et_ops::BFloat16 (include/et_ops/half.h) against
// independent conversions: GCC's _Float16 (round to nearest even) for
// binary16, and a distance comparison in binary64 for bfloat16. Exhaustive
// over every 16-bit pattern, every rounding midpoint and its neighbours,
// and a dense sample of all binary32 patterns.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "streaming_reference.h"

namespace {

using et_ops::BFloat16;
using et_ops::Half;
using namespace et_ops::test;

uint32_t bits_of_float(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Equal bit patterns, or both NaN with the same sign (NaN payload handling
// is not part of the contract beyond "NaN stays NaN").
bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) && std::signbit(a) == std::signbit(b);
  return bits_of_float(a) == bits_of_float(b);
}

bool is_half_nan(uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }

void check_half_from_float(float f) {
  const uint16_t got = Half::from_float(f).bits;
  const uint16_t want = ref_float_to_half(f);
  if (std::isnan(f)) {
    if (!is_half_nan(got) || (got & 0x8000u) != (want & 0x8000u)) FAIL("NaN " << bits_of_float(f) << " -> " << got);
    return;
  }
  if (got != want) FAIL("Half::from_float(" << fmt::format("{}", f) << ", bits " << bits_of_float(f) << ") = " << got
                                            << ", expected " << want);
}

void check_bfloat16_from_float(float f) {
  const uint16_t got = BFloat16::from_float(f).bits;
  const uint16_t want = ref_float_to_bfloat16(f);
  if (got != want) FAIL("BFloat16::from_float(" << fmt::format("{}", f) << ", bits " << bits_of_float(f) << ") = "
                                                << got << ", expected " << want);
}

TEST_CASE("Half: every binary16 pattern widens exactly and round-trips") {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float wide = Half::from_bits(h).to_float();
    const float want = ref_half_to_float(h);
    if (!same_float(wide, want)) FAIL("Half bits " << b << " -> " << fmt::format("{}", wide) << ", expected " << fmt::format("{}", want));
    if (!is_half_nan(h)) {
      if (Half::from_float(wide).bits != h) FAIL("round trip of half bits " << b);
    } else if (!is_half_nan(Half::from_float(wide).bits)) {
      FAIL("NaN half bits " << b << " did not stay NaN");
    }
  }
}

TEST_CASE("Half: every rounding midpoint and its neighbours round to nearest even") {
  // Between consecutive finite halves (and from 65504 to the overflow
  // threshold 65520) the midpoint is a float; test it and the floats beside it.
  for (uint32_t b = 0; b < 0x7C00; ++b) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const float lo = ref_half_to_float(static_cast<uint16_t>(b | sign));
      const float hi = b + 1 < 0x7C00 ? ref_half_to_float(static_cast<uint16_t>((b + 1) | sign)) : (sign ? -65536.0f : 65536.0f);
      const float mid = static_cast<float>((static_cast<double>(lo) + static_cast<double>(hi)) / 2);
      REQUIRE(static_cast<double>(mid) == (static_cast<double>(lo) + static_cast<double>(hi)) / 2);
      check_half_from_float(lo);
      check_half_from_float(mid);
      check_half_from_float(std::nextafter(mid, 0.0f));
      check_half_from_float(std::nextafter(mid, sign ? -INFINITY : INFINITY));
    }
  }
}

TEST_CASE("Half: a dense sample of every binary32 pattern, subnormals, overflow, NaN") {
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 509) check_half_from_float(float_of_bits(static_cast<uint32_t>(u)));
  // Every float below the smallest half subnormal's midpoint and around it.
  for (uint32_t u = 0x32000000u - 4096; u < 0x33800000u + 4096; u += 3) {
    check_half_from_float(float_of_bits(u));
    check_half_from_float(float_of_bits(u | 0x80000000u));
  }
  for (float f : {INFINITY, -INFINITY, NAN, -NAN, 65519.998f, 65520.0f, 1e10f, -1e10f, 5.96e-8f, 2.98e-8f, 2.99e-8f})
    check_half_from_float(f);
}

TEST_CASE("BFloat16: every pattern widens exactly and round-trips") {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float wide = BFloat16::from_bits(h).to_float();
    REQUIRE(bits_of_float(wide) == static_cast<uint32_t>(b) << 16);
    const bool nan = (b & 0x7F80u) == 0x7F80u && (b & 0x7Fu) != 0;
    if (!nan) {
      if (BFloat16::from_float(wide).bits != h) FAIL("round trip of bfloat16 bits " << b);
    } else {
      CHECK(BFloat16::from_float(wide).bits == ((b & 0x8000u) | 0x7FC0u));
    }
  }
}

TEST_CASE("BFloat16: every rounding midpoint, its neighbours and a dense sample") {
  for (uint32_t upper = 0; upper <= 0xFFFF; ++upper) {
    for (uint32_t lower : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu})
      check_bfloat16_from_float(float_of_bits((upper << 16) | lower));
  }
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 509) check_bfloat16_from_float(float_of_bits(static_cast<uint32_t>(u)));
}

}  // namespace
