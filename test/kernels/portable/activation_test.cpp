// aten::relu, hardtanh, clamp, leaky_relu, hardswish, hardsigmoid, sigmoid
// and tanh: hand-computed values, NaN and signed zeros, accuracy of the
// transcendental ones against long double, the same bits on every SIMD
// target and every layout, in place, zero sizes and errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "simd_targets.h"
#include "test_util.h"

namespace {

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// A unary floating kernel: out = f(self).
using Unary = std::function<bool(KernelContext&, TensorRef, TensorRef)>;

template <typename T>
std::vector<T> run(const Unary& kernel, const std::vector<T>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  Owned<T> x({n}, values);
  Owned<T> out({n}, Owned<T>::filled({n}, T(-7)));
  KernelContext ctx;
  REQUIRE(kernel(ctx, x, out));
  return out.values;
}

// Values across the ranges that matter: both signs, the thresholds of
// hardswish, saturation, tiny and subnormal magnitudes, specials.
template <typename T>
std::vector<T> wide_values(uint64_t seed, std::size_t count) {
  auto rng = et_ops::test::seeded_rng(seed);
  std::normal_distribution<double> normal(0.0, 4.0);
  std::uniform_real_distribution<double> uniform(-120.0, 120.0);
  std::vector<T> values;
  for (std::size_t i = 0; i < count; ++i) values.push_back(static_cast<T>(i % 3 == 0 ? uniform(rng) : normal(rng)));
  for (double v : {0.0, -0.0, 3.0, -3.0, 1e-30, -1e-30, 1e-40, 88.5, -88.5, 104.0, -104.0, 709.0, -745.0, 1e300,
                   -1e300})
    values.push_back(static_cast<T>(v));
  for (T v : {std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
              std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::denorm_min(),
              std::numeric_limits<T>::min(), std::numeric_limits<T>::max()})
    values.push_back(v);
  return values;
}

// Distance in units in the last place (-0.0 and 0.0 are the same place).
template <typename T>
int64_t ulp_distance(T a, T b) {
  const auto ordered = [](T v) {
    const uint64_t bits = bits_of(v);
    const uint64_t sign = uint64_t{1} << (sizeof(T) * 8 - 1);
    const auto magnitude = static_cast<int64_t>(bits & (sign - 1));
    return bits & sign ? -magnitude : magnitude;
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Checks every result against the long double reference: the same NaNs,
// and within `ulps` (0: the very bits).
template <typename T>
void check_against(const std::vector<T>& x, const std::vector<T>& got, T (*reference)(T), int64_t ulps) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const T want = reference(x[i]);
    INFO("x = " << x[i] << " got " << got[i] << " want " << want);
    if (std::isnan(want)) {
      CHECK(std::isnan(got[i]));
    } else if (ulps == 0) {
      CHECK(bits_of(got[i]) == bits_of(want));
    } else {
      CHECK(ulp_distance(got[i], want) <= ulps);
    }
  }
}

// The contract's sigmoid: e = e^-x rounded to T (here from long double),
// then 1 / (1 + e) in T.
template <typename T>
T reference_sigmoid(T x) {
  const T e = static_cast<T>(std::exp(-static_cast<long double>(x)));
  return T(1) / (T(1) + e);
}

template <typename T>
T reference_tanh(T x) {
  return static_cast<T>(std::tanh(static_cast<long double>(x)));
}

bool sigmoid(KernelContext& c, TensorRef x, TensorRef o) { return portable::sigmoid_out(c, x, o); }
bool tanh_kernel(KernelContext& c, TensorRef x, TensorRef o) { return portable::tanh_out(c, x, o); }
bool hardswish(KernelContext& c, TensorRef x, TensorRef o) { return portable::hardswish_out(c, x, o); }
bool hardsigmoid(KernelContext& c, TensorRef x, TensorRef o) { return portable::hardsigmoid_out(c, x, o); }
bool relu(KernelContext& c, TensorRef x, TensorRef o) { return portable::relu_out(c, x, o); }

// Every vectorised kernel, with the parameters the others take fixed.
const std::vector<std::pair<const char*, Unary>>& vectorised_kernels() {
  static const std::vector<std::pair<const char*, Unary>> kernels = {
      {"sigmoid", sigmoid},
      {"tanh", tanh_kernel},
      {"hardswish", hardswish},
      {"hardsigmoid", hardsigmoid},
      {"relu", relu},
      {"leaky_relu", [](KernelContext& c, TensorRef x, TensorRef o) { return portable::leaky_relu_out(c, x, 0.1, o); }},
      {"hardtanh", [](KernelContext& c, TensorRef x, TensorRef o) { return portable::hardtanh_out(c, x, 0, 6, o); }},
      {"clamp", [](KernelContext& c, TensorRef x, TensorRef o) { return portable::clamp_out(c, x, -0.5, 2, o); }},
  };
  return kernels;
}

}  // namespace

TEST_CASE("relu: float32 keeps NaN and -0.0 as PyTorch's clamp_min", "[portable][relu]") {
  Owned<float> x({7}, {-2, -0.0f, 0, 3.5f, kNan, -kInf, kInf});
  Owned<float> out({7}, Owned<float>::filled({7}, 9));
  KernelContext ctx;
  REQUIRE(portable::relu_out(ctx, x, out));
  CHECK(bits_of(out.values) == bits_of(std::vector<float>{0, -0.0f, 0, 3.5f, kNan, 0, kInf}));
}

TEMPLATE_TEST_CASE("relu: integer and float64 dtypes", "[portable][relu]", double, int8_t, int16_t, int32_t,
                   int64_t) {
  Owned<TestType> x({2, 2}, {TestType(-5), TestType(0), TestType(7), std::numeric_limits<TestType>::lowest()});
  Owned<TestType> out({2, 2}, {TestType(1), TestType(1), TestType(1), TestType(1)});
  KernelContext ctx;
  REQUIRE(portable::relu_out(ctx, x, out));
  CHECK(out.values == std::vector<TestType>{TestType(0), TestType(0), TestType(7), TestType(0)});
}

TEST_CASE("relu: uint8 passes through", "[portable][relu]") {
  Owned<uint8_t> x({3}, {0, 128, 255});
  Owned<uint8_t> out({3}, {1, 1, 1});
  KernelContext ctx;
  REQUIRE(portable::relu_out(ctx, x, out));
  CHECK(out.values == std::vector<uint8_t>{0, 128, 255});
}

TEST_CASE("hardtanh and clamp: bounds, NaN and signed zeros", "[portable][hardtanh][clamp]") {
  const std::vector<float> x = {-7, -1, -0.0f, 0, 0.5f, 6, 7, kNan, -kInf, kInf};
  KernelContext ctx;
  SECTION("ReLU6 is hardtanh(0, 6); -0.0 is not below 0") {
    const auto got = run<float>([](auto& c, auto s, auto o) { return portable::hardtanh_out(c, s, 0, 6, o); }, x);
    CHECK(bits_of(got) == bits_of(std::vector<float>{0, 0, -0.0f, 0, 0.5f, 6, 6, kNan, 0, 6}));
  }
  SECTION("the default limits -1 and 1") {
    const auto got = run<float>([](auto& c, auto s, auto o) { return portable::hardtanh_out(c, s, -1, 1, o); }, x);
    CHECK(bits_of(got) == bits_of(std::vector<float>{-1, -1, -0.0f, 0, 0.5f, 1, 1, kNan, -1, 1}));
  }
  SECTION("min above max gives max everywhere but NaN") {
    const auto got = run<float>([](auto& c, auto s, auto o) { return portable::hardtanh_out(c, s, 2, -2, o); }, x);
    CHECK(bits_of(got) == bits_of(std::vector<float>{-2, -2, -2, -2, -2, -2, -2, kNan, -2, -2}));
  }
  SECTION("clamp with only min, only max") {
    const auto low = run<float>(
        [](auto& c, auto s, auto o) { return portable::clamp_out(c, s, Scalar(0.25), std::nullopt, o); }, x);
    CHECK(bits_of(low) == bits_of(std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f, 0.5f, 6, 7, kNan, 0.25f, kInf}));
    const auto high =
        run<float>([](auto& c, auto s, auto o) { return portable::clamp_out(c, s, std::nullopt, Scalar(-1), o); }, x);
    CHECK(bits_of(high) == bits_of(std::vector<float>{-7, -1, -1, -1, -1, -1, -1, kNan, -kInf, -1}));
  }
  SECTION("a single NaN bound is never chosen") {
    const auto got = run<float>(
        [](auto& c, auto s, auto o) { return portable::clamp_out(c, s, Scalar(double(kNan)), std::nullopt, o); }, x);
    CHECK(bits_of(got) == bits_of(x));
  }
  SECTION("with both bounds, a NaN bound makes every element NaN (as aten)") {
    const auto got = run<float>(
        [](auto& c, auto s, auto o) { return portable::clamp_out(c, s, Scalar(0), Scalar(double(kNan)), o); }, x);
    for (float v : got) CHECK(std::isnan(v));
    const auto tanh_like =
        run<float>([](auto& c, auto s, auto o) { return portable::hardtanh_out(c, s, double(kNan), 1, o); }, x);
    for (float v : tanh_like) CHECK(std::isnan(v));
  }
}

TEST_CASE("hardtanh and clamp: integers", "[portable][hardtanh][clamp]") {
  KernelContext ctx;
  Owned<int8_t> x({5}, {-128, -5, 0, 5, 127});
  Owned<int8_t> out({5}, {9, 9, 9, 9, 9});
  SECTION("floating limits truncate toward zero, as aten's toLong") {
    REQUIRE(portable::hardtanh_out(ctx, x, -1.5, 2.7, out));
    CHECK(out.values == std::vector<int8_t>{-1, -1, 0, 2, 2});
  }
  SECTION("clamp with integral bounds") {
    REQUIRE(portable::clamp_out(ctx, x, Scalar(-6), Scalar(100), out));
    CHECK(out.values == std::vector<int8_t>{-6, -5, 0, 5, 100});
  }
  SECTION("uint8: a bound of -1 wraps to 255, as aten converts it") {
    Owned<uint8_t> u({3}, {0, 7, 250});
    Owned<uint8_t> u_out({3}, {1, 1, 1});
    REQUIRE(portable::clamp_out(ctx, u, Scalar(-1), std::nullopt, u_out));
    CHECK(u_out.values == std::vector<uint8_t>{255, 255, 255});
  }
  SECTION("int64 at the limits") {
    const int64_t big = std::numeric_limits<int64_t>::max();
    Owned<int64_t> wide({3}, {std::numeric_limits<int64_t>::min(), 0, big});
    Owned<int64_t> wide_out({3}, {1, 1, 1});
    REQUIRE(portable::clamp_out(ctx, wide, Scalar(int64_t{-3}), Scalar(big - 1), wide_out));
    CHECK(wide_out.values == std::vector<int64_t>{-3, 0, big - 1});
  }
}

TEST_CASE("leaky_relu, hardswish and hardsigmoid: PyTorch's formulas", "[portable][leaky_relu][hardswish]") {
  const std::vector<float> x = {-5, -3, -1.5f, -0.0f, 0, 1, 2.5f, 3, 4, kNan, -kInf, kInf};
  SECTION("leaky_relu keeps positives and scales the rest") {
    const auto got = run<float>([](auto& c, auto s, auto o) { return portable::leaky_relu_out(c, s, 0.5, o); }, x);
    CHECK(bits_of(got) == bits_of(std::vector<float>{-2.5f, -1.5f, -0.75f, -0.0f, 0, 1, 2.5f, 3, 4, kNan, -kInf,
                                                       kInf}));
  }
  SECTION("hardswish: x * min(max(x + 3, 0), 6) / 6, -0.0 below -3") {
    const auto got = run<float>(hardswish, x);
    std::vector<float> want;
    for (float v : x) want.push_back(v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f);
    want[9] = kNan;
    CHECK(bits_of(got) == bits_of(want));
    CHECK(std::signbit(got[0]));
    CHECK(std::isnan(got[10]));  // -inf * 0
  }
  SECTION("hardsigmoid: min(max(x + 3, 0), 6) / 6") {
    const auto got = run<float>(hardsigmoid, x);
    CHECK(bits_of(got) == bits_of(std::vector<float>{0, 0, 1.5f / 6, 0.5f, 0.5f, 4.0f / 6, 5.5f / 6, 1, 1, kNan, 0,
                                                       1}));
  }
}

TEST_CASE("sigmoid and tanh: float32 is PyTorch's formula on a correctly rounded exp; tanh correctly rounded",
          "[portable][sigmoid][tanh]") {
  const auto x = wide_values<float>(11, 20000);
  check_against<float>(x, run<float>(sigmoid, x), reference_sigmoid<float>, 0);
  check_against<float>(x, run<float>(tanh_kernel, x), reference_tanh<float>, 0);
  SECTION("hand-checked values") {
    const auto s = run<float>(sigmoid, {0, -0.0f, 100, -100, -88, kInf, -kInf});
    CHECK(s[0] == 0.5f);
    CHECK(s[1] == 0.5f);
    CHECK(s[2] == 1.0f);
    CHECK(s[3] == 0.0f);  // e^100 is beyond float32: 1 / inf
    CHECK(s[4] > 0.0f);   // e^88 is not: a subnormal result
    CHECK(s[5] == 1.0f);
    CHECK(s[6] == 0.0f);
    const auto t = run<float>(tanh_kernel, {-0.0f, 1e-30f, 30, -kInf});
    CHECK(bits_of(t) == bits_of(std::vector<float>{-0.0f, 1e-30f, 1, -1}));
  }
}

TEST_CASE("sigmoid and tanh: float64 within a few ulp of long double", "[portable][sigmoid][tanh]") {
  const auto x = wide_values<double>(12, 20000);
  check_against<double>(x, run<double>(sigmoid, x), reference_sigmoid<double>, 2);
  check_against<double>(x, run<double>(tanh_kernel, x), reference_tanh<double>, 3);
}

TEST_CASE("activations: every SIMD target and every vector tail gives the same bits", "[portable][simd]") {
  for (const auto& [name, kernel] : vectorised_kernels()) {
    INFO(name);
    const auto x32 = wide_values<float>(21, 1000);
    const auto x64 = wide_values<double>(22, 1000);
    std::vector<std::vector<float>> first32;
    std::vector<std::vector<double>> first64;
    bool first_target = true;
    et_ops::test::for_each_simd_target([&] {
      std::size_t i = 0;
      // Lengths 0..40 put every lane position in a tail at every width.
      for (std::size_t n = 0; n <= 40; ++n, ++i) {
        const std::vector<float> part32(x32.begin() + static_cast<std::ptrdiff_t>(n * 7),
                                        x32.begin() + static_cast<std::ptrdiff_t>(n * 8));
        const std::vector<double> part64(x64.begin() + static_cast<std::ptrdiff_t>(n * 7),
                                         x64.begin() + static_cast<std::ptrdiff_t>(n * 8));
        const auto got32 = run<float>(kernel, part32);
        const auto got64 = run<double>(kernel, part64);
        if (first_target) {
          first32.push_back(got32);
          first64.push_back(got64);
        } else {
          CHECK(bits_of(got32) == bits_of(first32[i]));
          CHECK(bits_of(got64) == bits_of(first64[i]));
        }
      }
      const auto all32 = run<float>(kernel, x32);
      if (first_target) first32.push_back(all32);
      else CHECK(bits_of(all32) == bits_of(first32[i]));
      first_target = false;
    });
  }
}

TEST_CASE("activations: layouts do not change the bits; in place works", "[portable][simd]") {
  std::vector<float> values = wide_values<float>(31, 2 * 3 * 4 * 5);
  values.resize(2 * 3 * 4 * 5);
  for (const auto& [name, kernel] : vectorised_kernels()) {
    INFO(name);
    Owned<float> x({2, 3, 4, 5}, values);
    Owned<float> x_last({2, 3, 4, 5}, values, {0, 2, 3, 1});
    Owned<float> out({2, 3, 4, 5}, Owned<float>::filled({2, 3, 4, 5}, 0));
    Owned<float> out_last({2, 3, 4, 5}, Owned<float>::filled({2, 3, 4, 5}, 0), {0, 2, 3, 1});
    Owned<float> out_mixed({2, 3, 4, 5}, Owned<float>::filled({2, 3, 4, 5}, 0));
    KernelContext ctx;
    REQUIRE(kernel(ctx, x, out));
    REQUIRE(kernel(ctx, x_last, out_last));
    REQUIRE(kernel(ctx, x_last, out_mixed));
    CHECK(bits_of(out_last.logical()) == bits_of(out.logical()));
    CHECK(bits_of(out_mixed.logical()) == bits_of(out.logical()));
    REQUIRE(kernel(ctx, x, x));
    CHECK(bits_of(x.logical()) == bits_of(out.logical()));
  }
}

TEST_CASE("activations: zero sizes and 0-dim", "[portable][relu]") {
  KernelContext ctx;
  for (const auto& [name, kernel] : vectorised_kernels()) {
    INFO(name);
    Owned<float> empty({3, 0}, {});
    Owned<float> empty_out({3, 0}, {});
    CHECK(kernel(ctx, empty, empty_out));
    Owned<float> scalar({}, {-4});
    Owned<float> scalar_out({}, {9});
    REQUIRE(kernel(ctx, scalar, scalar_out));
    CHECK(scalar_out.values[0] != 9);
  }
}

TEST_CASE("activations: errors name the argument and the value", "[portable][activation][errors]") {
  Owned<float> x({2, 2}, {1, 2, 3, 4});
  KernelContext ctx;
  SECTION("out of another dtype") {
    Owned<int32_t> out({2, 2}, {0, 0, 0, 0});
    CHECK_FALSE(portable::relu_out(ctx, x, out));
    CHECK_ERROR(ctx, "aten::relu.out", "out has dtype int32, expected float32");
  }
  SECTION("out of another shape") {
    Owned<float> out({4}, {0, 0, 0, 0});
    CHECK_FALSE(portable::sigmoid_out(ctx, x, out));
    CHECK_ERROR(ctx, "aten::sigmoid.out", "out has shape [4], expected [2, 2] (the shape of self)");
  }
  SECTION("bool is not supported") {
    Owned<uint8_t> b({2}, {0, 1});
    b.retype(DType::Bool);
    CHECK_FALSE(portable::relu_out(ctx, b, b));
    CHECK_ERROR(ctx, "self has dtype bool, which is not supported");
    KernelContext hardtanh_ctx;
    CHECK_FALSE(portable::hardtanh_out(hardtanh_ctx, b, 0, 1, b));
    CHECK_ERROR(hardtanh_ctx, "aten::hardtanh.out", "self has dtype bool");
  }
  SECTION("the floating-only activations refuse integers (no promotion)") {
    Owned<int32_t> i({2}, {1, 2});
    Owned<int32_t> i_out({2}, {0, 0});
    CHECK_FALSE(portable::tanh_out(ctx, i, i_out));
    CHECK_ERROR(ctx, "aten::tanh.out", "self has dtype int32, which is not supported; expected one of float32, float64");
    KernelContext hardswish_ctx;
    CHECK_FALSE(portable::hardswish_out(hardswish_ctx, i, i_out));
    CHECK_ERROR(hardswish_ctx, "aten::hardswish.out", "int32");
    KernelContext leaky_ctx;
    CHECK_FALSE(portable::leaky_relu_out(leaky_ctx, i, 0.1, i_out));
    CHECK_ERROR(leaky_ctx, "aten::leaky_relu.out", "int32");
  }
  SECTION("clamp without either bound") {
    Owned<float> out({2, 2}, {0, 0, 0, 0});
    CHECK_FALSE(portable::clamp_out(ctx, x, std::nullopt, std::nullopt, out));
    CHECK_ERROR(ctx, "aten::clamp.out", "min and max are both none");
  }
  SECTION("a floating bound for an integral self") {
    Owned<int8_t> i({2}, {1, 2});
    Owned<int8_t> i_out({2}, {0, 0});
    CHECK_FALSE(portable::clamp_out(ctx, i, Scalar(1.5), std::nullopt, i_out));
    CHECK_ERROR(ctx, "aten::clamp.out", "min = 1.5 is a floating point number");
  }
  SECTION("bounds beyond the dtype") {
    Owned<int8_t> i({2}, {1, 2});
    Owned<int8_t> i_out({2}, {0, 0});
    CHECK_FALSE(portable::clamp_out(ctx, i, std::nullopt, Scalar(1000), i_out));
    CHECK_ERROR(ctx, "max = 1000 cannot be converted to int8 without overflow");
    Owned<float> out({2, 2}, {0, 0, 0, 0});
    KernelContext hardtanh_ctx;
    CHECK_FALSE(portable::hardtanh_out(hardtanh_ctx, x, -1, 1e300, out));
    CHECK_ERROR(hardtanh_ctx, "aten::hardtanh.out", "max_val = 1e+300 cannot be converted to float32 without overflow");
    KernelContext leaky_ctx;
    CHECK_FALSE(portable::leaky_relu_out(leaky_ctx, x, -1e300, out));
    CHECK_ERROR(leaky_ctx, "negative_slope = -1e+300 cannot be converted to float32");
  }
  SECTION("hardtanh on integers: NaN limits, and negative limits for uint8") {
    Owned<int8_t> i({2}, {1, 2});
    Owned<int8_t> i_out({2}, {0, 0});
    CHECK_FALSE(portable::hardtanh_out(ctx, i, double(kNan), 1, i_out));
    CHECK_ERROR(ctx, "min_val = nan cannot be converted to int64");
    Owned<uint8_t> u({2}, {1, 2});
    Owned<uint8_t> u_out({2}, {0, 0});
    KernelContext unsigned_ctx;
    CHECK_FALSE(portable::hardtanh_out(unsigned_ctx, u, -1, 6, u_out));
    CHECK_ERROR(unsigned_ctx, "min_val = -1 and max_val = 6: an unsigned self needs limits of at least 0");
  }
  SECTION("out partially overlapping self; nothing written") {
    std::vector<float> buffer(5, -1.0f);
    et_ops::Tensor self(DType::Float32, buffer.data(), {4});
    et_ops::Tensor out(DType::Float32, buffer.data() + 1, {4});
    CHECK_FALSE(portable::sigmoid_out(ctx, self, out));
    CHECK_ERROR(ctx, "out overlaps self in memory without being the very same tensor");
    CHECK(buffer == std::vector<float>(5, -1.0f));
  }
}

TEST_CASE("gelu and silu: PyTorch's formulas with erf, tanh and exp rounded once, on every SIMD target",
          "[portable][gelu][simd]") {
  auto rng = et_ops::test::seeded_rng(11);
  std::vector<float> values = et_ops::test::random_floats(rng, 45);
  for (float& v : values) v *= 6.0f;
  values.push_back(-0.0f);
  values.push_back(std::numeric_limits<float>::infinity());
  values.push_back(-std::numeric_limits<float>::infinity());
  const std::vector<int64_t> shape = {static_cast<int64_t>(values.size())};
  Owned<float> x(shape, values);
  et_ops::test::for_each_simd_target([&] {
    Owned<float> erf_form(shape, Owned<float>::filled(shape, 0));
    Owned<float> tanh_form(shape, Owned<float>::filled(shape, 0));
    Owned<float> silu(shape, Owned<float>::filled(shape, 0));
    KernelContext ctx;
    REQUIRE(portable::gelu_out(ctx, x, "none", erf_form));
    REQUIRE(portable::gelu_out(ctx, x, "tanh", tanh_form));
    REQUIRE(portable::silu_out(ctx, x, silu));
    for (std::size_t i = 0; i < values.size(); ++i) {
      const float v = values[i];
      const float erf = static_cast<float>(std::erf(static_cast<double>(v * static_cast<float>(M_SQRT1_2))));
      if (std::isfinite(v)) CHECK(erf_form.values[i] == Approx(v * 0.5f * (1.0f + erf)).margin(1e-6 * std::fabs(v)));
      const float inner = static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5) * (v + 0.044715f * (v * v * v));
      const float tanh = static_cast<float>(std::tanh(static_cast<double>(inner)));
      if (std::isfinite(v)) CHECK(tanh_form.values[i] == Approx(0.5f * v * (1.0f + tanh)).margin(1e-6 * std::fabs(v)));
      const float e = static_cast<float>(std::exp(-static_cast<double>(v)));
      CHECK(bits_of(silu.values[i]) == bits_of(v / (1.0f + e)));
    }
    CHECK(bits_of(erf_form.values[values.size() - 3]) == bits_of(-0.0f));
    CHECK(erf_form.values[values.size() - 2] == std::numeric_limits<float>::infinity());
    CHECK(std::isnan(erf_form.values[values.size() - 1]));  // -inf * 0, as PyTorch's formula gives
  });
}

TEST_CASE("gelu: an unknown approximation is an error", "[portable][gelu][errors]") {
  Owned<float> x({1}, {1});
  Owned<float> out({1}, {0});
  KernelContext ctx;
  CHECK_FALSE(portable::gelu_out(ctx, x, "sigmoid", out));
  CHECK(et_ops::test::failed_with(ctx, {"aten::gelu.out", "approximate", "sigmoid"}));
}
