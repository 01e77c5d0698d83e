// aten::mm.out and aten::addmm.out: hand-computed products, float32
// accumulation order, layouts, bias broadcasting, zero sizes and errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

using et_ops::DType;
using et_ops::KernelContext;
using et_ops::test::bits_of;
using et_ops::test::Owned;
namespace portable = et_ops::kernels::portable;

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
  // Against a float64 product: float32 accumulation of 7 terms.
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

TEST_CASE("mm: sums accumulate in float32, in order of the inner index", "[portable][mm]") {
  // (0 + 1e8) + 1 rounds back to 1e8 in float32; then - 1e8 gives 0, where
  // a float64 accumulator would give 1.
  Owned<float> a({1, 3}, {1e8f, 1, -1e8f});
  Owned<float> b({3, 1}, {1, 1, 1});
  Owned<float> out({1, 1}, {-1});
  KernelContext ctx;
  REQUIRE(portable::mm_out(ctx, a, b, out));
  CHECK(out.values[0] == 0.0f);
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
