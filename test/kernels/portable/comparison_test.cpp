// Comparisons and logical_not: bool results with broadcasting, PyTorch's
// conversions of a Scalar other, NaN, and errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

TEST_CASE("comparisons of two tensors broadcast and give bools", "[portable][comparison]") {
  Owned<float> a({2, 3}, {1, 2, 3, 4, 5, std::nanf("")});
  Owned<float> b({3}, {2, 2, 2});
  Mask out({2, 3}, std::vector<uint8_t>(6, 7));
  KernelContext ctx;
  REQUIRE(portable::lt_tensor_out(ctx, a, b, out));
  CHECK(out.values == std::vector<uint8_t>{1, 0, 0, 0, 0, 0});
  REQUIRE(portable::ne_tensor_out(ctx, a, b, out));
  CHECK(out.values == std::vector<uint8_t>{1, 0, 1, 1, 1, 1});
  REQUIRE(portable::ge_tensor_out(ctx, a, b, out));
  CHECK(out.values == std::vector<uint8_t>{0, 1, 1, 1, 1, 0});
}

TEST_CASE("comparisons with a Scalar convert it as PyTorch does", "[portable][comparison]") {
  KernelContext ctx;
  Owned<int64_t> ints({3}, {0, 1, 2});
  Mask out({3}, {9, 9, 9});
  SECTION("a floating scalar compares an integral tensor in float32") {
    REQUIRE(portable::gt_scalar_out(ctx, ints, 0.5, out));
    CHECK(out.values == std::vector<uint8_t>{0, 1, 1});
  }
  SECTION("an integral scalar compares as self's type") {
    REQUIRE(portable::eq_scalar_out(ctx, ints, 2, out));
    CHECK(out.values == std::vector<uint8_t>{0, 0, 1});
  }
  SECTION("a bool self with an integral scalar compares as int64") {
    Mask flags({3}, {0, 1, 2});  // any nonzero byte is true
    REQUIRE(portable::eq_scalar_out(ctx, flags, 1, out));
    CHECK(out.values == std::vector<uint8_t>{0, 1, 1});
    REQUIRE(portable::le_scalar_out(ctx, flags, 0, out));
    CHECK(out.values == std::vector<uint8_t>{1, 0, 0});
  }
}

TEST_CASE("logical_not is self == 0, in place on bools too", "[portable][comparison]") {
  KernelContext ctx;
  Owned<float> x({4}, {0.0f, -0.0f, 3.0f, std::nanf("")});
  Mask out({4}, {5, 5, 5, 5});
  REQUIRE(portable::logical_not_out(ctx, x, out));
  CHECK(out.values == std::vector<uint8_t>{1, 1, 0, 0});
  REQUIRE(portable::logical_not_out(ctx, out, out));
  CHECK(out.values == std::vector<uint8_t>{0, 0, 1, 1});
}

TEST_CASE("comparison errors name the operator and the argument", "[portable][comparison]") {
  KernelContext ctx;
  Owned<float> a({2}, {1, 2});
  Owned<int64_t> b({2}, {1, 2});
  Mask out({2}, {0, 0});
  CHECK_FALSE(portable::eq_tensor_out(ctx, a, b, out));
  CHECK(failed_with(ctx, {"aten::eq.Tensor_out", "other", "int64", "float32"}));
  ctx.reset();
  Owned<float> float_out({2}, {0, 0});
  CHECK_FALSE(portable::lt_scalar_out(ctx, a, 1, float_out));
  CHECK(failed_with(ctx, {"aten::lt.Scalar_out", "out", "bool"}));
  ctx.reset();
  Mask short_out({1}, {0});
  CHECK_FALSE(portable::logical_not_out(ctx, a, short_out));
  CHECK(failed_with(ctx, {"aten::logical_not.out", "out", "[1]", "[2]"}));
}
