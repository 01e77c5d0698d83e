// native_layer_norm and native_group_norm: values against a binary64
// reference, statistics shapes, optional weight and bias, in place, errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

namespace {
// (x - mean) / sqrt(var + eps) of one set, in binary64.
std::vector<double> normalized(const std::vector<float>& x, double eps) {
  double mean = 0;
  for (float v : x) mean += v;
  mean /= static_cast<double>(x.size());
  double var = 0;
  for (float v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  std::vector<double> out;
  for (float v : x) out.push_back((v - mean) / std::sqrt(var + eps));
  return out;
}
}  // namespace

TEST_CASE("layer_norm over the last dimension, with weight and bias", "[portable][normalization]") {
  auto rng = et_ops::test::seeded_rng(3);
  const std::vector<float> values = et_ops::test::random_floats(rng, 2 * 3 * 8);
  Owned<float> x({2, 3, 8}, values);
  Owned<float> w({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  Owned<float> b({8}, {0, 0, 0, 0, 1, 1, 1, 1});
  Owned<float> y({2, 3, 8}, Owned<float>::filled({2, 3, 8}, 0));
  Owned<float> mean({2, 3, 1}, Owned<float>::filled({2, 3, 1}, 0));
  Owned<float> rstd({2, 3, 1}, Owned<float>::filled({2, 3, 1}, 0));
  const std::vector<int64_t> normalized_shape = {8};
  KernelContext ctx;
  REQUIRE(portable::native_layer_norm_out(ctx, x, normalized_shape, TensorRef(w), TensorRef(b), 1e-5, y, mean, rstd));
  for (int row = 0; row < 6; ++row) {
    const std::vector<float> lane(values.begin() + row * 8, values.begin() + row * 8 + 8);
    const std::vector<double> expected = normalized(lane, 1e-5);
    for (int j = 0; j < 8; ++j)
      CHECK(y.values[static_cast<std::size_t>(row * 8 + j)] ==
            static_cast<float>(expected[static_cast<std::size_t>(j)] * w.values[static_cast<std::size_t>(j)] +
                               b.values[static_cast<std::size_t>(j)]));
  }
}

TEST_CASE("layer_norm over two dimensions without weight or bias, in place", "[portable][normalization]") {
  Owned<float> x({2, 2, 2}, {1, 2, 3, 4, 10, 10, 10, 10});
  Owned<float> mean({2, 1, 1}, {0, 0});
  Owned<float> rstd({2, 1, 1}, {0, 0});
  const std::vector<int64_t> normalized_shape = {2, 2};
  KernelContext ctx;
  REQUIRE(portable::native_layer_norm_out(ctx, x, normalized_shape, std::nullopt, std::nullopt, 0.0, x, mean, rstd));
  CHECK(mean.values == std::vector<float>{2.5f, 10.0f});
  CHECK(x.values[0] == Approx(-1.5 / std::sqrt(1.25)));
  CHECK(std::isnan(x.values[4]));  // a constant row with eps 0: 0 * inf, NaN as in PyTorch
}

TEST_CASE("group_norm: statistics per sample and group, weight per channel", "[portable][normalization]") {
  // N = 1, C = 4, HxW = 2, 2 groups of 2 channels.
  Owned<float> x({1, 4, 2}, {1, 2, 3, 4, 0, 0, 8, 8});
  Owned<float> w({4}, {1, 1, 2, 2});
  Owned<float> b({4}, {0, 0, 0, 10});
  Owned<float> y({1, 4, 2}, Owned<float>::filled({1, 4, 2}, 0));
  Owned<float> mean({1, 2}, {0, 0});
  Owned<float> rstd({1, 2}, {0, 0});
  KernelContext ctx;
  REQUIRE(portable::native_group_norm_out(ctx, x, TensorRef(w), TensorRef(b), 1, 4, 2, 2, 1e-5, y, mean, rstd));
  CHECK(mean.values == std::vector<float>{2.5f, 4.0f});
  const std::vector<double> first = normalized({1, 2, 3, 4}, 1e-5);
  CHECK(y.values[0] == static_cast<float>(first[0]));
  CHECK(y.values[3] == static_cast<float>(first[3]));
  const std::vector<double> second = normalized({0, 0, 8, 8}, 1e-5);
  CHECK(y.values[4] == static_cast<float>(second[0] * 2));      // channel 2: weight 2
  CHECK(y.values[6] == static_cast<float>(second[2] * 2 + 10));  // channel 3: weight 2, bias 10
  CHECK(rstd.values[1] == static_cast<float>(1 / std::sqrt(16.0 + 1e-5)));
}

TEST_CASE("normalization errors name the operator and the argument", "[portable][normalization]") {
  KernelContext ctx;
  Owned<float> x({2, 4}, Owned<float>::filled({2, 4}, 1));
  Owned<float> y({2, 4}, Owned<float>::filled({2, 4}, 0));
  Owned<float> stats({2, 1}, {0, 0});
  Owned<float> w3({3}, {1, 1, 1});
  const std::vector<int64_t> last = {4};
  const std::vector<int64_t> wrong = {3};
  CHECK_FALSE(portable::native_layer_norm_out(ctx, x, wrong, std::nullopt, std::nullopt, 1e-5, y, stats, stats));
  CHECK(failed_with(ctx, {"aten::native_layer_norm.out", "normalized_shape", "[3]"}));
  ctx.reset();
  Owned<float> stats2({2, 1}, {0, 0});
  CHECK_FALSE(portable::native_layer_norm_out(ctx, x, last, TensorRef(w3), std::nullopt, 1e-5, y, stats, stats2));
  CHECK(failed_with(ctx, {"aten::native_layer_norm.out", "weight", "[3]", "[4]"}));
  ctx.reset();
  Owned<float> g_stats({2, 3}, Owned<float>::filled({2, 3}, 0));
  Owned<float> g_stats2({2, 3}, Owned<float>::filled({2, 3}, 0));
  CHECK_FALSE(portable::native_group_norm_out(ctx, x, std::nullopt, std::nullopt, 2, 4, 1, 3, 1e-5, y, g_stats, g_stats2));
  CHECK(failed_with(ctx, {"aten::native_group_norm.out", "group = 3", "C = 4"}));
  ctx.reset();
  CHECK_FALSE(portable::native_group_norm_out(ctx, x, std::nullopt, std::nullopt, 2, 4, 5, 2, 1e-5, y, g_stats, g_stats2));
  CHECK(failed_with(ctx, {"aten::native_group_norm.out", "HxW = 5"}));
}
