// choose_qparams.Tensor_out and choose_qparams_per_token_asymmetric.out
// (reference §5): the worked examples of §11.7 and §11.8 bit for bit, a
// randomized comparison against a plain scalar model of §5.2 / §5.3, ties,
// clamping, empty inputs, strided layouts and every error of §5.4.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "et_ops/kernels/quantized.h"
#include "simd_targets.h"
#include "test_util.h"

namespace {

using et_ops::DType;
using et_ops::KernelContext;
using et_ops::TensorRef;
using et_ops::test::bits_of;
using et_ops::test::logical_values;
using et_ops::test::make_tensor;
using et_ops::test::Owned;
using et_ops::test::require_error;
namespace q = et_ops::kernels::quantized;

constexpr double kEps = 1.1920928955078125e-07;  // 2^-23
constexpr double kUntouchedScale = -7.25;
constexpr int64_t kUntouchedZeroPoint = 999999;

struct Result {
  double scale;
  int64_t zero_point;
};

// ---- choose_qparams.Tensor_out ----

KernelContext run_tensor(const std::vector<float>& input, int64_t qmin, int64_t qmax, double eps, Result& result) {
  Owned<float> in({static_cast<int64_t>(input.size())}, input);
  Owned<double> scale({1}, {kUntouchedScale});
  Owned<int64_t> zp({1}, {kUntouchedZeroPoint});
  KernelContext ctx;
  q::choose_qparams_tensor_out(ctx, in, qmin, qmax, eps, DType::Int8, scale, zp);
  result = Result{scale.values[0], zp.values[0]};
  return ctx;
}

void check_tensor(const std::vector<float>& input, int64_t qmin, int64_t qmax, double eps, double scale,
                  int64_t zero_point) {
  Result r{};
  KernelContext ctx = run_tensor(input, qmin, qmax, eps, r);
  INFO("message: " << ctx.message());
  REQUIRE(ctx.ok());
  CHECK(bits_of(r.scale) == bits_of(scale));
  CHECK(r.zero_point == zero_point);
}

// §5.2 written out plainly, binary32 throughout.
Result model_tensor(const std::vector<float>& input, int64_t qmin, int64_t qmax, double eps) {
  float mn = *std::min_element(input.begin(), input.end());
  float mx = *std::max_element(input.begin(), input.end());
  float low = mn < 0.0f ? mn : 0.0f;
  float high = mx > 0.0f ? mx : 0.0f;
  float s = (high - low) / static_cast<float>(qmax - qmin);
  s = std::max(s, static_cast<float>(eps));
  if (s == 0.0f) return Result{0.1, std::abs(qmin) < std::abs(qmax) ? qmin : qmax};
  int64_t z = qmin - static_cast<int64_t>(std::nearbyint(low / s));
  z = std::min(std::max(z, qmin), qmax);
  return Result{static_cast<double>(s), z};
}

TEST_CASE("choose_qparams.Tensor_out: worked examples of §11.7", "[choose_qparams]") {
  check_tensor({1.0f, 2.5f, 3.2f, 15.4f}, 0, 255, kEps, 0.06039215624332428, 0);
  check_tensor({-1.0f, 0.5f}, -128, 127, kEps, 0.0058823530562222, 42);
  check_tensor({0.0f, 0.0f}, -128, 127, kEps, 1.1920928955078125e-07, -128);
  check_tensor({0.0f, 0.0f}, 0, 255, kEps, 1.1920928955078125e-07, 0);
  check_tensor({-2.5f, 252.5f}, 0, 255, kEps, 1.0, 2);  // tie: rne(-2.5) = -2
}

TEST_CASE("choose_qparams.Tensor_out: degenerate range without eps", "[choose_qparams]") {
  check_tensor({0.0f, 0.0f}, -128, 127, 0.0, 0.1, 127);
  check_tensor({0.0f, 0.0f}, 0, 255, 0.0, 0.1, 0);
  check_tensor({0.0f, -0.0f}, -100, 50, -1.0, 0.1, 50);
  check_tensor({0.0f}, -10, 200, 0.0, 0.1, -10);
}

TEST_CASE("choose_qparams.Tensor_out: ties round to even", "[choose_qparams]") {
  check_tensor({-0.5f, 254.5f}, 0, 255, kEps, 1.0, 0);  // rne(-0.5) = -0
  check_tensor({-1.5f, 253.5f}, 0, 255, kEps, 1.0, 2);  // rne(-1.5) = -2
  check_tensor({-3.5f, 251.5f}, 0, 255, kEps, 1.0, 4);  // rne(-3.5) = -4
}

TEST_CASE("choose_qparams.Tensor_out: eps floor and clamping", "[choose_qparams]") {
  // eps above the range's scale: s = fl32(0.5), z = -128 - rne(-1 / 0.5) = -126.
  check_tensor({-1.0f, 1.0f}, -128, 127, 0.5, 0.5, -126);
  // The full int32 range: s = 2^-32 and z = -2^31 + 2^32 exceeds quant_max.
  check_tensor({-1.0f}, INT32_MIN, INT32_MAX, 0.0, 0x1p-32, INT32_MAX);
  // The same with eps = 2^-23 above 2^-32: z = -2^31 + 2^23, inside the range.
  check_tensor({-1.0f}, INT32_MIN, INT32_MAX, kEps, kEps, int64_t{INT32_MIN} + (1 << 23));
  // All positive: mn' = 0, z = quant_min.
  check_tensor({3.0f, 5.0f}, -128, 127, kEps, static_cast<double>(5.0f / 255.0f), -128);
}

TEST_CASE("choose_qparams.Tensor_out: strided input of any dim order", "[choose_qparams]") {
  const std::vector<float> values{-2.0f, 0.5f, 7.25f, -0.125f, 3.0f, 1.0f};
  auto transposed = make_tensor<float>({2, 3}, values, {1, 0});
  Owned<double> scale({1, 1}, {0.0});
  Owned<int64_t> zp({1}, {0});
  KernelContext ctx;
  REQUIRE(q::choose_qparams_tensor_out(ctx, *transposed, -128, 127, kEps, DType::Int8, scale, zp));
  const Result expected = model_tensor(values, -128, 127, kEps);
  CHECK(bits_of(scale.values[0]) == bits_of(expected.scale));
  CHECK(zp.values[0] == expected.zero_point);

  Owned<float> scalar({}, {-4.0f});  // 0-dim input
  REQUIRE(q::choose_qparams_tensor_out(ctx, scalar, 0, 255, kEps, DType::UInt8, scale, zp));
  CHECK(bits_of(scale.values[0]) == bits_of(static_cast<double>(4.0f / 255.0f)));
  CHECK(zp.values[0] == 255);
}

TEST_CASE("choose_qparams.Tensor_out: randomized against the §5.2 model", "[choose_qparams]") {
  auto rng = et_ops::test::seeded_rng(0xC0FFEE);
  const std::vector<std::pair<int64_t, int64_t>> ranges{
      {0, 255}, {-128, 127}, {-32768, 32767}, {0, 65535}, {INT32_MIN, INT32_MAX}, {3, 17}, {-20, -5}, {-1, 0}};
  const std::vector<double> epsilons{kEps, 0.0, 1e-3, 1e-30, -1.0, 0.25};
  for (int trial = 0; trial < 4000; ++trial) {
    const int64_t count = std::uniform_int_distribution<int64_t>(1, 40)(rng);
    const double magnitude = std::pow(2.0, std::uniform_int_distribution<int>(-140, 100)(rng));
    const double shift = std::uniform_real_distribution<double>(-1.0, 1.0)(rng) * magnitude;
    std::vector<float> input(static_cast<std::size_t>(count));
    for (auto& v : input) {
      v = static_cast<float>(shift + std::uniform_real_distribution<double>(-1.0, 1.0)(rng) * magnitude);
      if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) v = std::nearbyint(v * 2.0f) / 2.0f;  // halves
    }
    auto [qmin, qmax] = ranges[static_cast<std::size_t>(trial) % ranges.size()];
    if (trial % 7 == 0) {
      qmin = std::uniform_int_distribution<int64_t>(-300, 300)(rng);
      qmax = qmin + std::uniform_int_distribution<int64_t>(1, 600)(rng);
    }
    const double eps = epsilons[static_cast<std::size_t>(trial / 8) % epsilons.size()];
    INFO("trial " << trial << " qmin " << qmin << " qmax " << qmax << " eps " << eps);
    Result got{};
    KernelContext ctx = run_tensor(input, qmin, qmax, eps, got);
    INFO("message: " << ctx.message());
    REQUIRE(ctx.ok());  // magnitudes stay below 2^101, so the scale is finite
    const Result expected = model_tensor(input, qmin, qmax, eps);
    REQUIRE(bits_of(got.scale) == bits_of(expected.scale));
    REQUIRE(got.zero_point == expected.zero_point);
  }
}

TEST_CASE("choose_qparams.Tensor_out: errors", "[choose_qparams][errors]") {
  Owned<float> input({3}, {1.0f, -2.0f, 0.5f});
  Owned<double> scale({1}, {kUntouchedScale});
  Owned<int64_t> zp({1}, {kUntouchedZeroPoint});
  auto run = [&](TensorRef in, int64_t qmin, int64_t qmax, double eps, TensorRef s, TensorRef z) {
    KernelContext ctx;
    CHECK_FALSE(q::choose_qparams_tensor_out(ctx, in, qmin, qmax, eps, DType::Int8, s, z));
    CHECK(scale.values[0] == kUntouchedScale);
    CHECK(zp.values[0] == kUntouchedZeroPoint);
    return ctx;
  };

  SECTION("quant_min must be less than quant_max") {
    require_error(run(input, 5, 5, kEps, scale, zp), {"quant_min"});
    require_error(run(input, 6, 5, kEps, scale, zp), {"quant_max"});
  }
  SECTION("the quant range must fit in int32") {
    require_error(run(input, int64_t{INT32_MIN} - 1, 0, kEps, scale, zp), {"quant_min"});
    require_error(run(input, 0, int64_t{INT32_MAX} + 1, kEps, scale, zp), {"quant_max"});
  }
  SECTION("input must be float32") {
    Owned<double> f64({3}, {1.0, 2.0, 3.0});
    require_error(run(f64, 0, 255, kEps, scale, zp), {"input"});
    Owned<et_ops::Half> f16({1}, {et_ops::Half::from_float(1.0f)});
    require_error(run(f16, 0, 255, kEps, scale, zp), {"input"});
  }
  SECTION("scale_out must be float64 and zero_point_out int64") {
    Owned<float> s32({1}, {0.0f});
    require_error(run(input, 0, 255, kEps, s32, zp), {"scale_out"});
    Owned<int32_t> z32({1}, {0});
    require_error(run(input, 0, 255, kEps, scale, z32), {"zero_point_out"});
  }
  SECTION("outputs must have exactly one element") {
    Owned<double> s2({2}, {0.0, 0.0});
    require_error(run(input, 0, 255, kEps, s2, zp), {"scale_out"});
    Owned<double> s0({0}, {});
    require_error(run(input, 0, 255, kEps, s0, zp), {"scale_out"});
    Owned<int64_t> z2({1, 2}, {0, 0});
    require_error(run(input, 0, 255, kEps, scale, z2), {"zero_point_out"});
  }
  SECTION("empty input") {
    Owned<float> empty({0}, {});
    require_error(run(empty, 0, 255, kEps, scale, zp), {"input"});
    Owned<float> empty2({4, 0}, {});
    require_error(run(empty2, 0, 255, kEps, scale, zp), {"input"});
  }
  SECTION("NaN input or eps") {
    Owned<float> nan({3}, {1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f});
    require_error(run(nan, 0, 255, kEps, scale, zp), {"NaN"});
    require_error(run(input, 0, 255, std::nan(""), scale, zp), {"eps"});
  }
  SECTION("non-finite scale") {
    Owned<float> inf({2}, {1.0f, std::numeric_limits<float>::infinity()});
    require_error(run(inf, 0, 255, kEps, scale, zp), {"scale"});
    Owned<float> minus_inf({2}, {-std::numeric_limits<float>::infinity(), 1.0f});
    require_error(run(minus_inf, 0, 255, kEps, scale, zp), {"scale"});
    Owned<float> wide({2}, {-3e38f, 3e38f});  // the range overflows binary32
    require_error(run(wide, 0, 255, kEps, scale, zp), {"scale"});
    require_error(run(input, 0, 255, 1e300, scale, zp), {"scale"});  // eps rounds to +inf
  }
}

// ---- choose_qparams_per_token_asymmetric.out ----

// §5.3 written out plainly for one token, binary32 throughout.
Result model_token(const std::vector<float>& row) {
  float low = std::min(*std::min_element(row.begin(), row.end()), 0.0f);
  float high = std::max(*std::max_element(row.begin(), row.end()), 0.0f);
  float s = (high - low) / 255.0f;
  if (s < 0x1p-23f) s = 0x1p-23f;
  float dmin = low / s;
  float dmax = high / s;
  float from_min = -128.0f + dmin;
  float from_max = 127.0f + dmax;
  float z = (from_min + from_max > 0.0f) ? (-128.0f - dmin) : (127.0f - dmax);
  z = std::nearbyint(std::min(std::max(z, -128.0f), 127.0f));
  return Result{static_cast<double>(s), static_cast<int64_t>(z)};
}

struct TokenRun {
  KernelContext ctx;
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
};

// Runs on `values` of logical shape `sizes`, with optional dim orders for the
// input and the outputs; returns the outputs in logical order.
TokenRun run_tokens(const std::vector<int64_t>& sizes, const std::vector<float>& values,
                    std::vector<uint8_t> in_order = {}, std::vector<uint8_t> out_order = {}) {
  std::vector<int64_t> out_sizes(sizes.begin(), sizes.end() - 1);
  out_sizes.push_back(1);
  int64_t tokens = 1;
  for (std::size_t d = 0; d + 1 < sizes.size(); ++d) tokens *= sizes[d];
  auto input = make_tensor<float>(sizes, values, std::move(in_order));
  auto scale = make_tensor<double>(out_sizes, std::vector<double>(static_cast<std::size_t>(tokens), -1.0), out_order);
  auto zp = make_tensor<int64_t>(out_sizes, std::vector<int64_t>(static_cast<std::size_t>(tokens), -999), out_order);
  TokenRun run;
  q::choose_qparams_per_token_asymmetric_out(run.ctx, *input, DType::Int8, *scale, *zp);
  run.scales = logical_values(*scale);
  run.zero_points = logical_values(*zp);
  return run;
}

TEST_CASE("choose_qparams_per_token_asymmetric: worked examples of §11.8", "[choose_qparams]") {
  const std::vector<std::vector<float>> rows{
      {-0.5f, 0.3f, 1.2f}, {0.1f, -0.8f, 2.1f}, {0.0f, 0.0f, 0.0f}, {1.0f, 2.0f, 0.5f}, {-3.0f, -1.0f, -2.0f}};
  const std::vector<Result> expected{{0.006666666828095913, -53},
                                     {0.011372548528015614, -58},
                                     {1.1920928955078125e-07, 127},
                                     {0.007843137718737125, -128},
                                     {0.0117647061124444, 127}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    TokenRun run = run_tokens({1, 3}, rows[i]);
    REQUIRE(run.ctx.ok());
    CHECK(bits_of(run.scales[0]) == bits_of(expected[i].scale));
    CHECK(run.zero_points[0] == expected[i].zero_point);
  }
  TokenRun tie = run_tokens({2}, {-2.5f, 252.5f});  // 1-D input: one token
  REQUIRE(tie.ctx.ok());
  CHECK(bits_of(tie.scales[0]) == bits_of(1.0));
  CHECK(tie.zero_points[0] == -126);  // rne(-125.5) = -126

  // Rows 1-2 as one [2, 3] input: outputs of shape [2, 1].
  TokenRun both = run_tokens({2, 3}, {-0.5f, 0.3f, 1.2f, 0.1f, -0.8f, 2.1f});
  REQUIRE(both.ctx.ok());
  CHECK(bits_of(both.scales[0]) == bits_of(0.006666666828095913));
  CHECK(bits_of(both.scales[1]) == bits_of(0.011372548528015614));
  CHECK(both.zero_points == std::vector<int64_t>{-53, -58});
}

TEST_CASE("choose_qparams_per_token_asymmetric: ties round to even after clamping", "[choose_qparams]") {
  TokenRun run = run_tokens({2, 2}, {-3.5f, 251.5f, -0.5f, 254.5f});
  REQUIRE(run.ctx.ok());
  CHECK(run.zero_points == std::vector<int64_t>{-124, -128});  // rne(-124.5), rne(-127.5)
}

TEST_CASE("choose_qparams_per_token_asymmetric: zero tokens and strided layouts", "[choose_qparams]") {
  TokenRun none = run_tokens({0, 4}, {});
  CHECK(none.ctx.ok());
  CHECK(none.scales.empty());

  auto rng = et_ops::test::seeded_rng(7);
  std::vector<float> values(2 * 3 * 5);
  for (auto& v : values) v = std::uniform_real_distribution<float>(-3.0f, 5.0f)(rng);
  TokenRun plain = run_tokens({2, 3, 5}, values);
  REQUIRE(plain.ctx.ok());
  for (const auto& order : std::vector<std::vector<uint8_t>>{{2, 1, 0}, {1, 0, 2}, {0, 2, 1}}) {
    TokenRun strided = run_tokens({2, 3, 5}, values, order, {order[2], order[0], order[1]});
    REQUIRE(strided.ctx.ok());
    CHECK(strided.zero_points == plain.zero_points);
    for (std::size_t i = 0; i < plain.scales.size(); ++i) CHECK(bits_of(strided.scales[i]) == bits_of(plain.scales[i]));
  }
}

TEST_CASE("choose_qparams_per_token_asymmetric: randomized against the §5.3 model", "[choose_qparams]") {
  auto rng = et_ops::test::seeded_rng(0xBEEF);
  for (int trial = 0; trial < 600; ++trial) {
    std::vector<int64_t> sizes;
    const int rank = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int d = 0; d < rank; ++d) sizes.push_back(std::uniform_int_distribution<int64_t>(1, 6)(rng));
    int64_t numel = 1;
    for (auto s : sizes) numel *= s;
    std::vector<float> values(static_cast<std::size_t>(numel));
    for (auto& v : values) {
      const double magnitude = std::pow(2.0, std::uniform_int_distribution<int>(-30, 30)(rng));
      v = static_cast<float>(std::uniform_real_distribution<double>(-1.0, 1.0)(rng) * magnitude);
      if (std::uniform_int_distribution<int>(0, 5)(rng) == 0) v = std::nearbyint(v) + 0.5f;
      if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) v = 0.0f;
    }
    INFO("trial " << trial);
    TokenRun run = run_tokens(sizes, values);
    INFO("message: " << run.ctx.message());
    REQUIRE(run.ctx.ok());
    const int64_t length = sizes.back();
    for (int64_t t = 0; t < numel / length; ++t) {
      const auto first = values.begin() + t * length;
      const Result expected = model_token(std::vector<float>(first, first + length));
      REQUIRE(bits_of(run.scales[static_cast<std::size_t>(t)]) == bits_of(expected.scale));
      REQUIRE(run.zero_points[static_cast<std::size_t>(t)] == expected.zero_point);
    }
  }
}

// Contiguous tokens find their range with SIMD vectors: tokens longer than
// any vector, with a NaN or a signed zero in any lane or in the tail, and
// tokens of one sign only, on every Highway target.
TEST_CASE("choose_qparams_per_token_asymmetric: long tokens on every SIMD target", "[choose_qparams]") {
  auto rng = et_ops::test::seeded_rng(0xC0DE);
  for (const int64_t length : {15, 16, 33, 64, 100}) {
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<float> values(static_cast<std::size_t>(3 * length));
      for (auto& v : values) v = std::uniform_real_distribution<float>(-4.0f, 6.0f)(rng);
      for (int64_t t = 0; t < 3; ++t)
        for (int64_t i = 0; i < length; ++i) {
          float& v = values[static_cast<std::size_t>(t * length + i)];
          if (kind == 1) v = std::fabs(v);   // non-negative: the low end is +0
          if (kind == 2) v = -std::fabs(v);  // non-positive: the high end is +0
          if (kind == 3) v = (i + t) % 3 == 0 ? -0.0f : 0.0f;
        }
      for (const bool nan : {false, true}) {
        INFO("length " << length << " kind " << kind << " nan " << nan);
        std::vector<float> input = values;
        if (nan) input[static_cast<std::size_t>(length + (length * 7 + kind) % length)] = std::nanf("");
        et_ops::test::for_each_simd_target([&] {
          TokenRun run = run_tokens({3, length}, input);
          if (nan) {
            CHECK_FALSE(run.ctx.ok());
            CHECK(run.ctx.message().find("token 1 contains NaN") != std::string::npos);
            return;
          }
          REQUIRE(run.ctx.ok());
          for (int64_t t = 0; t < 3; ++t) {
            const auto first = input.begin() + t * length;
            const Result expected = model_token(std::vector<float>(first, first + length));
            CHECK(bits_of(run.scales[static_cast<std::size_t>(t)]) == bits_of(expected.scale));
            CHECK(run.zero_points[static_cast<std::size_t>(t)] == expected.zero_point);
          }
        });
      }
    }
  }
}

TEST_CASE("choose_qparams_per_token_asymmetric: errors", "[choose_qparams][errors]") {
  Owned<float> input({2, 3}, {1.0f, 2.0f, 3.0f, -1.0f, 0.0f, 4.0f});
  Owned<double> scale({2, 1}, {kUntouchedScale, kUntouchedScale});
  Owned<int64_t> zp({2, 1}, {kUntouchedZeroPoint, kUntouchedZeroPoint});
  auto run = [&](TensorRef in, TensorRef s, TensorRef z) {
    KernelContext ctx;
    CHECK_FALSE(q::choose_qparams_per_token_asymmetric_out(ctx, in, DType::Int8, s, z));
    CHECK(scale.values[0] == kUntouchedScale);
    CHECK(zp.values[0] == kUntouchedZeroPoint);
    return ctx;
  };

  SECTION("input must have a dimension and non-empty tokens") {
    Owned<float> scalar({}, {1.0f});
    Owned<double> s0({}, {0.0});
    Owned<int64_t> z0({}, {0});
    require_error(run(scalar, s0, z0), {"input"});
    Owned<float> empty_tokens({2, 0}, {});
    require_error(run(empty_tokens, scale, zp), {"input"});
  }
  SECTION("outputs must have the shape sizes[:-1] + [1]") {
    Owned<double> wrong_last({2, 2}, {0, 0, 0, 0});
    require_error(run(input, wrong_last, zp), {"scale_out"});
    Owned<double> wrong_rank({2}, {0, 0});
    require_error(run(input, wrong_rank, zp), {"scale_out"});
    Owned<double> wrong_lead({3, 1}, {0, 0, 0});
    require_error(run(input, wrong_lead, zp), {"scale_out"});
    Owned<int64_t> zp_wrong({1, 1}, {0});
    require_error(run(input, scale, zp_wrong), {"zero_point_out"});
  }
  SECTION("dtypes") {
    Owned<double> f64({2, 3}, {1, 2, 3, 4, 5, 6});
    require_error(run(f64, scale, zp), {"input"});
    Owned<float> s32({2, 1}, {0, 0});
    require_error(run(input, s32, zp), {"scale_out"});
    Owned<int32_t> z32({2, 1}, {0, 0});
    require_error(run(input, scale, z32), {"zero_point_out"});
  }
  SECTION("NaN in a token") {
    Owned<float> nan({1, 3}, {1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f});
    Owned<double> s1({1, 1}, {kUntouchedScale});
    Owned<int64_t> z1({1, 1}, {kUntouchedZeroPoint});
    KernelContext ctx;
    CHECK_FALSE(q::choose_qparams_per_token_asymmetric_out(ctx, nan, DType::Int8, s1, z1));
    require_error(ctx, {"NaN"});
  }
  SECTION("non-finite scale") {
    Owned<float> inf({1, 2}, {1.0f, std::numeric_limits<float>::infinity()});
    Owned<double> s1({1, 1}, {0.0});
    Owned<int64_t> z1({1, 1}, {0});
    KernelContext ctx;
    CHECK_FALSE(q::choose_qparams_per_token_asymmetric_out(ctx, inf, DType::Int8, s1, z1));
    require_error(ctx, {"scale"});
    Owned<float> wide({1, 2}, {-3e38f, 3e38f});
    KernelContext ctx2;
    CHECK_FALSE(q::choose_qparams_per_token_asymmetric_out(ctx2, wide, DType::Int8, s1, z1));
    require_error(ctx2, {"scale"});
  }
}

}  // namespace
