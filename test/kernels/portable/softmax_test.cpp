// aten::_softmax.out: values, dims, stability at large inputs, NaN and
// -inf rows, layouts, in place, zero sizes, every error, and the same bits
// on every SIMD target.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "simd_targets.h"
#include "test_util.h"

TEST_CASE("softmax: values along the last dimension", "[portable][softmax]") {
  Owned<float> x({3, 4}, {0, 0, 0, 0, 0, std::log(3.0f), 1000, 1000, 1, 2, 3, 4});
  Owned<float> out({3, 4}, Owned<float>::filled({3, 4}, 0));
  KernelContext ctx;
  REQUIRE(portable::softmax_out(ctx, x, -1, false, out));
  CHECK(std::vector<float>(out.values.begin(), out.values.begin() + 4) == std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f});
  // Row 1: e^0 = 1, e^ln3 = 3 and two e^1000 terms: the maximum is
  // subtracted first, so nothing overflows and the 1000s share the mass.
  CHECK(out.values[6] == Approx(0.5f).epsilon(1e-6));
  CHECK(out.values[7] == Approx(0.5f).epsilon(1e-6));
  CHECK(out.values[4] == 0.0f);
  const double denominator = std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0);
  for (int i = 0; i < 4; ++i)
    CHECK(out.values[static_cast<std::size_t>(8 + i)] == Approx(std::exp(i + 1.0) / denominator).epsilon(1e-6));
}

TEST_CASE("softmax: other dimensions", "[portable][softmax]") {
  KernelContext ctx;
  SECTION("dim 0 of [2, 3]") {
    Owned<float> x({2, 3}, {0, 5, 1, 0, 5, 1});
    Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0));
    REQUIRE(portable::softmax_out(ctx, x, 0, false, out));
    CHECK(out.values == std::vector<float>(6, 0.5f));
  }
  SECTION("the middle dimension of [2, 2, 2]") {
    Owned<float> x({2, 2, 2}, {0, 1, 0, 1, 2, 2, 2, 2});
    Owned<float> out({2, 2, 2}, Owned<float>::filled({2, 2, 2}, 0));
    REQUIRE(portable::softmax_out(ctx, x, 1, false, out));
    CHECK(out.values == std::vector<float>(8, 0.5f));
  }
  SECTION("a 0-dim self is its own lane of one") {
    Owned<float> x({}, {-7});
    Owned<float> out({}, {0});
    REQUIRE(portable::softmax_out(ctx, x, 0, false, out));
    CHECK(out.values[0] == 1.0f);
  }
}

TEST_CASE("softmax: NaN and infinities", "[portable][softmax]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Owned<float> x({4, 3}, {1, nan, 2, 0, -inf, 0, -inf, -inf, -inf, 3, 3, 3});
  Owned<float> out({4, 3}, Owned<float>::filled({4, 3}, 0));
  KernelContext ctx;
  REQUIRE(portable::softmax_out(ctx, x, 1, false, out));
  for (int i = 0; i < 3; ++i) CHECK(std::isnan(out.values[static_cast<std::size_t>(i)]));  // NaN spreads over its row
  CHECK(out.values[3] == 0.5f);
  CHECK(out.values[4] == 0.0f);  // -inf contributes nothing
  CHECK(out.values[5] == 0.5f);
  for (int i = 6; i < 9; ++i) CHECK(std::isnan(out.values[static_cast<std::size_t>(i)]));  // all -inf: 0 / 0
  CHECK(out.values[9] == Approx(1.0f / 3).epsilon(1e-6));
}

TEST_CASE("softmax: layouts do not change the bits; in place works", "[portable][softmax]") {
  auto rng = et_ops::test::seeded_rng(5);
  const auto values = et_ops::test::random_floats(rng, 4 * 5 * 6);
  KernelContext ctx;
  for (int64_t dim = 0; dim < 3; ++dim) {
    Owned<float> x({4, 5, 6}, values);
    Owned<float> reference({4, 5, 6}, Owned<float>::filled({4, 5, 6}, 0));
    REQUIRE(portable::softmax_out(ctx, x, dim, false, reference));
    Owned<float> x_t({4, 5, 6}, values, {2, 0, 1});
    Owned<float> out_t({4, 5, 6}, Owned<float>::filled({4, 5, 6}, 0), {1, 2, 0});
    REQUIRE(portable::softmax_out(ctx, x_t, dim, false, out_t));
    CHECK(bits_of(out_t.logical()) == bits_of(reference.values));
    REQUIRE(portable::softmax_out(ctx, x, dim, false, x));
    CHECK(bits_of(x.values) == bits_of(reference.values));
  }
}

TEST_CASE("softmax: zero sizes", "[portable][softmax]") {
  KernelContext ctx;
  Owned<float> rows({0, 3}, {});
  Owned<float> rows_out({0, 3}, {});
  CHECK(portable::softmax_out(ctx, rows, 1, false, rows_out));
  Owned<float> lanes({3, 0}, {});
  Owned<float> lanes_out({3, 0}, {});
  CHECK(portable::softmax_out(ctx, lanes, 1, false, lanes_out));
  CHECK(ctx.ok());
}

TEST_CASE("softmax: errors", "[portable][softmax][errors]") {
  Owned<float> x({2, 3}, Owned<float>::filled({2, 3}, 1));
  Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0));
  KernelContext ctx;
  SECTION("half_to_float") {
    CHECK_FALSE(portable::softmax_out(ctx, x, 1, true, out));
    CHECK_ERROR(ctx, "aten::_softmax.out", "half_to_float = true is not supported");
  }
  SECTION("float64") {
    Owned<double> x64({2, 3}, Owned<double>::filled({2, 3}, 1));
    Owned<double> out64({2, 3}, Owned<double>::filled({2, 3}, 0));
    CHECK_FALSE(portable::softmax_out(ctx, x64, 1, false, out64));
    CHECK_ERROR(ctx, "self must be float32, got float64");
  }
  SECTION("a dim out of range") {
    CHECK_FALSE(portable::softmax_out(ctx, x, 2, false, out));
    CHECK_ERROR(ctx, "dim = 2 is out of range for a 2-D tensor (expected a value in [-2, 1])");
    ctx.reset();
    CHECK_FALSE(portable::softmax_out(ctx, x, -3, false, out));
    CHECK_ERROR(ctx, "dim = -3 is out of range");
  }
  SECTION("out of the wrong shape") {
    Owned<float> wrong({3, 2}, Owned<float>::filled({3, 2}, 0));
    CHECK_FALSE(portable::softmax_out(ctx, x, 1, false, wrong));
    CHECK_ERROR(ctx, "out has shape [3, 2], expected [2, 3] (the shape of self)");
  }
  SECTION("out of another dtype") {
    Owned<int32_t> wrong({2, 3}, Owned<int32_t>::filled({2, 3}, 0));
    CHECK_FALSE(portable::softmax_out(ctx, x, 1, false, wrong));
    CHECK_ERROR(ctx, "out must be float32, got int32");
  }
  SECTION("out partially overlapping self") {
    std::vector<float> buffer(7, 1.0f);
    et_ops::Tensor self(DType::Float32, buffer.data(), {2, 3});
    et_ops::Tensor shifted(DType::Float32, buffer.data() + 1, {2, 3});
    CHECK_FALSE(portable::softmax_out(ctx, self, 1, false, shifted));
    CHECK_ERROR(ctx, "out overlaps self in memory without being the very same tensor");
  }
}

TEST_CASE("softmax: the library's own exp, summed in index order: the contract's bits on every SIMD target",
          "[portable][softmax][simd]") {
  // Rows past the buffer chunk (256) and of every tail length.
  std::mt19937_64 rng(17);
  const std::vector<int64_t> lengths = {1, 2, 3, 5, 8, 17, 33, 255, 256, 257, 700};
  for (int64_t length : lengths) {
    INFO("length " << length);
    std::vector<float> values = et_ops::test::random_floats(rng, length);
    for (float& v : values) v *= 8;
    // The definition, written out: e_i = exp(x_i - max) correctly rounded
    // (from long double), the sum in index order in float32, then e_i / sum.
    const float max = *std::max_element(values.begin(), values.end());
    std::vector<float> want(values.size());
    float sum = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      want[i] = static_cast<float>(std::exp(static_cast<long double>(values[i] - max)));
      sum += want[i];
    }
    for (float& v : want) v /= sum;
    et_ops::test::for_each_simd_target([&] {
      Owned<float> x({length}, values);
      Owned<float> out({length}, Owned<float>::filled({length}, 0));
      KernelContext ctx;
      REQUIRE(portable::softmax_out(ctx, x, 0, false, out));
      CHECK(bits_of(out.values) == bits_of(want));
    });
  }
}

TEST_CASE("log_softmax: x - max - log(sum), along any dimension", "[portable][log_softmax]") {
  Owned<float> x({2, 3}, {1, 2, 3, -1000, 0, 1000});
  Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0));
  KernelContext ctx;
  REQUIRE(portable::log_softmax_out(ctx, x, 1, false, out));
  const double log_sum = std::log(std::exp(-2.0) + std::exp(-1.0) + 1.0);
  CHECK(out.values[2] == Approx(-log_sum).epsilon(1e-6));
  CHECK(out.values[0] == Approx(-2 - log_sum).epsilon(1e-6));
  CHECK(out.values[5] == 0.0f);
  CHECK(out.values[3] == -2000.0f);
  REQUIRE(portable::log_softmax_out(ctx, x, -2, false, out));
  CHECK(out.values[1] == Approx(-std::log1p(std::exp(-2.0))).epsilon(1e-6));
  Owned<float> nan_row({2}, {std::nanf(""), 1});
  Owned<float> nan_out({2}, {0, 0});
  REQUIRE(portable::log_softmax_out(ctx, nan_row, 0, false, nan_out));
  CHECK(std::isnan(nan_out.values[1]));
}
