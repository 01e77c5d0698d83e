// aten::convolution.out: hand-computed 2-D convolutions (padding, stride,
// dilation, groups, bias), the documented float64 summation order bit for
// bit on every SIMD target (ResNet and MobileNet layer types, odd sizes and
// tails, every layout), sums next to a float32 midpoint rounded once, zero
// sizes and every error.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "simd_targets.h"
#include "test_util.h"

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

// ---- the documented summation order, on every SIMD target ----

namespace {

// One convolution: input [N, C, H, W], weight [O, C / groups, kH, kW].
struct Shape {
  const char* name;
  Sizes input;
  int64_t out_channels;
  Sizes kernel, stride, padding, dilation;
  int64_t groups;

  int64_t out_extent(int axis) const {
    const int64_t span = dilation[axis] * (kernel[axis] - 1) + 1;
    return (input[2 + axis] + 2 * padding[axis] - span) / stride[axis] + 1;
  }
  Sizes weight_sizes() const { return {out_channels, input[1] / groups, kernel[0], kernel[1]}; }
  Sizes out_sizes() const { return {input[0], out_channels, out_extent(0), out_extent(1)}; }
};

// The numeric contract, written out: each output element starts from +0.0
// in double and adds input * weight for (input channel, kernel row, kernel
// column) in increasing order, a tap in the padding reading 0.0, the
// operands promoted (the product is exact) and each sum rounded to double;
// then adds the bias and rounds to float once. Inputs are in logical NCHW /
// OIHW order.
std::vector<float> reference(const Shape& s, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>* bias) {
  const int64_t n_count = s.input[0], channels = s.input[1], in_h = s.input[2], in_w = s.input[3];
  const int64_t out_h = s.out_extent(0), out_w = s.out_extent(1);
  const int64_t in_per_group = channels / s.groups, out_per_group = s.out_channels / s.groups;
  std::vector<float> out;
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t oc = 0; oc < s.out_channels; ++oc)
      for (int64_t oh = 0; oh < out_h; ++oh)
        for (int64_t ow = 0; ow < out_w; ++ow) {
          double sum = 0.0;
          for (int64_t icl = 0; icl < in_per_group; ++icl)
            for (int64_t kh = 0; kh < s.kernel[0]; ++kh)
              for (int64_t kw = 0; kw < s.kernel[1]; ++kw) {
                const int64_t ic = oc / out_per_group * in_per_group + icl;
                const int64_t ih = oh * s.stride[0] - s.padding[0] + kh * s.dilation[0];
                const int64_t iw = ow * s.stride[1] - s.padding[1] + kw * s.dilation[1];
                const bool inside = ih >= 0 && ih < in_h && iw >= 0 && iw < in_w;
                const float xv =
                    inside ? x[static_cast<std::size_t>(((n * channels + ic) * in_h + ih) * in_w + iw)] : 0.0f;
                const float wv =
                    w[static_cast<std::size_t>(((oc * in_per_group + icl) * s.kernel[0] + kh) * s.kernel[1] + kw)];
                const double product = static_cast<double>(xv) * wv;
                sum = sum + product;
              }
          if (bias != nullptr) sum = sum + static_cast<double>((*bias)[static_cast<std::size_t>(oc)]);
          out.push_back(static_cast<float>(sum));
        }
  return out;
}

// An out tensor inside a larger buffer whose margins hold a sentinel, so a
// write outside the tensor shows.
struct GuardedOut {
  static constexpr int64_t kMargin = 64;
  static constexpr float kSentinel = -12345.0f;
  std::vector<float> storage;
  et_ops::Tensor tensor;

  GuardedOut(const Sizes& sizes, const std::vector<uint8_t>& dim_order)
      : storage(static_cast<std::size_t>(et_ops::test::numel_of(sizes) + 2 * kMargin), kSentinel),
        tensor(DType::Float32, storage.data() + kMargin, sizes, dim_order) {}

  bool margins_intact() const {
    for (std::size_t i = 0; i < static_cast<std::size_t>(kMargin); ++i)
      if (storage[i] != kSentinel || storage[storage.size() - 1 - i] != kSentinel) return false;
    return true;
  }
  // The elements in logical order.
  std::vector<float> logical() const {
    std::vector<float> out(storage.size() - 2 * kMargin);
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = storage[static_cast<std::size_t>(kMargin + Owned<float>::memory_offset(*tensor.raw(),
                                                                                         static_cast<int64_t>(i)))];
    return out;
  }
};

const std::vector<uint8_t> kContiguous = {0, 1, 2, 3};
const std::vector<uint8_t> kChannelsLast = {0, 2, 3, 1};

// Runs the kernel on `s` under every SIMD target, with the given layouts,
// and requires the reference's bits and untouched surroundings.
void check_against_reference(const Shape& s, bool with_bias, const std::vector<uint8_t>& x_order,
                             const std::vector<uint8_t>& w_order, const std::vector<uint8_t>& out_order,
                             const std::vector<float>* x_override = nullptr,
                             const std::vector<float>* w_override = nullptr) {
  auto rng = et_ops::test::seeded_rng(97);
  const auto x_values = x_override ? *x_override : et_ops::test::random_floats(rng, et_ops::test::numel_of(s.input));
  const auto w_values =
      w_override ? *w_override : et_ops::test::random_floats(rng, et_ops::test::numel_of(s.weight_sizes()));
  const auto b_values = et_ops::test::random_floats(rng, s.out_channels);
  const auto expected = reference(s, x_values, w_values, with_bias ? &b_values : nullptr);
  Owned<float> x(s.input, x_values, x_order);
  Owned<float> w(s.weight_sizes(), w_values, w_order);
  Owned<float> b({s.out_channels}, b_values);
  Conv conv;
  conv.stride = s.stride;
  conv.padding = s.padding;
  conv.dilation = s.dilation;
  conv.groups = s.groups;
  INFO(s.name << (with_bias ? ", bias" : ", no bias") << ", layouts x " << int(x_order[1]) << " w "
              << int(w_order[1]) << " out " << int(out_order[1]));
  et_ops::test::for_each_simd_target([&] {
    GuardedOut out(s.out_sizes(), out_order);
    KernelContext ctx;
    REQUIRE(conv.run(ctx, x, w, with_bias ? std::optional<TensorRef>(b.ref()) : std::nullopt, out.tensor.ref()));
    const int64_t at = first_difference(out.logical(), expected);
    INFO("first difference at logical index " << at);
    CHECK(at == -1);
    CHECK(out.margins_intact());
  });
}

// name, input [N, C, H, W], C_out, kernel, stride, padding, dilation, groups
const Shape kShapes[] = {
    {"ResNet stem: 7x7, stride 2, padding 3", {1, 3, 37, 29}, 64, {7, 7}, {2, 2}, {3, 3}, {1, 1}, 1},
    {"3x3, padding 1, 64 -> 64 (three depth blocks)", {1, 64, 15, 15}, 64, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
    {"3x3, stride 2, padding 1, odd sizes", {2, 32, 17, 13}, 48, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1},
    {"1x1 pointwise (matrix path)", {1, 40, 9, 13}, 24, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},
    {"1x1 pointwise, 300 channels (depth not a block multiple)", {1, 300, 5, 7}, 13, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},
    {"1x1, stride 2 (ResNet downsample)", {1, 16, 11, 11}, 32, {1, 1}, {2, 2}, {0, 0}, {1, 1}, 1},
    {"depthwise 3x3, stride 1", {1, 24, 19, 23}, 24, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 24},
    {"depthwise 3x3, stride 2", {2, 24, 20, 21}, 24, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 24},
    {"depthwise 3x3 on a 7x7 plane", {1, 40, 7, 7}, 40, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 40},
    {"depthwise 5x5, channel multiplier 2", {1, 8, 12, 9}, 16, {5, 5}, {1, 1}, {2, 2}, {1, 1}, 8},
    {"depthwise, one channel, 33 wide", {1, 1, 4, 33}, 3, {3, 3}, {1, 2}, {1, 1}, {1, 1}, 1},
    {"grouped: 4 groups", {1, 16, 9, 10}, 32, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 4},
    {"dilation 2", {1, 6, 14, 15}, 10, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 1},
    {"depthwise, dilation 2, stride 3", {1, 5, 16, 17}, 5, {3, 3}, {3, 3}, {2, 2}, {2, 2}, 5},
    {"asymmetric kernel, stride, padding and dilation", {1, 4, 13, 16}, 6, {2, 5}, {3, 2}, {1, 3}, {2, 1}, 2},
    {"depthwise, asymmetric", {1, 4, 13, 16}, 4, {2, 5}, {3, 2}, {1, 3}, {2, 1}, 4},
    {"padding wider than the kernel", {1, 3, 4, 5}, 5, {2, 2}, {1, 1}, {3, 3}, {1, 1}, 1},
    {"depthwise, padding wider than the kernel", {1, 3, 4, 5}, 3, {2, 2}, {1, 1}, {3, 3}, {1, 1}, 3},
    {"one output pixel", {1, 7, 3, 3}, 9, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 1},
    {"tails: 13 output channels, 1 x 19 pixels", {3, 5, 1, 19}, 13, {1, 3}, {1, 1}, {0, 1}, {1, 1}, 1},
};

}  // namespace

TEST_CASE("convolution: the documented summation order, bit for bit, on every SIMD target",
          "[portable][convolution][simd]") {
  for (const Shape& s : kShapes) {
    check_against_reference(s, true, kContiguous, kContiguous, kContiguous);
    check_against_reference(s, false, kContiguous, kContiguous, kContiguous);
  }
}

TEST_CASE("convolution: channels-last operands give the same bits", "[portable][convolution][simd]") {
  for (const Shape& s : kShapes) {
    check_against_reference(s, true, kChannelsLast, kChannelsLast, kChannelsLast);
    check_against_reference(s, true, kChannelsLast, kContiguous, kContiguous);
    check_against_reference(s, false, kContiguous, kChannelsLast, kChannelsLast);
  }
}

TEST_CASE("convolution: an input too wide for the depthwise band takes the matrix path, same bits",
          "[portable][convolution][simd]") {
  const Shape wide{"depthwise, 20000 wide", {1, 2, 3, 20000}, 2, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 2};
  check_against_reference(wide, true, kContiguous, kContiguous, kContiguous);
  const Shape large{"depthwise 13x13 kernel", {1, 2, 15, 15}, 2, {13, 13}, {1, 1}, {6, 6}, {1, 1}, 2};
  check_against_reference(large, true, kContiguous, kContiguous, kContiguous);
}

TEST_CASE("convolution: a tap in the padding counts as 0 * weight", "[portable][convolution][simd]") {
  // An infinite weight makes 0 * inf = NaN wherever its tap meets the
  // padding; NaN and infinite inputs spread to every output that reads
  // them. Both paths (depthwise and matrix product) agree with the reference.
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t groups : {1, 2}) {
    const Shape s{"3x3, padding 1, special values", {1, 2, 6, 9}, 2, {3, 3}, {1, 1}, {1, 1}, {1, 1}, groups};
    auto rng = et_ops::test::seeded_rng(5);
    auto x = et_ops::test::random_floats(rng, et_ops::test::numel_of(s.input));
    auto w = et_ops::test::random_floats(rng, et_ops::test::numel_of(s.weight_sizes()));
    w[0] = inf;                                                                       // output channel 0's top-left tap
    x[static_cast<std::size_t>(6 * 9 + 4)] = std::numeric_limits<float>::quiet_NaN();  // channel 1, row 0
    x[10] = -inf;
    check_against_reference(s, true, kContiguous, kContiguous, kContiguous, &x, &w);
    // Output (0, 0, 0, 0) meets the infinite weight in the padding.
    CHECK(std::isnan(reference(s, x, w, nullptr)[0]));
  }
}

TEST_CASE("convolution: no input channels gives the bias", "[portable][convolution][simd]") {
  Owned<float> x({1, 0, 3, 3}, {});
  Owned<float> w({2, 0, 2, 2}, {});
  Owned<float> bias({2}, {1.5f, -2});
  Owned<float> out({1, 2, 2, 2}, Owned<float>::filled({1, 2, 2, 2}, 7));
  Conv conv;
  et_ops::test::for_each_simd_target([&] {
    KernelContext ctx;
    REQUIRE(conv.run(ctx, x, w, bias.ref(), out));
    CHECK(out.values == std::vector<float>{1.5f, 1.5f, 1.5f, 1.5f, -2, -2, -2, -2});
    REQUIRE(conv.run(ctx, x, w, std::nullopt, out));
    CHECK(bits_of(out.values) == bits_of(Owned<float>::filled({1, 2, 2, 2}, 0.0f)));
  });
}

TEST_CASE("convolution: the stride of a size-1 dimension is never used", "[portable][convolution][simd]") {
  // One input channel whose dimension carries an extreme stride, on the
  // depthwise path (3x3) and the matrix-product path (a 13x13 kernel has
  // too many taps for the depthwise kernel).
  const int64_t huge = std::numeric_limits<int64_t>::max();
  for (int64_t kernel : {3, 13}) {
    const Shape s{"one input channel", {1, 1, 13, 13}, 2, {kernel, kernel}, {1, 1}, {1, 1}, {1, 1}, 1};
    auto rng = et_ops::test::seeded_rng(kernel);
    const auto x_values = et_ops::test::random_floats(rng, et_ops::test::numel_of(s.input));
    const auto w_values = et_ops::test::random_floats(rng, et_ops::test::numel_of(s.weight_sizes()));
    const auto expected = reference(s, x_values, w_values, nullptr);
    Owned<float> x(s.input, x_values);
    const int64_t x_strides[4] = {huge, huge, 13, 1};
    x.tensor.raw()->strides = x_strides;
    Owned<float> w(s.weight_sizes(), w_values);
    const int64_t w_strides[4] = {kernel * kernel, huge, kernel, 1};
    w.tensor.raw()->strides = w_strides;
    Conv conv;
    conv.padding = s.padding;
    et_ops::test::for_each_simd_target([&] {
      Owned<float> out(s.out_sizes(), Owned<float>::filled(s.out_sizes(), 0));
      KernelContext ctx;
      REQUIRE(conv.run(ctx, x, w, std::nullopt, out));
      CHECK(first_difference(out.values, expected) == -1);
    });
  }
}

TEST_CASE("convolution: a sum next to a float32 midpoint is rounded once, on every path and SIMD target",
          "[portable][convolution][simd]") {
  // Inputs of ones; each output channel's taps are 1 (the first),
  // 2^-24 (one in the middle) and 2^-50 (the last), zeros elsewhere. An
  // output that meets all three sums to just above 1 + 2^-24, the midpoint
  // between the floats 1 and 1 + 2^-23: rounded once from float64 it is
  // 1 + 2^-23, where float32 sums would land on the midpoint and round to
  // 1. Outputs at the border miss some taps in the padding.
  const Shape shapes[] = {
      {"depthwise 3x3, padding 1", {1, 6, 9, 11}, 6, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 6},
      {"depthwise 3x3, stride 2", {1, 6, 12, 13}, 6, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 6},
      {"depthwise 3x3, dilation 2", {1, 3, 11, 12}, 3, {3, 3}, {1, 1}, {2, 2}, {2, 2}, 3},
      {"1x1 pointwise", {1, 8, 5, 7}, 10, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},
      {"3x3, padding 1", {1, 4, 7, 9}, 5, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
      {"3x3, stride 2, dilation 2", {1, 4, 13, 11}, 5, {3, 3}, {2, 2}, {2, 2}, {2, 2}, 1},
      {"grouped 3x3", {1, 8, 7, 8}, 12, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 4},
      {"3x3 over 3 depth blocks (64 channels)", {1, 64, 6, 6}, 7, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
  };
  for (const Shape& s : shapes) {
    const std::vector<float> x(static_cast<std::size_t>(et_ops::test::numel_of(s.input)), 1.0f);
    const Sizes w_sizes = s.weight_sizes();
    const int64_t taps = w_sizes[1] * w_sizes[2] * w_sizes[3];
    std::vector<float> w(static_cast<std::size_t>(et_ops::test::numel_of(w_sizes)), 0.0f);
    for (int64_t oc = 0; oc < s.out_channels; ++oc) {
      w[static_cast<std::size_t>(oc * taps)] = 1.0f;
      w[static_cast<std::size_t>(oc * taps + taps / 2)] = 0x1p-24f;
      w[static_cast<std::size_t>(oc * taps + taps - 1)] = 0x1p-50f;
    }
    // An output that meets every tap: the centre pixel of the first image.
    const int64_t centre = (s.out_extent(0) / 2) * s.out_extent(1) + s.out_extent(1) / 2;
    INFO(s.name);
    REQUIRE(reference(s, x, w, nullptr)[static_cast<std::size_t>(centre)] == 1 + 0x1p-23f);
    check_against_reference(s, false, kContiguous, kContiguous, kContiguous, &x, &w);
    check_against_reference(s, false, kChannelsLast, kContiguous, kChannelsLast, &x, &w);
  }
}
