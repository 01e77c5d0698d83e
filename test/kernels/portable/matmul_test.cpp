// aten::mm.out, aten::addmm.out and aten::linear.out: hand-computed
// products, the documented float64 summation order bit for bit on every
// SIMD target (tails of every size, every layout, several blocks of rows
// and of the reduction), sums rounded once (just above a float32
// midpoint), bias broadcasting, zero sizes and errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "simd_targets.h"
#include "test_util.h"

namespace {
const std::vector<float> kA = {1, 2, 3, 4, 5, 6};     // [2, 3]
const std::vector<float> kB = {7, 8, 9, 10, 11, 12};  // [3, 2]
const std::vector<float> kAB = {58, 64, 139, 154};    // [2, 2]
}  // namespace

TEST_CASE("mm: a hand-computed product", "[portable][mm]") {
  Owned<float> a({2, 3}, kA);
  Owned<float> b({3, 2}, kB);
  Owned<float> out({2, 2}, {-1, -1, -1, -1});
  KernelContext ctx;
  REQUIRE(portable::mm_out(ctx, a, b, out));
  CHECK(out.logical() == kAB);
}

TEST_CASE("mm: every layout of every operand gives the same bits", "[portable][mm]") {
  auto rng = et_ops::test::seeded_rng(7);
  const auto a_values = et_ops::test::random_floats(rng, 5 * 7);
  const auto b_values = et_ops::test::random_floats(rng, 7 * 4);
  Owned<float> a({5, 7}, a_values);
  Owned<float> b({7, 4}, b_values);
  Owned<float> reference({5, 4}, Owned<float>::filled({5, 4}, 0));
  KernelContext ctx;
  REQUIRE(portable::mm_out(ctx, a, b, reference));
  // Against a float64 product of 7 terms.
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      double exact = 0;
      double magnitude = 0;
      for (int64_t p = 0; p < 7; ++p) {
        exact += static_cast<double>(a_values[i * 7 + p]) * b_values[p * 4 + j];
        magnitude += std::fabs(static_cast<double>(a_values[i * 7 + p]) * b_values[p * 4 + j]);
      }
      CHECK(std::fabs(reference.values[i * 4 + j] - exact) <= 1e-6 * magnitude);
    }
  const std::vector<uint8_t> row_major = {0, 1};
  const std::vector<uint8_t> column_major = {1, 0};
  for (const auto& a_order : {row_major, column_major})
    for (const auto& b_order : {row_major, column_major})
      for (const auto& out_order : {row_major, column_major}) {
        Owned<float> a2({5, 7}, a_values, a_order);
        Owned<float> b2({7, 4}, b_values, b_order);
        Owned<float> out({5, 4}, Owned<float>::filled({5, 4}, 0), out_order);
        REQUIRE(portable::mm_out(ctx, a2, b2, out));
        CHECK(bits_of(out.logical()) == bits_of(reference.values));
      }
}

TEST_CASE("mm: sums accumulate in float64, in order of the inner index", "[portable][mm]") {
  // (0 + 1e8) + 1 is exact in float64 (float32 would round it back to
  // 1e8), so - 1e8 leaves 1; (0 + 2^60) + 1 rounds back to 2^60 in
  // float64, so - 2^60 leaves 0.
  Owned<float> a({2, 3}, {1e8f, 1, -1e8f, 0x1p60f, 1, -0x1p60f});
  Owned<float> b({3, 1}, {1, 1, 1});
  Owned<float> out({2, 1}, {-1, -1});
  KernelContext ctx;
  REQUIRE(portable::mm_out(ctx, a, b, out));
  CHECK(out.values == std::vector<float>{1.0f, 0.0f});
}

TEST_CASE("mm: float64 sums pass beyond float32's range, rounded at the end, on every SIMD target",
          "[portable][mm][simd]") {
  // 2^127 + 2^127 - 2^127 is 2^127 in float64 (float32 sums would stay at
  // infinity); 2^127 + 2^127 rounds to +infinity, and its negation to
  // -infinity, on every target.
  const float big = 0x1p127f;
  Owned<float> a({3, 3}, {big, big, -big, big, big, 0, -big, -big, 0});
  Owned<float> b({3, 5}, Owned<float>::filled({3, 5}, 1));
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> expected;
  for (float v : {big, inf, -inf}) expected.insert(expected.end(), 5, v);
  et_ops::test::for_each_simd_target([&] {
    Owned<float> out({3, 5}, Owned<float>::filled({3, 5}, 0));
    KernelContext ctx;
    REQUIRE(portable::mm_out(ctx, a, b, out));
    CHECK(first_difference(out.values, expected) == -1);
  });
}

TEST_CASE("mm: zero sizes", "[portable][mm]") {
  KernelContext ctx;
  SECTION("no rows") {
    Owned<float> a({0, 3}, {});
    Owned<float> b({3, 2}, kB);
    Owned<float> out({0, 2}, {});
    CHECK(portable::mm_out(ctx, a, b, out));
  }
  SECTION("an empty inner dimension gives zeros") {
    Owned<float> a({2, 0}, {});
    Owned<float> b({0, 3}, {});
    Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 7));
    REQUIRE(portable::mm_out(ctx, a, b, out));
    CHECK(out.values == Owned<float>::filled({2, 3}, 0));
  }
  SECTION("no columns") {
    Owned<float> a({2, 3}, kA);
    Owned<float> b({3, 0}, {});
    Owned<float> out({2, 0}, {});
    CHECK(portable::mm_out(ctx, a, b, out));
  }
  CHECK(ctx.ok());
}

TEST_CASE("addmm: bias broadcasting, beta and alpha", "[portable][addmm]") {
  Owned<float> a({2, 3}, kA);
  Owned<float> b({3, 2}, kB);
  Owned<float> out({2, 2}, Owned<float>::filled({2, 2}, 0));
  KernelContext ctx;
  SECTION("bias [2] on every row") {
    Owned<float> bias({2}, {1, 2});
    REQUIRE(portable::addmm_out(ctx, bias, a, b, 1, 1, out));
    CHECK(out.logical() == std::vector<float>{59, 66, 140, 156});
  }
  SECTION("bias [2, 1] on every column") {
    Owned<float> bias({2, 1}, {1, 2});
    REQUIRE(portable::addmm_out(ctx, bias, a, b, 1, 1, out));
    CHECK(out.logical() == std::vector<float>{59, 65, 141, 156});
  }
  SECTION("0-dim bias, beta 2 and alpha 0.5") {
    Owned<float> bias({}, {10});
    REQUIRE(portable::addmm_out(ctx, bias, a, b, 2, 0.5, out));
    CHECK(out.logical() == std::vector<float>{49, 52, 89.5f, 97});
  }
  SECTION("a full [2, 2] bias in column-major layout") {
    Owned<float> bias({2, 2}, {1, 2, 3, 4}, {1, 0});
    REQUIRE(portable::addmm_out(ctx, bias, a, b, 1, 1, out));
    CHECK(out.logical() == std::vector<float>{59, 66, 142, 158});
  }
  SECTION("beta 0 ignores the bias, NaN included") {
    Owned<float> bias({2}, {std::numeric_limits<float>::quiet_NaN(), 1});
    REQUIRE(portable::addmm_out(ctx, bias, a, b, 0, 1, out));
    CHECK(out.logical() == kAB);
  }
  SECTION("an empty inner dimension leaves beta * bias") {
    Owned<float> a0({2, 0}, {});
    Owned<float> b0({0, 2}, {});
    Owned<float> bias({2}, {1, 2});
    REQUIRE(portable::addmm_out(ctx, bias, a0, b0, 3, 1, out));
    CHECK(out.logical() == std::vector<float>{3, 6, 3, 6});
  }
}

TEST_CASE("mm and addmm: errors name the argument and the value", "[portable][mm][addmm][errors]") {
  Owned<float> a({2, 3}, kA);
  Owned<float> b({3, 2}, kB);
  Owned<float> out({2, 2}, Owned<float>::filled({2, 2}, 0));
  Owned<float> bias({2}, {1, 2});
  KernelContext ctx;
  SECTION("a non-float32 operand") {
    Owned<double> b64({3, 2}, {7, 8, 9, 10, 11, 12});
    CHECK_FALSE(portable::mm_out(ctx, a, b64, out));
    CHECK_ERROR(ctx, "aten::mm.out", "mat2 must be float32, got float64");
  }
  SECTION("a 3-D operand") {
    Owned<float> a3({1, 2, 3}, kA);
    CHECK_FALSE(portable::mm_out(ctx, a3, b, out));
    CHECK_ERROR(ctx, "self must be 2-D, got 3-D with shape [1, 2, 3]");
  }
  SECTION("inner sizes that differ") {
    Owned<float> b4({4, 2}, Owned<float>::filled({4, 2}, 1));
    CHECK_FALSE(portable::mm_out(ctx, a, b4, out));
    CHECK_ERROR(ctx, "self.size(1) = 3 != mat2.size(0) = 4");
  }
  SECTION("out of the wrong shape") {
    Owned<float> wrong({2, 3}, Owned<float>::filled({2, 3}, 0));
    CHECK_FALSE(portable::mm_out(ctx, a, b, wrong));
    CHECK_ERROR(ctx, "out has shape [2, 3], expected [2, 2]", "never resized");
  }
  SECTION("out sharing memory with an operand") {
    std::vector<float> buffer(6, 1.0f);
    et_ops::Tensor square(DType::Float32, buffer.data(), {2, 2});
    et_ops::Tensor left(DType::Float32, buffer.data() + 2, {2, 2});
    CHECK_FALSE(portable::mm_out(ctx, left, square, square));
    CHECK_ERROR(ctx, "out overlaps self in memory");
  }
  SECTION("addmm: a bias that does not broadcast") {
    Owned<float> bias3({3}, {1, 2, 3});
    CHECK_FALSE(portable::addmm_out(ctx, bias3, a, b, 1, 1, out));
    CHECK_ERROR(ctx, "aten::addmm.out", "self of shape [3] cannot be broadcast to [2, 2]");
  }
  SECTION("addmm: a bias of another dtype") {
    Owned<int32_t> ibias({2}, {1, 2});
    CHECK_FALSE(portable::addmm_out(ctx, ibias, a, b, 1, 1, out));
    CHECK_ERROR(ctx, "self must be float32, got int32");
  }
  SECTION("addmm: out is the bias") {
    Owned<float> full({2, 2}, {1, 2, 3, 4});
    CHECK_FALSE(portable::addmm_out(ctx, full, a, b, 1, 1, full));
    CHECK_ERROR(ctx, "out overlaps self in memory");
  }
  SECTION("addmm: mat1 of the wrong rank") {
    Owned<float> a1({6}, kA);
    CHECK_FALSE(portable::addmm_out(ctx, bias, a1, b, 1, 1, out));
    CHECK_ERROR(ctx, "mat1 must be 2-D, got 1-D with shape [6]");
  }
  SECTION("addmm: beta beyond float32") {
    CHECK_FALSE(portable::addmm_out(ctx, bias, a, b, 1e39, 1, out));
    CHECK_ERROR(ctx, "beta = 1e+39 cannot be converted to float32");
  }
}

// ---- the documented summation order, on every SIMD target ----

namespace {

const std::vector<uint8_t> kRowMajor = {0, 1};
const std::vector<uint8_t> kColumnMajor = {1, 0};

// The numeric contract, written out: out[i, j] starts from +0.0 in double
// and adds a[i, p] * b[p, j] for p = 0, 1, ... (b given as b_at(p, j)),
// the operands promoted (the product is exact), each sum rounded to
// double. Row-major m x n sums.
template <typename B>
std::vector<double> reference_sums(int64_t m, int64_t k, int64_t n, const std::vector<float>& a, B b_at) {
  std::vector<double> out;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const double product = static_cast<double>(a[static_cast<std::size_t>(i * k + p)]) * b_at(p, j);
        sum = sum + product;
      }
      out.push_back(sum);
    }
  return out;
}

// Then bias[j] (promoted) if there is one, and one rounding to float.
template <typename B>
std::vector<float> reference_product(int64_t m, int64_t k, int64_t n, const std::vector<float>& a, B b_at,
                                     const std::vector<float>* bias) {
  const std::vector<double> sums = reference_sums(m, k, n, a, b_at);
  std::vector<float> out;
  for (std::size_t e = 0; e < sums.size(); ++e) {
    const std::size_t j = e % static_cast<std::size_t>(n);
    double sum = sums[e];
    if (bias != nullptr) sum = sum + static_cast<double>((*bias)[bias->size() == 1 ? 0 : j]);
    out.push_back(static_cast<float>(sum));
  }
  return out;
}

struct Product {
  int64_t m, k, n;
};

// Tails of every kind for vectors of 1 to 8 doubles and tiles of 6 or 12
// rows, depths over one block (256) and not a multiple of it, and more
// rows than one block of partial sums holds on any target (4200).
const Product kProducts[] = {{1, 1, 1},    {1, 512, 1000}, {3, 300, 70},  {13, 7, 17}, {6, 256, 16},
                             {7, 513, 33}, {64, 64, 64},   {2, 0, 5},     {25, 40, 129}, {12, 3, 48},
                             {5, 9, 2},    {130, 20, 3},   {4200, 300, 5}};

}  // namespace

TEST_CASE("mm: the documented summation order, bit for bit, on every SIMD target and layout",
          "[portable][mm][simd]") {
  auto rng = et_ops::test::seeded_rng(23);
  for (const Product& s : kProducts) {
    const auto a_values = et_ops::test::random_floats(rng, s.m * s.k);
    const auto b_values = et_ops::test::random_floats(rng, s.k * s.n);
    const auto expected = reference_product(
        s.m, s.k, s.n, a_values, [&](int64_t p, int64_t j) { return b_values[static_cast<std::size_t>(p * s.n + j)]; },
        nullptr);
    for (const auto& a_order : {kRowMajor, kColumnMajor})
      for (const auto& b_order : {kRowMajor, kColumnMajor}) {
        Owned<float> a({s.m, s.k}, a_values, a_order);
        Owned<float> b({s.k, s.n}, b_values, b_order);
        INFO("[" << s.m << ", " << s.k << "] @ [" << s.k << ", " << s.n << "], orders " << int(a_order[0]) << " "
                 << int(b_order[0]));
        et_ops::test::for_each_simd_target([&] {
          for (const auto& out_order : {kRowMajor, kColumnMajor}) {
            Owned<float> out({s.m, s.n}, Owned<float>::filled({s.m, s.n}, -7), out_order);
            KernelContext ctx;
            REQUIRE(portable::mm_out(ctx, a, b, out));
            CHECK(first_difference(out.logical(), expected) == -1);
          }
        });
      }
  }
}

TEST_CASE("addmm: beta * self + alpha * (the documented sum) in float64, rounded once, on every SIMD target",
          "[portable][addmm][simd]") {
  auto rng = et_ops::test::seeded_rng(29);
  const Product s{9, 300, 37};
  const auto a_values = et_ops::test::random_floats(rng, s.m * s.k);
  const auto b_values = et_ops::test::random_floats(rng, s.k * s.n);
  const auto sums = reference_sums(s.m, s.k, s.n, a_values,
                                   [&](int64_t p, int64_t j) { return b_values[static_cast<std::size_t>(p * s.n + j)]; });
  Owned<float> a({s.m, s.k}, a_values);
  Owned<float> b({s.k, s.n}, b_values, kColumnMajor);
  // Per column, per row, per element (column-major) and one value.
  struct Bias {
    Sizes sizes;
    std::vector<uint8_t> order;
  };
  const Bias biases[] = {{{s.n}, {0}}, {{s.m, 1}, {0, 1}}, {{s.m, s.n}, kColumnMajor}, {{}, {}}};
  for (const Bias& shape : biases) {
    const int64_t count = et_ops::test::numel_of(shape.sizes);
    const auto bias_values = et_ops::test::random_floats(rng, count);
    Owned<float> bias(shape.sizes, bias_values, shape.order);
    // self[i, j] broadcast from the bias's logical row-major values.
    const auto term = [&](std::size_t e) {
      const std::size_t i = e / static_cast<std::size_t>(s.n), j = e % static_cast<std::size_t>(s.n);
      const std::size_t at = count == 1 ? 0 : shape.sizes.size() == 1 ? j : shape.sizes[1] == 1 ? i : e;
      return static_cast<double>(bias_values[at]);
    };
    for (const auto& [beta, alpha] : {std::pair<float, float>{1, 1}, {0.5f, -3}, {0, 2}}) {
      std::vector<float> expected;
      for (std::size_t e = 0; e < sums.size(); ++e) {
        const double product = alpha == 1 ? sums[e] : static_cast<double>(alpha) * sums[e];
        expected.push_back(static_cast<float>(beta == 0 ? product : static_cast<double>(beta) * term(e) + product));
      }
      INFO("bias of " << shape.sizes.size() << " dimensions, " << count << " values; beta " << beta << ", alpha "
                      << alpha);
      et_ops::test::for_each_simd_target([&] {
        Owned<float> out({s.m, s.n}, Owned<float>::filled({s.m, s.n}, 0));
        KernelContext ctx;
        REQUIRE(portable::addmm_out(ctx, bias, a, b, static_cast<double>(beta), static_cast<double>(alpha), out));
        CHECK(first_difference(out.logical(), expected) == -1);
      });
    }
  }
}

// ---- one rounding, next to a float32 midpoint ----

namespace {

// 1 + 2^-24 is the midpoint between the floats 1 and 1 + 2^-23: a float32
// sum of 1, 2^-24 and 2^-50 lands on it and rounds to even (1), while the
// exact sum lies above it and rounds up.
constexpr float kUp = 1 + 0x1p-23f;

// Rows of a [rows, depth] left operand whose sums with a column of ones
// lie next to that midpoint: the terms at the start, the middle and the
// end of the reduction (in several depth blocks when depth > 256), zeros
// elsewhere; with the correctly rounded results.
struct NearMidpoint {
  std::vector<float> a;
  std::vector<float> expected;  // per row
};

NearMidpoint near_midpoint_rows(int64_t depth) {
  const float terms[][3] = {{1, 0x1p-24f, 0x1p-50f},     // just above: up
                            {0x1p-50f, 0x1p-24f, 1},     // small terms first
                            {-1, -0x1p-24f, -0x1p-50f},  // below -1 - 2^-24: down
                            {1, 0x1p-24f, -0x1p-50f},    // just below: 1
                            {0x1p-24f, 1, 0x1p-24f}};    // exactly 1 + 2^-23
  const float expected[] = {kUp, kUp, -kUp, 1, kUp};
  NearMidpoint rows;
  for (std::size_t r = 0; r < 5; ++r) {
    std::vector<float> row(static_cast<std::size_t>(depth), 0.0f);
    row[0] = terms[r][0];
    row[static_cast<std::size_t>(depth / 2)] = terms[r][1];
    row[static_cast<std::size_t>(depth - 1)] = terms[r][2];
    rows.a.insert(rows.a.end(), row.begin(), row.end());
    rows.expected.push_back(expected[r]);
  }
  return rows;
}

}  // namespace

TEST_CASE("mm, addmm, linear: a sum next to a float32 midpoint is rounded once, on every SIMD target",
          "[portable][mm][addmm][linear][simd]") {
  const int64_t n = 19;  // a tail on every target
  for (int64_t depth : {3, 600}) {
    const NearMidpoint rows = near_midpoint_rows(depth);
    const int64_t m = static_cast<int64_t>(rows.expected.size());
    std::vector<float> expected;
    for (float v : rows.expected) expected.insert(expected.end(), static_cast<std::size_t>(n), v);
    Owned<float> a({m, depth}, rows.a);
    Owned<float> ones({depth, n}, Owned<float>::filled({depth, n}, 1));
    Owned<float> weight({n, depth}, Owned<float>::filled({n, depth}, 1));
    INFO("depth " << depth);
    et_ops::test::for_each_simd_target([&] {
      KernelContext ctx;
      Owned<float> out({m, n}, Owned<float>::filled({m, n}, 0));
      REQUIRE(portable::mm_out(ctx, a, ones, out));
      CHECK(first_difference(out.values, expected) == -1);
      REQUIRE(portable::linear_out(ctx, a, weight, std::nullopt, out));
      CHECK(first_difference(out.values, expected) == -1);
    });
  }
  // The bias joins the float64 sum: 2^-24 + 2^-50 plus a bias of 1.
  Owned<float> x({1, 2}, {0x1p-24f, 0x1p-50f});
  Owned<float> w({n, 2}, Owned<float>::filled({n, 2}, 1));
  Owned<float> bias({n}, Owned<float>::filled({n}, 1));
  // addmm: alpha * (2^-23 + 2^-49) + beta * self with alpha 0.5, beta 2 and self 0.5.
  Owned<float> a2({1, 2}, {0x1p-23f, 0x1p-49f});
  Owned<float> self({}, {0.5f});
  const std::vector<float> up(static_cast<std::size_t>(n), kUp);
  et_ops::test::for_each_simd_target([&] {
    KernelContext ctx;
    Owned<float> out({1, n}, Owned<float>::filled({1, n}, 0));
    REQUIRE(portable::linear_out(ctx, x, w, bias.ref(), out));
    CHECK(first_difference(out.values, up) == -1);
    Owned<float> ones({2, n}, Owned<float>::filled({2, n}, 1));
    REQUIRE(portable::addmm_out(ctx, bias, x, ones, 1, 1, out));
    CHECK(first_difference(out.values, up) == -1);
    REQUIRE(portable::addmm_out(ctx, self, a2, ones, 2, 0.5, out));
    CHECK(first_difference(out.values, up) == -1);
  });
}

// ---- linear ----

TEST_CASE("linear: a hand-computed layer", "[portable][linear]") {
  Owned<float> x({2, 3}, kA);                       // [[1, 2, 3], [4, 5, 6]]
  Owned<float> w({2, 3}, {1, 0, -1, 0.5f, 0.5f, 0.5f});
  Owned<float> bias({2}, {10, 20});
  Owned<float> out({2, 2}, {-1, -1, -1, -1});
  KernelContext ctx;
  REQUIRE(portable::linear_out(ctx, x, w, bias.ref(), out));
  CHECK(out.values == std::vector<float>{8, 23, 8, 27.5f});
  REQUIRE(portable::linear_out(ctx, x, w, std::nullopt, out));
  CHECK(out.values == std::vector<float>{-2, 3, -2, 7.5f});
}

TEST_CASE("linear: the documented summation order, bias last, on every SIMD target", "[portable][linear][simd]") {
  auto rng = et_ops::test::seeded_rng(31);
  for (const Product& s : kProducts) {
    const auto x_values = et_ops::test::random_floats(rng, s.m * s.k);
    const auto w_values = et_ops::test::random_floats(rng, s.n * s.k);
    const auto bias_values = et_ops::test::random_floats(rng, s.n);
    const auto w_at = [&](int64_t p, int64_t j) { return w_values[static_cast<std::size_t>(j * s.k + p)]; };
    const auto with_bias = reference_product(s.m, s.k, s.n, x_values, w_at, &bias_values);
    const auto without_bias = reference_product(s.m, s.k, s.n, x_values, w_at, nullptr);
    Owned<float> bias({s.n}, bias_values);
    for (const auto& x_order : {kRowMajor, kColumnMajor})
      for (const auto& w_order : {kRowMajor, kColumnMajor}) {
        Owned<float> x({s.m, s.k}, x_values, x_order);
        Owned<float> w({s.n, s.k}, w_values, w_order);
        INFO("[" << s.m << ", " << s.k << "] x [" << s.n << ", " << s.k << "]^T, orders " << int(x_order[0]) << " "
                 << int(w_order[0]));
        et_ops::test::for_each_simd_target([&] {
          Owned<float> out({s.m, s.n}, Owned<float>::filled({s.m, s.n}, -7));
          KernelContext ctx;
          REQUIRE(portable::linear_out(ctx, x, w, bias.ref(), out));
          CHECK(first_difference(out.logical(), with_bias) == -1);
          REQUIRE(portable::linear_out(ctx, x, w, std::nullopt, out));
          CHECK(first_difference(out.logical(), without_bias) == -1);
        });
      }
  }
}

TEST_CASE("linear: equals addmm(bias, input, weight.t()) bit for bit", "[portable][linear]") {
  auto rng = et_ops::test::seeded_rng(37);
  const Product s{5, 70, 21};
  const auto x_values = et_ops::test::random_floats(rng, s.m * s.k);
  const auto w_values = et_ops::test::random_floats(rng, s.n * s.k);
  const auto bias_values = et_ops::test::random_floats(rng, s.n);
  Owned<float> x({s.m, s.k}, x_values);
  Owned<float> w({s.n, s.k}, w_values);
  Owned<float> bias({s.n}, bias_values);
  std::vector<float> transposed(w_values.size());
  for (int64_t j = 0; j < s.n; ++j)
    for (int64_t p = 0; p < s.k; ++p)
      transposed[static_cast<std::size_t>(p * s.n + j)] = w_values[static_cast<std::size_t>(j * s.k + p)];
  Owned<float> wt({s.k, s.n}, transposed);
  Owned<float> linear({s.m, s.n}, Owned<float>::filled({s.m, s.n}, 0));
  Owned<float> addmm({s.m, s.n}, Owned<float>::filled({s.m, s.n}, 0));
  KernelContext ctx;
  REQUIRE(portable::linear_out(ctx, x, w, bias.ref(), linear));
  REQUIRE(portable::addmm_out(ctx, bias, x, wt, 1, 1, addmm));
  CHECK(bits_of(linear.values) == bits_of(addmm.values));
}

TEST_CASE("linear: any number of leading dimensions, in any layout", "[portable][linear][simd]") {
  auto rng = et_ops::test::seeded_rng(41);
  const int64_t k = 19, n = 11;
  const auto w_values = et_ops::test::random_floats(rng, n * k);
  const auto bias_values = et_ops::test::random_floats(rng, n);
  Owned<float> w({n, k}, w_values);
  Owned<float> bias({n}, bias_values);
  const auto w_at = [&](int64_t p, int64_t j) { return w_values[static_cast<std::size_t>(j * k + p)]; };
  struct Case {
    Sizes leading;
    std::vector<uint8_t> x_order, out_order;
  };
  const Case cases[] = {
      {{}, {0}, {0}},
      {{2, 3}, {0, 1, 2}, {0, 1, 2}},
      {{2, 3}, {1, 0, 2}, {0, 1, 2}},   // rows that no single stride walks
      {{2, 3}, {2, 0, 1}, {1, 2, 0}},   // features not contiguous
      {{4, 1, 5}, {0, 1, 2, 3}, {2, 0, 1, 3}},
      {{3, 0}, {0, 1, 2}, {0, 1, 2}},
  };
  for (const Case& c : cases) {
    Sizes x_sizes = c.leading, out_sizes = c.leading;
    x_sizes.push_back(k);
    out_sizes.push_back(n);
    const int64_t rows = et_ops::test::numel_of(c.leading);
    const auto x_values = et_ops::test::random_floats(rng, rows * k);
    const auto expected = reference_product(rows, k, n, x_values, w_at, &bias_values);
    Owned<float> x(x_sizes, x_values, c.x_order);
    INFO("input " << x_sizes.size() << "-D with " << rows << " rows");
    et_ops::test::for_each_simd_target([&] {
      Owned<float> out(out_sizes, Owned<float>::filled(out_sizes, -7), c.out_order);
      KernelContext ctx;
      REQUIRE(portable::linear_out(ctx, x, w, bias.ref(), out));
      CHECK(first_difference(out.logical(), expected) == -1);
    });
  }
}

TEST_CASE("linear: a bias of one value broadcasts", "[portable][linear]") {
  Owned<float> x({2, 3}, kA);
  Owned<float> w({2, 3}, {1, 0, -1, 0.5f, 0.5f, 0.5f});
  Owned<float> out({2, 2}, {0, 0, 0, 0});
  KernelContext ctx;
  Owned<float> one({1}, {100});
  REQUIRE(portable::linear_out(ctx, x, w, one.ref(), out));
  CHECK(out.values == std::vector<float>{98, 103, 98, 107.5f});
  Owned<float> scalar({}, {-1});
  REQUIRE(portable::linear_out(ctx, x, w, scalar.ref(), out));
  CHECK(out.values == std::vector<float>{-3, 2, -3, 6.5f});
}

TEST_CASE("linear: no input features gives the bias", "[portable][linear]") {
  Owned<float> x({2, 0}, {});
  Owned<float> w({3, 0}, {});
  Owned<float> bias({3}, {1, 2, 3});
  Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 9));
  KernelContext ctx;
  REQUIRE(portable::linear_out(ctx, x, w, bias.ref(), out));
  CHECK(out.values == std::vector<float>{1, 2, 3, 1, 2, 3});
}

TEST_CASE("linear: errors name the argument and the value", "[portable][linear][errors]") {
  Owned<float> x({2, 3}, kA);
  Owned<float> w({4, 3}, Owned<float>::filled({4, 3}, 1));
  Owned<float> bias({4}, {1, 2, 3, 4});
  Owned<float> out({2, 4}, Owned<float>::filled({2, 4}, 0));
  KernelContext ctx;
  SECTION("a 0-D input") {
    Owned<float> x0({}, {1});
    CHECK_FALSE(portable::linear_out(ctx, x0, w, bias.ref(), out));
    CHECK_ERROR(ctx, "aten::linear.out", "input must have at least 1 dimension");
  }
  SECTION("a weight that is not 2-D") {
    Owned<float> w1({3}, {1, 2, 3});
    CHECK_FALSE(portable::linear_out(ctx, x, w1, bias.ref(), out));
    CHECK_ERROR(ctx, "weight must be 2-D, got 1-D with shape [3]");
  }
  SECTION("features that do not match") {
    Owned<float> w5({4, 5}, Owned<float>::filled({4, 5}, 1));
    CHECK_FALSE(portable::linear_out(ctx, x, w5, bias.ref(), out));
    CHECK_ERROR(ctx, "weight of shape [4, 5] expects 5 input features, but input of shape [2, 3] has 3");
  }
  SECTION("a bias of the wrong shape") {
    Owned<float> bias3({3}, {1, 2, 3});
    CHECK_FALSE(portable::linear_out(ctx, x, w, bias3.ref(), out));
    CHECK_ERROR(ctx, "bias of shape [3] cannot be broadcast to [4]");
    KernelContext ctx2;
    Owned<float> bias2d({1, 4}, {1, 2, 3, 4});
    CHECK_FALSE(portable::linear_out(ctx2, x, w, bias2d.ref(), out));
    CHECK_ERROR(ctx2, "bias of shape [1, 4] cannot be broadcast to [4]");
  }
  SECTION("dtypes") {
    Owned<double> x64({2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK_FALSE(portable::linear_out(ctx, x64, w, bias.ref(), out));
    CHECK_ERROR(ctx, "input must be float32, got float64");
    KernelContext ctx2;
    Owned<int32_t> ibias({4}, {1, 2, 3, 4});
    CHECK_FALSE(portable::linear_out(ctx2, x, w, ibias.ref(), out));
    CHECK_ERROR(ctx2, "bias must be float32, got int32");
  }
  SECTION("an out of the wrong shape") {
    Owned<float> wrong({4, 2}, Owned<float>::filled({4, 2}, 0));
    CHECK_FALSE(portable::linear_out(ctx, x, w, bias.ref(), wrong));
    CHECK_ERROR(ctx, "out has shape [4, 2], expected [2, 4]", "never resized");
  }
  SECTION("an out sharing memory with the input") {
    std::vector<float> buffer(8, 1.0f);
    et_ops::Tensor input(DType::Float32, buffer.data(), {2, 3});
    et_ops::Tensor aliased(DType::Float32, buffer.data(), {2, 4});
    CHECK_FALSE(portable::linear_out(ctx, input, w, bias.ref(), aliased));
    CHECK_ERROR(ctx, "out overlaps input in memory");
  }
  SECTION("a malformed tensor") {
    x.raw()->numel = 5;
    CHECK_FALSE(portable::linear_out(ctx, x, w, bias.ref(), out));
    CHECK_ERROR(ctx, "input has numel 5 but sizes [2, 3] hold 6 elements");
  }
}

TEST_CASE("mm and linear: the stride of a size-1 dimension is never used", "[portable][mm][linear]") {
  // Size-1 dimensions with extreme strides are still dense layouts; the
  // products must never step by them (UBSan would see the overflow).
  const int64_t huge = std::numeric_limits<int64_t>::max();
  KernelContext ctx;
  Owned<float> a({3, 1}, {1, 2, 3});
  const int64_t a_strides[2] = {1, huge};
  a.tensor.raw()->strides = a_strides;
  Owned<float> b({1, 4}, {1, -1, 2, 0.5f});
  const int64_t b_strides[2] = {huge, 1};
  b.tensor.raw()->strides = b_strides;
  Owned<float> out({3, 4}, Owned<float>::filled({3, 4}, 0));
  REQUIRE(portable::mm_out(ctx, a, b, out));
  CHECK(out.values == std::vector<float>{1, -1, 2, 0.5f, 2, -2, 4, 1, 3, -3, 6, 1.5f});

  Owned<float> x({2, 1}, {3, 4});
  const int64_t x_strides[2] = {1, huge};
  x.tensor.raw()->strides = x_strides;
  Owned<float> w({1, 1}, {2});
  const int64_t w_strides[2] = {huge, huge};
  w.tensor.raw()->strides = w_strides;
  Owned<float> bias({1}, {0.5f});
  const int64_t bias_strides[1] = {huge};
  bias.tensor.raw()->strides = bias_strides;
  Owned<float> y({2, 1}, {0, 0});
  const int64_t y_strides[2] = {1, huge};
  y.tensor.raw()->strides = y_strides;
  et_ops::test::for_each_simd_target([&] {
    REQUIRE(portable::linear_out(ctx, x, w, bias.ref(), y));
    CHECK(y.values == std::vector<float>{6.5f, 8.5f});
  });
}

TEST_CASE("bmm and baddbmm: one product per batch, beta * self broadcast", "[portable][bmm]") {
  Owned<float> a({2, 1, 2}, {1, 2, 3, 4});
  Owned<float> b({2, 2, 1}, {5, 6, 7, 8});
  Owned<float> out({2, 1, 1}, {0, 0});
  KernelContext ctx;
  REQUIRE(portable::bmm_out(ctx, a, b, out));
  CHECK(out.values == std::vector<float>{17, 53});
  Owned<float> self({1}, {100});
  REQUIRE(portable::baddbmm_out(ctx, self, a, b, 0.5, 2, out));
  CHECK(out.values == std::vector<float>{84, 156});
  Owned<float> wrong({3, 2, 1}, Owned<float>::filled({3, 2, 1}, 0));
  CHECK_FALSE(portable::bmm_out(ctx, a, wrong, out));
  CHECK(et_ops::test::failed_with(ctx, {"aten::bmm.out", "mat2", "[3, 2, 1]"}));
}
