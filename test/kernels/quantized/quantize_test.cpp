// quantize_per_tensor (.out, .Tensor_out), quantize_per_channel and
// quantize_per_token: the worked examples of reference §11.1-11.3, random
// comparison with the independent reference on every Highway target and in
// many layouts, ties, saturation, empty tensors, every error, the C ABI.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "streaming_reference.h"

namespace {

using namespace et_ops;
using namespace et_ops::test;
namespace q = et_ops::kernels::quantized;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename T>
std::vector<T> repeated(const std::vector<T>& values, std::size_t times) {
  std::vector<T> out;
  for (std::size_t i = 0; i < times; ++i) out.insert(out.end(), values.begin(), values.end());
  return out;
}

template <typename To, typename From>
std::vector<To> converted(const std::vector<From>& values) {
  std::vector<To> out;
  for (auto v : values) out.push_back(static_cast<To>(v));
  return out;
}

// Per-tensor quantize of logical f32 values, checked against `expected`,
// as given and repeated past every vector width, on every target.
template <typename Q>
void check_per_tensor_example(const std::vector<float>& x, double scale, int64_t zp, int64_t qmin, int64_t qmax,
                              const std::vector<int64_t>& expected) {
  for (std::size_t times : {std::size_t{1}, std::size_t{37}}) {
    const auto input = repeated(x, times);
    const auto want = converted<Q>(repeated(expected, times));
    for_each_simd_target([&] {
      Owned<float> in({static_cast<int64_t>(input.size())}, input);
      Owned<Q> out({static_cast<int64_t>(input.size())}, std::vector<Q>(input.size(), Q{0}));
      KernelContext ctx;
      REQUIRE(q::quantize_per_tensor_out(ctx, in, scale, zp, qmin, qmax, dtype_of<Q>(), out));
      CHECK(as_ints(out.values) == as_ints(want));
    });
  }
}

// ---- worked examples ----

TEST_CASE("quantize_per_tensor: Q1 ties round to even, zero point added after rounding") {
  check_per_tensor_example<uint8_t>({-1.0f, 0.0f, 0.25f, 0.75f, 1.25f, 100.0f}, 0.5, 3, 0, 255, {1, 3, 3, 5, 5, 203});
}

TEST_CASE("quantize_per_tensor: Q2 clamping and non-finite inputs") {
  const auto inf = static_cast<float>(kInf);
  const auto nan = static_cast<float>(kNaN);
  check_per_tensor_example<int8_t>({-3.0f, 2.0f, 1000.0f, -1000.0f, inf, -inf, nan}, 0.1, -5, -128, 127,
                                   {-35, 15, 127, -128, 127, -128, -128});
}

TEST_CASE("quantize_per_tensor: Q3 the reciprocal is fl32(fl64(1/scale)) (D1)") {
  check_per_tensor_example<int8_t>({0.075f, 0.105f, 0.375f}, 0.03, 0, -128, 127, {2, 3, 12});
}

TEST_CASE("quantize_per_tensor: Q4 Tensor_out, exact i32 bounds, f32 zero-point rounding") {
  for_each_simd_target([&] {
    Owned<float> in({6}, {-1.0f, 0.0f, 0.25f, 0.75f, 1.25f, 100.0f});
    Owned<double> scale({1}, {0.5});
    Owned<int64_t> zp({1}, {3});
    Owned<uint8_t> out({6}, std::vector<uint8_t>(6, 0));
    KernelContext ctx;
    REQUIRE(q::quantize_per_tensor_tensor_out(ctx, in, scale, zp, 0, 255, DType::UInt8, out));
    CHECK(as_ints(out.values) == std::vector<int64_t>{1, 3, 3, 5, 5, 203});
  });
  check_per_tensor_example<int32_t>({3.0e9f, -3.0e9f}, 1.0, 0, INT32_MIN, INT32_MAX, {INT32_MAX, INT32_MIN});
  check_per_tensor_example<int32_t>({16777216.0f}, 1.0, 1, INT32_MIN, INT32_MAX, {16777216});
}

TEST_CASE("quantize_per_channel: C1 axis 1 and axis 0") {
  const std::vector<float> x = {0.625f, 0.875f, 100.0f, -0.375f, -2.5f, -100.0f};
  for_each_simd_target([&] {
    Owned<float> in({2, 3}, x);
    Owned<double> scales({3}, {0.25, 0.5, 0.125});
    Owned<int64_t> zps({3}, {1, 0, -3});
    Owned<int8_t> out({2, 3}, std::vector<int8_t>(6, 0));
    KernelContext ctx;
    REQUIRE(q::quantize_per_channel_out(ctx, in, scales, zps, 1, -128, 127, DType::Int8, out));
    CHECK(as_ints(out.values) == std::vector<int64_t>{3, 2, 127, -1, -5, -128});

    Owned<double> scales0({2}, {0.25, 0.5});
    Owned<int64_t> zps0({2}, {1, -1});
    REQUIRE(q::quantize_per_channel_out(ctx, in, scales0, zps0, 0, -128, 127, DType::Int8, out));
    CHECK(as_ints(out.values) == std::vector<int64_t>{3, 5, 127, -2, -6, -128});
    // The same with a negative axis.
    REQUIRE(q::quantize_per_channel_out(ctx, in, scales0, zps0, -2, -128, 127, DType::Int8, out));
    CHECK(as_ints(out.values) == std::vector<int64_t>{3, 5, 127, -2, -6, -128});
  });
}

TEST_CASE("quantize_per_channel: C2 binary64 arithmetic (D2)") {
  for_each_simd_target([&] {
    Owned<float> in({1, 2}, {0.375f, 0.105f});
    Owned<double> scales({1}, {0.03});
    Owned<int64_t> zps({1}, {0});
    Owned<int8_t> out({1, 2}, {0, 0});
    KernelContext ctx;
    REQUIRE(q::quantize_per_channel_out(ctx, in, scales, zps, 0, -128, 127, DType::Int8, out));
    CHECK(as_ints(out.values) == std::vector<int64_t>{12, 3});
  });
}

TEST_CASE("quantize_per_token: K1 zero point added before rounding (D3)") {
  for_each_simd_target([&] {
    Owned<float> in({2, 3}, {0.5f, 1.5f, 2.5f, 0.5f, 1.5f, 2.5f});
    Owned<double> scales({2, 1}, {1.0, 1.0});
    Owned<int64_t> zps({2, 1}, {1, 0});
    Owned<int8_t> out({2, 3}, std::vector<int8_t>(6, 0));
    KernelContext ctx;
    REQUIRE(q::quantize_per_token_out(ctx, in, scales, zps, -128, 127, DType::Int8, out));
    CHECK(as_ints(out.values) == std::vector<int64_t>{2, 2, 4, 0, 2, 2});
  });
}

TEST_CASE("quantize_per_token: K2 3-D with clamping") {
  for_each_simd_target([&] {
    Owned<float> in({1, 2, 2}, {1.0f, -1.0f, 200.0f, -0.25f});
    Owned<double> scales({2, 1, 1}, {0.5, 1.0});
    Owned<int64_t> zps({2, 1, 1}, {-1, 10});
    Owned<int8_t> out({1, 2, 2}, std::vector<int8_t>(4, 0));
    KernelContext ctx;
    REQUIRE(q::quantize_per_token_out(ctx, in, scales, zps, -128, 127, DType::Int8, out));
    CHECK(as_ints(out.values) == std::vector<int64_t>{1, -3, 127, 10});
  });
}

// ---- random comparison with the reference ----

struct QuantCase {
  std::vector<int64_t> sizes;
  std::vector<uint8_t> in_order;
  std::vector<uint8_t> out_order;
  int64_t qmin;
  int64_t qmax;
};

template <typename Q>
QuantCase random_case(std::mt19937_64& rng, int64_t min_rank) {
  QuantCase c;
  do c.sizes = random_shape(rng); while (static_cast<int64_t>(c.sizes.size()) < min_rank);
  const int64_t layout = uniform_int(rng, 0, 3);
  c.in_order = layout == 0 ? default_order(c.sizes.size()) : random_order(c.sizes.size(), rng);
  c.out_order = layout == 1 ? default_order(c.sizes.size()) : layout == 2 ? random_order(c.sizes.size(), rng)
                                                                            : c.in_order;
  c.qmin = lowest<Q>();
  c.qmax = highest<Q>();
  if (uniform_int(rng, 0, 2) == 0) {  // a sub-range
    int64_t a = uniform_int(rng, c.qmin, c.qmax);
    int64_t b = uniform_int(rng, c.qmin, c.qmax);
    c.qmin = std::min(a, b);
    c.qmax = std::max(a, b);
  }
  return c;
}

// A scale that is a power of two makes 1/scale exact, so x = (k + 0.5) * scale
// is an exact tie; other scales are log-uniform.
double random_scale(std::mt19937_64& rng) {
  if (uniform_int(rng, 0, 2) == 0) return std::ldexp(1.0, static_cast<int>(uniform_int(rng, -12, 6)));
  return log_uniform(rng, 1e-5, 1e3);
}

int64_t random_zero_point(std::mt19937_64& rng, int64_t qmin, int64_t qmax) {
  switch (uniform_int(rng, 0, 9)) {
    case 0: return uniform_int(rng, -(int64_t{1} << 40), int64_t{1} << 40);  // beyond f32 exactness
    case 1: return uniform_int(rng, qmin - 300, qmax + 300);                 // outside the range
    default: return uniform_int(rng, qmin, qmax);
  }
}

// Inputs that hit ties, both clamps, non-finite values and the range
// around the zero point, for a quantizer with these parameters.
template <typename In>
std::vector<In> random_inputs(std::mt19937_64& rng, std::size_t n, double scale, int64_t zp, int64_t qmin,
                              int64_t qmax) {
  const double specials[] = {kInf, -kInf, kNaN, 0.0, -0.0, 1e30, -1e30, 1e-40, 65504.0, 3.0e9, -3.0e9};
  const double lo = (static_cast<double>(qmin) - static_cast<double>(zp) - 20) * scale;
  const double hi = (static_cast<double>(qmax) - static_cast<double>(zp) + 20) * scale;
  std::vector<In> out(n);
  for (auto& v : out) {
    const int64_t kind = uniform_int(rng, 0, 19);
    double x;
    if (kind == 0) x = specials[uniform_int(rng, 0, std::size(specials) - 1)];
    else if (kind <= 4) x = (static_cast<double>(uniform_int(rng, -300, 300)) + 0.5) * scale;
    else x = uniform_real(rng, lo, hi);
    if constexpr (std::is_same_v<In, double>) v = x;
    else if constexpr (std::is_same_v<In, float>) v = static_cast<float>(x);
    else v = from_double<In>(x);
  }
  return out;
}

template <typename In, typename Q, typename Reference>
void check_against_reference(const std::vector<In>& x, const std::vector<Q>& got, const Reference& reference,
                             const char* what) {
  REQUIRE(got.size() == x.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const int64_t want = reference(i);
    if (static_cast<int64_t>(got[i]) == want) continue;
    if (mismatches++ == 0) {
      INFO(what << ": element " << i << " x = " << show(x[i]) << " got " << show(got[i]) << " expected " << want);
      CHECK(false);
    }
  }
  CHECK(mismatches == 0);
}

template <typename In, typename Q>
void random_per_tensor(std::mt19937_64& rng, bool tensor_overload) {
  const QuantCase c = random_case<Q>(rng, 0);
  const double scale = random_scale(rng);
  const int64_t zp = random_zero_point(rng, c.qmin, c.qmax);
  const auto x = random_inputs<In>(rng, static_cast<std::size_t>(numel_of(c.sizes)), scale, zp, c.qmin, c.qmax);
  INFO("sizes " << ::Catch::Detail::stringify(c.sizes) << " in order " << ::Catch::Detail::stringify(converted<int>(c.in_order))
                << " out order " << ::Catch::Detail::stringify(converted<int>(c.out_order)) << " scale " << fmt::format("{}", scale)
                << " zp " << zp << " range [" << c.qmin << ", " << c.qmax << "] " << type_label<In>() << " -> "
                << type_label<Q>());
  auto in = make_tensor<In>(c.sizes, x, c.in_order);
  auto out = make_filled<Q>(c.sizes, Q{0}, c.out_order);
  KernelContext ctx;
  if (tensor_overload) {
    Owned<double> scale_t({1, 1}, {scale});
    Owned<int64_t> zp_t({}, {zp});
    REQUIRE(q::quantize_per_tensor_tensor_out(ctx, *in, scale_t, zp_t, c.qmin, c.qmax, dtype_of<Q>(), *out));
  } else {
    REQUIRE(q::quantize_per_tensor_out(ctx, *in, scale, zp, c.qmin, c.qmax, dtype_of<Q>(), *out));
  }
  check_against_reference(x, logical_values(*out), [&](std::size_t i) {
    return ref_quantize_per_tensor(x[i], scale, zp, c.qmin, c.qmax);
  }, "quantize_per_tensor");
}

// Per-channel / per-token parameters: `count` scales and zero points in a
// tensor of `param_sizes`, laid out in a random order.
struct ChannelParamTensors {
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
  std::unique_ptr<Owned<double>> scales_t;
  std::unique_ptr<Owned<int64_t>> zero_points_t;
};

ChannelParamTensors random_channel_params(std::mt19937_64& rng, const std::vector<int64_t>& param_sizes,
                                          int64_t qmin, int64_t qmax) {
  ChannelParamTensors p;
  const auto count = static_cast<std::size_t>(numel_of(param_sizes));
  for (std::size_t i = 0; i < count; ++i) {
    p.scales.push_back(random_scale(rng));
    p.zero_points.push_back(random_zero_point(rng, qmin, qmax));
  }
  p.scales_t = make_tensor<double>(param_sizes, p.scales, random_order(param_sizes.size(), rng));
  p.zero_points_t = make_tensor<int64_t>(param_sizes, p.zero_points, random_order(param_sizes.size(), rng));
  return p;
}

// Sizes of a parameter tensor holding `count` values: [count], or a 2-D or
// 3-D factorisation, so "flat array, whatever its shape" gets exercised.
std::vector<int64_t> random_param_shape(std::mt19937_64& rng, int64_t count) {
  switch (uniform_int(rng, 0, 2)) {
    case 0: return {count};
    case 1: return {1, count};
    default: {
      for (int64_t f = 2; f * f <= count; ++f)
        if (count % f == 0) return {f, 1, count / f};
      return {count, 1};
    }
  }
}

template <typename In, typename Q>
void random_per_channel(std::mt19937_64& rng) {
  const QuantCase c = random_case<Q>(rng, 1);
  const auto dim = static_cast<int64_t>(c.sizes.size());
  const int64_t axis = uniform_int(rng, -dim, dim - 1);
  const int64_t channels = c.sizes[static_cast<std::size_t>(axis < 0 ? axis + dim : axis)];
  auto params = random_channel_params(rng, random_param_shape(rng, channels), c.qmin, c.qmax);
  const int64_t zp_hint = channels > 0 ? params.zero_points[0] : 0;
  const double scale_hint = channels > 0 ? params.scales[0] : 1.0;
  const auto x = random_inputs<In>(rng, static_cast<std::size_t>(numel_of(c.sizes)), scale_hint, zp_hint, c.qmin,
                                   c.qmax);
  INFO("sizes " << ::Catch::Detail::stringify(c.sizes) << " axis " << axis << " in order " << ::Catch::Detail::stringify(converted<int>(c.in_order))
                << " out order " << ::Catch::Detail::stringify(converted<int>(c.out_order)) << " range [" << c.qmin << ", "
                << c.qmax << "] " << type_label<In>() << " -> " << type_label<Q>());
  auto in = make_tensor<In>(c.sizes, x, c.in_order);
  auto out = make_filled<Q>(c.sizes, Q{0}, c.out_order);
  KernelContext ctx;
  REQUIRE(q::quantize_per_channel_out(ctx, *in, *params.scales_t, *params.zero_points_t, axis, c.qmin, c.qmax,
                                      dtype_of<Q>(), *out));
  const int64_t norm_axis = axis < 0 ? axis + dim : axis;
  int64_t inner = 1;
  for (int64_t d = norm_axis + 1; d < dim; ++d) inner *= c.sizes[static_cast<std::size_t>(d)];
  check_against_reference(x, logical_values(*out), [&](std::size_t i) {
    const auto ch = static_cast<std::size_t>((static_cast<int64_t>(i) / inner) % channels);
    return ref_quantize_per_channel(x[i], params.scales[ch], params.zero_points[ch], c.qmin, c.qmax);
  }, "quantize_per_channel");
}

template <typename In, typename Q>
void random_per_token(std::mt19937_64& rng) {
  const QuantCase c = random_case<Q>(rng, 1);
  const int64_t n = c.sizes.back();
  std::vector<int64_t> param_sizes(c.sizes.begin(), c.sizes.end() - 1);
  param_sizes.push_back(1);
  const int64_t tokens = numel_of(param_sizes);
  auto params = random_channel_params(rng, param_sizes, c.qmin, c.qmax);
  const int64_t zp_hint = tokens > 0 ? params.zero_points[0] : 0;
  const double scale_hint = tokens > 0 ? params.scales[0] : 1.0;
  const auto x = random_inputs<In>(rng, static_cast<std::size_t>(numel_of(c.sizes)), scale_hint, zp_hint, c.qmin,
                                   c.qmax);
  INFO("sizes " << ::Catch::Detail::stringify(c.sizes) << " in order " << ::Catch::Detail::stringify(converted<int>(c.in_order)) << " out order "
                << ::Catch::Detail::stringify(converted<int>(c.out_order)) << " range [" << c.qmin << ", " << c.qmax << "] "
                << type_label<In>() << " -> " << type_label<Q>());
  auto in = make_tensor<In>(c.sizes, x, c.in_order);
  auto out = make_filled<Q>(c.sizes, Q{0}, c.out_order);
  KernelContext ctx;
  REQUIRE(q::quantize_per_token_out(ctx, *in, *params.scales_t, *params.zero_points_t, c.qmin, c.qmax,
                                    dtype_of<Q>(), *out));
  check_against_reference(x, logical_values(*out), [&](std::size_t i) {
    const auto token = static_cast<std::size_t>(static_cast<int64_t>(i) / n);
    return ref_quantize_per_token(x[i], params.scales[token], params.zero_points[token], c.qmin, c.qmax);
  }, "quantize_per_token");
}

TEST_CASE("quantize_per_tensor: random comparison with the reference, every dtype, layout and target") {
  std::mt19937_64 rng = seeded_rng(0x5157);
  for_each_simd_target([&] {
    for_each_float_type([&](auto in_tag) {
      for_each_quantized_type([&](auto out_tag) {
        using In = typename decltype(in_tag)::type;
        using Q = typename decltype(out_tag)::type;
        for (int i = 0; i < 24; ++i) random_per_tensor<In, Q>(rng, i % 2 == 1);
      });
    });
  });
}

TEST_CASE("quantize_per_channel: random comparison with the reference, every dtype, layout and target") {
  std::mt19937_64 rng = seeded_rng(0xC4A7);
  for_each_simd_target([&] {
    for_each_float_type([&](auto in_tag) {
      for_each_quantized_type([&](auto out_tag) {
        for (int i = 0; i < 24; ++i)
          random_per_channel<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(rng);
      });
    });
  });
}

TEST_CASE("quantize_per_token: random comparison with the reference, every dtype, layout and target") {
  std::mt19937_64 rng = seeded_rng(0x70CE);
  for_each_simd_target([&] {
    for_each_float_type([&](auto in_tag) {
      for_each_quantized_type([&](auto out_tag) {
        for (int i = 0; i < 24; ++i)
          random_per_token<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(rng);
      });
    });
  });
}

// ---- targeted numerics ----

TEST_CASE("quantize_per_tensor: exact ties on long runs, every output dtype") {
  // x * inv = k + 0.5 for k in [-600, 600): ties to even, then + zp.
  std::vector<float> x;
  for (int k = -600; k < 600; ++k) x.push_back((static_cast<float>(k) + 0.5f) * 0.25f);
  for_each_simd_target([&] {
    for_each_quantized_type([&](auto tag) {
      using Q = typename decltype(tag)::type;
      const int64_t zp = std::is_signed_v<Q> ? 1 : 700;
      Owned<float> in({static_cast<int64_t>(x.size())}, x);
      auto out = make_filled<Q>({static_cast<int64_t>(x.size())}, Q{0});
      KernelContext ctx;
      REQUIRE(q::quantize_per_tensor_out(ctx, in, 0.25, zp, lowest<Q>(), highest<Q>(), dtype_of<Q>(), *out));
      for (std::size_t i = 0; i < x.size(); ++i) {
        const int k = static_cast<int>(i) - 600;
        const int even = (k % 2 == 0) ? k : k + 1;  // rne(k + 0.5)
        INFO("k = " << k);
        REQUIRE(static_cast<int64_t>(out->values[i]) == std::clamp<int64_t>(even + zp, lowest<Q>(), highest<Q>()));
      }
    });
  });
}

TEST_CASE("quantize: both clamps, infinities and NaN on every output dtype and family") {
  const std::vector<float> x = {-1e30f, 1e30f, -std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  const auto input = repeated(x, 20);
  for_each_simd_target([&] {
    for_each_quantized_type([&](auto tag) {
      using Q = typename decltype(tag)::type;
      const int64_t lo = lowest<Q>() + 3;
      const int64_t hi = highest<Q>() - 5;
      const std::vector<int64_t> expected = {lo, hi, lo, hi, lo};
      const auto want = converted<Q>(repeated(expected, 20));
      const auto n = static_cast<int64_t>(input.size());
      Owned<float> in({n}, input);
      auto out = make_filled<Q>({n}, Q{0});
      KernelContext ctx;
      REQUIRE(q::quantize_per_tensor_out(ctx, in, 0.5, 0, lo, hi, dtype_of<Q>(), *out));
      CHECK(as_ints(out->values) == as_ints(want));
      Owned<float> in2({n, 1}, input);
      auto out2 = make_filled<Q>({n, 1}, Q{0});
      Owned<double> scales({1}, {0.5});
      Owned<int64_t> zps({1}, {0});
      REQUIRE(q::quantize_per_channel_out(ctx, in2, scales, zps, 1, lo, hi, dtype_of<Q>(), *out2));
      CHECK(as_ints(out2->values) == as_ints(want));
      Owned<double> token_scales({n, 1}, std::vector<double>(static_cast<std::size_t>(n), 0.5));
      Owned<int64_t> token_zps({n, 1}, std::vector<int64_t>(static_cast<std::size_t>(n), 0));
      REQUIRE(q::quantize_per_token_out(ctx, in2, token_scales, token_zps, lo, hi, dtype_of<Q>(), *out2));
      CHECK(as_ints(out2->values) == as_ints(want));
    });
  });
}

TEST_CASE("quantize_per_tensor: i32 saturation is exact at 2^31 - 1 with a narrowed range") {
  // quant_max = 2^31 - 2 is not a float; 2147483520 (the float below) must pass.
  const std::vector<float> x = {2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483520.0f, 1e10f, -1e10f};
  const std::vector<int64_t> expected = {2147483520, INT32_MAX - 1, INT32_MIN + 1, -2147483520, INT32_MAX - 1,
                                         INT32_MIN + 1};
  check_per_tensor_example<int32_t>(x, 1.0, 0, INT32_MIN + 1, INT32_MAX - 1, expected);
}

TEST_CASE("quantize: empty tensors succeed and write nothing") {
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{0}, std::vector<int64_t>{3, 0},
                                            std::vector<int64_t>{0, 4, 2}}) {
    Owned<float> in(sizes, {});
    Owned<int8_t> out(sizes, {});
    KernelContext ctx;
    CHECK(q::quantize_per_tensor_out(ctx, in, 0.1, 0, -128, 127, DType::Int8, out));
    const int64_t channels = sizes.size() > 1 ? sizes[1] : 0;
    Owned<double> scales({channels}, std::vector<double>(static_cast<std::size_t>(channels), 1.0));
    Owned<int64_t> zps({channels}, std::vector<int64_t>(static_cast<std::size_t>(channels), 0));
    if (sizes.size() > 1) CHECK(q::quantize_per_channel_out(ctx, in, scales, zps, 1, -128, 127, DType::Int8, out));
    std::vector<int64_t> token_sizes(sizes.begin(), sizes.end() - 1);
    const int64_t tokens = numel_of(token_sizes);
    Owned<double> token_scales({tokens}, std::vector<double>(static_cast<std::size_t>(tokens), 1.0));
    Owned<int64_t> token_zps({tokens}, std::vector<int64_t>(static_cast<std::size_t>(tokens), 0));
    CHECK(q::quantize_per_token_out(ctx, in, token_scales, token_zps, -128, 127, DType::Int8, out));
    CHECK(ctx.ok());
  }
}

TEST_CASE("quantize: 0-dim input is one element for per-tensor") {
  Owned<float> in({}, {2.5f});
  Owned<uint8_t> out({}, {0});
  KernelContext ctx;
  REQUIRE(q::quantize_per_tensor_out(ctx, in, 1.0, 10, 0, 255, DType::UInt8, out));
  CHECK(int{out.values[0]} == 12);
}

TEST_CASE("quantize_per_tensor: f64 input forms the product in binary64") {
  // v = fl32(fl64(x * inv)) = fl32(2.5 + 2^-28) = 2.5, a tie that rounds to
  // 2; rounding the binary64 product directly would give 3.
  const double x = 2.5 + std::ldexp(1.0, -28);
  Owned<double> in({1}, {x});
  Owned<int8_t> out({1}, {0});
  KernelContext ctx;
  REQUIRE(q::quantize_per_tensor_out(ctx, in, 1.0, 0, -128, 127, DType::Int8, out));
  CHECK(int{out.values[0]} == 2);
  CHECK(ref_quantize_per_tensor(x, 1.0, 0, -128, 127) == 2);
}

TEST_CASE("quantize: non-temporal and ordinary stores give the reference bits, misaligned starts") {
  // 64Ki elements + a ragged tail of int8 output, starting 3 bytes past an aligned
  // address, so the aligned head, the streamed body and the tail all run.
  const std::size_t n = (std::size_t{1} << 16) + 77;
  std::mt19937_64 rng = seeded_rng(0x57EA);
  const double scale = 0.037;
  std::vector<float> x(n + 1);
  for (auto& v : x) v = static_cast<float>(uniform_real(rng, -6.0, 6.0));
  x[n / 2] = static_cast<float>(kNaN);
  x[n / 3] = 2.5f * static_cast<float>(scale);
  for_each_store_kind_and_simd_target([&] {
    std::vector<int8_t> y(n + 3, 0);
    Tensor in(DType::Float32, x.data() + 1, {static_cast<int64_t>(n)});
    Tensor out(DType::Int8, y.data() + 3, {static_cast<int64_t>(n)});
    KernelContext ctx;
    REQUIRE(q::quantize_per_tensor_out(ctx, in, scale, 1, -128, 127, DType::Int8, out));
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < n; ++i)
      mismatches += y[i + 3] != ref_quantize_per_tensor(x[i + 1], scale, 1, -128, 127);
    CHECK(mismatches == 0);
    CHECK(int{y[0]} == 0);  // nothing before the tensor is written
    CHECK(int{y[1]} == 0);
    CHECK(int{y[2]} == 0);
    // Per-channel with one channel: one streamed run in binary64.
    Tensor in2(DType::Float32, x.data() + 1, {1, static_cast<int64_t>(n)});
    Tensor out2(DType::Int8, y.data() + 3, {1, static_cast<int64_t>(n)});
    Owned<double> scales({1}, {0.011});
    Owned<int64_t> zps({1}, {-3});
    REQUIRE(q::quantize_per_channel_out(ctx, in2, scales, zps, 0, -128, 127, DType::Int8, out2));
    mismatches = 0;
    for (std::size_t i = 0; i < n; ++i) mismatches += y[i + 3] != ref_quantize_per_channel(x[i + 1], 0.011, -3, -128, 127);
    CHECK(mismatches == 0);
  });
}

// ---- errors ----

// Runs the kernel with out pre-filled, requires an error naming `fragments`
// and requires out untouched.
template <typename Kernel>
void expect_error(Owned<int8_t>& out, Kernel&& kernel, std::initializer_list<std::string_view> fragments) {
  std::fill(out.values.begin(), out.values.end(), int8_t{42});
  KernelContext ctx;
  CHECK_FALSE(kernel(ctx));
  require_error(ctx, fragments);
  for (auto v : out.values) CHECK(int{v} == 42);
}

TEST_CASE("quantize_per_tensor.out: every error names the argument and the value") {
  Owned<float> in({2, 3}, std::vector<float>(6, 1.0f));
  Owned<int8_t> out({2, 3}, std::vector<int8_t>(6, 0));
  Owned<int8_t> wrong_shape({3, 2}, std::vector<int8_t>(6, 0));
  Owned<int8_t> bigger({2, 4}, std::vector<int8_t>(8, 0));
  Owned<int32_t> int_in({2, 3}, std::vector<int32_t>(6, 1));
  const auto call = [&](TensorRef input, double scale, int64_t zp, int64_t qmin, int64_t qmax, DType dtype,
                        TensorRef o) {
    return [=](KernelContext& ctx) { return q::quantize_per_tensor_out(ctx, input, scale, zp, qmin, qmax, dtype, o); };
  };
  expect_error(wrong_shape, call(in, 0.1, 0, -128, 127, DType::Int8, wrong_shape), {"quantize_per_tensor.out", "out", "[3, 2]", "[2, 3]"});
  expect_error(bigger, call(in, 0.1, 0, -128, 127, DType::Int8, bigger), {"out", "[2, 4]"});
  expect_error(out, call(int_in, 0.1, 0, -128, 127, DType::Int8, out), {"input", "int32"});
  expect_error(out, call(in, 0.1, 0, 0, 255, DType::UInt8, out), {"out", "uint8", "int8"});
  Owned<int64_t> i64_out({2, 3}, std::vector<int64_t>(6, 0));
  {
    KernelContext ctx;
    CHECK_FALSE(q::quantize_per_tensor_out(ctx, in, 0.1, 0, -128, 127, DType::Int64, i64_out));
    require_error(ctx, {"dtype", "int64"});
  }
  expect_error(out, call(in, 0.1, 0, -129, 127, DType::Int8, out), {"quant_min", "-129"});
  expect_error(out, call(in, 0.1, 0, -128, 128, DType::Int8, out), {"quant_max", "128"});
  expect_error(out, call(in, 0.1, 0, 5, 4, DType::Int8, out), {"quant_min 5", "quant_max 4"});
  expect_error(out, call(in, 0.0, 0, -128, 127, DType::Int8, out), {"scale", "0"});
  expect_error(out, call(in, -0.5, 0, -128, 127, DType::Int8, out), {"scale", "-0.5"});
  expect_error(out, call(in, kInf, 0, -128, 127, DType::Int8, out), {"scale", "inf"});
  expect_error(out, call(in, kNaN, 0, -128, 127, DType::Int8, out), {"scale", "nan"});
}

TEST_CASE("quantize: malformed tensors are reported, never read") {
  Owned<float> in({2, 3}, std::vector<float>(6, 1.0f));
  Owned<int8_t> out({2, 3}, std::vector<int8_t>(6, 0));
  KernelContext ctx;
  SECTION("strides that overlap") {
    Owned<float> bad({2, 3}, std::vector<float>(6, 1.0f));
    const int64_t strides[] = {1, 1};
    bad.tensor.raw()->strides = strides;
    CHECK_FALSE(q::quantize_per_tensor_out(ctx, bad, 0.1, 0, -128, 127, DType::Int8, out));
    require_error(ctx, {"input", "strides", "dense"});
  }
  SECTION("strides past the end") {
    const int64_t strides[] = {6, 1};
    out.tensor.raw()->strides = strides;
    CHECK_FALSE(q::quantize_per_tensor_out(ctx, in, 0.1, 0, -128, 127, DType::Int8, out));
    require_error(ctx, {"out", "strides"});
  }
  SECTION("numel that disagrees with the sizes") {
    in.tensor.raw()->numel = 7;
    CHECK_FALSE(q::quantize_per_tensor_out(ctx, in, 0.1, 0, -128, 127, DType::Int8, out));
    require_error(ctx, {"input", "numel 7"});
  }
  SECTION("no data") {
    in.tensor.raw()->data = nullptr;
    CHECK_FALSE(q::quantize_per_tensor_out(ctx, in, 0.1, 0, -128, 127, DType::Int8, out));
    require_error(ctx, {"input", "no data"});
  }
  SECTION("an invalid dtype code") {
    in.tensor.raw()->dtype = 99;
    CHECK_FALSE(q::quantize_per_tensor_out(ctx, in, 0.1, 0, -128, 127, DType::Int8, out));
    require_error(ctx, {"input", "99"});
  }
  SECTION("too many dimensions") {
    in.tensor.raw()->dim = ET_OPS_MAX_DIMS + 1;
    CHECK_FALSE(q::quantize_per_tensor_out(ctx, in, 0.1, 0, -128, 127, DType::Int8, out));
    require_error(ctx, {"input", "dimensions"});
  }
}

TEST_CASE("quantize_per_tensor.Tensor_out: every error of its own") {
  Owned<float> in({4}, std::vector<float>(4, 1.0f));
  Owned<int8_t> out({4}, std::vector<int8_t>(4, 0));
  Owned<double> scale({1}, {0.5});
  Owned<int64_t> zp({1}, {0});
  Owned<float> scale_f32({1}, {0.5f});
  Owned<int32_t> zp_i32({1}, {0});
  Owned<double> two_scales({2}, {0.5, 0.5});
  Owned<int64_t> two_zps({2}, {0, 0});
  Owned<double> bad_scale({1}, {-1.0});
  const auto call = [&](TensorRef s, TensorRef z) {
    return [=, &in, &out](KernelContext& ctx) {
      return q::quantize_per_tensor_tensor_out(ctx, in, s, z, -128, 127, DType::Int8, out);
    };
  };
  expect_error(out, call(scale_f32, zp), {"Tensor_out", "scale", "float64", "float32"});
  expect_error(out, call(scale, zp_i32), {"zero_point", "int64", "int32"});
  expect_error(out, call(two_scales, zp), {"scale", "2 elements"});
  expect_error(out, call(scale, two_zps), {"zero_point", "2 elements"});
  expect_error(out, call(bad_scale, zp), {"scale", "-1"});
  Owned<int8_t> wrong({5}, std::vector<int8_t>(5, 0));
  expect_error(wrong, [&](KernelContext& ctx) {
    return q::quantize_per_tensor_tensor_out(ctx, in, scale, zp, -128, 127, DType::Int8, wrong);
  }, {"Tensor_out", "out", "[5]"});
}

TEST_CASE("quantize_per_channel.out: every error names the argument and the value") {
  Owned<float> in({2, 3}, std::vector<float>(6, 1.0f));
  Owned<int8_t> out({2, 3}, std::vector<int8_t>(6, 0));
  Owned<double> scales({3}, {0.1, 0.2, 0.3});
  Owned<int64_t> zps({3}, {0, 1, 2});
  const auto call = [&](TensorRef input, TensorRef s, TensorRef z, int64_t axis, int64_t qmin, int64_t qmax,
                        TensorRef o) {
    return [=](KernelContext& ctx) {
      return q::quantize_per_channel_out(ctx, input, s, z, axis, qmin, qmax, DType::Int8, o);
    };
  };
  Owned<int8_t> wrong({3, 2}, std::vector<int8_t>(6, 0));
  expect_error(wrong, call(in, scales, zps, 1, -128, 127, wrong), {"quantize_per_channel.out", "out", "[3, 2]"});
  Owned<float> scalar_in({}, {1.0f});
  Owned<int8_t> scalar_out({}, {0});
  expect_error(scalar_out, call(scalar_in, scales, zps, 0, -128, 127, scalar_out), {"input", "dimension"});
  expect_error(out, call(in, scales, zps, 2, -128, 127, out), {"axis 2"});
  expect_error(out, call(in, scales, zps, -3, -128, 127, out), {"axis -3"});
  Owned<float> f32_scales({3}, {0.1f, 0.2f, 0.3f});
  expect_error(out, call(in, f32_scales, zps, 1, -128, 127, out), {"scales", "float64", "float32"});
  Owned<double> two_scales({2}, {0.1, 0.2});
  expect_error(out, call(in, two_scales, zps, 1, -128, 127, out), {"scales", "2 elements", "3"});
  Owned<int32_t> i32_zps({3}, {0, 0, 0});
  expect_error(out, call(in, scales, i32_zps, 1, -128, 127, out), {"zero_points", "int64", "int32"});
  Owned<int64_t> four_zps({4}, {0, 0, 0, 0});
  expect_error(out, call(in, scales, four_zps, 1, -128, 127, out), {"zero_points", "4 elements"});
  Owned<int32_t> int_in({2, 3}, std::vector<int32_t>(6, 0));
  expect_error(out, call(int_in, scales, zps, 1, -128, 127, out), {"input", "int32"});
  expect_error(out, call(in, scales, zps, 1, -200, 127, out), {"quant_min", "-200"});
  expect_error(out, call(in, scales, zps, 1, -128, 300, out), {"quant_max", "300"});
  expect_error(out, call(in, scales, zps, 1, 10, -10, out), {"quant_min 10", "quant_max -10"});
  Owned<double> bad_scales({3}, {0.1, 0.0, 0.3});
  expect_error(out, call(in, bad_scales, zps, 1, -128, 127, out), {"scales[1]", "0"});
  Owned<double> nan_scales({3}, {0.1, 0.2, kNaN});
  expect_error(out, call(in, nan_scales, zps, 1, -128, 127, out), {"scales[2]", "nan"});
  Owned<uint8_t> u8_out({2, 3}, std::vector<uint8_t>(6, 0));
  KernelContext ctx;
  CHECK_FALSE(q::quantize_per_channel_out(ctx, in, scales, zps, 1, -128, 127, DType::Int8, u8_out));
  require_error(ctx, {"out", "int8", "uint8"});
}

TEST_CASE("quantize_per_token.out: every error names the argument and the value") {
  Owned<float> in({2, 3}, std::vector<float>(6, 1.0f));
  Owned<int8_t> out({2, 3}, std::vector<int8_t>(6, 0));
  Owned<double> scales({2, 1}, {0.1, 0.2});
  Owned<int64_t> zps({2, 1}, {0, 1});
  const auto call = [&](TensorRef input, TensorRef s, TensorRef z, int64_t qmin, int64_t qmax, DType dtype,
                        TensorRef o) {
    return [=](KernelContext& ctx) { return q::quantize_per_token_out(ctx, input, s, z, qmin, qmax, dtype, o); };
  };
  Owned<float> scalar_in({}, {1.0f});
  Owned<int8_t> scalar_out({}, {0});
  expect_error(scalar_out, call(scalar_in, scales, zps, -128, 127, DType::Int8, scalar_out),
               {"quantize_per_token.out", "input", "0-dim"});
  Owned<int8_t> wrong({2, 2}, std::vector<int8_t>(4, 0));
  expect_error(wrong, call(in, scales, zps, -128, 127, DType::Int8, wrong), {"out", "[2, 2]"});
  Owned<float> f32_scales({2, 1}, {0.1f, 0.2f});
  expect_error(out, call(in, f32_scales, zps, -128, 127, DType::Int8, out), {"scales", "float64"});
  Owned<double> three_scales({3}, {0.1, 0.2, 0.3});
  expect_error(out, call(in, three_scales, zps, -128, 127, DType::Int8, out), {"scales", "3 elements", "tokens"});
  Owned<int32_t> i32_zps({2, 1}, {0, 0});
  expect_error(out, call(in, scales, i32_zps, -128, 127, DType::Int8, out), {"zero_points", "int64"});
  Owned<int64_t> one_zp({1}, {0});
  expect_error(out, call(in, scales, one_zp, -128, 127, DType::Int8, out), {"zero_points", "1 elements"});
  expect_error(out, call(in, scales, zps, -128, 127, DType::UInt8, out), {"out", "uint8"});
  expect_error(out, call(in, scales, zps, -128, 128, DType::Int8, out), {"quant_max", "128"});
  expect_error(out, call(in, scales, zps, 3, 2, DType::Int8, out), {"quant_min 3"});
  Owned<double> neg_scales({2, 1}, {0.1, -0.2});
  expect_error(out, call(in, neg_scales, zps, -128, 127, DType::Int8, out), {"scales[1]", "-0.2"});
  Owned<int64_t> long_in({2, 3}, std::vector<int64_t>(6, 0));
  expect_error(out, call(long_in, scales, zps, -128, 127, DType::Int8, out), {"input", "int64"});
}

// ---- the C ABI ----

TEST_CASE("quantize: the C-ABI kernels unpack their arguments") {
  const std::vector<float> x = {-1.0f, 0.0f, 0.25f, 0.75f, 1.25f, 100.0f};
  Owned<float> in({2, 3}, x);
  Owned<uint8_t> out({2, 3}, std::vector<uint8_t>(6, 0));
  SECTION("quantize_per_tensor.out") {
    std::vector<et_ops_value> args = {tensor_value(in.tensor), double_value(0.5), int_value(3), int_value(0),
                                      int_value(255), scalar_type_value(DType::UInt8), tensor_value(out.tensor)};
    auto ctx = call_kernel(manifest_kernel("quantized_decomposed::quantize_per_tensor.out"), args);
    REQUIRE(ctx.ok());
    CHECK(as_ints(out.values) == std::vector<int64_t>{1, 3, 3, 5, 5, 203});
    // An int where the schema says float is accepted exactly.
    args[1] = int_value(1);
    ctx = call_kernel(manifest_kernel("quantized_decomposed::quantize_per_tensor.out"), args);
    REQUIRE(ctx.ok());
    CHECK(as_ints(out.values) == std::vector<int64_t>{2, 3, 3, 4, 4, 103});
  }
  SECTION("quantize_per_tensor.Tensor_out") {
    Owned<double> scale({1}, {0.5});
    Owned<int64_t> zp({1}, {3});
    std::vector<et_ops_value> args = {tensor_value(in.tensor), tensor_value(scale.tensor), tensor_value(zp.tensor),
                                      int_value(0), int_value(255), scalar_type_value(DType::UInt8),
                                      tensor_value(out.tensor)};
    auto ctx = call_kernel(manifest_kernel("quantized_decomposed::quantize_per_tensor.Tensor_out"), args);
    REQUIRE(ctx.ok());
    CHECK(as_ints(out.values) == std::vector<int64_t>{1, 3, 3, 5, 5, 203});
  }
  SECTION("quantize_per_channel.out") {
    Owned<double> scales({3}, {0.5, 0.25, 1.0});
    Owned<int64_t> zps({3}, {0, 1, 2});
    std::vector<et_ops_value> args = {tensor_value(in.tensor), tensor_value(scales.tensor), tensor_value(zps.tensor),
                                      int_value(-1), int_value(0), int_value(255), scalar_type_value(DType::UInt8),
                                      tensor_value(out.tensor)};
    auto ctx = call_kernel(manifest_kernel("quantized_decomposed::quantize_per_channel.out"), args);
    REQUIRE(ctx.ok());
    // Columns: x*2 (+0), x*4 (+1), x (+2).
    CHECK(as_ints(out.values) == std::vector<int64_t>{0, 1, 2, 2, 6, 102});
  }
  SECTION("quantize_per_token.out") {
    Owned<double> scales({2, 1}, {0.5, 1.0});
    Owned<int64_t> zps({2, 1}, {3, 1});
    std::vector<et_ops_value> args = {tensor_value(in.tensor), tensor_value(scales.tensor), tensor_value(zps.tensor),
                                      int_value(0), int_value(255), scalar_type_value(DType::UInt8),
                                      tensor_value(out.tensor)};
    auto ctx = call_kernel(manifest_kernel("quantized_decomposed::quantize_per_token.out"), args);
    REQUIRE(ctx.ok());
    // Token 0: rne(2x + 3) = rne([1, 3, 3.5]); token 1: rne(x + 1) = rne([1.75, 2.25, 101]).
    CHECK(as_ints(out.values) == std::vector<int64_t>{1, 3, 4, 2, 2, 101});
  }
  SECTION("a kernel error travels back through the context") {
    std::vector<et_ops_value> args = {tensor_value(in.tensor), double_value(-1.0), int_value(3), int_value(0),
                                      int_value(255), scalar_type_value(DType::UInt8), tensor_value(out.tensor)};
    auto ctx = call_kernel(manifest_kernel("quantized_decomposed::quantize_per_tensor.out"), args);
    require_error(ctx, {"quantize_per_tensor.out", "scale", "-1"});
  }
  SECTION("a wrong argument kind or count is reported") {
    std::vector<et_ops_value> args = {tensor_value(in.tensor), double_value(0.5), double_value(3.0), int_value(0),
                                      int_value(255), scalar_type_value(DType::UInt8), tensor_value(out.tensor)};
    auto ctx = call_kernel(manifest_kernel("quantized_decomposed::quantize_per_tensor.out"), args);
    require_error(ctx, {"quantize_per_tensor.out", "zero_point"});
    args.pop_back();
    ctx = call_kernel(manifest_kernel("quantized_decomposed::quantize_per_tensor.out"), args);
    require_error(ctx, {"quantize_per_tensor.out", "7 arguments"});
  }
}

}  // namespace
