// aten::max_pool2d_with_indices.out: hand-computed windows (padding,
// stride, dilation, ceil_mode), PyTorch's tie, NaN and -inf rules, layouts,
// zero batches and every error.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

using et_ops::DType;
using et_ops::KernelContext;
using et_ops::TensorRef;
using et_ops::test::Owned;
namespace portable = et_ops::kernels::portable;

using Sizes = std::vector<int64_t>;

namespace {

struct Pool {
  Sizes kernel_size{2, 2};
  Sizes stride{};
  Sizes padding{0, 0};
  Sizes dilation{1, 1};
  bool ceil_mode = false;

  bool run(KernelContext& ctx, TensorRef self, TensorRef out, TensorRef indices) const {
    return portable::max_pool2d_with_indices_out(ctx, self, kernel_size, stride, padding, dilation, ceil_mode, out,
                                                 indices);
  }
};

std::vector<float> counting(int n, float start = 0) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(start + static_cast<float>(i));
  return v;
}

const float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("max_pool2d: hand-computed windows", "[portable][max_pool2d]") {
  KernelContext ctx;
  Pool pool;
  SECTION("2x2, stride defaulting to the kernel") {
    Owned<float> x({1, 1, 4, 4}, counting(16));
    Owned<float> out({1, 1, 2, 2}, {0, 0, 0, 0});
    Owned<int64_t> indices({1, 1, 2, 2}, {-1, -1, -1, -1});
    REQUIRE(pool.run(ctx, x, out, indices));
    CHECK(out.values == std::vector<float>{5, 7, 13, 15});
    CHECK(indices.values == std::vector<int64_t>{5, 7, 13, 15});
  }
  SECTION("3-D self, padding 1: padding never wins") {
    Owned<float> x({1, 3, 3}, counting(9, -9));  // -9 .. -1
    Owned<float> out({1, 3, 3}, Owned<float>::filled({1, 3, 3}, 0));
    Owned<int64_t> indices({1, 3, 3}, Owned<int64_t>::filled({1, 3, 3}, 0));
    pool.kernel_size = {3};
    pool.stride = {1};
    pool.padding = {1};
    REQUIRE(pool.run(ctx, x, out, indices));
    CHECK(out.values == std::vector<float>{-5, -4, -4, -2, -1, -1, -2, -1, -1});
    CHECK(indices.values == std::vector<int64_t>{4, 5, 5, 7, 8, 8, 7, 8, 8});
  }
  SECTION("ceil_mode keeps a partial last window") {
    Owned<float> x({1, 1, 5, 5}, counting(25));
    pool.ceil_mode = true;
    Owned<float> out({1, 1, 3, 3}, Owned<float>::filled({1, 1, 3, 3}, 0));
    Owned<int64_t> indices({1, 1, 3, 3}, Owned<int64_t>::filled({1, 1, 3, 3}, 0));
    REQUIRE(pool.run(ctx, x, out, indices));
    CHECK(out.values == std::vector<float>{6, 8, 9, 16, 18, 19, 21, 23, 24});
    CHECK(indices.values == std::vector<int64_t>{6, 8, 9, 16, 18, 19, 21, 23, 24});
    pool.ceil_mode = false;
    Owned<float> floor_out({1, 1, 2, 2}, {0, 0, 0, 0});
    Owned<int64_t> floor_indices({1, 1, 2, 2}, {0, 0, 0, 0});
    REQUIRE(pool.run(ctx, x, floor_out, floor_indices));
    CHECK(floor_out.values == std::vector<float>{6, 8, 16, 18});
  }
  SECTION("dilation 2 looks at the corners") {
    Owned<float> x({1, 1, 3, 3}, {1, 9, 2, 9, 9, 9, 3, 9, 4});
    Owned<float> out({1, 1, 1, 1}, {0});
    Owned<int64_t> indices({1, 1, 1, 1}, {0});
    pool.dilation = {2};
    REQUIRE(pool.run(ctx, x, out, indices));
    CHECK(out.values[0] == 4);
    CHECK(indices.values[0] == 8);
  }
  SECTION("the first of equal maxima wins") {
    Owned<float> x({1, 1, 2, 2}, {7, 7, 7, 7});
    Owned<float> out({1, 1, 1, 1}, {0});
    Owned<int64_t> indices({1, 1, 1, 1}, {-1});
    REQUIRE(pool.run(ctx, x, out, indices));
    CHECK(indices.values[0] == 0);
  }
  SECTION("a NaN always wins, the last NaN most") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Owned<float> x({1, 1, 2, 3}, {1, nan, 5, nan, 2, 3});
    Owned<float> out({1, 1, 1, 1}, {0});
    Owned<int64_t> indices({1, 1, 1, 1}, {-1});
    pool.kernel_size = {2, 3};
    REQUIRE(pool.run(ctx, x, out, indices));
    CHECK(std::isnan(out.values[0]));
    CHECK(indices.values[0] == 3);
  }
  SECTION("a window of -inf reports its first position inside the input") {
    Owned<float> x({1, 1, 2, 2}, {-kInf, -kInf, -kInf, -kInf});
    Owned<float> out({1, 1, 2, 2}, {0, 0, 0, 0});
    Owned<int64_t> indices({1, 1, 2, 2}, {-1, -1, -1, -1});
    pool.padding = {1, 1};
    REQUIRE(pool.run(ctx, x, out, indices));
    CHECK(out.values == std::vector<float>{-kInf, -kInf, -kInf, -kInf});
    CHECK(indices.values == std::vector<int64_t>{0, 1, 2, 3});
  }
  SECTION("batches and channels are separate planes") {
    Owned<float> x({2, 2, 2, 2}, counting(16));
    Owned<float> out({2, 2, 1, 1}, {0, 0, 0, 0});
    Owned<int64_t> indices({2, 2, 1, 1}, {0, 0, 0, 0});
    REQUIRE(pool.run(ctx, x, out, indices));
    CHECK(out.values == std::vector<float>{3, 7, 11, 15});
    CHECK(indices.values == std::vector<int64_t>{3, 3, 3, 3});
  }
}

TEST_CASE("max_pool2d: channels-last tensors give the same results", "[portable][max_pool2d]") {
  auto rng = et_ops::test::seeded_rng(3);
  const Sizes x_sizes{2, 3, 5, 4};
  const Sizes out_sizes{2, 3, 3, 2};
  const auto values = et_ops::test::random_floats(rng, et_ops::test::numel_of(x_sizes));
  Pool pool;
  pool.kernel_size = {3, 2};
  pool.stride = {2, 2};
  pool.padding = {1, 0};
  KernelContext ctx;
  Owned<float> x(x_sizes, values);
  Owned<float> out(out_sizes, Owned<float>::filled(out_sizes, 0));
  Owned<int64_t> indices(out_sizes, Owned<int64_t>::filled(out_sizes, 0));
  REQUIRE(pool.run(ctx, x, out, indices));
  const std::vector<uint8_t> channels_last{0, 2, 3, 1};
  Owned<float> x_cl(x_sizes, values, channels_last);
  Owned<float> out_cl(out_sizes, Owned<float>::filled(out_sizes, 0), channels_last);
  Owned<int64_t> indices_cl(out_sizes, Owned<int64_t>::filled(out_sizes, 0), channels_last);
  REQUIRE(pool.run(ctx, x_cl, out_cl, indices_cl));
  CHECK(out_cl.logical() == out.values);
  CHECK(indices_cl.logical() == indices.values);
  // Every reported index holds the reported maximum of its plane.
  for (std::size_t i = 0; i < out.values.size(); ++i) {
    const std::size_t plane = i / 6;
    CHECK(values[plane * 20 + static_cast<std::size_t>(indices.values[i])] == out.values[i]);
  }
}

TEST_CASE("max_pool2d: an empty batch", "[portable][max_pool2d]") {
  KernelContext ctx;
  Pool pool;
  Owned<float> x({0, 2, 4, 4}, {});
  Owned<float> out({0, 2, 2, 2}, {});
  Owned<int64_t> indices({0, 2, 2, 2}, {});
  CHECK(pool.run(ctx, x, out, indices));
}

TEST_CASE("max_pool2d: errors name the argument and the value", "[portable][max_pool2d][errors]") {
  Owned<float> x({1, 2, 4, 4}, Owned<float>::filled({1, 2, 4, 4}, 1));
  Owned<float> out({1, 2, 2, 2}, Owned<float>::filled({1, 2, 2, 2}, 0));
  Owned<int64_t> indices({1, 2, 2, 2}, Owned<int64_t>::filled({1, 2, 2, 2}, 0));
  KernelContext ctx;
  Pool pool;
  SECTION("a 2-D self") {
    Owned<float> x2({4, 4}, Owned<float>::filled({4, 4}, 1));
    CHECK_FALSE(pool.run(ctx, x2, out, indices));
    CHECK_ERROR(ctx, "aten::max_pool2d_with_indices.out", "self must be 3-D [C, H, W] or 4-D [N, C, H, W], got shape [4, 4]");
  }
  SECTION("an empty non-batch dimension") {
    Owned<float> empty({1, 0, 4, 4}, {});
    CHECK_FALSE(pool.run(ctx, empty, out, indices));
    CHECK_ERROR(ctx, "self of shape [1, 0, 4, 4] is empty in dimension 1");
  }
  SECTION("a self of another dtype") {
    Owned<double> x64({1, 2, 4, 4}, Owned<double>::filled({1, 2, 4, 4}, 1));
    CHECK_FALSE(pool.run(ctx, x64, out, indices));
    CHECK_ERROR(ctx, "self must be float32, got float64");
  }
  SECTION("indices that are not int64") {
    Owned<int32_t> i32({1, 2, 2, 2}, Owned<int32_t>::filled({1, 2, 2, 2}, 0));
    CHECK_FALSE(pool.run(ctx, x, out, i32));
    CHECK_ERROR(ctx, "indices must be int64, got int32");
  }
  SECTION("a kernel_size of three values") {
    pool.kernel_size = {2, 2, 2};
    CHECK_FALSE(pool.run(ctx, x, out, indices));
    CHECK_ERROR(ctx, "kernel_size must hold 1 or 2 values, got [2, 2, 2]");
  }
  SECTION("a zero kernel_size") {
    pool.kernel_size = {0, 2};
    CHECK_FALSE(pool.run(ctx, x, out, indices));
    CHECK_ERROR(ctx, "kernel_size must hold values in [1, 2147483647], got [0, 2]");
  }
  SECTION("a kernel_size beyond int32") {
    pool.kernel_size = {int64_t{1} << 33};
    CHECK_FALSE(pool.run(ctx, x, out, indices));
    CHECK_ERROR(ctx, "kernel_size must hold values in [1, 2147483647], got [8589934592]");
  }
  SECTION("a zero stride") {
    pool.stride = {0};
    CHECK_FALSE(pool.run(ctx, x, out, indices));
    CHECK_ERROR(ctx, "stride must hold values in [1, 2147483647], got [0]");
  }
  SECTION("a stride of three values") {
    pool.stride = {1, 1, 1};
    CHECK_FALSE(pool.run(ctx, x, out, indices));
    CHECK_ERROR(ctx, "stride must hold 0, 1 or 2 values, got [1, 1, 1]");
  }
  SECTION("padding beyond half the kernel") {
    pool.padding = {0, 2};
    CHECK_FALSE(pool.run(ctx, x, out, indices));
    CHECK_ERROR(ctx, "padding [0, 2] must be at most half of kernel_size [2, 2]");
  }
  SECTION("a negative padding") {
    pool.padding = {-1};
    CHECK_FALSE(pool.run(ctx, x, out, indices));
    CHECK_ERROR(ctx, "padding must hold values in [0, 2147483647], got [-1]");
  }
  SECTION("a zero dilation") {
    pool.dilation = {1, 0};
    CHECK_FALSE(pool.run(ctx, x, out, indices));
    CHECK_ERROR(ctx, "dilation must hold values in [1, 2147483647], got [1, 0]");
  }
  SECTION("an output that would be empty") {
    pool.kernel_size = {5, 5};
    CHECK_FALSE(pool.run(ctx, x, out, indices));
    CHECK_ERROR(ctx, "the output size [0, 0] computed for input [4, 4] is too small");
  }
  SECTION("out of the wrong shape") {
    Owned<float> wrong({1, 2, 3, 3}, Owned<float>::filled({1, 2, 3, 3}, 0));
    CHECK_FALSE(pool.run(ctx, x, wrong, indices));
    CHECK_ERROR(ctx, "out has shape [1, 2, 3, 3], expected [1, 2, 2, 2]", "never resized");
  }
  SECTION("indices of the wrong shape") {
    Owned<int64_t> wrong({2, 2, 2}, Owned<int64_t>::filled({2, 2, 2}, 0));
    CHECK_FALSE(pool.run(ctx, x, out, wrong));
    CHECK_ERROR(ctx, "indices has shape [2, 2, 2], expected [1, 2, 2, 2]");
  }
  SECTION("out and indices sharing memory") {
    std::vector<int64_t> buffer(8, 0);
    et_ops::Tensor as_floats(DType::Float32, buffer.data(), {1, 2, 2, 2});
    et_ops::Tensor as_indices(DType::Int64, buffer.data(), {1, 2, 2, 2});
    CHECK_FALSE(pool.run(ctx, x, as_floats, as_indices));
    CHECK_ERROR(ctx, "out overlaps indices in memory");
  }
}
