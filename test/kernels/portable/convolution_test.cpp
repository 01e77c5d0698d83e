// aten::convolution.out: hand-computed 2-D convolutions (padding, stride,
// dilation, groups, bias), layouts, zero sizes and every error.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

using et_ops::DType;
using et_ops::KernelContext;
using et_ops::TensorRef;
using et_ops::test::bits_of;
using et_ops::test::Owned;
namespace portable = et_ops::kernels::portable;

using Sizes = std::vector<int64_t>;

namespace {

// A convolution with the common defaults: stride 1, no padding, dilation 1,
// groups 1, not transposed.
struct Conv {
  Sizes stride{1, 1};
  Sizes padding{0, 0};
  Sizes dilation{1, 1};
  Sizes output_padding{0, 0};
  int64_t groups = 1;
  bool transposed = false;

  bool run(KernelContext& ctx, TensorRef input, TensorRef weight, std::optional<TensorRef> bias,
           TensorRef out) const {
    return portable::convolution_out(ctx, input, weight, bias, stride, padding, dilation, transposed, output_padding,
                                     groups, out);
  }
};

std::vector<float> one_to(int n) {
  std::vector<float> v;
  for (int i = 1; i <= n; ++i) v.push_back(static_cast<float>(i));
  return v;
}

}  // namespace

TEST_CASE("convolution: hand-computed cases", "[portable][convolution]") {
  KernelContext ctx;
  Conv conv;
  SECTION("2x2 kernel, with and without bias") {
    Owned<float> x({1, 1, 3, 3}, one_to(9));
    Owned<float> w({1, 1, 2, 2}, {1, 0, 0, 1});
    Owned<float> out({1, 1, 2, 2}, {-1, -1, -1, -1});
    REQUIRE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK(out.values == std::vector<float>{6, 8, 12, 14});
    Owned<float> bias({1}, {10});
    REQUIRE(conv.run(ctx, x, w, bias.ref(), out));
    CHECK(out.values == std::vector<float>{16, 18, 22, 24});
  }
  SECTION("padding 1 counts the taps inside the input") {
    Owned<float> x({1, 1, 3, 3}, Owned<float>::filled({1, 1, 3, 3}, 1));
    Owned<float> w({1, 1, 3, 3}, Owned<float>::filled({1, 1, 3, 3}, 1));
    Owned<float> out({1, 1, 3, 3}, Owned<float>::filled({1, 1, 3, 3}, 0));
    conv.padding = {1};
    REQUIRE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK(out.values == std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4});
  }
  SECTION("stride 2 given as one value") {
    std::vector<float> values(16);
    for (int i = 0; i < 16; ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(i);
    Owned<float> x({1, 1, 4, 4}, values);
    Owned<float> w({1, 1, 1, 1}, {2});
    Owned<float> out({1, 1, 2, 2}, {0, 0, 0, 0});
    conv.stride = {2};
    REQUIRE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK(out.values == std::vector<float>{0, 4, 16, 20});
  }
  SECTION("dilation 2 spreads the kernel over the corners") {
    Owned<float> x({1, 1, 3, 3}, one_to(9));
    Owned<float> w({1, 1, 2, 2}, {1, 1, 1, 1});
    Owned<float> out({1, 1, 1, 1}, {0});
    conv.dilation = {2, 2};
    REQUIRE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK(out.values[0] == 1 + 3 + 7 + 9);
  }
  SECTION("asymmetric stride, padding and dilation") {
    Owned<float> x({1, 1, 3, 4}, one_to(12));
    Owned<float> w({1, 1, 1, 2}, {1, 10});
    conv.stride = {2, 1};
    conv.padding = {0, 1};
    conv.dilation = {1, 2};
    // height: (3 - 1) / 2 + 1 = 2 rows (0, 2); width: (4 + 2 - 3) / 1 + 1 = 4.
    Owned<float> out({1, 1, 2, 4}, Owned<float>::filled({1, 1, 2, 4}, 0));
    REQUIRE(conv.run(ctx, x, w, std::nullopt, out));
    // out[r, c] = x[r', c - 1] + 10 * x[r', c + 1], taps outside are 0.
    CHECK(out.values == std::vector<float>{20, 31, 42, 3, 100, 119, 130, 11});
  }
  SECTION("several input and output channels") {
    Owned<float> x({1, 2, 1, 1}, {1, 2});
    Owned<float> w({3, 2, 1, 1}, {1, 1, 1, -1, 2, 0});
    Owned<float> bias({3}, {0, 0, 0.5f});
    Owned<float> out({1, 3, 1, 1}, {0, 0, 0});
    REQUIRE(conv.run(ctx, x, w, bias.ref(), out));
    CHECK(out.values == std::vector<float>{3, -1, 2.5f});
  }
  SECTION("groups: each output channel sees its group's inputs only") {
    Owned<float> x({2, 2, 1, 2}, {1, 1, 2, 2, 3, 3, 4, 4});
    Owned<float> w({4, 1, 1, 1}, {1, 10, 100, 1000});
    Owned<float> out({2, 4, 1, 2}, Owned<float>::filled({2, 4, 1, 2}, 0));
    conv.groups = 2;
    REQUIRE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK(out.values == std::vector<float>{1, 1, 10, 10, 200, 200, 2000, 2000, 3, 3, 30, 30, 400, 400, 4000, 4000});
  }
  SECTION("empty output_padding is accepted") {
    Owned<float> x({1, 1, 1, 1}, {3});
    Owned<float> w({1, 1, 1, 1}, {2});
    Owned<float> out({1, 1, 1, 1}, {0});
    conv.output_padding = {};
    REQUIRE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK(out.values[0] == 6);
  }
}

TEST_CASE("convolution: layouts do not change the bits", "[portable][convolution]") {
  auto rng = et_ops::test::seeded_rng(11);
  const Sizes x_sizes{2, 4, 5, 6};
  const Sizes w_sizes{6, 2, 3, 2};
  const Sizes out_sizes{2, 6, 3, 3};
  const auto x_values = et_ops::test::random_floats(rng, et_ops::test::numel_of(x_sizes));
  const auto w_values = et_ops::test::random_floats(rng, et_ops::test::numel_of(w_sizes));
  const auto b_values = et_ops::test::random_floats(rng, 6);
  Conv conv;
  conv.groups = 2;
  conv.stride = {2, 2};
  conv.padding = {1, 0};
  KernelContext ctx;
  Owned<float> x(x_sizes, x_values);
  Owned<float> w(w_sizes, w_values);
  Owned<float> b({6}, b_values);
  Owned<float> reference(out_sizes, Owned<float>::filled(out_sizes, 0));
  REQUIRE(conv.run(ctx, x, w, b.ref(), reference));

  // Against a float64 direct convolution.
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t oc = 0; oc < 6; ++oc)
      for (int64_t oh = 0; oh < 3; ++oh)
        for (int64_t ow = 0; ow < 3; ++ow) {
          double exact = b_values[static_cast<std::size_t>(oc)];
          double magnitude = std::fabs(exact);
          for (int64_t icl = 0; icl < 2; ++icl)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 2; ++kw) {
                const int64_t ih = oh * 2 - 1 + kh;
                const int64_t iw = ow * 2 + kw;
                if (ih < 0 || ih >= 5) continue;
                const int64_t ic = (oc / 3) * 2 + icl;
                const double term = static_cast<double>(x_values[static_cast<std::size_t>(((n * 4 + ic) * 5 + ih) * 6 + iw)]) *
                                    w_values[static_cast<std::size_t>(((oc * 2 + icl) * 3 + kh) * 2 + kw)];
                exact += term;
                magnitude += std::fabs(term);
              }
          const float got = reference.values[static_cast<std::size_t>(((n * 6 + oc) * 3 + oh) * 3 + ow)];
          CHECK(std::fabs(got - exact) <= 1e-6 * magnitude);
        }

  const std::vector<uint8_t> channels_last = {0, 2, 3, 1};
  Owned<float> x_cl(x_sizes, x_values, channels_last);
  Owned<float> w_cl(w_sizes, w_values, channels_last);
  Owned<float> out_cl(out_sizes, Owned<float>::filled(out_sizes, 0), channels_last);
  REQUIRE(conv.run(ctx, x_cl, w_cl, b.ref(), out_cl));
  CHECK(bits_of(out_cl.logical()) == bits_of(reference.values));
}

TEST_CASE("convolution: zero sizes", "[portable][convolution]") {
  KernelContext ctx;
  Conv conv;
  Owned<float> x({0, 2, 3, 3}, {});
  Owned<float> w({4, 2, 2, 2}, Owned<float>::filled({4, 2, 2, 2}, 1));
  Owned<float> out({0, 4, 2, 2}, {});
  CHECK(conv.run(ctx, x, w, std::nullopt, out));
  Owned<float> w0({0, 2, 2, 2}, {});
  Owned<float> x1({1, 2, 3, 3}, Owned<float>::filled({1, 2, 3, 3}, 1));
  Owned<float> out0({1, 0, 2, 2}, {});
  CHECK(conv.run(ctx, x1, w0, std::nullopt, out0));
  CHECK(ctx.ok());
}

TEST_CASE("convolution: errors name the argument and the value", "[portable][convolution][errors]") {
  Owned<float> x({1, 2, 4, 4}, Owned<float>::filled({1, 2, 4, 4}, 1));
  Owned<float> w({3, 2, 3, 3}, Owned<float>::filled({3, 2, 3, 3}, 1));
  Owned<float> out({1, 3, 2, 2}, Owned<float>::filled({1, 3, 2, 2}, 0));
  KernelContext ctx;
  Conv conv;
  SECTION("transposed") {
    conv.transposed = true;
    CHECK_FALSE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK_ERROR(ctx, "aten::convolution.out", "transposed convolution (transposed = true) is not supported");
  }
  SECTION("an input that is not 4-D") {
    Owned<float> x3({2, 4, 4}, Owned<float>::filled({2, 4, 4}, 1));
    CHECK_FALSE(conv.run(ctx, x3, w, std::nullopt, out));
    CHECK_ERROR(ctx, "input must be 4-D [N, C, H, W]", "got shape [2, 4, 4]");
  }
  SECTION("a weight of another dtype") {
    Owned<double> w64({3, 2, 3, 3}, Owned<double>::filled({3, 2, 3, 3}, 1));
    CHECK_FALSE(conv.run(ctx, x, w64, std::nullopt, out));
    CHECK_ERROR(ctx, "weight must be float32, got float64");
  }
  SECTION("a bias of the wrong shape") {
    Owned<float> bias({2}, {1, 2});
    CHECK_FALSE(conv.run(ctx, x, w, bias.ref(), out));
    CHECK_ERROR(ctx, "bias must have shape [3] (the output channels of weight), got [2]");
  }
  SECTION("groups that are not positive") {
    conv.groups = 0;
    CHECK_FALSE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK_ERROR(ctx, "groups must be positive, got 0");
  }
  SECTION("input channels that do not match weight and groups") {
    conv.groups = 3;
    Owned<float> w3({3, 1, 3, 3}, Owned<float>::filled({3, 1, 3, 3}, 1));
    CHECK_FALSE(conv.run(ctx, x, w3, std::nullopt, out));
    CHECK_ERROR(ctx, "with groups = 3 expects input with 3 channels, but input of shape [1, 2, 4, 4] has 2");
  }
  SECTION("output channels that groups does not divide") {
    conv.groups = 2;
    Owned<float> w1({3, 1, 3, 3}, Owned<float>::filled({3, 1, 3, 3}, 1));
    CHECK_FALSE(conv.run(ctx, x, w1, std::nullopt, out));
    CHECK_ERROR(ctx, "has 3 output channels, which groups = 2 does not divide");
  }
  SECTION("a zero stride") {
    conv.stride = {1, 0};
    CHECK_FALSE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK_ERROR(ctx, "stride must be positive, got [1, 0]");
  }
  SECTION("a negative padding") {
    conv.padding = {-1};
    CHECK_FALSE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK_ERROR(ctx, "padding must be non-negative, got [-1]");
  }
  SECTION("a zero dilation") {
    conv.dilation = {0, 1};
    CHECK_FALSE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK_ERROR(ctx, "dilation must be positive, got [0, 1]");
  }
  SECTION("a list of three values") {
    conv.stride = {1, 1, 1};
    CHECK_FALSE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK_ERROR(ctx, "stride must hold 1 or 2 values for a 2-D convolution, got [1, 1, 1]");
  }
  SECTION("a non-zero output_padding") {
    conv.output_padding = {0, 1};
    CHECK_FALSE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK_ERROR(ctx, "output_padding [0, 1] must be empty or zeros");
  }
  SECTION("a kernel larger than the padded input") {
    conv.dilation = {2, 2};
    CHECK_FALSE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK_ERROR(ctx, "the padded input 4 (4 + 2 * padding 0) is smaller than the dilated kernel 5");
  }
  SECTION("an out of the wrong shape") {
    Owned<float> wrong({1, 3, 4, 4}, Owned<float>::filled({1, 3, 4, 4}, 0));
    CHECK_FALSE(conv.run(ctx, x, w, std::nullopt, wrong));
    CHECK_ERROR(ctx, "out has shape [1, 3, 4, 4], expected [1, 3, 2, 2]", "never resized");
  }
  SECTION("an out overlapping the input") {
    et_ops::Tensor aliased(DType::Float32, x.values.data(), {1, 3, 2, 2});
    CHECK_FALSE(conv.run(ctx, x, w, std::nullopt, aliased));
    CHECK_ERROR(ctx, "out overlaps input in memory");
  }
}
