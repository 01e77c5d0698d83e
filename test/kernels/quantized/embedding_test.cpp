// embedding_byte / 2bit / 4bit, .out and .dtype_out (reference §6): the
// worked examples of §11.9-§11.11 bit for bit, a randomized comparison
// against a plain scalar model of §6.4 (packing done here, decoding never
// shared with the kernel), strided layouts, empty cases and every error of
// §6.5 for all six overloads.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
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
using et_ops::test::for_each_simd_target;
using et_ops::test::widen;
using et_ops::test::logical_values;
using et_ops::test::make_tensor;
using et_ops::test::Owned;
using et_ops::test::require_error;
namespace q = et_ops::kernels::quantized;

enum class Op { Byte, ByteDtype, TwoBit, TwoBitDtype, FourBit, FourBitDtype };
const Op kAllOps[] = {Op::Byte, Op::ByteDtype, Op::TwoBit, Op::TwoBitDtype, Op::FourBit, Op::FourBitDtype};

bool is_dtype_out(Op op) { return op == Op::ByteDtype || op == Op::TwoBitDtype || op == Op::FourBitDtype; }
int per_byte(Op op) {
  if (op == Op::Byte || op == Op::ByteDtype) return 1;
  return (op == Op::TwoBit || op == Op::TwoBitDtype) ? 4 : 2;
}

// Calls one of the six overloads; `dtype` is ignored by the .out ones.
bool call(KernelContext& ctx, Op op, TensorRef weight, TensorRef scales, std::optional<TensorRef> zps,
          TensorRef indices, TensorRef out, std::optional<DType> dtype = std::nullopt, int64_t qmin = -128,
          int64_t qmax = 127) {
  switch (op) {
    case Op::Byte: return q::embedding_byte_out(ctx, weight, scales, zps, qmin, qmax, indices, out);
    case Op::ByteDtype: return q::embedding_byte_dtype_out(ctx, weight, scales, zps, qmin, qmax, indices, dtype, out);
    case Op::TwoBit: return q::embedding_2bit_out(ctx, weight, scales, zps, qmin, qmax, indices, out);
    case Op::TwoBitDtype: return q::embedding_2bit_dtype_out(ctx, weight, scales, zps, qmin, qmax, indices, dtype, out);
    case Op::FourBit: return q::embedding_4bit_out(ctx, weight, scales, zps, qmin, qmax, indices, out);
    case Op::FourBitDtype:
      return q::embedding_4bit_dtype_out(ctx, weight, scales, zps, qmin, qmax, indices, dtype, out);
  }
  return false;
}

template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, float>) return static_cast<float>(v);
  else return T::from_float(static_cast<float>(v));
}

template <typename T>
std::vector<T> floats(std::initializer_list<double> values) {
  std::vector<T> out;
  for (double v : values) out.push_back(from_double<T>(v));
  return out;
}

template <typename T>
void check_bits(const std::vector<T>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << widen(got[i]) << ", expected " << expected[i]);
    CHECK(bits_of(got[i]) == bits_of(from_double<T>(expected[i])));
  }
}

// ---- worked examples ----

TEST_CASE("embedding_byte: worked examples of §11.9", "[embedding]") {
  SECTION("B1: zero points, 2-D indices, .out and .dtype_out") {
    Owned<uint8_t> weight({3, 2}, {10, 20, 30, 40, 0, 255});
    Owned<float> scales({3}, {0.5f, 0.25f, 0.1f});
    Owned<float> zps({3}, {10.0f, 0.0f, 128.0f});
    Owned<int64_t> indices({1, 2}, {2, 0});
    const std::vector<double> expected{-12.800000190734863, 12.699999809265137, 0.0, 5.0};
    for (Op op : {Op::Byte, Op::ByteDtype}) {
      Owned<float> out({1, 2, 2}, Owned<float>::filled({1, 2, 2}, -1.0f));
      KernelContext ctx;
      REQUIRE(call(ctx, op, weight, scales, zps.ref(), indices, out));
      check_bits(out.values, expected);
    }
  }
  SECTION("B2: groups, no zero points, int8 weight") {
    Owned<int8_t> weight({1, 4}, {-4, 2, 6, -8});
    Owned<float> scales({1, 2}, {0.5f, 2.0f});
    Owned<int64_t> indices({2}, {0, 0});
    Owned<float> out({2, 4}, Owned<float>::filled({2, 4}, 0.0f));
    KernelContext ctx;
    REQUIRE(call(ctx, Op::Byte, weight, scales, std::nullopt, indices, out));
    check_bits(out.values, {-2, 1, 12, -16, -2, 1, 12, -16});
  }
  SECTION("B3: f16 scales, an f16 tie rounds to even before widening (D16)") {
    Owned<uint8_t> weight({1, 2}, {3, 7});
    Owned<Half> scales({1}, {Half::from_float(0.1f)});
    Owned<int64_t> indices({1}, {0});
    Owned<float> out32({1, 2}, {0.0f, 0.0f});
    KernelContext ctx;
    REQUIRE(call(ctx, Op::ByteDtype, weight, scales, std::nullopt, indices, out32, DType::Float32));
    check_bits(out32.values, {0.2998046875, 0.69970703125});
    Owned<Half> out16({1, 2}, floats<Half>({0, 0}));
    REQUIRE(call(ctx, Op::ByteDtype, weight, scales, std::nullopt, indices, out16, std::nullopt));
    check_bits(out16.values, {0.2998046875, 0.69970703125});
    Owned<Half> out16b({1, 2}, floats<Half>({0, 0}));
    REQUIRE(call(ctx, Op::Byte, weight, scales, std::nullopt, indices, out16b));
    check_bits(out16b.values, {0.2998046875, 0.69970703125});
  }
}

TEST_CASE("embedding_4bit: worked examples of §11.10", "[embedding]") {
  Owned<uint8_t> weight({3, 2}, {89, 239, 163, 72, 11, 126});
  Owned<int64_t> indices({3}, {0, 2, 1});
  Owned<int32_t> indices32({3}, {0, 2, 1});
  SECTION("N1: per-row scales and zero points") {
    Owned<float> scales({3}, {0.5f, 1.0f, 1.5f});
    Owned<float> zps({3}, {1.0f, -5.0f, 0.0f});
    const std::vector<double> expected{-2, 0, 2.5, 3, -12, 4.5, -1.5, 9, 7, 0, 1, 5};
    for (Op op : {Op::FourBit, Op::FourBitDtype}) {
      Owned<float> out({3, 4}, Owned<float>::filled({3, 4}, 0.0f));
      KernelContext ctx;
      REQUIRE(call(ctx, op, weight, scales, zps.ref(), indices, out));
      check_bits(out.values, expected);
      Owned<float> out2({3, 4}, Owned<float>::filled({3, 4}, 0.0f));
      REQUIRE(call(ctx, op, weight, scales, zps.ref(), indices32, out2, DType::Float32));
      check_bits(out2.values, expected);
    }
  }
  SECTION("N2: two groups") {
    Owned<float> scales({3, 2}, {0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f});
    Owned<float> zps({3, 2}, {1, -5, 0, 2, -3, -1});
    Owned<float> out({3, 4}, Owned<float>::filled({3, 4}, 0.0f));
    KernelContext ctx;
    REQUIRE(call(ctx, Op::FourBit, weight, scales, zps.ref(), indices, out));
    check_bits(out.values, {-2, 0, 11, 12, -12.5, 15, 0, 21, 3, -7.5, -12, -4});
  }
}

TEST_CASE("embedding_2bit: worked examples of §11.11", "[embedding]") {
  SECTION("W1: per-row scales and zero points") {
    Owned<uint8_t> weight({3, 1}, {236, 134, 228});
    Owned<float> scales({3}, {0.5f, 1.0f, 1.5f});
    Owned<float> zps({3}, {1.0f, -2.0f, 0.0f});
    Owned<int64_t> indices({3}, {0, 2, 1});
    for (Op op : {Op::TwoBit, Op::TwoBitDtype}) {
      Owned<float> out({3, 4}, Owned<float>::filled({3, 4}, 0.0f));
      KernelContext ctx;
      REQUIRE(call(ctx, op, weight, scales, zps.ref(), indices, out));
      check_bits(out.values, {-1.5, 0, -0.5, 0, -3, -1.5, 0, 1.5, 2, 1, 0, 2});
    }
  }
  SECTION("W2: two groups, no zero points") {
    Owned<uint8_t> weight({1, 2}, {228, 27});
    Owned<float> scales({1, 2}, {1.5f, 0.25f});
    Owned<int32_t> indices({1}, {0});
    Owned<float> out({1, 8}, Owned<float>::filled({1, 8}, 0.0f));
    KernelContext ctx;
    REQUIRE(call(ctx, Op::TwoBit, weight, scales, std::nullopt, indices, out));
    check_bits(out.values, {-3, -1.5, 0, 1.5, 0.25, 0, -0.25, -0.5});
  }
}

// ---- randomized comparison against a plain model ----

// Decoded weights [R, E] packed the way §6.2 describes.
std::vector<uint8_t> pack(const std::vector<int>& decoded, int64_t rows, int64_t dim, int elements_per_byte) {
  if (elements_per_byte == 1) return std::vector<uint8_t>(decoded.begin(), decoded.end());
  std::vector<uint8_t> packed(static_cast<std::size_t>(rows * dim / elements_per_byte), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < dim; ++j) {
      const int v = decoded[static_cast<std::size_t>(r * dim + j)];
      uint8_t& byte = packed[static_cast<std::size_t>((r * dim + j) / elements_per_byte)];
      if (elements_per_byte == 2) byte = static_cast<uint8_t>(byte | ((v + 8) << (j % 2 == 0 ? 4 : 0)));
      else byte = static_cast<uint8_t>(byte | ((v + 2) << (2 * (j % 4))));
    }
  return packed;
}

// O( P( fl32( P(fl32(w - zp)) * s ) ) ), or without zero points O( P(fl32(w * s)) ).
template <typename P, typename O>
O model_element(int w, float s, std::optional<float> zp) {
  auto in_p = [](float v) { return widen(from_double<P>(v)); };  // exact: v is a binary32 value
  float value;
  if (zp) {
    const float shifted = in_p(static_cast<float>(w) - *zp);
    value = in_p(shifted * s);
  } else {
    value = in_p(static_cast<float>(w) * s);
  }
  if constexpr (std::is_same_v<O, float>) return value;
  else return O::from_float(value);
}

struct RandomCase {
  Op op;
  int64_t rows, dim, groups;
  bool with_zero_points;
  bool signed_weight;
  bool int32_indices;
  std::vector<int64_t> index_sizes;
  std::vector<uint8_t> weight_order, scale_order, index_order, out_order;
};

template <typename P, typename O>
void run_random_case(const RandomCase& c, std::mt19937_64& rng) {
  const int epb = per_byte(c.op);
  const int lo = epb == 1 ? (c.signed_weight ? -128 : 0) : (epb == 2 ? -8 : -2);
  const int hi = epb == 1 ? (c.signed_weight ? 127 : 255) : (epb == 2 ? 7 : 1);
  std::vector<int> decoded(static_cast<std::size_t>(c.rows * c.dim));
  for (auto& v : decoded) v = std::uniform_int_distribution<int>(lo, hi)(rng);

  const std::vector<int64_t> scale_sizes =
      c.groups == 0 ? std::vector<int64_t>{c.rows} : std::vector<int64_t>{c.rows, c.groups};
  const int64_t groups = std::max<int64_t>(c.groups, 1);
  std::vector<P> scales(static_cast<std::size_t>(c.rows * groups)), zps(scales.size());
  for (auto& s : scales) s = from_double<P>(std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng),
                                                      std::uniform_int_distribution<int>(-12, 3)(rng)));
  for (auto& z : zps) {
    const double whole = std::uniform_int_distribution<int>(-20, 20)(rng);
    z = from_double<P>(std::uniform_int_distribution<int>(0, 2)(rng) == 0
                           ? whole + std::uniform_real_distribution<double>(-1.0, 1.0)(rng)
                           : whole);
  }
  int64_t positions = 1;
  for (auto s : c.index_sizes) positions *= s;
  std::vector<int64_t> index_values(static_cast<std::size_t>(positions));
  for (auto& i : index_values) i = std::uniform_int_distribution<int64_t>(0, c.rows - 1)(rng);

  std::vector<int64_t> out_sizes = c.index_sizes;
  out_sizes.push_back(c.dim);
  std::unique_ptr<Owned<uint8_t>> weight_u8;
  std::unique_ptr<Owned<int8_t>> weight_i8;
  const std::vector<int64_t> weight_sizes{c.rows, c.dim / epb};
  if (c.signed_weight)
    weight_i8 = make_tensor<int8_t>(weight_sizes, std::vector<int8_t>(decoded.begin(), decoded.end()), c.weight_order);
  else
    weight_u8 = make_tensor<uint8_t>(weight_sizes, pack(decoded, c.rows, c.dim, epb), c.weight_order);
  const TensorRef weight = c.signed_weight ? weight_i8->ref() : weight_u8->ref();
  auto scale_t = make_tensor<P>(scale_sizes, scales, c.groups == 0 ? std::vector<uint8_t>{} : c.scale_order);
  auto zp_t = make_tensor<P>(scale_sizes, zps, c.groups == 0 ? std::vector<uint8_t>{} : c.scale_order);
  std::unique_ptr<Owned<int32_t>> idx32;
  std::unique_ptr<Owned<int64_t>> idx64;
  if (c.int32_indices)
    idx32 = make_tensor<int32_t>(c.index_sizes, std::vector<int32_t>(index_values.begin(), index_values.end()),
                              c.index_order);
  else
    idx64 = make_tensor<int64_t>(c.index_sizes, index_values, c.index_order);
  const TensorRef indices = c.int32_indices ? idx32->ref() : idx64->ref();
  int64_t out_numel = positions * c.dim;
  auto out = make_tensor<O>(out_sizes, std::vector<O>(static_cast<std::size_t>(out_numel), from_double<O>(-999.0)),
                         c.out_order);

  KernelContext ctx;
  const std::optional<DType> dtype =
      std::uniform_int_distribution<int>(0, 1)(rng) ? std::optional<DType>(et_ops::test::dtype_of<O>()) : std::nullopt;
  const bool ok = call(ctx, c.op, weight, *scale_t, c.with_zero_points ? std::optional<TensorRef>(*zp_t) : std::nullopt,
                       indices, *out, dtype);
  INFO("message: " << ctx.message());
  REQUIRE(ok);
  const std::vector<O> got = logical_values(*out);
  const int64_t group_size = c.dim / groups;
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t j = 0; j < c.dim; ++j) {
      const int64_t r = index_values[static_cast<std::size_t>(p)];
      const std::size_t param = static_cast<std::size_t>(r * groups + j / group_size);
      const std::optional<float> zp = c.with_zero_points ? std::optional<float>(widen(zps[param])) : std::nullopt;
      const O expected =
          model_element<P, O>(decoded[static_cast<std::size_t>(r * c.dim + j)], widen(scales[param]), zp);
      const O actual = got[static_cast<std::size_t>(p * c.dim + j)];
      if (bits_of(actual) != bits_of(expected)) {
        INFO("position " << p << " element " << j << ": got " << widen(actual) << ", expected " << widen(expected));
        REQUIRE(bits_of(actual) == bits_of(expected));
      }
    }
}

template <typename F>
void with_float_type(DType t, F&& f) {
  if (t == DType::Float16) f(Half{});
  else if (t == DType::BFloat16) f(BFloat16{});
  else f(0.0f);
}

std::vector<uint8_t> random_order(std::size_t rank, std::mt19937_64& rng) {
  std::vector<uint8_t> order(rank);
  for (std::size_t d = 0; d < rank; ++d) order[d] = static_cast<uint8_t>(d);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

TEST_CASE("embedding: randomized against the §6.4 model, all overloads and dtypes", "[embedding]") {
  auto rng = et_ops::test::seeded_rng(0xE3B);
  const DType floats_[] = {DType::Float32, DType::Float16, DType::BFloat16};
  for (int trial = 0; trial < 1500; ++trial) {
    RandomCase c;
    c.op = kAllOps[trial % 6];
    const int epb = per_byte(c.op);
    c.rows = std::uniform_int_distribution<int64_t>(1, 9)(rng);
    c.dim = epb * std::uniform_int_distribution<int64_t>(0, 24)(rng);
    std::vector<int64_t> divisors;
    for (int64_t g = 1; g <= std::max<int64_t>(c.dim, 1); ++g)
      if (c.dim % g == 0) divisors.push_back(g);
    c.groups = std::uniform_int_distribution<int>(0, 2)(rng) == 0
                   ? 0
                   : divisors[std::uniform_int_distribution<std::size_t>(0, divisors.size() - 1)(rng)];
    c.with_zero_points = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    c.signed_weight = epb == 1 && std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    c.int32_indices = epb != 1 && std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    const int index_rank = std::uniform_int_distribution<int>(0, 3)(rng);
    for (int d = 0; d < index_rank; ++d) c.index_sizes.push_back(std::uniform_int_distribution<int64_t>(0, 4)(rng));
    const bool strided = trial % 3 == 0;
    if (strided) {
      c.weight_order = random_order(2, rng);
      c.scale_order = random_order(2, rng);
      c.index_order = random_order(c.index_sizes.size(), rng);
      c.out_order = random_order(c.index_sizes.size() + 1, rng);
    }
    const DType p = floats_[std::uniform_int_distribution<int>(0, 2)(rng)];
    const DType o = is_dtype_out(c.op) ? floats_[std::uniform_int_distribution<int>(0, 2)(rng)] : p;
    INFO("trial " << trial << " op " << static_cast<int>(c.op) << " rows " << c.rows << " dim " << c.dim
                  << " groups " << c.groups << " P " << et_ops::dtype_name(p) << " O " << et_ops::dtype_name(o)
                  << " zp " << c.with_zero_points << " strided " << strided);
    with_float_type(p, [&](auto p_value) {
      with_float_type(o, [&](auto o_value) {
        run_random_case<decltype(p_value), decltype(o_value)>(c, rng);
      });
    });
  }
}

TEST_CASE("embedding: float32 tables, gathered with the vector dequantize, on every SIMD target", "[embedding]") {
  auto rng = et_ops::test::seeded_rng(0xF32);
  for_each_simd_target([&] {
    for (int trial = 0; trial < 60; ++trial) {
      RandomCase c;
      c.op = kAllOps[trial % 6];
      const int epb = per_byte(c.op);
      c.rows = std::uniform_int_distribution<int64_t>(1, 9)(rng);
      c.dim = epb * std::uniform_int_distribution<int64_t>(1, 80)(rng);
      c.groups = trial % 4 == 0 ? 0 : (c.dim % 2 == 0 ? 2 : 1);
      c.with_zero_points = trial % 2 == 0;
      c.signed_weight = epb == 1 && trial % 3 == 0;
      c.int32_indices = false;
      c.index_sizes = {std::uniform_int_distribution<int64_t>(1, 5)(rng)};
      INFO("trial " << trial << " op " << static_cast<int>(c.op) << " dim " << c.dim << " groups " << c.groups);
      run_random_case<float, float>(c, rng);
    }
  });
}

TEST_CASE("embedding: every decoded value of 4bit and 2bit bytes", "[embedding]") {
  // All 256 byte values in one row; scale 1 and no zero points give the
  // decoded integers themselves.
  std::vector<uint8_t> all(256);
  for (int b = 0; b < 256; ++b) all[static_cast<std::size_t>(b)] = static_cast<uint8_t>(b);
  Owned<uint8_t> weight({1, 256}, all);
  Owned<float> scales({1}, {1.0f});
  Owned<int64_t> index({}, {0});  // 0-dim indices: out is [E]
  Owned<float> out4({512}, Owned<float>::filled({512}, 0.0f));
  Owned<float> out2({1024}, Owned<float>::filled({1024}, 0.0f));
  KernelContext ctx;
  REQUIRE(call(ctx, Op::FourBit, weight, scales, std::nullopt, index, out4));
  REQUIRE(call(ctx, Op::TwoBitDtype, weight, scales, std::nullopt, index, out2, DType::Float32));
  for (int b = 0; b < 256; ++b) {
    CHECK(out4.values[static_cast<std::size_t>(2 * b)] == static_cast<float>((b >> 4) - 8));
    CHECK(out4.values[static_cast<std::size_t>(2 * b + 1)] == static_cast<float>((b & 15) - 8));
    for (int i = 0; i < 4; ++i)
      CHECK(out2.values[static_cast<std::size_t>(4 * b + i)] == static_cast<float>(((b >> (2 * i)) & 3) - 2));
  }
}

TEST_CASE("embedding: group size 1 and unused quant ranges are accepted", "[embedding]") {
  Owned<uint8_t> weight({2, 3}, {1, 2, 3, 4, 5, 6});
  Owned<float> scales({2, 3}, {1.0f, 0.5f, 0.25f, 2.0f, 4.0f, 8.0f});  // gs = 1 (D21)
  Owned<int64_t> indices({1}, {1});
  Owned<float> out({1, 3}, {0, 0, 0});
  KernelContext ctx;
  REQUIRE(call(ctx, Op::Byte, weight, scales, std::nullopt, indices, out, std::nullopt, 0, 0));
  check_bits(out.values, {8, 20, 48});
  REQUIRE(call(ctx, Op::ByteDtype, weight, scales, std::nullopt, indices, out, std::nullopt, -100000, 100000));
}

TEST_CASE("embedding: empty index tensors and empty embeddings", "[embedding]") {
  Owned<uint8_t> weight({2, 2}, {1, 2, 3, 4});
  Owned<float> scales({2}, {1.0f, 1.0f});
  for (Op op : kAllOps) {
    const int64_t dim = 2 * per_byte(op);
    KernelContext ctx;
    Owned<int64_t> none({0}, {});
    Owned<float> out0({0, dim}, {});
    CHECK(call(ctx, op, weight, scales, std::nullopt, none, out0));
    Owned<int64_t> none2({3, 0}, {});
    Owned<float> out1({3, 0, dim}, {});
    CHECK(call(ctx, op, weight, scales, std::nullopt, none2, out1));
    // No rows at all is fine while nothing is looked up.
    Owned<uint8_t> no_rows({0, 2}, {});
    Owned<float> no_scales({0}, {});
    CHECK(call(ctx, op, no_rows, no_scales, std::nullopt, none, out0));
    INFO("message: " << ctx.message());
    CHECK(ctx.ok());
    // E = 0: indices are still checked, nothing is written.
    Owned<uint8_t> empty_rows({2, 0}, {});
    Owned<int64_t> idx({2}, {1, 0});
    Owned<float> out_e({2, 0}, {});
    CHECK(call(ctx, op, empty_rows, scales, std::nullopt, idx, out_e));
    Owned<int64_t> bad({1}, {2});
    Owned<float> out_b({1, 0}, {});
    KernelContext bad_ctx;
    CHECK_FALSE(call(bad_ctx, op, empty_rows, scales, std::nullopt, bad, out_b));
    require_error(bad_ctx, {"indices"});
  }
}

// ---- errors (§6.5), for all six overloads ----

// A valid call for `op`; each error section breaks one thing.
struct ErrorFixture {
  Op op;
  int64_t dim;
  Owned<uint8_t> weight{{3, 2}, {1, 2, 3, 4, 5, 6}};
  Owned<float> scales{{3}, {0.5f, 1.0f, 2.0f}};
  Owned<float> zps{{3}, {0.0f, 1.0f, 2.0f}};
  Owned<int64_t> indices{{2}, {2, 0}};
  std::unique_ptr<Owned<float>> out;
  std::vector<float> untouched;

  explicit ErrorFixture(Op o) : op(o), dim(2 * per_byte(o)) {
    out = std::make_unique<Owned<float>>(std::vector<int64_t>{2, dim},
                                         Owned<float>::filled({2, dim}, -12345.0f));
    untouched = out->values;
  }
  KernelContext run(TensorRef w, TensorRef s, std::optional<TensorRef> z, TensorRef idx, TensorRef o,
                    std::optional<DType> dtype = std::nullopt, int64_t qmin = -128, int64_t qmax = 127) {
    KernelContext ctx;
    CHECK_FALSE(call(ctx, op, w, s, z, idx, o, dtype, qmin, qmax));
    CHECK(out->values == untouched);
    return ctx;
  }
};

TEST_CASE("embedding: errors of §6.5", "[embedding][errors]") {
  for (Op op : kAllOps) {
    DYNAMIC_SECTION("overload " << static_cast<int>(op)) {
      ErrorFixture f(op);
      {
        KernelContext ok_ctx;
        REQUIRE(call(ok_ctx, op, f.weight, f.scales, f.zps.ref(), f.indices, *f.out));
        f.untouched = f.out->values;
      }
      const TensorRef out = *f.out;
      // weight.dim() == 2
      Owned<uint8_t> w1({6}, {1, 2, 3, 4, 5, 6});
      require_error(f.run(w1, f.scales, std::nullopt, f.indices, out), {"weight"});
      Owned<uint8_t> w3({3, 2, 1}, {1, 2, 3, 4, 5, 6});
      require_error(f.run(w3, f.scales, std::nullopt, f.indices, out), {"weight"});
      // weight_scales.dim() in {1, 2}
      Owned<float> s0({}, {1.0f});
      require_error(f.run(f.weight, s0, std::nullopt, f.indices, out), {"weight_scales"});
      Owned<float> s3({3, 1, 1}, {1, 1, 1});
      require_error(f.run(f.weight, s3, std::nullopt, f.indices, out), {"weight_scales"});
      // weight_scales.size(0) == weight.size(0)
      Owned<float> s_rows({2}, {1, 1});
      require_error(f.run(f.weight, s_rows, std::nullopt, f.indices, out), {"weight_scales"});
      // groups must divide E; zero groups
      Owned<float> s_groups({3, 3}, Owned<float>::filled({3, 3}, 1.0f));
      require_error(f.run(f.weight, s_groups, std::nullopt, f.indices, out), {"weight_scales"});
      Owned<float> s_nogroups({3, 0}, {});
      require_error(f.run(f.weight, s_nogroups, std::nullopt, f.indices, out), {"weight_scales"});
      // weight dtype
      Owned<int16_t> w16({3, 2}, {1, 2, 3, 4, 5, 6});
      require_error(f.run(w16, f.scales, std::nullopt, f.indices, out), {"weight"});
      if (per_byte(op) != 1) {
        Owned<int8_t> w8({3, 2}, {1, 2, 3, 4, 5, 6});
        require_error(f.run(w8, f.scales, std::nullopt, f.indices, out), {"weight"});
      }
      // out dtype in {f32, f16, bf16}
      Owned<double> out64({2, f.dim}, Owned<double>::filled({2, f.dim}, 0.0));
      require_error(f.run(f.weight, f.scales, std::nullopt, f.indices, out64), {"out"});
      // weight_scales dtype in {f32, f16, bf16}
      Owned<double> s64({3}, {1, 1, 1});
      require_error(f.run(f.weight, s64, std::nullopt, f.indices, out), {"weight_scales"});
      Owned<int32_t> s_int({3}, {1, 1, 1});
      require_error(f.run(f.weight, s_int, std::nullopt, f.indices, out), {"weight_scales"});
      // zero points: rank, dtype (== scales dtype, D18), sizes
      Owned<float> z2({3, 1}, {0, 0, 0});
      require_error(f.run(f.weight, f.scales, z2.ref(), f.indices, out), {"weight_zero_points"});
      Owned<Half> z16({3}, floats<Half>({0, 0, 0}));
      require_error(f.run(f.weight, f.scales, z16.ref(), f.indices, out), {"weight_zero_points"});
      Owned<int64_t> z_int({3}, {0, 0, 0});
      require_error(f.run(f.weight, f.scales, z_int.ref(), f.indices, out), {"weight_zero_points"});
      Owned<float> z_short({2}, {0, 0});
      require_error(f.run(f.weight, f.scales, z_short.ref(), f.indices, out), {"weight_zero_points"});
      // ET's rule would accept zp dtype == out dtype; ours requires the scales' dtype.
      if (is_dtype_out(op)) {
        Owned<Half> s_half({3}, floats<Half>({0.5, 1, 2}));
        require_error(f.run(f.weight, s_half, f.zps.ref(), f.indices, out), {"weight_zero_points"});
      }
      // indices dtype
      Owned<int32_t> idx32({2}, {2, 0});
      if (per_byte(op) == 1) require_error(f.run(f.weight, f.scales, std::nullopt, idx32, out), {"indices"});
      Owned<int16_t> idx16({2}, {2, 0});
      require_error(f.run(f.weight, f.scales, std::nullopt, idx16, out), {"indices"});
      Owned<float> idx_f({2}, {2, 0});
      require_error(f.run(f.weight, f.scales, std::nullopt, idx_f, out), {"indices"});
      // weight_quant_min <= weight_quant_max
      require_error(f.run(f.weight, f.scales, std::nullopt, f.indices, out, std::nullopt, 5, 4),
                    {"weight_quant_min"});
      // .dtype_out: dtype must equal out's dtype
      if (is_dtype_out(op)) {
        require_error(f.run(f.weight, f.scales, std::nullopt, f.indices, out, DType::Float16), {"dtype"});
        require_error(f.run(f.weight, f.scales, std::nullopt, f.indices, out, DType::Float64), {"dtype"});
      } else {
        // .out: out dtype must equal the scales dtype (D17)
        Owned<Half> out16({2, f.dim}, Owned<Half>::filled({2, f.dim}, Half{}));
        require_error(f.run(f.weight, f.scales, std::nullopt, f.indices, out16), {"out"});
      }
      // every index in [0, R), for all six (D19)
      Owned<int64_t> too_big({2}, {3, 0});
      require_error(f.run(f.weight, f.scales, std::nullopt, too_big, out), {"indices"});
      Owned<int64_t> negative({2}, {0, -1});
      require_error(f.run(f.weight, f.scales, std::nullopt, negative, out), {"indices"});
      if (per_byte(op) != 1) {
        Owned<int32_t> too_big32({2}, {0, 3});
        require_error(f.run(f.weight, f.scales, std::nullopt, too_big32, out), {"indices"});
      }
      // out shape == indices.shape + [E]
      Owned<float> out_rank({2 * f.dim}, Owned<float>::filled({2 * f.dim}, 0.0f));
      require_error(f.run(f.weight, f.scales, std::nullopt, f.indices, out_rank), {"out"});
      Owned<float> out_dim({2, f.dim + 1}, Owned<float>::filled({2, f.dim + 1}, 0.0f));
      require_error(f.run(f.weight, f.scales, std::nullopt, f.indices, out_dim), {"out"});
      Owned<float> out_lead({3, f.dim}, Owned<float>::filled({3, f.dim}, 0.0f));
      require_error(f.run(f.weight, f.scales, std::nullopt, f.indices, out_lead), {"out"});
      Owned<float> out_big({1, 2, f.dim}, Owned<float>::filled({1, 2, f.dim}, 0.0f));
      require_error(f.run(f.weight, f.scales, std::nullopt, f.indices, out_big), {"out"});
      // scales of looked-up rows finite and > 0
      for (float bad : {0.0f, -1.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
        Owned<float> s_bad({3}, {0.5f, 1.0f, bad});
        require_error(f.run(f.weight, s_bad, std::nullopt, f.indices, out), {"weight_scales"});
      }
      Owned<Half> s16_bad({3}, floats<Half>({0.5, 1, 0}));
      Owned<Half> out16({2, f.dim}, Owned<Half>::filled({2, f.dim}, Half{}));
      require_error(f.run(f.weight, s16_bad, std::nullopt, f.indices, out16, DType::Float16), {"weight_scales"});
      // A bad scale in a row nobody looks up is not read.
      Owned<float> s_unused({3}, {0.5f, 0.0f, 2.0f});
      KernelContext ok_ctx;
      CHECK(call(ok_ctx, op, f.weight, s_unused, std::nullopt, f.indices, out));
    }
  }
}

}  // namespace
