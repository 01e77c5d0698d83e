// mixed_mm.out and mixed_linear.out (reference §7): the worked examples of
// §11.12-§11.13 bit for bit, the summation order (k ascending, no
// reassociation), a randomized comparison of every dtype combination against
// a plain model of the c10 rules of §1.5, strided layouts, zero sizes and
// every error of §7.4.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "et_ops/kernels/quantized.h"
#include "simd_targets.h"
#include "test_util.h"

namespace {

using et_ops::DType;
using et_ops::Half;
using et_ops::KernelContext;
using et_ops::TensorRef;
using et_ops::test::bits_of;
using et_ops::test::logical_values;
using et_ops::test::make_tensor;
using et_ops::test::Owned;
using et_ops::test::require_error;
namespace q = et_ops::kernels::quantized;

Half h(double v) { return Half::from_float(static_cast<float>(v)); }

template <typename T>
std::vector<T> values_as(std::initializer_list<double> values) {
  std::vector<T> out;
  for (double v : values) {
    if constexpr (std::is_same_v<T, Half>) out.push_back(h(v));
    else out.push_back(static_cast<T>(v));
  }
  return out;
}

// ---- a model of c10 arithmetic (§1.5), independent of the kernel's ----
// A value carries its C++ type. Every operation is computed in binary64 and
// then rounded to the result type: for + and * on binary32 operands this is
// the correctly rounded binary32 result (53 >= 2 * 24 + 2), and f16 results
// go through binary32 first, as c10 does.

enum class Kind { F16, F32, F64 };

struct Num {
  double v;
  Kind kind;
};

double round_to(double v, Kind kind) {
  switch (kind) {
    case Kind::F64: return v;
    case Kind::F32: return static_cast<float>(v);
    case Kind::F16: return Half::from_float(static_cast<float>(v)).to_float();
  }
  return v;
}

Kind result_kind(Kind a, Kind b) {
  if (a == Kind::F64 || b == Kind::F64) return Kind::F64;
  if (a == Kind::F16 && b == Kind::F16) return Kind::F16;
  return Kind::F32;
}

Num times(Num a, Num b) {
  const Kind k = result_kind(a.kind, b.kind);
  return Num{round_to(a.v * b.v, k), k};
}

// acc += v with acc's type kept; a float added to a Half is rounded to Half first.
void accumulate(Num& acc, Num v) {
  if (acc.kind == Kind::F16 && v.kind != Kind::F16) v = Num{round_to(v.v, Kind::F16), Kind::F16};
  acc.v = round_to(acc.v + v.v, acc.kind == Kind::F16 ? Kind::F16 : acc.kind);
}

template <typename T>
Kind kind_of() {
  if constexpr (std::is_same_v<T, Half>) return Kind::F16;
  else if constexpr (std::is_same_v<T, float>) return Kind::F32;
  else return Kind::F64;
}

template <typename T>
double as_double(T v) {
  if constexpr (std::is_same_v<T, Half>) return v.to_float();
  else return static_cast<double>(v);
}

template <typename T>
T stored(double v) {
  if constexpr (std::is_same_v<T, Half>) return Half::from_float(static_cast<float>(v));  // exact: v is a Half
  else return static_cast<T>(v);
}

// §7.2: acc = 0; acc += (x * U(w)) * s[k], k ascending.
template <typename U>
std::vector<U> model_mm(const std::vector<U>& x, const std::vector<int8_t>& w, const std::vector<U>& s, int64_t m,
                        int64_t n, int64_t p) {
  const Kind u = kind_of<U>();
  std::vector<U> out(static_cast<std::size_t>(m * p));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < p; ++j) {
      Num acc{0.0, u};
      for (int64_t k = 0; k < n; ++k) {
        const Num xw = times(Num{as_double(x[static_cast<std::size_t>(i * n + k)]), u},
                             Num{static_cast<double>(w[static_cast<std::size_t>(k * p + j)]), u});
        accumulate(acc, times(xw, Num{as_double(s[static_cast<std::size_t>(k)]), u}));
      }
      out[static_cast<std::size_t>(i * p + j)] = stored<U>(acc.v);
    }
  return out;
}

// §7.3: per group psum += x * U(w); sum += psum * s[j][group].
template <typename U, typename T>
std::vector<T> model_linear(const std::vector<U>& x, const std::vector<int8_t>& w, const std::vector<U>& s,
                            int64_t groups, int64_t m, int64_t n, int64_t p) {
  const Kind u = kind_of<U>();
  const Kind t = kind_of<T>();
  const int64_t g = n == 0 ? 1 : (n + groups - 1) / groups;
  std::vector<T> out(static_cast<std::size_t>(m * p));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < p; ++j) {
      Num sum{0.0, t};
      for (int64_t k = 0; k < n; k += g) {
        Num psum{0.0, t};
        for (int64_t k2 = k; k2 < std::min(k + g, n); ++k2)
          accumulate(psum, times(Num{as_double(x[static_cast<std::size_t>(i * n + k2)]), u},
                                 Num{static_cast<double>(w[static_cast<std::size_t>(j * n + k2)]), u}));
        accumulate(sum, times(psum, Num{as_double(s[static_cast<std::size_t>(j * groups + k / g)]), u}));
      }
      out[static_cast<std::size_t>(i * p + j)] = stored<T>(sum.v);
    }
  return out;
}

template <typename T>
void check_bits(const std::vector<T>& got, const std::vector<T>& expected) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (bits_of(got[i]) != bits_of(expected[i])) {
      INFO("element " << i << ": got " << as_double(got[i]) << ", expected " << as_double(expected[i]));
      REQUIRE(bits_of(got[i]) == bits_of(expected[i]));
    }
}

// ---- worked examples ----

TEST_CASE("mixed_mm: worked examples of §11.12", "[mixed]") {
  Owned<int8_t> w({3, 2}, {5, 4, 3, 2, 1, 1});
  SECTION("M1 f32: a partial sum is an exact tie") {
    Owned<float> x({1, 3}, {1.0f, 1.5f, 2.0f});
    Owned<float> s({3}, {0.2f, 0.4f, 0.5f});
    Owned<float> out({1, 2}, {0, 0});
    KernelContext ctx;
    REQUIRE(q::mixed_mm_out(ctx, x, w, s, std::nullopt, out));
    check_bits(out.values, values_as<float>({3.8000001907348633, 3.0}));
  }
  SECTION("M1 f16") {
    Owned<Half> x({1, 3}, values_as<Half>({1.0, 1.5, 2.0}));
    Owned<Half> s({3}, values_as<Half>({0.2, 0.4, 0.5}));
    Owned<Half> out({1, 2}, values_as<Half>({0, 0}));
    KernelContext ctx;
    REQUIRE(q::mixed_mm_out(ctx, x, w, s, std::nullopt, out));
    check_bits(out.values, values_as<Half>({3.80078125, 3.0}));
  }
  SECTION("M2: extreme weights") {
    Owned<float> x({1, 2}, {2.0f, -1.0f});
    Owned<int8_t> w2({2, 2}, {-128, 127, 127, -128});
    Owned<float> s({2}, {0.5f, 0.25f});
    Owned<float> out({1, 2}, {0, 0});
    KernelContext ctx;
    REQUIRE(q::mixed_mm_out(ctx, x, w2, s, std::nullopt, out));
    check_bits(out.values, values_as<float>({-159.75, 159.0}));
  }
}

TEST_CASE("mixed_linear: worked examples of §11.13", "[mixed]") {
  Owned<float> x({1, 3}, {1.0f, 1.5f, 2.0f});
  Owned<int8_t> w({2, 3}, {5, 3, 1, 4, 2, 1});
  SECTION("L1: per-channel scales, with and without dtype") {
    Owned<float> s({2}, {0.2f, 0.4f});
    for (std::optional<DType> dtype : {std::optional<DType>(), std::optional<DType>(DType::Float32)}) {
      Owned<float> out({1, 2}, {0, 0});
      KernelContext ctx;
      REQUIRE(q::mixed_linear_out(ctx, x, w, s, std::nullopt, dtype, out));
      check_bits(out.values, values_as<float>({2.299999952316284, 3.6000001430511475}));
    }
  }
  SECTION("L2: grouped scales, n = 3, G = 2, g = 2") {
    Owned<float> s({2, 2}, {0.2f, 1.0f, 0.4f, 0.5f});
    Owned<float> out({1, 2}, {0, 0});
    KernelContext ctx;
    REQUIRE(q::mixed_linear_out(ctx, x, w, s, std::nullopt, std::nullopt, out));
    check_bits(out.values, values_as<float>({3.9000000953674316, 3.799999952316284}));
  }
  SECTION("L3: n = 5 with G = 4 is an error (D23)") {
    Owned<float> x5({1, 5}, {1, 2, 3, 4, 5});
    Owned<int8_t> w5({2, 5}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
    Owned<float> s4({2, 4}, Owned<float>::filled({2, 4}, 1.0f));
    Owned<float> out({1, 2}, {0, 0});
    KernelContext ctx;
    REQUIRE_FALSE(q::mixed_linear_out(ctx, x5, w5, s4, std::nullopt, std::nullopt, out));
    require_error(ctx, {"weight_scales"});
  }
}

TEST_CASE("mixed: k is summed in ascending order without reassociation", "[mixed]") {
  // 2^24 + 1 is a tie that rounds back to 2^24 at every step; any other
  // order would reach 2^24 + 2.
  Owned<float> x({1, 3}, {16777216.0f, 1.0f, 1.0f});
  Owned<float> ones3({3}, {1.0f, 1.0f, 1.0f});
  KernelContext ctx;
  Owned<int8_t> w_mm({3, 1}, {1, 1, 1});
  Owned<float> out_mm({1, 1}, {0});
  REQUIRE(q::mixed_mm_out(ctx, x, w_mm, ones3, std::nullopt, out_mm));
  CHECK(bits_of(out_mm.values[0]) == bits_of(16777216.0f));
  Owned<int8_t> w_lin({1, 3}, {1, 1, 1});
  Owned<float> one({1}, {1.0f});
  Owned<float> out_lin({1, 1}, {0});
  REQUIRE(q::mixed_linear_out(ctx, x, w_lin, one, std::nullopt, std::nullopt, out_lin));
  CHECK(bits_of(out_lin.values[0]) == bits_of(16777216.0f));
  Owned<float> per_element({1, 3}, {1.0f, 1.0f, 1.0f});  // g = 1: the sum itself rounds
  REQUIRE(q::mixed_linear_out(ctx, x, w_lin, per_element, std::nullopt, std::nullopt, out_lin));
  CHECK(bits_of(out_lin.values[0]) == bits_of(16777216.0f));
  // (x * w) * s, not x * (w * s): 3 * 0.1f rounds differently from 0.3f.
  Owned<float> x3({1, 1}, {0.1f});
  Owned<int8_t> w3({1, 1}, {3});
  Owned<float> s3({1}, {1.0f / 3.0f});
  Owned<float> out3({1, 1}, {0});
  REQUIRE(q::mixed_mm_out(ctx, x3, w3, s3, std::nullopt, out3));
  CHECK(bits_of(out3.values[0]) == bits_of((0.1f * 3.0f) * (1.0f / 3.0f)));
}

// ---- randomized comparison ----

template <typename U>
std::vector<U> random_inputs(std::size_t count, std::mt19937_64& rng) {
  std::vector<U> out(count);
  for (auto& v : out) {
    double x;
    switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
      case 0: x = std::uniform_int_distribution<int>(-8, 8)(rng) * 0.5; break;  // ties in sums
      case 1: x = std::uniform_real_distribution<double>(-4.0, 4.0)(rng); break;
      case 2: x = std::ldexp(std::uniform_real_distribution<double>(-1.0, 1.0)(rng),
                             std::uniform_int_distribution<int>(-20, 6)(rng));
        break;
      default: x = 0.0;
    }
    v = stored<U>(round_to(x, kind_of<U>()));
  }
  return out;
}

template <typename U>
std::vector<U> random_scales(std::size_t count, std::mt19937_64& rng) {
  std::vector<U> out(count);
  for (auto& v : out) {
    const double s = std::uniform_int_distribution<int>(0, 3)(rng) == 0
                         ? std::ldexp(1.0, std::uniform_int_distribution<int>(-6, 1)(rng))
                         : std::uniform_real_distribution<double>(0.001, 1.5)(rng);
    v = stored<U>(round_to(s, kind_of<U>()));
  }
  return out;
}

std::vector<int8_t> random_weights(std::size_t count, std::mt19937_64& rng) {
  std::vector<int8_t> out(count);
  for (auto& v : out) v = static_cast<int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
  return out;
}

std::vector<uint8_t> maybe_transposed(bool transposed) {
  return transposed ? std::vector<uint8_t>{1, 0} : std::vector<uint8_t>{};
}

struct Shape {
  int64_t m, n, p;
};

const Shape kShapes[] = {{1, 1, 1},    {1, 3, 2},    {2, 5, 7},     {4, 8, 16},     {5, 33, 31},  {3, 17, 32},
                         {7, 40, 65},  {9, 1, 33},   {6, 129, 3},   {66, 130, 35},  {64, 128, 64}, {13, 257, 40},
                         {1, 300, 97}, {70, 300, 50}, {2, 2, 100},  {65, 3, 1}};

template <typename U>
void random_mm(const Shape& shape, bool strided, std::mt19937_64& rng) {
  const auto [m, n, p] = shape;
  const auto x = random_inputs<U>(static_cast<std::size_t>(m * n), rng);
  const auto w = random_weights(static_cast<std::size_t>(n * p), rng);
  const auto s = random_scales<U>(static_cast<std::size_t>(n), rng);
  auto xt = make_tensor<U>({m, n}, x, maybe_transposed(strided));
  auto wt = make_tensor<int8_t>({n, p}, w, maybe_transposed(strided));
  auto st = make_tensor<U>({n}, s);
  auto out = make_tensor<U>({m, p}, std::vector<U>(static_cast<std::size_t>(m * p), stored<U>(-77.0)),
                         maybe_transposed(strided));
  KernelContext ctx;
  REQUIRE(q::mixed_mm_out(ctx, *xt, *wt, *st, std::nullopt, *out));
  check_bits(logical_values(*out), model_mm<U>(x, w, s, m, n, p));
}

// The group counts G for which ceil(n / ceil(n / G)) == G (D23).
std::vector<int64_t> valid_group_counts(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t groups = 1; groups <= n; ++groups) {
    const int64_t g = (n + groups - 1) / groups;
    if ((n + g - 1) / g == groups) out.push_back(groups);
  }
  return out;
}

template <typename U, typename T>
void random_linear(const Shape& shape, bool strided, std::mt19937_64& rng) {
  const auto [m, n, p] = shape;
  const auto counts = valid_group_counts(n);
  const bool grouped = !counts.empty() && std::uniform_int_distribution<int>(0, 1)(rng) == 1;
  const int64_t groups =
      grouped ? counts[std::uniform_int_distribution<std::size_t>(0, counts.size() - 1)(rng)] : 1;
  const auto x = random_inputs<U>(static_cast<std::size_t>(m * n), rng);
  const auto w = random_weights(static_cast<std::size_t>(p * n), rng);
  const auto s = random_scales<U>(static_cast<std::size_t>(p * groups), rng);
  auto xt = make_tensor<U>({m, n}, x, maybe_transposed(strided));
  auto wt = make_tensor<int8_t>({p, n}, w, maybe_transposed(strided));
  auto st = grouped ? make_tensor<U>({p, groups}, s, maybe_transposed(strided)) : make_tensor<U>({p}, s);
  auto out = make_tensor<T>({m, p}, std::vector<T>(static_cast<std::size_t>(m * p), stored<T>(-77.0)),
                         maybe_transposed(strided));
  const bool pass_dtype = !std::is_same_v<T, double> && std::uniform_int_distribution<int>(0, 1)(rng) == 1;
  const std::optional<DType> dtype = pass_dtype ? std::optional<DType>(et_ops::test::dtype_of<T>()) : std::nullopt;
  KernelContext ctx;
  INFO("groups " << groups << " grouped " << grouped);
  REQUIRE(q::mixed_linear_out(ctx, *xt, *wt, *st, std::nullopt, dtype, *out));
  check_bits(logical_values(*out), model_linear<U, T>(x, w, s, groups, m, n, p));
}

TEST_CASE("mixed_mm: randomized against the model, f32 and f16", "[mixed]") {
  auto rng = et_ops::test::seeded_rng(0x3131);
  for (const Shape& shape : kShapes)
    for (bool strided : {false, true}) {
      INFO("shape " << shape.m << "x" << shape.n << "x" << shape.p << " strided " << strided);
      for (int repeat = 0; repeat < 3; ++repeat) {
        random_mm<float>(shape, strided, rng);
        random_mm<Half>(shape, strided, rng);
      }
    }
}

TEST_CASE("mixed_linear: randomized against the model, every input and out dtype", "[mixed]") {
  auto rng = et_ops::test::seeded_rng(0x4242);
  for (const Shape& shape : kShapes)
    for (bool strided : {false, true}) {
      INFO("shape " << shape.m << "x" << shape.n << "x" << shape.p << " strided " << strided);
      for (int repeat = 0; repeat < 3; ++repeat) {
        random_linear<float, float>(shape, strided, rng);
        random_linear<float, double>(shape, strided, rng);
        random_linear<float, Half>(shape, strided, rng);
        random_linear<Half, float>(shape, strided, rng);
        random_linear<Half, double>(shape, strided, rng);
        random_linear<Half, Half>(shape, strided, rng);
      }
    }
}

// The f32 and f16 kernels are compiled once per SIMD target and chosen at
// run time; every target this CPU supports must give the same bits.
TEST_CASE("mixed: every supported SIMD target gives the model's bits", "[mixed]") {
  auto rng = et_ops::test::seeded_rng(0x5151);
  et_ops::test::for_each_simd_target([&] {
    for (const Shape& shape : kShapes)
      for (bool strided : {false, true}) {
        INFO("shape " << shape.m << "x" << shape.n << "x" << shape.p << " strided " << strided);
        random_mm<float>(shape, strided, rng);
        random_mm<Half>(shape, strided, rng);
        random_linear<float, float>(shape, strided, rng);
        random_linear<Half, Half>(shape, strided, rng);
      }
  });
}

TEST_CASE("mixed_mm f16: overflow to infinity, and inf - inf is NaN, on every target", "[mixed]") {
  // Column j: weights (127, -127) for even j, (1, 1) for odd j; x = 60000 twice.
  // Even: f16(60000 * 127) = inf, then inf + -inf = NaN. Odd: 60000 + 60000 = inf.
  constexpr int64_t p = 40;  // more than one vector at every width, plus a tail
  std::vector<int8_t> w(2 * p);
  for (int64_t j = 0; j < p; ++j) {
    w[static_cast<std::size_t>(j)] = j % 2 == 0 ? 127 : 1;
    w[static_cast<std::size_t>(p + j)] = j % 2 == 0 ? -127 : 1;
  }
  et_ops::test::for_each_simd_target([&] {
    Owned<Half> x({1, 2}, {h(60000), h(60000)});
    Owned<int8_t> wt({2, p}, w);
    Owned<Half> st({2}, {h(1), h(1)});
    Owned<Half> out({1, p}, Owned<Half>::filled({1, p}, h(0)));
    KernelContext ctx;
    REQUIRE(q::mixed_mm_out(ctx, x, wt, st, std::nullopt, out));
    for (int64_t j = 0; j < p; ++j) {
      const float v = out.values[static_cast<std::size_t>(j)].to_float();
      INFO("column " << j << " = " << v);
      if (j % 2 == 0) CHECK(std::isnan(v));
      else CHECK(v == std::numeric_limits<float>::infinity());
    }
  });
}

TEST_CASE("mixed: zero sizes", "[mixed]") {
  KernelContext ctx;
  SECTION("m = 0 and p = 0 write nothing") {
    Owned<float> x0({0, 3}, {});
    Owned<int8_t> w({3, 2}, {1, 2, 3, 4, 5, 6});
    Owned<float> s({3}, {1, 1, 1});
    Owned<float> out0({0, 2}, {});
    CHECK(q::mixed_mm_out(ctx, x0, w, s, std::nullopt, out0));
    Owned<int8_t> wt({2, 3}, {1, 2, 3, 4, 5, 6});
    Owned<float> s2({2}, {1, 1});
    CHECK(q::mixed_linear_out(ctx, x0, wt, s2, std::nullopt, std::nullopt, out0));
    Owned<float> x({1, 3}, {1, 2, 3});
    Owned<int8_t> w_p0({3, 0}, {});
    Owned<float> out_p0({1, 0}, {});
    CHECK(q::mixed_mm_out(ctx, x, w_p0, s, std::nullopt, out_p0));
    Owned<int8_t> wt_p0({0, 3}, {});
    Owned<float> s_p0({0}, {});
    CHECK(q::mixed_linear_out(ctx, x, wt_p0, s_p0, std::nullopt, std::nullopt, out_p0));
    INFO("message: " << ctx.message());
    CHECK(ctx.ok());
  }
  SECTION("n = 0 gives +0") {
    Owned<float> x({2, 0}, {});
    Owned<int8_t> w({0, 3}, {});
    Owned<float> s({0}, {});
    Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, -5.0f));
    REQUIRE(q::mixed_mm_out(ctx, x, w, s, std::nullopt, out));
    for (float v : out.values) CHECK(bits_of(v) == bits_of(0.0f));
    Owned<int8_t> wt({3, 0}, {});
    Owned<float> st({3}, {1, 1, 1});
    Owned<Half> out16({2, 3}, Owned<Half>::filled({2, 3}, h(-5)));
    Owned<Half> x16({2, 0}, {});
    Owned<Half> st16({3, 2}, Owned<Half>::filled({3, 2}, h(1)));
    REQUIRE(q::mixed_linear_out(ctx, x16, wt, st16, std::nullopt, std::nullopt, out16));
    for (Half v : out16.values) CHECK(v.bits == 0);
    Owned<double> out64({2, 3}, Owned<double>::filled({2, 3}, -5.0));
    REQUIRE(q::mixed_linear_out(ctx, x, wt, st, std::nullopt, std::nullopt, out64));
    for (double v : out64.values) CHECK(bits_of(v) == bits_of(0.0));
  }
}

// ---- errors (§7.4) ----

TEST_CASE("mixed_mm: errors of §7.4", "[mixed][errors]") {
  Owned<float> x({2, 3}, {1, 2, 3, 4, 5, 6});
  Owned<int8_t> w({3, 2}, {1, 2, 3, 4, 5, 6});
  Owned<float> s({3}, {0.5f, 1.0f, 2.0f});
  Owned<float> out({2, 2}, {-1, -1, -1, -1});
  auto run = [&](TensorRef xi, TensorRef wi, TensorRef si, std::optional<TensorRef> zi, TensorRef oi) {
    KernelContext ctx;
    CHECK_FALSE(q::mixed_mm_out(ctx, xi, wi, si, zi, oi));
    CHECK(out.values == std::vector<float>{-1, -1, -1, -1});
    return ctx;
  };
  SECTION("ranks") {
    Owned<float> x1({6}, {1, 2, 3, 4, 5, 6});
    require_error(run(x1, w, s, std::nullopt, out), {"input"});
    Owned<int8_t> w3({3, 2, 1}, {1, 2, 3, 4, 5, 6});
    require_error(run(x, w3, s, std::nullopt, out), {"weight"});
    Owned<float> out1({4}, {0, 0, 0, 0});
    require_error(run(x, w, s, std::nullopt, out1), {"out"});
    Owned<float> s2({3, 1}, {1, 1, 1});
    require_error(run(x, w, s2, std::nullopt, out), {"weight_scales"});
  }
  SECTION("sizes") {
    Owned<float> x4({2, 4}, Owned<float>::filled({2, 4}, 1.0f));
    require_error(run(x4, w, s, std::nullopt, out), {"input"});
    Owned<float> s4({4}, {1, 1, 1, 1});
    require_error(run(x, w, s4, std::nullopt, out), {"weight_scales"});
  }
  SECTION("dtypes") {
    Owned<Half> s16({3}, values_as<Half>({1, 1, 1}));
    require_error(run(x, w, s16, std::nullopt, out), {"weight_scales"});
    Owned<Half> out16({2, 2}, values_as<Half>({0, 0, 0, 0}));
    require_error(run(x, w, s, std::nullopt, out16), {"out"});
    Owned<uint8_t> wu({3, 2}, {1, 2, 3, 4, 5, 6});
    require_error(run(x, wu, s, std::nullopt, out), {"weight"});
    Owned<double> x64({2, 3}, {1, 2, 3, 4, 5, 6});
    Owned<double> s64({3}, {1, 1, 1});
    Owned<double> out64({2, 2}, {0, 0, 0, 0});
    require_error(run(x64, w, s64, std::nullopt, out64), {"input"});
    Owned<et_ops::BFloat16> xb({2, 3}, std::vector<et_ops::BFloat16>(6));
    Owned<et_ops::BFloat16> sb({3}, std::vector<et_ops::BFloat16>(3));
    Owned<et_ops::BFloat16> ob({2, 2}, std::vector<et_ops::BFloat16>(4));
    require_error(run(xb, w, sb, std::nullopt, ob), {"input"});
  }
  SECTION("zero points are checked, then rejected") {
    Owned<float> zp({3}, {0, 0, 0});
    require_error(run(x, w, s, zp.ref(), out), {"weight_zero_points"});
    Owned<float> zp_shape({2}, {0, 0});
    require_error(run(x, w, s, zp_shape.ref(), out), {"weight_zero_points"});
    Owned<int64_t> zp_dtype({3}, {0, 0, 0});
    require_error(run(x, w, s, zp_dtype.ref(), out), {"weight_zero_points"});
  }
  SECTION("out shape") {
    Owned<float> out_t({2, 3}, Owned<float>::filled({2, 3}, 0.0f));
    require_error(run(x, w, s, std::nullopt, out_t), {"out"});
    Owned<float> out_m({3, 2}, Owned<float>::filled({3, 2}, 0.0f));
    require_error(run(x, w, s, std::nullopt, out_m), {"out"});
  }
  SECTION("scales finite and > 0") {
    for (float bad : {0.0f, -0.5f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
      Owned<float> sb({3}, {0.5f, bad, 2.0f});
      require_error(run(x, w, sb, std::nullopt, out), {"weight_scales"});
    }
    Owned<Half> x16({2, 3}, values_as<Half>({1, 2, 3, 4, 5, 6}));
    Owned<Half> s16({3}, values_as<Half>({1, 0, 1}));
    Owned<Half> out16({2, 2}, values_as<Half>({0, 0, 0, 0}));
    require_error(run(x16, w, s16, std::nullopt, out16), {"weight_scales"});
  }
}

TEST_CASE("mixed_linear: errors of §7.4", "[mixed][errors]") {
  Owned<float> x({2, 3}, {1, 2, 3, 4, 5, 6});
  Owned<int8_t> w({2, 3}, {1, 2, 3, 4, 5, 6});
  Owned<float> s({2}, {0.5f, 1.0f});
  Owned<float> out({2, 2}, {-1, -1, -1, -1});
  auto run = [&](TensorRef xi, TensorRef wi, TensorRef si, std::optional<TensorRef> zi, std::optional<DType> dtype,
                 TensorRef oi) {
    KernelContext ctx;
    CHECK_FALSE(q::mixed_linear_out(ctx, xi, wi, si, zi, dtype, oi));
    CHECK(out.values == std::vector<float>{-1, -1, -1, -1});
    return ctx;
  };
  SECTION("ranks") {
    Owned<float> x1({6}, {1, 2, 3, 4, 5, 6});
    require_error(run(x1, w, s, std::nullopt, std::nullopt, out), {"input"});
    Owned<int8_t> w1({6}, {1, 2, 3, 4, 5, 6});
    require_error(run(x, w1, s, std::nullopt, std::nullopt, out), {"weight"});
    Owned<float> out3({2, 2, 1}, {0, 0, 0, 0});
    require_error(run(x, w, s, std::nullopt, std::nullopt, out3), {"out"});
    Owned<float> s3({2, 1, 1}, {1, 1});
    require_error(run(x, w, s3, std::nullopt, std::nullopt, out), {"weight_scales"});
    Owned<float> s0({}, {1});
    require_error(run(x, w, s0, std::nullopt, std::nullopt, out), {"weight_scales"});
  }
  SECTION("sizes") {
    Owned<int8_t> w4({2, 4}, Owned<int8_t>::filled({2, 4}, 1));
    require_error(run(x, w4, s, std::nullopt, std::nullopt, out), {"weight"});
    Owned<float> s3({3}, {1, 1, 1});
    require_error(run(x, w, s3, std::nullopt, std::nullopt, out), {"weight_scales"});
  }
  SECTION("dtypes and the dtype argument") {
    Owned<Half> s16({2}, values_as<Half>({1, 1}));
    require_error(run(x, w, s16, std::nullopt, std::nullopt, out), {"weight_scales"});
    require_error(run(x, w, s, std::nullopt, DType::Float16, out), {"dtype"});
    Owned<double> out64({2, 2}, {0, 0, 0, 0});
    require_error(run(x, w, s, std::nullopt, DType::Float64, out64), {"dtype"});
    Owned<uint8_t> wu({2, 3}, {1, 2, 3, 4, 5, 6});
    require_error(run(x, wu, s, std::nullopt, std::nullopt, out), {"weight"});
    Owned<double> x64({2, 3}, {1, 2, 3, 4, 5, 6});
    Owned<double> s64({2}, {1, 1});
    require_error(run(x64, w, s64, std::nullopt, std::nullopt, out), {"input"});
    Owned<et_ops::BFloat16> out_bf({2, 2}, std::vector<et_ops::BFloat16>(4));
    require_error(run(x, w, s, std::nullopt, std::nullopt, out_bf), {"out"});
    Owned<int32_t> out_int({2, 2}, {0, 0, 0, 0});
    require_error(run(x, w, s, std::nullopt, std::nullopt, out_int), {"out"});
  }
  SECTION("zero points are checked, then rejected") {
    Owned<float> zp({2}, {0, 0});
    require_error(run(x, w, s, zp.ref(), std::nullopt, out), {"weight_zero_points"});
    Owned<float> zp_shape({2, 1}, {0, 0});
    require_error(run(x, w, s, zp_shape.ref(), std::nullopt, out), {"weight_zero_points"});
    Owned<Half> zp_dtype({2}, values_as<Half>({0, 0}));
    require_error(run(x, w, s, zp_dtype.ref(), std::nullopt, out), {"weight_zero_points"});
  }
  SECTION("out shape") {
    Owned<float> out_t({3, 2}, Owned<float>::filled({3, 2}, 0.0f));
    require_error(run(x, w, s, std::nullopt, std::nullopt, out_t), {"out"});
    Owned<float> out_p({2, 3}, Owned<float>::filled({2, 3}, 0.0f));
    require_error(run(x, w, s, std::nullopt, std::nullopt, out_p), {"out"});
  }
  SECTION("group counts (D23)") {
    Owned<float> s_zero({2, 0}, {});
    require_error(run(x, w, s_zero, std::nullopt, std::nullopt, out), {"weight_scales"});
    Owned<float> s_many({2, 4}, Owned<float>::filled({2, 4}, 1.0f));  // G > n
    require_error(run(x, w, s_many, std::nullopt, std::nullopt, out), {"weight_scales"});
  }
  SECTION("scales finite and > 0") {
    for (float bad : {0.0f, -0.5f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
      Owned<float> sb({2, 3}, {0.5f, 1, 1, 1, 1, bad});
      require_error(run(x, w, sb, std::nullopt, std::nullopt, out), {"weight_scales"});
    }
  }
}

}  // namespace
