// sqrt, rsqrt, exp, neg and pow: values as PyTorch rounds them, the same
// bits on every SIMD target, in place, and errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "simd_targets.h"
#include "test_util.h"

TEST_CASE("sqrt and rsqrt round as PyTorch: sqrt, then 1 / sqrt", "[portable][unary]") {
  auto rng = et_ops::test::seeded_rng(7);
  std::vector<float> values = et_ops::test::random_floats(rng, 67);
  for (float& v : values) v = std::fabs(v) * 100.0f;
  values.push_back(0.0f);
  values.push_back(-0.0f);
  values.push_back(std::numeric_limits<float>::infinity());
  const std::vector<int64_t> shape = {static_cast<int64_t>(values.size())};
  Owned<float> x(shape, values);
  et_ops::test::for_each_simd_target([&] {
    Owned<float> root(shape, Owned<float>::filled(shape, 0));
    Owned<float> reciprocal(shape, Owned<float>::filled(shape, 0));
    KernelContext ctx;
    REQUIRE(portable::sqrt_out(ctx, x, root));
    REQUIRE(portable::rsqrt_out(ctx, x, reciprocal));
    for (std::size_t i = 0; i < values.size(); ++i) {
      CHECK(bits_of(root.values[i]) == bits_of(std::sqrt(values[i])));
      CHECK(bits_of(reciprocal.values[i]) == bits_of(1.0f / std::sqrt(values[i])));
    }
  });
}

TEST_CASE("exp is e^x rounded once, on every SIMD target", "[portable][unary]") {
  const std::vector<float> values = {0.0f, 1.0f, -1.0f, 10.5f, -87.0f, 88.5f, -200.0f, 1e-8f};
  const std::vector<int64_t> shape = {8};
  Owned<float> x(shape, values);
  et_ops::test::for_each_simd_target([&] {
    Owned<float> out(shape, Owned<float>::filled(shape, 0));
    KernelContext ctx;
    REQUIRE(portable::exp_out(ctx, x, out));
    for (std::size_t i = 0; i < values.size(); ++i)
      CHECK(out.values[i] == static_cast<float>(std::exp(static_cast<double>(values[i]))));
  });
}

TEST_CASE("neg: floats flip their sign, integers wrap", "[portable][unary]") {
  KernelContext ctx;
  Owned<float> x({3}, {1.5f, -0.0f, 0.0f});
  REQUIRE(portable::neg_out(ctx, x, x));  // in place
  CHECK(bits_of(x.values[1]) == bits_of(0.0f));
  CHECK(bits_of(x.values[2]) == bits_of(-0.0f));
  CHECK(x.values[0] == -1.5f);
  Owned<int64_t> i({2}, {std::numeric_limits<int64_t>::min(), 5});
  Owned<int64_t> o({2}, {0, 0});
  REQUIRE(portable::neg_out(ctx, i, o));
  CHECK(o.values == std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -5});
}

TEST_CASE("pow with a Scalar exponent: PyTorch's special exponents exactly", "[portable][unary]") {
  Owned<float> x({4}, {3.0f, 0.7f, 1e-3f, 12.25f});
  const auto run = [&](et_ops::Scalar exponent) {
    Owned<float> out({4}, Owned<float>::filled({4}, 0));
    KernelContext ctx;
    REQUIRE(portable::pow_tensor_scalar_out(ctx, x, exponent, out));
    return out.values;
  };
  for (std::size_t i = 0; i < 4; ++i) {
    const float v = x.values[i];
    CHECK(run(2)[i] == v * v);
    CHECK(run(3)[i] == v * v * v);
    CHECK(run(-2)[i] == 1.0f / (v * v));
    CHECK(run(0.5)[i] == std::sqrt(v));
    CHECK(run(-0.5)[i] == 1.0f / std::sqrt(v));
    CHECK(run(-1)[i] == 1.0f / v);
    CHECK(run(0)[i] == 1.0f);
    CHECK(run(1)[i] == v);
    CHECK(run(1.5)[i] == static_cast<float>(std::pow(static_cast<double>(v), 1.5)));
  }
}

TEST_CASE("pow with a tensor exponent broadcasts", "[portable][unary]") {
  Owned<float> x({2, 2}, {2, 3, 4, 5});
  Owned<float> e({2}, {2, 0.5f});
  Owned<float> out({2, 2}, Owned<float>::filled({2, 2}, 0));
  KernelContext ctx;
  REQUIRE(portable::pow_tensor_tensor_out(ctx, x, e, out));
  CHECK(out.values == std::vector<float>{4, std::sqrt(3.0f), 16, std::sqrt(5.0f)});
}

TEST_CASE("unary math errors name the operator and the argument", "[portable][unary]") {
  KernelContext ctx;
  Owned<int64_t> ints({2}, {1, 2});
  Owned<int64_t> int_out({2}, {0, 0});
  CHECK_FALSE(portable::sqrt_out(ctx, ints, int_out));
  CHECK(failed_with(ctx, {"aten::sqrt.out", "self", "int64"}));
  ctx.reset();
  Owned<float> x({2}, {1, 2});
  Owned<float> wrong({3}, {0, 0, 0});
  CHECK_FALSE(portable::exp_out(ctx, x, wrong));
  CHECK(failed_with(ctx, {"aten::exp.out", "out", "[3]", "[2]"}));
  ctx.reset();
  Owned<float> e({3}, {1, 2, 3});
  CHECK_FALSE(portable::pow_tensor_tensor_out(ctx, x, e, wrong));
  CHECK(failed_with(ctx, {"aten::pow.Tensor_Tensor_out", "exponent", "broadcast"}));
}
