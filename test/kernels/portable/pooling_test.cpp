// aten::max_pool2d_with_indices.out, avg_pool2d.out and
// adaptive_avg_pool2d.out: hand-computed windows (padding, stride, dilation,
// ceil_mode, divisors), PyTorch's tie, NaN and -inf rules, summation order,
// layouts, zero batches and every error.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

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

// ---- avg_pool2d ----

namespace {

struct AvgPool {
  Sizes kernel_size{2, 2};
  Sizes stride{};
  Sizes padding{0, 0};
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::optional<int64_t> divisor_override;

  template <typename T>
  bool run(KernelContext& ctx, const Owned<T>& self, Owned<T>& out) const {
    return portable::avg_pool2d_out(ctx, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                    divisor_override, out);
  }
};

}  // namespace

TEST_CASE("avg_pool2d: hand-computed windows", "[portable][avg_pool2d]") {
  KernelContext ctx;
  AvgPool pool;
  Owned<float> x({1, 1, 5, 5}, counting(25));
  SECTION("2x2, stride defaulting to the kernel, floor mode") {
    Owned<float> out({1, 1, 2, 2}, {0, 0, 0, 0});
    REQUIRE(pool.run(ctx, x, out));
    CHECK(out.values == std::vector<float>{3, 5, 13, 15});
  }
  SECTION("ceil_mode keeps the partial windows, divided by what they cover") {
    pool.ceil_mode = true;
    Owned<float> out({1, 1, 3, 3}, Owned<float>::filled({1, 1, 3, 3}, 0));
    REQUIRE(pool.run(ctx, x, out));
    CHECK(out.values == std::vector<float>{3, 5, 6.5f, 13, 15, 16.5f, 20.5f, 22.5f, 24});
  }
  SECTION("padding counted, or not") {
    pool.kernel_size = {3};
    pool.stride = {2};
    pool.padding = {1};
    pool.ceil_mode = true;
    Owned<float> out({1, 1, 3, 3}, Owned<float>::filled({1, 1, 3, 3}, 0));
    REQUIRE(pool.run(ctx, x, out));
    // The corner window covers 0, 1, 5, 6 of its 9 places.
    CHECK(out.values[0] == 12.0f / 9);
    CHECK(out.values[4] == 12);
    pool.count_include_pad = false;
    REQUIRE(pool.run(ctx, x, out));
    CHECK(out.values == std::vector<float>{3, 4.5f, 6, 10.5f, 12, 13.5f, 18, 19.5f, 21});
  }
  SECTION("divisor_override replaces the window size, negative too") {
    pool.divisor_override = 3;
    Owned<float> out({1, 1, 2, 2}, {0, 0, 0, 0});
    REQUIRE(pool.run(ctx, x, out));
    CHECK(out.values == std::vector<float>{4, 20.0f / 3, 52.0f / 3, 20});
    pool.divisor_override = -2;
    REQUIRE(pool.run(ctx, x, out));
    CHECK(out.values == std::vector<float>{-6, -10, -26, -30});
  }
  SECTION("each window is summed in row-major order in float32, then divided") {
    // 2^24 + 1 + 1: in order, each 1 is lost; summed otherwise they would not be.
    Owned<float> big({1, 1, 1, 3}, {16777216.0f, 1, 1});
    Owned<float> out({1, 1, 1, 1}, {0});
    pool.kernel_size = {1, 3};
    REQUIRE(pool.run(ctx, big, out));
    CHECK(out.values[0] == 16777216.0f / 3);
  }
}

TEST_CASE("avg_pool2d: float64 and int64 (truncating division)", "[portable][avg_pool2d]") {
  KernelContext ctx;
  AvgPool pool;
  pool.kernel_size = {2};
  Owned<double> d({2, 2, 2}, {1, 2, 3, 5, -1, -2, -3, -5});
  Owned<double> d_out({2, 1, 1}, {0, 0});
  REQUIRE(pool.run(ctx, d, d_out));
  CHECK(d_out.values == std::vector<double>{2.75, -2.75});
  Owned<int64_t> i({1, 1, 2, 2}, {-3, -4, -5, -7});
  Owned<int64_t> i_out({1, 1, 1, 1}, {0});
  REQUIRE(pool.run(ctx, i, i_out));
  CHECK(i_out.values[0] == -4);  // -19 / 4 truncates toward zero
  SECTION("INT64_MIN / -1 wraps rather than trapping") {
    Owned<int64_t> low({1, 1, 1, 1}, {std::numeric_limits<int64_t>::min()});
    Owned<int64_t> low_out({1, 1, 1, 1}, {0});
    pool.kernel_size = {1};
    pool.divisor_override = -1;
    REQUIRE(pool.run(ctx, low, low_out));
    CHECK(low_out.values[0] == std::numeric_limits<int64_t>::min());
  }
}

TEST_CASE("avg_pool2d: layouts do not change the bits; empty batch", "[portable][avg_pool2d]") {
  KernelContext ctx;
  AvgPool pool;
  pool.kernel_size = {3, 2};
  pool.stride = {2, 1};
  pool.padding = {1, 1};
  pool.ceil_mode = true;
  std::mt19937_64 rng(7);
  const std::vector<float> values = et_ops::test::random_floats(rng, 2 * 3 * 7 * 6);
  Owned<float> x({2, 3, 7, 6}, values);
  Owned<float> x_last({2, 3, 7, 6}, values, {0, 2, 3, 1});
  Owned<float> out({2, 3, 4, 7}, Owned<float>::filled({2, 3, 4, 7}, 0));
  Owned<float> out_last({2, 3, 4, 7}, Owned<float>::filled({2, 3, 4, 7}, 0), {0, 2, 3, 1});
  REQUIRE(pool.run(ctx, x, out));
  REQUIRE(pool.run(ctx, x_last, out_last));
  CHECK(et_ops::test::bits_of(out_last.logical()) == et_ops::test::bits_of(out.logical()));
  Owned<float> empty({0, 3, 4, 4}, {});
  Owned<float> empty_out({0, 3, 2, 2}, {});
  pool = AvgPool{};
  CHECK(pool.run(ctx, empty, empty_out));
}

TEST_CASE("avg_pool2d: errors name the argument and the value", "[portable][avg_pool2d][errors]") {
  Owned<float> x({1, 2, 4, 4}, Owned<float>::filled({1, 2, 4, 4}, 1));
  Owned<float> out({1, 2, 2, 2}, Owned<float>::filled({1, 2, 2, 2}, 0));
  KernelContext ctx;
  AvgPool pool;
  SECTION("an unsupported dtype") {
    Owned<int32_t> i({1, 1, 2, 2}, {1, 2, 3, 4});
    Owned<int32_t> i_out({1, 1, 1, 1}, {0});
    CHECK_FALSE(pool.run(ctx, i, i_out));
    CHECK_ERROR(ctx, "aten::avg_pool2d.out", "self has dtype int32, which is not supported; expected one of float32, "
                "float64, int64");
  }
  SECTION("a zero divisor_override") {
    pool.divisor_override = 0;
    CHECK_FALSE(pool.run(ctx, x, out));
    CHECK_ERROR(ctx, "divisor_override = 0");
  }
  SECTION("an empty channel dimension") {
    Owned<float> empty({1, 0, 4, 4}, {});
    Owned<float> empty_out({1, 0, 2, 2}, {});
    CHECK_FALSE(pool.run(ctx, empty, empty_out));
    CHECK_ERROR(ctx, "self of shape [1, 0, 4, 4] is empty in dimension 1");
  }
  SECTION("window parameters") {
    pool.kernel_size = {2, 2, 2};
    CHECK_FALSE(pool.run(ctx, x, out));
    CHECK_ERROR(ctx, "aten::avg_pool2d.out", "kernel_size must hold 1 or 2 values, got [2, 2, 2]");
    ctx.reset();
    pool.kernel_size = {2};
    pool.stride = {0};
    CHECK_FALSE(pool.run(ctx, x, out));
    CHECK_ERROR(ctx, "stride must hold values in [1, 2147483647], got [0]");
    ctx.reset();
    pool.stride = {};
    pool.padding = {2};
    CHECK_FALSE(pool.run(ctx, x, out));
    CHECK_ERROR(ctx, "padding [2, 2] must be at most half of kernel_size [2, 2]");
  }
  SECTION("an output that would be empty") {
    pool.kernel_size = {5};
    CHECK_FALSE(pool.run(ctx, x, out));
    CHECK_ERROR(ctx, "the output size [0, 0] computed for input [4, 4] is too small");
  }
  SECTION("out of another shape or dtype, or overlapping self") {
    Owned<float> wrong({1, 2, 3, 3}, Owned<float>::filled({1, 2, 3, 3}, 0));
    CHECK_FALSE(pool.run(ctx, x, wrong));
    CHECK_ERROR(ctx, "out has shape [1, 2, 3, 3], expected [1, 2, 2, 2]", "never resized");
    ctx.reset();
    Owned<double> wide({1, 2, 2, 2}, Owned<double>::filled({1, 2, 2, 2}, 0));
    CHECK_FALSE(portable::avg_pool2d_out(ctx, x, pool.kernel_size, pool.stride, pool.padding, false, true,
                                         std::nullopt, wide));
    CHECK_ERROR(ctx, "out has dtype float64, expected float32");
    ctx.reset();
    std::vector<float> buffer(32, 1.0f);
    et_ops::Tensor self(DType::Float32, buffer.data(), {1, 2, 4, 4});
    et_ops::Tensor aliased(DType::Float32, buffer.data() + 4, {1, 2, 2, 2});
    CHECK_FALSE(portable::avg_pool2d_out(ctx, self, pool.kernel_size, pool.stride, pool.padding, false, true,
                                         std::nullopt, aliased));
    CHECK_ERROR(ctx, "out overlaps self in memory");
  }
}

// ---- adaptive_avg_pool2d ----

TEST_CASE("adaptive_avg_pool2d: PyTorch's start and end indices", "[portable][adaptive_avg_pool2d]") {
  KernelContext ctx;
  Owned<float> x({1, 1, 4, 4}, counting(16));
  SECTION("global average pooling") {
    Owned<float> out({1, 1, 1, 1}, {0});
    REQUIRE(portable::adaptive_avg_pool2d_out(ctx, x, Sizes{1, 1}, out));
    CHECK(out.values[0] == 7.5f);
  }
  SECTION("windows overlap when the sizes do not divide: 4 -> 3 covers [0,2) [1,3) [2,4)") {
    Owned<float> out({1, 1, 3, 3}, Owned<float>::filled({1, 1, 3, 3}, 0));
    REQUIRE(portable::adaptive_avg_pool2d_out(ctx, x, Sizes{3, 3}, out));
    CHECK(out.values == std::vector<float>{2.5f, 3.5f, 4.5f, 6.5f, 7.5f, 8.5f, 10.5f, 11.5f, 12.5f});
  }
  SECTION("a larger output repeats elements") {
    Owned<float> row({1, 1, 1, 2}, {1, 3});
    Owned<float> out({1, 1, 1, 3}, {0, 0, 0});
    REQUIRE(portable::adaptive_avg_pool2d_out(ctx, row, Sizes{1, 3}, out));
    CHECK(out.values == std::vector<float>{1, 2, 3});
  }
  SECTION("the sum is divided by the height, then by the width (two roundings)") {
    Owned<float> ones({1, 1, 3, 3}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f});
    Owned<float> out({1, 1, 1, 1}, {0});
    REQUIRE(portable::adaptive_avg_pool2d_out(ctx, ones, Sizes{1, 1}, out));
    float sum = 0;
    for (float v : ones.values) sum += v;
    CHECK(et_ops::test::bits_of(out.values[0]) == et_ops::test::bits_of(sum / 3.0f / 3.0f));
  }
  SECTION("3-D self, empty batch and channels, a zero output size") {
    Owned<double> planes({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    Owned<double> planes_out({2, 1, 1}, {0, 0});
    REQUIRE(portable::adaptive_avg_pool2d_out(ctx, planes, Sizes{1, 1}, planes_out));
    CHECK(planes_out.values == std::vector<double>{2.5, 6.5});
    Owned<float> no_channels({1, 0, 4, 4}, {});
    Owned<float> no_channels_out({1, 0, 2, 2}, {});
    CHECK(portable::adaptive_avg_pool2d_out(ctx, no_channels, Sizes{2, 2}, no_channels_out));
    Owned<float> flat({1, 1, 0, 2}, {});
    CHECK(portable::adaptive_avg_pool2d_out(ctx, x, Sizes{0, 2}, flat));
  }
}

TEST_CASE("adaptive_avg_pool2d: errors", "[portable][adaptive_avg_pool2d][errors]") {
  Owned<float> x({1, 1, 4, 4}, counting(16));
  Owned<float> out({1, 1, 2, 2}, {0, 0, 0, 0});
  KernelContext ctx;
  SECTION("an empty spatial dimension") {
    Owned<float> empty({1, 1, 0, 4}, {});
    CHECK_FALSE(portable::adaptive_avg_pool2d_out(ctx, empty, Sizes{2, 2}, out));
    CHECK_ERROR(ctx, "aten::adaptive_avg_pool2d.out", "self of shape [1, 1, 0, 4] is empty in dimension 2");
  }
  SECTION("output_size of one value, or negative") {
    CHECK_FALSE(portable::adaptive_avg_pool2d_out(ctx, x, Sizes{2}, out));
    CHECK_ERROR(ctx, "output_size must hold 2 values of at least 0, got [2]");
    ctx.reset();
    CHECK_FALSE(portable::adaptive_avg_pool2d_out(ctx, x, Sizes{-1, 2}, out));
    CHECK_ERROR(ctx, "output_size must hold 2 values of at least 0, got [-1, 2]");
  }
  SECTION("integers are not supported") {
    Owned<int64_t> i({1, 1, 2, 2}, {1, 2, 3, 4});
    Owned<int64_t> i_out({1, 1, 1, 1}, {0});
    CHECK_FALSE(portable::adaptive_avg_pool2d_out(ctx, i, Sizes{1, 1}, i_out));
    CHECK_ERROR(ctx, "self has dtype int64, which is not supported");
  }
  SECTION("out of another shape") {
    Owned<float> wrong({1, 1, 3, 3}, Owned<float>::filled({1, 1, 3, 3}, 0));
    CHECK_FALSE(portable::adaptive_avg_pool2d_out(ctx, x, Sizes{2, 2}, wrong));
    CHECK_ERROR(ctx, "out has shape [1, 1, 3, 3], expected [1, 1, 2, 2]");
  }
}
