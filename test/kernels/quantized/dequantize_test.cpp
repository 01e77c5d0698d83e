// dequantize_per_tensor (.out, .Tensor_out), dequantize_per_channel and
// dequantize_per_token: the worked examples of reference §11.4-11.6, random
// bit-exact comparison with the independent reference on every Highway
// target, output dtype and layout, empty tensors, every error, the C ABI.
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

template <typename Out>
std::vector<uint64_t> bits(const std::vector<Out>& values) {
  std::vector<uint64_t> out;
  for (auto v : values) out.push_back(bits_of(v));
  return out;
}

template <typename Out>
std::vector<Out> from_doubles(const std::vector<double>& values) {
  std::vector<Out> out;
  for (double v : values) out.push_back(from_double<Out>(v));
  return out;
}

template <typename T>
std::vector<T> repeated(const std::vector<T>& values, std::size_t times) {
  std::vector<T> out;
  for (std::size_t i = 0; i < times; ++i) out.insert(out.end(), values.begin(), values.end());
  return out;
}

// ---- worked examples ----

// Per-tensor dequantize of `q` into Out, as given and repeated past every
// vector width, on every target, against the decimal values of §11.
template <typename Out, typename Q>
void check_per_tensor_example(const std::vector<Q>& qs, double scale, int64_t zp, int64_t qmin, int64_t qmax,
                              const std::vector<double>& expected) {
  for (std::size_t times : {std::size_t{1}, std::size_t{41}}) {
    const auto input = repeated(qs, times);
    const auto want = bits(repeated(from_doubles<Out>(expected), times));
    const auto n = static_cast<int64_t>(input.size());
    for_each_simd_target([&] {
      Owned<Q> in({n}, input);
      auto out = make_filled<Out>({n}, Out{});
      KernelContext ctx;
      REQUIRE(q::dequantize_per_tensor_out(ctx, in, scale, zp, qmin, qmax, dtype_of<Q>(), std::nullopt, *out));
      CHECK(bits(out->values) == want);
      // With out_dtype given, and through Tensor_out.
      std::fill(out->values.begin(), out->values.end(), Out{});
      Owned<double> scale_t({1}, {scale});
      Owned<int64_t> zp_t({1}, {zp});
      REQUIRE(q::dequantize_per_tensor_tensor_out(ctx, in, scale_t, zp_t, qmin, qmax, dtype_of<Q>(), dtype_of<Out>(),
                                                  *out));
      CHECK(bits(out->values) == want);
    });
  }
}

TEST_CASE("dequantize_per_tensor: T1 f32, f64 and f16 outputs") {
  const std::vector<uint8_t> qs = {0, 100, 255};
  check_per_tensor_example<float>(qs, 0.1, 128, 0, 255,
                                  {-12.800000190734863, -2.799999952316284, 12.699999809265137});
  check_per_tensor_example<double>(qs, 0.1, 128, 0, 255, {-12.8, -2.8000000000000003, 12.700000000000001});
  check_per_tensor_example<Half>(qs, 0.1, 128, 0, 255, {-12.796875, -2.80078125, 12.703125});
}

TEST_CASE("dequantize_per_tensor: T2 f16 output with a huge zero point rounds once (D7)") {
  check_per_tensor_example<Half>(std::vector<uint8_t>{10}, 0.5, 100000, 0, 255, {-49984.0});
}

TEST_CASE("dequantize_per_channel: P1 f64 scales compute in binary64 (D8)") {
  for_each_simd_target([&] {
    Owned<int8_t> in({2, 2}, {9, -128, 13, 127});
    Owned<double> scales({2}, {0.1, 0.2});
    Owned<int64_t> zps({2}, {0, -1});
    Owned<float> out({2, 2}, std::vector<float>(4, 0.0f));
    KernelContext ctx;
    REQUIRE(q::dequantize_per_channel_out(ctx, in, scales, zps, 0, -128, 127, DType::Int8, std::nullopt, out));
    CHECK(bits(out.values) == bits(from_doubles<float>({0.8999999761581421, -12.800000190734863, 2.799999952316284,
                                                        25.600000381469727})));
  });
}

TEST_CASE("dequantize_per_channel: P2 f32 scales without zero points, axis 1") {
  for_each_simd_target([&] {
    Owned<int8_t> in({2, 2}, {9, -128, 13, 127});
    Owned<float> scales({2}, {0.1f, 0.2f});
    Owned<float> out({2, 2}, std::vector<float>(4, 0.0f));
    KernelContext ctx;
    REQUIRE(q::dequantize_per_channel_out(ctx, in, scales, std::nullopt, 1, -128, 127, DType::Int8, DType::Float32,
                                          out));
    CHECK(bits(out.values) == bits(from_doubles<float>({0.9000000357627869, -25.600000381469727, 1.3000000715255737,
                                                        25.399999618530273})));
  });
}

TEST_CASE("dequantize_per_token: DK1 f32 and DK2 f64 outputs") {
  for_each_simd_target([&] {
    Owned<int8_t> in({2, 3}, {-128, 0, 127, 5, 6, 7});
    Owned<double> scales({2, 1}, {0.1, 0.3});
    Owned<int64_t> zps({2, 1}, {-1, 2});
    Owned<float> out32({2, 3}, std::vector<float>(6, 0.0f));
    Owned<double> out64({2, 3}, std::vector<double>(6, 0.0));
    KernelContext ctx;
    REQUIRE(q::dequantize_per_token_out(ctx, in, scales, zps, -128, 127, DType::Int8, DType::Float32, out32));
    CHECK(bits(out32.values) == bits(from_doubles<float>({-12.699999809265137, 0.10000000149011612,
                                                          12.800000190734863, 0.8999999761581421, 1.2000000476837158,
                                                          1.5})));
    REQUIRE(q::dequantize_per_token_out(ctx, in, scales, zps, -128, 127, DType::Int8, DType::Float64, out64));
    CHECK(bits(out64.values) == bits(std::vector<double>{-12.700000000000001, 0.1, 12.8, 0.8999999999999999, 1.2,
                                                         1.5}));
  });
}

// ---- random comparison with the reference ----

template <typename F>
void for_each_out_type(F&& f) {
  for_each_float_type(std::forward<F>(f));
}

// Zero points within the range mostly, sometimes far outside it: past
// 2^24 (f32 inexact), past 2^52 (the binary64 vector path's limit) and near
// the int64 ends (the long double fallback).
int64_t random_zero_point(std::mt19937_64& rng, int64_t qmin, int64_t qmax, bool int32_only) {
  switch (uniform_int(rng, 0, 11)) {
    case 0: return uniform_int(rng, -(int64_t{1} << 30), int64_t{1} << 30);
    case 1: return int32_only ? INT32_MIN : uniform_int(rng, -(int64_t{1} << 60), int64_t{1} << 60);
    case 2: return int32_only ? INT32_MAX : (uniform_int(rng, 0, 1) ? INT64_MAX - uniform_int(rng, 0, 5)
                                                                     : INT64_MIN + uniform_int(rng, 0, 5));
    case 3: return uniform_int(rng, -(int64_t{1} << 20), int64_t{1} << 20);
    default: return uniform_int(rng, qmin, qmax);
  }
}

double random_scale(std::mt19937_64& rng) {
  if (uniform_int(rng, 0, 3) == 0) return std::ldexp(1.0, static_cast<int>(uniform_int(rng, -12, 6)));
  return log_uniform(rng, 1e-6, 1e4);
}

template <typename Q>
std::vector<Q> random_quantized(std::mt19937_64& rng, std::size_t n) {
  std::vector<Q> out(n);
  for (auto& v : out) v = static_cast<Q>(uniform_int(rng, lowest<Q>(), highest<Q>()));
  return out;
}

struct Layout {
  std::vector<int64_t> sizes;
  std::vector<uint8_t> in_order;
  std::vector<uint8_t> out_order;
};

Layout random_layout(std::mt19937_64& rng, std::size_t min_rank) {
  Layout l;
  do l.sizes = random_shape(rng); while (l.sizes.size() < min_rank);
  const int64_t kind = uniform_int(rng, 0, 3);
  l.in_order = kind == 0 ? default_order(l.sizes.size()) : random_order(l.sizes.size(), rng);
  l.out_order = kind == 1 ? default_order(l.sizes.size()) : kind == 2 ? random_order(l.sizes.size(), rng) : l.in_order;
  return l;
}

template <typename Q, typename Out, typename Reference>
void check_outputs(const std::vector<Q>& qs, const std::vector<Out>& got, const Reference& reference, const char* what) {
  REQUIRE(got.size() == qs.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const Out want = reference(i);
    if (bits_of(got[i]) == bits_of(want)) continue;
    if (mismatches++ == 0) {
      INFO(what << ": element " << i << " q = " << static_cast<int64_t>(qs[i]) << " got " << show(got[i])
                << " expected " << show(want));
      CHECK(false);
    }
  }
  CHECK(mismatches == 0);
}

std::string describe(const Layout& l) {
  std::vector<int> in(l.in_order.begin(), l.in_order.end()), out(l.out_order.begin(), l.out_order.end());
  return "sizes " + ::Catch::Detail::stringify(l.sizes) + " in order " + ::Catch::Detail::stringify(in) +
         " out order " + ::Catch::Detail::stringify(out);
}

template <typename Q, typename Out>
void random_per_tensor(std::mt19937_64& rng, bool tensor_overload) {
  const Layout l = random_layout(rng, 0);
  const double scale = random_scale(rng);
  const int64_t zp = random_zero_point(rng, lowest<Q>(), highest<Q>(), false);
  const auto qs = random_quantized<Q>(rng, static_cast<std::size_t>(numel_of(l.sizes)));
  INFO(describe(l) << " scale " << fmt::format("{}", scale) << " zp " << zp << " " << type_label<Q>() << " -> "
                   << type_label<Out>());
  auto in = make_tensor<Q>(l.sizes, qs, l.in_order);
  auto out = make_filled<Out>(l.sizes, Out{}, l.out_order);
  KernelContext ctx;
  if (tensor_overload) {
    Owned<double> scale_t({}, {scale});
    Owned<int64_t> zp_t({1, 1}, {zp});
    REQUIRE(q::dequantize_per_tensor_tensor_out(ctx, *in, scale_t, zp_t, lowest<Q>(), highest<Q>(), dtype_of<Q>(),
                                                std::nullopt, *out));
  } else {
    REQUIRE(q::dequantize_per_tensor_out(ctx, *in, scale, zp, lowest<Q>(), highest<Q>(), dtype_of<Q>(),
                                         dtype_of<Out>(), *out));
  }
  check_outputs(qs, logical_values(*out), [&](std::size_t i) { return ref_dequantize_per_tensor<Out>(qs[i], scale, zp); },
                "dequantize_per_tensor");
}

// Scales (f32 or f64) and optional zero points (i32 or i64) for `count`
// channels or tokens, in a parameter tensor of `param_sizes` and random order.
struct ChannelParams {
  std::vector<double> scales;
  std::vector<int64_t> zero_points;  // empty: None
  std::unique_ptr<Owned<double>> scales_f64;
  std::unique_ptr<Owned<float>> scales_f32;
  std::unique_ptr<Owned<int64_t>> zps_i64;
  std::unique_ptr<Owned<int32_t>> zps_i32;

  TensorRef scales_ref() const { return scales_f64 ? scales_f64->ref() : scales_f32->ref(); }
  std::optional<TensorRef> zps_ref() const {
    if (zps_i64) return zps_i64->ref();
    if (zps_i32) return zps_i32->ref();
    return std::nullopt;
  }
  bool f64_scales() const { return scales_f64 != nullptr; }
};

ChannelParams random_params(std::mt19937_64& rng, const std::vector<int64_t>& param_sizes, int64_t qmin, int64_t qmax,
                            bool allow_no_zero_points) {
  ChannelParams p;
  const auto count = static_cast<std::size_t>(numel_of(param_sizes));
  const bool f64 = uniform_int(rng, 0, 1) == 0;
  const int64_t zp_kind = uniform_int(rng, allow_no_zero_points ? 0 : 1, 2);  // 0 none, 1 i32, 2 i64
  for (std::size_t i = 0; i < count; ++i) {
    double s = random_scale(rng);
    if (!f64) s = static_cast<float>(s);
    p.scales.push_back(s);
    if (zp_kind) p.zero_points.push_back(random_zero_point(rng, qmin, qmax, zp_kind == 1));
  }
  const auto order = random_order(param_sizes.size(), rng);
  if (f64) {
    p.scales_f64 = make_tensor<double>(param_sizes, p.scales, order);
  } else {
    std::vector<float> f32(p.scales.begin(), p.scales.end());
    p.scales_f32 = make_tensor<float>(param_sizes, f32, order);
  }
  if (zp_kind == 2) p.zps_i64 = make_tensor<int64_t>(param_sizes, p.zero_points, random_order(param_sizes.size(), rng));
  if (zp_kind == 1) {
    std::vector<int32_t> i32(p.zero_points.begin(), p.zero_points.end());
    p.zps_i32 = make_tensor<int32_t>(param_sizes, i32, random_order(param_sizes.size(), rng));
  }
  return p;
}

template <typename Out>
Out ref_channel(int64_t qv, const ChannelParams& p, std::size_t c) {
  const int64_t zp = p.zero_points.empty() ? 0 : p.zero_points[c];
  if (p.f64_scales()) return ref_dequantize_f64_scale<Out>(qv, p.scales[c], zp);
  return ref_dequantize_f32_scale<Out>(qv, static_cast<float>(p.scales[c]), zp);
}

std::vector<int64_t> random_param_shape(std::mt19937_64& rng, int64_t count) {
  switch (uniform_int(rng, 0, 2)) {
    case 0: return {count};
    case 1: return {count, 1};
    default:
      for (int64_t f = 2; f * f <= count; ++f)
        if (count % f == 0) return {f, count / f};
      return {1, count};
  }
}

template <typename Q, typename Out>
void random_per_channel(std::mt19937_64& rng) {
  const Layout l = random_layout(rng, 1);
  const auto dim = static_cast<int64_t>(l.sizes.size());
  const int64_t axis = uniform_int(rng, -dim, dim - 1);
  const int64_t norm_axis = axis < 0 ? axis + dim : axis;
  const int64_t channels = l.sizes[static_cast<std::size_t>(norm_axis)];
  const auto p = random_params(rng, random_param_shape(rng, channels), lowest<Q>(), highest<Q>(), true);
  const auto qs = random_quantized<Q>(rng, static_cast<std::size_t>(numel_of(l.sizes)));
  INFO(describe(l) << " axis " << axis << (p.f64_scales() ? " f64" : " f32") << " scales, "
                   << (p.zero_points.empty() ? "no" : p.zps_i64 ? "i64" : "i32") << " zero points, "
                   << type_label<Q>() << " -> " << type_label<Out>());
  auto in = make_tensor<Q>(l.sizes, qs, l.in_order);
  auto out = make_filled<Out>(l.sizes, Out{}, l.out_order);
  KernelContext ctx;
  REQUIRE(q::dequantize_per_channel_out(ctx, *in, p.scales_ref(), p.zps_ref(), axis, lowest<Q>(), highest<Q>(),
                                        dtype_of<Q>(), std::nullopt, *out));
  int64_t inner = 1;
  for (int64_t d = norm_axis + 1; d < dim; ++d) inner *= l.sizes[static_cast<std::size_t>(d)];
  check_outputs(qs, logical_values(*out), [&](std::size_t i) {
    return ref_channel<Out>(qs[i], p, static_cast<std::size_t>((static_cast<int64_t>(i) / inner) % channels));
  }, "dequantize_per_channel");
}

template <typename Q, typename Out>
void random_per_token(std::mt19937_64& rng) {
  const Layout l = random_layout(rng, 1);
  std::vector<int64_t> param_sizes(l.sizes.begin(), l.sizes.end() - 1);
  param_sizes.push_back(1);
  const auto p = random_params(rng, param_sizes, lowest<Q>(), highest<Q>(), false);
  const auto qs = random_quantized<Q>(rng, static_cast<std::size_t>(numel_of(l.sizes)));
  INFO(describe(l) << (p.f64_scales() ? " f64" : " f32") << " scales, " << (p.zps_i64 ? "i64" : "i32")
                   << " zero points, " << type_label<Q>() << " -> " << type_label<Out>());
  auto in = make_tensor<Q>(l.sizes, qs, l.in_order);
  auto out = make_filled<Out>(l.sizes, Out{}, l.out_order);
  KernelContext ctx;
  REQUIRE(q::dequantize_per_token_out(ctx, *in, p.scales_ref(), *p.zps_ref(), lowest<Q>(), highest<Q>(),
                                      dtype_of<Q>(), dtype_of<Out>(), *out));
  const int64_t n = l.sizes.back();
  check_outputs(qs, logical_values(*out), [&](std::size_t i) {
    return ref_channel<Out>(qs[i], p, static_cast<std::size_t>(static_cast<int64_t>(i) / n));
  }, "dequantize_per_token");
}

TEST_CASE("dequantize_per_tensor: random comparison with the reference, every dtype, layout and target") {
  std::mt19937_64 rng = seeded_rng(0xDE01);
  for_each_simd_target([&] {
    for_each_quantized_type([&](auto in_tag) {
      for_each_out_type([&](auto out_tag) {
        for (int i = 0; i < 24; ++i)
          random_per_tensor<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(rng, i % 2 == 1);
      });
    });
  });
}

TEST_CASE("dequantize_per_channel: random comparison with the reference, every dtype, layout and target") {
  std::mt19937_64 rng = seeded_rng(0xDE02);
  for_each_simd_target([&] {
    for_each_quantized_type([&](auto in_tag) {
      for_each_out_type([&](auto out_tag) {
        for (int i = 0; i < 24; ++i)
          random_per_channel<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(rng);
      });
    });
  });
}

TEST_CASE("dequantize_per_token: random comparison with the reference, every dtype, layout and target") {
  std::mt19937_64 rng = seeded_rng(0xDE03);
  for_each_simd_target([&] {
    for_each_quantized_type([&](auto in_tag) {
      for_each_out_type([&](auto out_tag) {
        for (int i = 0; i < 24; ++i)
          random_per_token<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(rng);
      });
    });
  });
}

// ---- targeted numerics ----

TEST_CASE("dequantize: every int8 and uint8 value on a long contiguous run, all outputs") {
  std::vector<int8_t> i8;
  for (int v = -128; v < 128; ++v) i8.push_back(static_cast<int8_t>(v));
  for_each_simd_target([&] {
    for_each_out_type([&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      for (double scale : {0.1, 0.003921568859368563, 3.0, 1e-3}) {
        Owned<int8_t> in({16, 16}, i8);
        auto out = make_filled<Out>({16, 16}, Out{});
        KernelContext ctx;
        REQUIRE(q::dequantize_per_tensor_out(ctx, in, scale, -7, -128, 127, DType::Int8, std::nullopt, *out));
        check_outputs(i8, out->values, [&](std::size_t i) { return ref_dequantize_per_tensor<Out>(i8[i], scale, -7); },
                      "dequantize_per_tensor");
        // Per-channel along dim 0: 16 runs of 16 with their own scales.
        Owned<double> scales({16}, std::vector<double>(16, scale));
        Owned<int32_t> zps({16}, std::vector<int32_t>(16, -7));
        REQUIRE(q::dequantize_per_channel_out(ctx, in, scales, zps, 0, -128, 127, DType::Int8, std::nullopt, *out));
        check_outputs(i8, out->values, [&](std::size_t i) { return ref_dequantize_f64_scale<Out>(i8[i], scale, -7); },
                      "dequantize_per_channel");
      }
    });
  });
}

TEST_CASE("dequantize: i32 inputs beyond 2^24 follow fl32(q) (D30)") {
  // q = 2^24 + 1 is not a float: fl32(q) = 2^24, then - 0, * 1.
  const std::vector<int32_t> qs = {16777217, -16777217, INT32_MAX, INT32_MIN};
  Owned<int32_t> in({4}, qs);
  Owned<float> out({4}, std::vector<float>(4, 0.0f));
  KernelContext ctx;
  REQUIRE(q::dequantize_per_tensor_out(ctx, in, 1.0, 0, INT32_MIN, INT32_MAX, DType::Int32, std::nullopt, out));
  CHECK(out.values == std::vector<float>{16777216.0f, -16777216.0f, 2147483648.0f, -2147483648.0f});
  Owned<double> out64({4}, std::vector<double>(4, 0.0));
  REQUIRE(q::dequantize_per_tensor_out(ctx, in, 1.0, 0, INT32_MIN, INT32_MAX, DType::Int32, std::nullopt, out64));
  CHECK(out64.values == std::vector<double>{16777217.0, -16777217.0, 2147483647.0, -2147483648.0});
}

TEST_CASE("dequantize: bf16 output rounds once from the f32 value") {
  // q = 1, zp = 0, scale = 1 + 2^-8 + 2^-20: the f32 value is just above a bf16 tie.
  const double scale = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20);
  Owned<uint8_t> in({1}, {1});
  Owned<BFloat16> out({1}, {BFloat16{}});
  KernelContext ctx;
  REQUIRE(q::dequantize_per_tensor_out(ctx, in, scale, 0, 0, 255, DType::UInt8, DType::BFloat16, out));
  CHECK(out.values[0].bits == 0x3F81);  // 1 + 2^-7
}

TEST_CASE("dequantize: values outside quant_min..quant_max are not an error") {
  Owned<uint8_t> in({3}, {0, 200, 255});
  Owned<float> out({3}, std::vector<float>(3, 0.0f));
  KernelContext ctx;
  REQUIRE(q::dequantize_per_tensor_out(ctx, in, 1.0, 0, 10, 20, DType::UInt8, std::nullopt, out));
  CHECK(out.values == std::vector<float>{0.0f, 200.0f, 255.0f});
}

TEST_CASE("dequantize: empty tensors succeed") {
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{0}, std::vector<int64_t>{2, 0},
                                            std::vector<int64_t>{0, 3}}) {
    Owned<int8_t> in(sizes, {});
    Owned<float> out(sizes, {});
    KernelContext ctx;
    CHECK(q::dequantize_per_tensor_out(ctx, in, 0.5, 0, -128, 127, DType::Int8, std::nullopt, out));
    const int64_t channels = sizes[0];
    Owned<float> scales({channels}, std::vector<float>(static_cast<std::size_t>(channels), 0.5f));
    CHECK(q::dequantize_per_channel_out(ctx, in, scales, std::nullopt, 0, -128, 127, DType::Int8, std::nullopt, out));
    std::vector<int64_t> token_sizes(sizes.begin(), sizes.end() - 1);
    const int64_t tokens = numel_of(token_sizes);
    Owned<double> token_scales({tokens}, std::vector<double>(static_cast<std::size_t>(tokens), 0.5));
    Owned<int64_t> token_zps({tokens}, std::vector<int64_t>(static_cast<std::size_t>(tokens), 0));
    CHECK(q::dequantize_per_token_out(ctx, in, token_scales, token_zps, -128, 127, DType::Int8, DType::Float32, out));
    CHECK(ctx.ok());
  }
}

TEST_CASE("dequantize: non-temporal and ordinary stores give the reference bits, misaligned starts") {
  // 64Ki elements + a ragged tail of f32 output starting one float past an aligned
  // address: the aligned head, the streamed body and the tail all run.
  const std::size_t n = (std::size_t{1} << 16) + 33;
  std::mt19937_64 rng = seeded_rng(0xD57E);
  std::vector<int8_t> qs(n + 1);
  for (auto& v : qs) v = static_cast<int8_t>(uniform_int(rng, -128, 127));
  for_each_store_kind_and_simd_target([&] {
    std::vector<float> y(n + 1, 0.0f);
    Tensor in(DType::Int8, qs.data() + 1, {static_cast<int64_t>(n)});
    Tensor out(DType::Float32, y.data() + 1, {static_cast<int64_t>(n)});
    KernelContext ctx;
    REQUIRE(q::dequantize_per_tensor_out(ctx, in, 0.0173, 5, -128, 127, DType::Int8, std::nullopt, out));
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < n; ++i)
      mismatches += bits_of(y[i + 1]) != bits_of(ref_dequantize_per_tensor<float>(qs[i + 1], 0.0173, 5));
    CHECK(mismatches == 0);
    CHECK(y[0] == 0.0f);
    // Binary64 path into f64: 8 MiB of output.
    std::vector<double> y64(n + 1, 0.0);
    Tensor out64(DType::Float64, y64.data() + 1, {static_cast<int64_t>(n)});
    REQUIRE(q::dequantize_per_tensor_out(ctx, in, 0.0173, 5, -128, 127, DType::Int8, std::nullopt, out64));
    mismatches = 0;
    for (std::size_t i = 0; i < n; ++i)
      mismatches += bits_of(y64[i + 1]) != bits_of(ref_dequantize_per_tensor<double>(qs[i + 1], 0.0173, 5));
    CHECK(mismatches == 0);
    // Per-channel with one channel and f64 scales into f32 (binary64, then
    // one rounding): one streamed run.
    Tensor in2(DType::Int8, qs.data() + 1, {static_cast<int64_t>(n), 1});
    Tensor out2(DType::Float32, y.data() + 1, {static_cast<int64_t>(n), 1});
    Owned<double> scales({1}, {0.1});
    Owned<int64_t> zps({1}, {-9});
    REQUIRE(q::dequantize_per_channel_out(ctx, in2, scales, zps, 1, -128, 127, DType::Int8, std::nullopt, out2));
    mismatches = 0;
    for (std::size_t i = 0; i < n; ++i)
      mismatches += bits_of(y[i + 1]) != bits_of(ref_dequantize_f64_scale<float>(qs[i + 1], 0.1, -9));
    CHECK(mismatches == 0);
  });
}

// ---- errors ----

template <typename Kernel>
void expect_error(Owned<float>& out, Kernel&& kernel, std::initializer_list<std::string_view> fragments) {
  std::fill(out.values.begin(), out.values.end(), 42.0f);
  KernelContext ctx;
  CHECK_FALSE(kernel(ctx));
  require_error(ctx, fragments);
  for (auto v : out.values) CHECK(v == 42.0f);
}

TEST_CASE("dequantize_per_tensor.out: every error names the argument and the value") {
  Owned<int8_t> in({2, 3}, std::vector<int8_t>(6, 1));
  Owned<float> out({2, 3}, std::vector<float>(6, 0.0f));
  const auto call = [&](TensorRef input, double scale, int64_t qmin, int64_t qmax, DType dtype,
                        std::optional<DType> out_dtype, TensorRef o) {
    return [=](KernelContext& ctx) {
      return q::dequantize_per_tensor_out(ctx, input, scale, 0, qmin, qmax, dtype, out_dtype, o);
    };
  };
  Owned<float> wrong({6}, std::vector<float>(6, 0.0f));
  expect_error(wrong, call(in, 0.1, -128, 127, DType::Int8, std::nullopt, wrong),
               {"dequantize_per_tensor.out", "out", "[6]", "[2, 3]"});
  Owned<int64_t> long_in({2, 3}, std::vector<int64_t>(6, 0));
  expect_error(out, call(long_in, 0.1, -128, 127, DType::Int64, std::nullopt, out), {"input", "int64"});
  Owned<float> float_in({2, 3}, std::vector<float>(6, 0.0f));
  expect_error(out, call(float_in, 0.1, -128, 127, DType::Int8, std::nullopt, out), {"input", "float32"});
  expect_error(out, call(in, 0.1, 0, 255, DType::UInt8, std::nullopt, out), {"input", "int8", "dtype", "uint8"});
  expect_error(out, call(in, 0.1, -128, 127, DType::Int8, DType::Float64, out), {"out", "float32", "out_dtype",
                                                                                  "float64"});
  expect_error(out, call(in, 0.1, 5, -5, DType::Int8, std::nullopt, out), {"quant_min 5", "quant_max -5"});
  Owned<int32_t> int_out({2, 3}, std::vector<int32_t>(6, 0));
  {
    KernelContext ctx;
    CHECK_FALSE(q::dequantize_per_tensor_out(ctx, in, 0.1, 0, -128, 127, DType::Int8, std::nullopt, int_out));
    require_error(ctx, {"out", "int32"});
  }
  expect_error(out, call(in, 0.1, -129, 127, DType::Int8, std::nullopt, out), {"quant_min", "-129"});
  expect_error(out, call(in, 0.1, -128, 1000, DType::Int8, std::nullopt, out), {"quant_max", "1000"});
  expect_error(out, call(in, 0.0, -128, 127, DType::Int8, std::nullopt, out), {"scale", "0"});
  expect_error(out, call(in, -kInf, -128, 127, DType::Int8, std::nullopt, out), {"scale", "-inf"});
  expect_error(out, call(in, kNaN, -128, 127, DType::Int8, std::nullopt, out), {"scale", "nan"});
}

TEST_CASE("dequantize_per_tensor.Tensor_out: every error of its own") {
  Owned<int8_t> in({4}, std::vector<int8_t>(4, 1));
  Owned<float> out({4}, std::vector<float>(4, 0.0f));
  Owned<double> scale({1}, {0.5});
  Owned<int64_t> zp({1}, {0});
  Owned<float> scale_f32({1}, {0.5f});
  Owned<int32_t> zp_i32({1}, {0});
  Owned<double> two_scales({2}, {0.5, 0.5});
  Owned<int64_t> no_zps({0}, {});
  const auto call = [&](TensorRef s, TensorRef z) {
    return [=, &in, &out](KernelContext& ctx) {
      return q::dequantize_per_tensor_tensor_out(ctx, in, s, z, -128, 127, DType::Int8, std::nullopt, out);
    };
  };
  expect_error(out, call(scale_f32, zp), {"Tensor_out", "scale", "float64", "float32"});
  expect_error(out, call(scale, zp_i32), {"zero_point", "int64", "int32"});
  expect_error(out, call(two_scales, zp), {"scale", "one element", "2"});
  expect_error(out, call(scale, no_zps), {"zero_point", "one element", "0"});
  Owned<double> inf_scale({1}, {kInf});
  expect_error(out, call(inf_scale, zp), {"scale", "inf"});
}

TEST_CASE("dequantize_per_channel.out: every error names the argument and the value") {
  Owned<int8_t> in({2, 3}, std::vector<int8_t>(6, 1));
  Owned<float> out({2, 3}, std::vector<float>(6, 0.0f));
  Owned<double> scales({3}, {0.1, 0.2, 0.3});
  Owned<int64_t> zps({3}, {0, 0, 0});
  const auto call = [&](TensorRef input, TensorRef s, std::optional<TensorRef> z, int64_t axis, int64_t qmin,
                        int64_t qmax, DType dtype, std::optional<DType> out_dtype, TensorRef o) {
    return [=](KernelContext& ctx) {
      return q::dequantize_per_channel_out(ctx, input, s, z, axis, qmin, qmax, dtype, out_dtype, o);
    };
  };
  const std::optional<DType> none;
  Owned<float> wrong({2, 3, 1}, std::vector<float>(6, 0.0f));
  expect_error(wrong, call(in, scales, zps.ref(), 1, -128, 127, DType::Int8, none, wrong),
               {"dequantize_per_channel.out", "out", "[2, 3, 1]"});
  Owned<int8_t> scalar_in({}, {1});
  Owned<float> scalar_out({}, {0.0f});
  expect_error(scalar_out, call(scalar_in, scales, zps.ref(), 0, -128, 127, DType::Int8, none, scalar_out),
               {"input", "dimension"});
  expect_error(out, call(in, scales, zps.ref(), 2, -128, 127, DType::Int8, none, out), {"axis 2"});
  expect_error(out, call(in, scales, zps.ref(), -3, -128, 127, DType::Int8, none, out), {"axis -3"});
  Owned<double> two_scales({2}, {0.1, 0.2});
  expect_error(out, call(in, two_scales, zps.ref(), 1, -128, 127, DType::Int8, none, out), {"scales", "2 elements"});
  Owned<int16_t> i16_zps({3}, {0, 0, 0});
  expect_error(out, call(in, scales, i16_zps.ref(), 1, -128, 127, DType::Int8, none, out),
               {"zero_points", "int32 or int64", "int16"});
  Owned<int32_t> two_zps({2}, {0, 0});
  expect_error(out, call(in, scales, two_zps.ref(), 1, -128, 127, DType::Int8, none, out),
               {"zero_points", "2 elements"});
  Owned<uint16_t> u16_in({2, 3}, std::vector<uint16_t>(6, 0));
  expect_error(out, call(u16_in, scales, zps.ref(), 1, -128, 127, DType::Int8, none, out), {"input", "uint16", "int8"});
  expect_error(out, call(in, scales, zps.ref(), 1, -128, 127, DType::Int8, DType::Float16, out),
               {"out", "out_dtype", "float16"});
  expect_error(out, call(in, scales, zps.ref(), 1, 1, 0, DType::Int8, none, out), {"quant_min 1", "quant_max 0"});
  Owned<int64_t> i64_scales({3}, {1, 1, 1});
  expect_error(out, call(in, i64_scales, zps.ref(), 1, -128, 127, DType::Int8, none, out),
               {"scales", "float32 or float64", "int64"});
  expect_error(out, call(in, scales, zps.ref(), 1, -128, 128, DType::Int8, none, out), {"quant_max", "128"});
  Owned<float> bad_scales({3}, {0.1f, 0.2f, -0.0f});
  expect_error(out, call(in, bad_scales, std::nullopt, 1, -128, 127, DType::Int8, none, out), {"scales[2]", "-0"});
  Owned<uint8_t> byte_out({2, 3}, std::vector<uint8_t>(6, 0));
  KernelContext ctx;
  CHECK_FALSE(q::dequantize_per_channel_out(ctx, in, scales, zps, 1, -128, 127, DType::Int8, std::nullopt, byte_out));
  require_error(ctx, {"out", "uint8"});
}

TEST_CASE("dequantize_per_token.out: every error names the argument and the value") {
  Owned<int8_t> in({2, 3}, std::vector<int8_t>(6, 1));
  Owned<float> out({2, 3}, std::vector<float>(6, 0.0f));
  Owned<double> scales({2, 1}, {0.1, 0.2});
  Owned<int64_t> zps({2, 1}, {0, 0});
  const auto call = [&](TensorRef input, TensorRef s, TensorRef z, int64_t qmin, int64_t qmax, DType dtype,
                        DType output_dtype, TensorRef o) {
    return [=](KernelContext& ctx) {
      return q::dequantize_per_token_out(ctx, input, s, z, qmin, qmax, dtype, output_dtype, o);
    };
  };
  Owned<int8_t> scalar_in({}, {1});
  Owned<float> scalar_out({}, {0.0f});
  expect_error(scalar_out, call(scalar_in, scales, zps, -128, 127, DType::Int8, DType::Float32, scalar_out),
               {"dequantize_per_token.out", "input", "0-dim"});
  Owned<float> wrong({3, 2}, std::vector<float>(6, 0.0f));
  expect_error(wrong, call(in, scales, zps, -128, 127, DType::Int8, DType::Float32, wrong), {"out", "[3, 2]"});
  Owned<double> three_scales({3}, {0.1, 0.1, 0.1});
  expect_error(out, call(in, three_scales, zps, -128, 127, DType::Int8, DType::Float32, out),
               {"scales", "3 elements", "tokens"});
  Owned<uint8_t> u8_zps({2, 1}, {0, 0});
  expect_error(out, call(in, scales, u8_zps, -128, 127, DType::Int8, DType::Float32, out),
               {"zero_points", "uint8"});
  Owned<int64_t> one_zp({1}, {0});
  expect_error(out, call(in, scales, one_zp, -128, 127, DType::Int8, DType::Float32, out), {"zero_points", "1 elements"});
  expect_error(out, call(in, scales, zps, -128, 127, DType::Int16, DType::Float32, out), {"input", "int8", "int16"});
  expect_error(out, call(in, scales, zps, -128, 127, DType::Int8, DType::Float64, out),
               {"out", "output_dtype", "float64"});
  expect_error(out, call(in, scales, zps, 2, 1, DType::Int8, DType::Float32, out), {"quant_min 2"});
  Owned<Half> half_scales({2, 1}, {Half::from_float(0.1f), Half::from_float(0.1f)});
  expect_error(out, call(in, half_scales, zps, -128, 127, DType::Int8, DType::Float32, out), {"scales", "float16"});
  expect_error(out, call(in, scales, zps, -300, 127, DType::Int8, DType::Float32, out), {"quant_min", "-300"});
  Owned<double> nan_scales({2, 1}, {kNaN, 0.1});
  expect_error(out, call(in, nan_scales, zps, -128, 127, DType::Int8, DType::Float32, out), {"scales[0]", "nan"});
}

// ---- the C ABI ----

TEST_CASE("dequantize: the C-ABI kernels unpack their arguments") {
  Owned<uint8_t> in({3}, {0, 100, 255});
  Owned<double> out({3}, std::vector<double>(3, 0.0));
  const std::vector<double> t1_f64 = {-12.8, -2.8000000000000003, 12.700000000000001};
  SECTION("dequantize_per_tensor.out, out_dtype None and given") {
    std::vector<et_ops_value> args = {tensor_value(in.tensor), double_value(0.1), int_value(128), int_value(0),
                                      int_value(255), scalar_type_value(DType::UInt8), none_value(),
                                      tensor_value(out.tensor)};
    auto ctx = call_kernel(manifest_kernel("quantized_decomposed::dequantize_per_tensor.out"), args);
    REQUIRE(ctx.ok());
    CHECK(out.values == t1_f64);
    args[6] = scalar_type_value(DType::Float32);
    ctx = call_kernel(manifest_kernel("quantized_decomposed::dequantize_per_tensor.out"), args);
    require_error(ctx, {"out_dtype", "float32"});
  }
  SECTION("dequantize_per_tensor.Tensor_out") {
    Owned<double> scale({1}, {0.1});
    Owned<int64_t> zp({1}, {128});
    std::vector<et_ops_value> args = {tensor_value(in.tensor), tensor_value(scale.tensor), tensor_value(zp.tensor),
                                      int_value(0), int_value(255), scalar_type_value(DType::UInt8),
                                      scalar_type_value(DType::Float64), tensor_value(out.tensor)};
    auto ctx = call_kernel(manifest_kernel("quantized_decomposed::dequantize_per_tensor.Tensor_out"), args);
    REQUIRE(ctx.ok());
    CHECK(out.values == t1_f64);
  }
  SECTION("dequantize_per_channel.out with and without zero points") {
    Owned<double> scales({3}, {0.1, 0.1, 0.1});
    Owned<int32_t> zps({3}, {128, 128, 128});
    std::vector<et_ops_value> args = {tensor_value(in.tensor), tensor_value(scales.tensor), tensor_value(zps.tensor),
                                      int_value(0), int_value(0), int_value(255), scalar_type_value(DType::UInt8),
                                      none_value(), tensor_value(out.tensor)};
    auto ctx = call_kernel(manifest_kernel("quantized_decomposed::dequantize_per_channel.out"), args);
    REQUIRE(ctx.ok());
    CHECK(out.values == t1_f64);
    args[2] = none_value();
    ctx = call_kernel(manifest_kernel("quantized_decomposed::dequantize_per_channel.out"), args);
    REQUIRE(ctx.ok());
    CHECK(out.values == std::vector<double>{0.0, 10.0, 25.5});
  }
  SECTION("dequantize_per_token.out") {
    Owned<double> scales({1}, {0.1});
    Owned<int64_t> zps({1}, {128});
    std::vector<et_ops_value> args = {tensor_value(in.tensor), tensor_value(scales.tensor), tensor_value(zps.tensor),
                                      int_value(0), int_value(255), scalar_type_value(DType::UInt8),
                                      scalar_type_value(DType::Float64), tensor_value(out.tensor)};
    auto ctx = call_kernel(manifest_kernel("quantized_decomposed::dequantize_per_token.out"), args);
    REQUIRE(ctx.ok());
    CHECK(out.values == t1_f64);
    args[6] = none_value();  // output_dtype is required
    ctx = call_kernel(manifest_kernel("quantized_decomposed::dequantize_per_token.out"), args);
    require_error(ctx, {"dequantize_per_token.out", "output_dtype"});
  }
}

}  // namespace
