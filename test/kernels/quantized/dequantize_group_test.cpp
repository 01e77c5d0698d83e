// dequantize_per_channel_group and dequantize_per_channel_group_4bit (.out):
// a worked example by hand, a randomized comparison against a plain scalar
// model of out = O(P(fl32(fl32(q - zp) * s))) under every Highway target
// (packing done here, decoding never shared with the kernel), strided
// layouts, the 4-bit overload equal to the byte one on the same integers,
// and every error naming its argument.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "et_ops/kernels/quantized.h"
#include "simd_targets.h"
#include "test_util.h"

namespace {

using et_ops::BFloat16;
using et_ops::DType;
using et_ops::Half;
using et_ops::KernelContext;
using et_ops::TensorRef;
using et_ops::test::bits_of;
using et_ops::test::dtype_of;
using et_ops::test::for_each_simd_target;
using et_ops::test::from_float;
using et_ops::test::widen;
using et_ops::test::logical_values;
using et_ops::test::make_tensor;
using et_ops::test::Owned;
using et_ops::test::require_error;
namespace q = et_ops::kernels::quantized;


// Integers in [-8, 7], two per byte: element 2m in the high nibble, +8 offset.
std::vector<uint8_t> pack_int4(const std::vector<int8_t>& values) {
  std::vector<uint8_t> packed(values.size() / 2);
  for (std::size_t m = 0; m < packed.size(); ++m)
    packed[m] = static_cast<uint8_t>(((values[2 * m] + 8) << 4) | (values[2 * m + 1] + 8));
  return packed;
}

TEST_CASE("dequantize_per_channel_group_4bit: worked example (embedding §11.10 N2's table)", "[group]") {
  // Bytes 89 = 0x59 -> (-3, 1), 239 = 0xEF -> (6, 7), ...
  Owned<uint8_t> weight({3, 2}, {89, 239, 163, 72, 11, 126});
  Owned<float> scales({3, 2}, {0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f});
  Owned<int64_t> zps({3, 2}, {1, -5, 0, 2, -3, -1});
  Owned<float> out({3, 4}, Owned<float>::filled({3, 4}, 0.0f));
  KernelContext ctx;
  REQUIRE(q::dequantize_per_channel_group_4bit_out(ctx, weight, scales, zps.ref(), -8, 7, 2, DType::Float32, out));
  CHECK(out.values == std::vector<float>{-2, 0, 11, 12, 3, -7.5f, -12, -4, -12.5f, 15, 0, 21});
  Owned<float> no_zp({3, 4}, Owned<float>::filled({3, 4}, 0.0f));
  REQUIRE(q::dequantize_per_channel_group_4bit_out(ctx, weight, scales, std::nullopt, -8, 7, 2, DType::Float32,
                                                   no_zp));
  CHECK(no_zp.values == std::vector<float>{-1.5f, 0.5f, 6, 7, 3, -7.5f, -8, 0, -20, 7.5f, -3, 18});
}

TEST_CASE("dequantize_per_channel_group: an f16 tie rounds to the scales' dtype before an f32 out", "[group]") {
  // 3 * f16(0.1) = 0.2999267578125 is an exact f16 tie: P rounds it to even.
  Owned<int8_t> weight({1, 2}, {3, 7});
  Owned<Half> scales({1, 1}, {Half::from_float(0.1f)});
  Owned<float> out({1, 2}, {0.0f, 0.0f});
  KernelContext ctx;
  REQUIRE(q::dequantize_per_channel_group_out(ctx, weight, scales, std::nullopt, -128, 127, DType::Int8, 2,
                                              DType::Float32, out));
  CHECK(out.values == std::vector<float>{0.2998046875f, 0.69970703125f});
}

// ---- randomized comparison against the scalar model ----

template <typename P, typename O>
O model(int64_t q, int64_t zp, P s) {
  const float product = static_cast<float>(q - zp) * widen(s);
  return from_float<O>(widen(from_float<P>(product)));
}

struct Case {
  int64_t rows, cols, group_size;
  DType zp_dtype;  // Int64 etc., or Float32 for "no zero points"
  bool four_bit, unsigned_input, transposed_out, strided_input;
};

template <typename Z>
std::unique_ptr<Owned<Z>> zero_points_of(const std::vector<int64_t>& values, const std::vector<int64_t>& sizes) {
  return make_tensor<Z>(sizes, std::vector<Z>(values.begin(), values.end()));
}

template <typename P, typename O>
void check_random_case(const Case& c, std::mt19937_64& rng) {
  INFO("rows " << c.rows << " cols " << c.cols << " group " << c.group_size << " 4bit " << c.four_bit
               << " unsigned " << c.unsigned_input << " zp " << static_cast<int>(c.zp_dtype) << " P "
               << static_cast<int>(dtype_of<P>()) << " O " << static_cast<int>(dtype_of<O>()));
  const int64_t groups = c.cols / c.group_size;
  const int lo = c.four_bit ? -8 : c.unsigned_input ? 0 : -128;
  const int hi = c.four_bit ? 7 : c.unsigned_input ? 255 : 127;
  std::uniform_int_distribution<int> value(lo, hi);
  std::uniform_real_distribution<float> scale(0.001f, 2.0f);
  std::vector<int64_t> ints(static_cast<std::size_t>(c.rows * c.cols));
  for (auto& v : ints) v = value(rng);
  std::vector<P> scale_values(static_cast<std::size_t>(c.rows * groups));
  for (auto& s : scale_values) s = from_float<P>(scale(rng));
  std::vector<int64_t> zp_values(scale_values.size(), 0);
  const bool has_zp = c.zp_dtype != DType::Float32;
  // int8 zero points hold the int8 part of a uint8 range.
  std::uniform_int_distribution<int> zp_value(c.zp_dtype == DType::Int8 ? std::max(lo, -128) : lo,
                                              c.zp_dtype == DType::Int8 ? std::min(hi, 127) : hi);
  if (has_zp)
    for (auto& z : zp_values) z = zp_value(rng);

  // Input, in its storage and layout.
  std::unique_ptr<Owned<uint8_t>> packed4;
  std::unique_ptr<Owned<int8_t>> signed8;
  std::unique_ptr<Owned<uint8_t>> unsigned8;
  const std::vector<uint8_t> transposed = c.strided_input ? std::vector<uint8_t>{1, 0} : std::vector<uint8_t>{};
  if (c.four_bit) {
    packed4 = make_tensor<uint8_t>({c.rows, c.cols / 2},
                                   pack_int4(std::vector<int8_t>(ints.begin(), ints.end())), transposed);
  } else if (c.unsigned_input) {
    unsigned8 = make_tensor<uint8_t>({c.rows, c.cols}, std::vector<uint8_t>(ints.begin(), ints.end()), transposed);
  } else {
    signed8 = make_tensor<int8_t>({c.rows, c.cols}, std::vector<int8_t>(ints.begin(), ints.end()), transposed);
  }
  auto scales = make_tensor<P>({c.rows, groups}, scale_values);
  std::unique_ptr<Owned<int8_t>> zp8;
  std::unique_ptr<Owned<int32_t>> zp32;
  std::unique_ptr<Owned<int64_t>> zp64;
  std::optional<TensorRef> zps;
  if (c.zp_dtype == DType::Int8) zps = (zp8 = zero_points_of<int8_t>(zp_values, {c.rows, groups}))->ref();
  if (c.zp_dtype == DType::Int32) zps = (zp32 = zero_points_of<int32_t>(zp_values, {c.rows, groups}))->ref();
  if (c.zp_dtype == DType::Int64) zps = (zp64 = zero_points_of<int64_t>(zp_values, {c.rows, groups}))->ref();

  std::vector<O> expected(ints.size());
  for (int64_t n = 0; n < c.rows; ++n)
    for (int64_t k = 0; k < c.cols; ++k) {
      const auto g = static_cast<std::size_t>(n * groups + k / c.group_size);
      const auto i = static_cast<std::size_t>(n * c.cols + k);
      expected[i] = model<P, O>(ints[i], zp_values[g], scale_values[g]);
    }

  for_each_simd_target([&] {
    const std::vector<uint8_t> out_order = c.transposed_out ? std::vector<uint8_t>{1, 0} : std::vector<uint8_t>{};
    auto out = make_tensor<O>({c.rows, c.cols}, std::vector<O>(ints.size(), from_float<O>(-1.0f)), out_order);
    KernelContext ctx;
    bool ok;
    if (c.four_bit)
      ok = q::dequantize_per_channel_group_4bit_out(ctx, *packed4, *scales, zps, -8, 7, c.group_size, dtype_of<O>(),
                                                    *out);
    else if (c.unsigned_input)
      ok = q::dequantize_per_channel_group_out(ctx, *unsigned8, *scales, zps, 0, 255, DType::UInt8, c.group_size,
                                               dtype_of<O>(), *out);
    else
      ok = q::dequantize_per_channel_group_out(ctx, *signed8, *scales, zps, -128, 127, DType::Int8, c.group_size,
                                               dtype_of<O>(), *out);
    INFO(ctx.message());
    REQUIRE(ok);
    const std::vector<O> got = logical_values(*out);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < got.size(); ++i) mismatches += bits_of(got[i]) != bits_of(expected[i]);
    CHECK(mismatches == 0);
  });
}

template <typename P>
void check_random_outputs(const Case& c, std::mt19937_64& rng) {
  check_random_case<P, float>(c, rng);
  check_random_case<P, Half>(c, rng);
  check_random_case<P, BFloat16>(c, rng);
}

TEST_CASE("dequantize_per_channel_group (both overloads): random tables match the scalar model", "[group]") {
  auto rng = et_ops::test::seeded_rng(24);
  const DType zp_kinds[] = {DType::Float32, DType::Int8, DType::Int32, DType::Int64};
  const int64_t shapes[][3] = {{3, 64, 32}, {5, 96, 32}, {2, 130, 2}, {4, 36, 12}, {1, 256, 256}, {7, 6, 3}};
  int variant = 0;
  for (const auto& shape : shapes)
    for (DType zp : zp_kinds)
      for (bool four_bit : {false, true}) {
        ++variant;
        const Case c{shape[0], shape[1], shape[2], zp, four_bit, !four_bit && variant % 3 == 0, variant % 4 == 1,
                     variant % 5 == 2};
        check_random_outputs<float>(c, rng);
        if (variant % 2 == 0) check_random_outputs<Half>(c, rng);
        if (variant % 3 == 0) check_random_outputs<BFloat16>(c, rng);
      }
}

TEST_CASE("dequantize_per_channel_group_4bit equals the byte overload on the same integers", "[group]") {
  auto rng = et_ops::test::seeded_rng(4);
  std::uniform_int_distribution<int> value(-8, 7);
  std::vector<int8_t> ints(8 * 128);
  for (auto& v : ints) v = static_cast<int8_t>(value(rng));
  Owned<int8_t> bytes({8, 128}, ints);
  Owned<uint8_t> nibbles({8, 64}, pack_int4(ints));
  std::vector<float> scale_values(8 * 4);
  for (std::size_t i = 0; i < scale_values.size(); ++i) scale_values[i] = 0.01f * static_cast<float>(i + 1);
  Owned<float> scales({8, 4}, scale_values);
  for_each_simd_target([&] {
    Owned<float> from_bytes({8, 128}, Owned<float>::filled({8, 128}, 0.0f));
    Owned<float> from_nibbles({8, 128}, Owned<float>::filled({8, 128}, 1.0f));
    KernelContext ctx;
    REQUIRE(q::dequantize_per_channel_group_out(ctx, bytes, scales, std::nullopt, -8, 7, DType::Int8, 32,
                                                DType::Float32, from_bytes));
    REQUIRE(q::dequantize_per_channel_group_4bit_out(ctx, nibbles, scales, std::nullopt, -8, 7, 32, DType::Float32,
                                                     from_nibbles));
    CHECK(from_bytes.values == from_nibbles.values);
  });
}

TEST_CASE("dequantize_per_channel_group: a group larger than the row with one scale per row is the row", "[group]") {
  Owned<int8_t> weight({2, 3}, {1, 2, 3, -1, -2, -3});
  Owned<float> scales({2, 1}, {0.5f, 2.0f});
  Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0.0f));
  KernelContext ctx;
  REQUIRE(q::dequantize_per_channel_group_out(ctx, weight, scales, std::nullopt, -128, 127, DType::Int8, 128,
                                              DType::Float32, out));
  CHECK(out.values == std::vector<float>{0.5f, 1, 1.5f, -2, -4, -6});
}

TEST_CASE("dequantize_per_channel_group: empty rows succeed and write nothing", "[group]") {
  Owned<int8_t> weight({0, 4}, {});
  Owned<float> scales({0, 2}, {});
  Owned<float> out({0, 4}, {});
  KernelContext ctx;
  CHECK(q::dequantize_per_channel_group_out(ctx, weight, scales, std::nullopt, -128, 127, DType::Int8, 2,
                                            DType::Float32, out));
}

// ---- errors ----

struct Fixture {
  Owned<int8_t> weight{{2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}};
  Owned<uint8_t> packed{{2, 2}, {0x12, 0x34, 0x56, 0x78}};
  Owned<float> scales{{2, 2}, {1.0f, 1.0f, 1.0f, 1.0f}};
  Owned<int64_t> zps{{2, 2}, {0, 0, 0, 0}};
  Owned<float> out{{2, 4}, Owned<float>::filled({2, 4}, 0.0f)};
};

void expect_byte_error(TensorRef input, TensorRef scales, std::optional<TensorRef> zps, int64_t qmin, int64_t qmax,
                       DType dtype, int64_t group_size, DType output_dtype, TensorRef out,
                       std::initializer_list<std::string_view> fragments) {
  KernelContext ctx;
  CHECK_FALSE(q::dequantize_per_channel_group_out(ctx, input, scales, zps, qmin, qmax, dtype, group_size,
                                                  output_dtype, out));
  require_error(ctx, fragments);
}

void expect_4bit_error(TensorRef input, TensorRef scales, std::optional<TensorRef> zps, int64_t qmin, int64_t qmax,
                       int64_t group_size, DType output_dtype, TensorRef out,
                       std::initializer_list<std::string_view> fragments) {
  KernelContext ctx;
  CHECK_FALSE(q::dequantize_per_channel_group_4bit_out(ctx, input, scales, zps, qmin, qmax, group_size, output_dtype,
                                                       out));
  require_error(ctx, fragments);
}

TEST_CASE("dequantize_per_channel_group: every error names its argument", "[group][errors]") {
  Fixture f;
  const auto I8 = DType::Int8;
  const auto F32 = DType::Float32;
  SECTION("input") {
    Owned<int8_t> flat({8}, {1, 2, 3, 4, 5, 6, 7, 8});
    expect_byte_error(flat, f.scales, std::nullopt, -128, 127, I8, 2, F32, f.out, {"input must be 2-D"});
    Owned<int16_t> wide({2, 4}, std::vector<int16_t>(8, 0));
    expect_byte_error(wide, f.scales, std::nullopt, -128, 127, DType::Int16, 2, F32, f.out, {"input", "int16"});
    expect_byte_error(f.weight, f.scales, std::nullopt, 0, 255, DType::UInt8, 2, F32, f.out,
                      {"input dtype int8", "dtype uint8"});
    expect_4bit_error(f.weight, f.scales, std::nullopt, -8, 7, 2, F32, f.out, {"input", "uint8"});
  }
  SECTION("quant range") {
    expect_byte_error(f.weight, f.scales, std::nullopt, -129, 127, I8, 2, F32, f.out, {"quant_min -129"});
    expect_byte_error(f.weight, f.scales, std::nullopt, 5, 4, I8, 2, F32, f.out, {"quant_min 5 > quant_max 4"});
    expect_4bit_error(f.packed, f.scales, std::nullopt, -9, 7, 2, F32, f.out, {"quant_min -9", "int4"});
    expect_4bit_error(f.packed, f.scales, std::nullopt, -8, 8, 2, F32, f.out, {"quant_max 8", "int4"});
  }
  SECTION("group_size and scales") {
    expect_byte_error(f.weight, f.scales, std::nullopt, -128, 127, I8, 0, F32, f.out, {"group_size must be >= 1"});
    expect_byte_error(f.weight, f.scales, std::nullopt, -128, 127, I8, 3, F32, f.out,
                      {"group_size 3 does not divide", "K = 4"});
    expect_byte_error(f.weight, f.scales, std::nullopt, -128, 127, I8, 1, F32, f.out, {"scales has 4 elements"});
    Owned<double> f64({2, 2}, {1, 1, 1, 1});
    expect_byte_error(f.weight, f64, std::nullopt, -128, 127, I8, 2, F32, f.out, {"scales must be float32", "float64"});
    for (float bad : {0.0f, -1.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
      Owned<float> scales({2, 2}, {1.0f, 1.0f, bad, 1.0f});
      expect_byte_error(f.weight, scales, std::nullopt, -128, 127, I8, 2, F32, f.out,
                        {"scales[2] must be finite and > 0"});
      expect_4bit_error(f.packed, scales, std::nullopt, -8, 7, 2, F32, f.out, {"scales[2] must be finite and > 0"});
    }
  }
  SECTION("zero_points") {
    Owned<float> float_zps({2, 2}, {0, 0, 0, 0});
    expect_byte_error(f.weight, f.scales, float_zps.ref(), -128, 127, I8, 2, F32, f.out, {"zero_points must be int8"});
    Owned<int64_t> short_zps({3}, {0, 0, 0});
    expect_4bit_error(f.packed, f.scales, short_zps.ref(), -8, 7, 2, F32, f.out, {"zero_points has 3 elements"});
  }
  SECTION("out") {
    Owned<double> f64_out({2, 4}, std::vector<double>(8, 0.0));
    expect_byte_error(f.weight, f.scales, std::nullopt, -128, 127, I8, 2, DType::Float64, f64_out,
                      {"out must be float32", "float64"});
    expect_byte_error(f.weight, f.scales, std::nullopt, -128, 127, I8, 2, DType::Float16, f.out,
                      {"out dtype float32 does not match output_dtype float16"});
    Owned<float> wrong({2, 5}, Owned<float>::filled({2, 5}, 0.0f));
    expect_4bit_error(f.packed, f.scales, std::nullopt, -8, 7, 2, F32, wrong, {"out has shape", "expected [2, 4]"});
  }
}

}  // namespace
