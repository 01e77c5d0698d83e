// quantized_decomposed::add.out: the worked examples of reference §11.14,
// random comparison with the independent reference on every Highway target,
// dtype and layout, in-place use, empty tensors, every error, the C ABI.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "streaming_reference.h"

namespace {

using namespace et_ops;
using namespace et_ops::test;
namespace q = et_ops::kernels::quantized;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct AddArgs {
  double a_scale = 1.0;
  int64_t a_zp = 0;
  int64_t a_qmin = 0;
  int64_t a_qmax = 255;
  double b_scale = 1.0;
  int64_t b_zp = 0;
  int64_t b_qmin = 0;
  int64_t b_qmax = 255;
  double out_scale = 1.0;
  int64_t out_zp = 0;
  int64_t out_qmin = 0;
  int64_t out_qmax = 255;

  RefAddParams reference() const {
    return RefAddParams{a_scale, a_zp, b_scale, b_zp, out_scale, out_zp, out_qmin, out_qmax};
  }
};

bool run_add(KernelContext& ctx, TensorRef a, TensorRef b, TensorRef out, const AddArgs& p) {
  return q::add_out(ctx, a, p.a_scale, p.a_zp, p.a_qmin, p.a_qmax, b, p.b_scale, p.b_zp, p.b_qmin, p.b_qmax,
                    p.out_scale, p.out_zp, p.out_qmin, p.out_qmax, out);
}

template <typename T>
std::vector<T> repeated(const std::vector<T>& values, std::size_t times) {
  std::vector<T> out;
  for (std::size_t i = 0; i < times; ++i) out.insert(out.end(), values.begin(), values.end());
  return out;
}

void check_example(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, const AddArgs& p,
                   const std::vector<uint8_t>& expected) {
  for (std::size_t times : {std::size_t{1}, std::size_t{53}}) {
    const auto n = static_cast<int64_t>(a.size() * times);
    for_each_simd_target([&] {
      Owned<uint8_t> ta({n}, repeated(a, times));
      Owned<uint8_t> tb({n}, repeated(b, times));
      Owned<uint8_t> out({n}, std::vector<uint8_t>(static_cast<std::size_t>(n), 0));
      KernelContext ctx;
      REQUIRE(run_add(ctx, ta, tb, out, p));
      CHECK(as_ints(out.values) == as_ints(repeated(expected, times)));
    });
  }
}

TEST_CASE("add: A1 ET's test") {
  AddArgs p;
  p.a_scale = 0.5;
  p.a_zp = 1;
  p.b_scale = 0.25;
  p.b_zp = 2;
  p.out_scale = 0.1;
  p.out_zp = 5;
  check_example({8}, {16}, p, {75});
}

TEST_CASE("add: A2 ties and clamping") {
  AddArgs p;
  p.a_scale = 0.5;
  p.b_scale = 0.5;
  p.out_qmax = 150;
  check_example({1, 3, 250}, {2, 2, 250}, p, {2, 2, 150});
}

TEST_CASE("add: A3 PyTorch's reciprocal of out_scale (D24)") {
  AddArgs p;
  p.a_scale = 0.015;
  p.b_scale = 0.015;
  p.out_scale = 0.03;
  check_example({0}, {3}, p, {1});
}

// ---- random comparison with the reference ----

template <typename F>
void for_each_add_type(F&& f) {
  f(TypeTag<uint8_t>{});
  f(TypeTag<int8_t>{});
  f(TypeTag<int16_t>{});
  f(TypeTag<int32_t>{});
  f(TypeTag<int64_t>{});
}

void random_range(std::mt19937_64& rng, int64_t top, int64_t& qmin, int64_t& qmax) {
  if (uniform_int(rng, 0, 2) == 0) {
    qmin = 0;
    qmax = top;
    return;
  }
  const int64_t x = uniform_int(rng, 0, top);
  const int64_t y = uniform_int(rng, 0, top);
  qmin = std::min(x, y);
  qmax = std::max(x, y);
}

int64_t random_zero_point(std::mt19937_64& rng) {
  switch (uniform_int(rng, 0, 7)) {
    case 0: return uniform_int(rng, -(int64_t{1} << 40), int64_t{1} << 40);
    case 1: return uniform_int(rng, -1000, 1000);
    default: return uniform_int(rng, 0, 255);
  }
}

double random_scale(std::mt19937_64& rng) {
  if (uniform_int(rng, 0, 3) == 0) return std::ldexp(1.0, static_cast<int>(uniform_int(rng, -8, 3)));
  return log_uniform(rng, 1e-4, 1e2);
}

template <typename T>
T random_element(std::mt19937_64& rng) {
  if constexpr (std::is_same_v<T, int64_t>) {
    if (uniform_int(rng, 0, 3) == 0) return uniform_int(rng, INT64_MIN, INT64_MAX);
    return uniform_int(rng, -100000, 100000);
  } else {
    // Mostly the quantized range, sometimes anywhere in the type.
    if (uniform_int(rng, 0, 3) == 0) return static_cast<T>(uniform_int(rng, lowest<T>(), highest<T>()));
    return static_cast<T>(uniform_int(rng, std::max<int64_t>(lowest<T>(), -20), std::min<int64_t>(highest<T>(), 275)));
  }
}

template <typename T>
void random_add(std::mt19937_64& rng) {
  std::vector<int64_t> sizes = random_shape(rng);
  const std::size_t dim = sizes.size();
  const std::vector<uint8_t> orders[] = {default_order(dim), random_order(dim, rng), random_order(dim, rng)};
  const int64_t layout = uniform_int(rng, 0, 3);
  const auto& a_order = orders[layout == 0 ? 0 : 1];
  const auto& b_order = orders[layout == 1 ? 2 : layout == 0 ? 0 : 1];
  const auto& out_order = orders[layout == 2 ? 2 : layout == 0 ? 0 : 1];
  const int64_t top = std::min<int64_t>(255, std::is_same_v<T, int64_t> ? 255 : highest<T>());
  AddArgs p;
  random_range(rng, top, p.a_qmin, p.a_qmax);
  random_range(rng, top, p.b_qmin, p.b_qmax);
  random_range(rng, top, p.out_qmin, p.out_qmax);
  p.a_scale = random_scale(rng);
  p.b_scale = random_scale(rng);
  p.out_scale = random_scale(rng);
  p.a_zp = random_zero_point(rng);
  p.b_zp = random_zero_point(rng);
  p.out_zp = random_zero_point(rng);
  const auto n = static_cast<std::size_t>(numel_of(sizes));
  std::vector<T> a(n), b(n);
  for (auto& v : a) v = random_element<T>(rng);
  for (auto& v : b) v = random_element<T>(rng);
  INFO("sizes " << ::Catch::Detail::stringify(sizes) << " layout " << layout << " " << type_label<T>() << " scales "
                << fmt::format("{} {} {}", p.a_scale, p.b_scale, p.out_scale) << " zps " << p.a_zp << " " << p.b_zp
                << " " << p.out_zp);
  auto ta = make_tensor<T>(sizes, a, a_order);
  auto tb = make_tensor<T>(sizes, b, b_order);
  auto out = make_filled<T>(sizes, T{0}, out_order);
  KernelContext ctx;
  REQUIRE(run_add(ctx, *ta, *tb, *out, p));
  const auto got = logical_values(*out);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t want = ref_add(a[i], b[i], p.reference());
    if (static_cast<int64_t>(got[i]) == want) continue;
    if (mismatches++ == 0) {
      INFO("element " << i << ": a " << int64_t{a[i]} << " b " << int64_t{b[i]} << " got " << int64_t{got[i]}
                      << " expected " << want);
      CHECK(false);
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("add: random comparison with the reference, every dtype, layout and target") {
  std::mt19937_64 rng = seeded_rng(0xADD);
  for_each_simd_target([&] {
    for_each_add_type([&](auto tag) {
      for (int i = 0; i < 80; ++i) random_add<typename decltype(tag)::type>(rng);
    });
  });
}

TEST_CASE("add: out may be a (or b) itself") {
  std::mt19937_64 rng = seeded_rng(0xA11A5);
  for_each_simd_target([&] {
    std::vector<uint8_t> a(1001), b(1001);
    for (auto& v : a) v = static_cast<uint8_t>(uniform_int(rng, 0, 255));
    for (auto& v : b) v = static_cast<uint8_t>(uniform_int(rng, 0, 255));
    AddArgs p;
    p.a_scale = 0.02;
    p.a_zp = 128;
    p.b_scale = 0.03;
    p.b_zp = 100;
    p.out_scale = 0.05;
    p.out_zp = 120;
    Owned<uint8_t> ta({1001}, a);
    Owned<uint8_t> tb({1001}, b);
    KernelContext ctx;
    REQUIRE(run_add(ctx, ta, tb, ta, p));
    for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(int64_t{ta.values[i]} == ref_add(a[i], b[i], p.reference()));
    Owned<uint8_t> tc({1001}, a);
    REQUIRE(run_add(ctx, tc, tb, tb, p));
    for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(int64_t{tb.values[i]} == ref_add(a[i], b[i], p.reference()));
  });
}

TEST_CASE("add: non-temporal and ordinary stores give the reference bits, misaligned and in place") {
  const std::size_t n = (std::size_t{1} << 16) + 21;
  std::mt19937_64 rng = seeded_rng(0xADD5);
  std::vector<uint8_t> a(n + 5), b(n + 5);
  for (auto& v : a) v = static_cast<uint8_t>(uniform_int(rng, 0, 255));
  for (auto& v : b) v = static_cast<uint8_t>(uniform_int(rng, 0, 255));
  AddArgs p;
  p.a_scale = 0.02;
  p.a_zp = 128;
  p.b_scale = 0.03;
  p.b_zp = 100;
  p.out_scale = 0.05;
  p.out_zp = 120;
  for_each_store_kind_and_simd_target([&] {
    std::vector<uint8_t> y(n + 5, 0);
    Tensor ta(DType::UInt8, a.data() + 1, {static_cast<int64_t>(n)});
    Tensor tb(DType::UInt8, b.data() + 2, {static_cast<int64_t>(n)});
    Tensor out(DType::UInt8, y.data() + 5, {static_cast<int64_t>(n)});
    KernelContext ctx;
    REQUIRE(run_add(ctx, ta, tb, out, p));
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < n; ++i) mismatches += y[i + 5] != ref_add(a[i + 1], b[i + 2], p.reference());
    CHECK(mismatches == 0);
    // In place: out is a.
    std::vector<uint8_t> c(a);
    Tensor tc(DType::UInt8, c.data() + 1, {static_cast<int64_t>(n)});
    REQUIRE(run_add(ctx, tc, tb, tc, p));
    mismatches = 0;
    for (std::size_t i = 0; i < n; ++i) mismatches += c[i + 1] != ref_add(a[i + 1], b[i + 2], p.reference());
    CHECK(mismatches == 0);
  });
}

TEST_CASE("add: empty and 0-dim tensors") {
  Owned<uint8_t> a({0, 3}, {});
  Owned<uint8_t> b({0, 3}, {});
  Owned<uint8_t> out({0, 3}, {});
  KernelContext ctx;
  CHECK(run_add(ctx, a, b, out, AddArgs{}));
  Owned<int16_t> sa({}, {3});
  Owned<int16_t> sb({}, {4});
  Owned<int16_t> sout({}, {0});
  CHECK(run_add(ctx, sa, sb, sout, AddArgs{}));
  CHECK(int{sout.values[0]} == 7);
}

// ---- errors ----

TEST_CASE("add.out: every error names the argument and the value") {
  Owned<uint8_t> a({2, 3}, std::vector<uint8_t>(6, 1));
  Owned<uint8_t> b({2, 3}, std::vector<uint8_t>(6, 2));
  Owned<uint8_t> out({2, 3}, std::vector<uint8_t>(6, 0));
  const auto expect = [&](TensorRef ta, TensorRef tb, TensorRef to, const AddArgs& p,
                          std::initializer_list<std::string_view> fragments) {
    std::fill(out.values.begin(), out.values.end(), uint8_t{42});
    KernelContext ctx;
    CHECK_FALSE(run_add(ctx, ta, tb, to, p));
    require_error(ctx, fragments);
    for (auto v : out.values) CHECK(int{v} == 42);
  };
  const AddArgs ok;
  Owned<uint8_t> b_wide({2, 4}, std::vector<uint8_t>(8, 0));
  expect(a, b_wide, out, ok, {"add.out", "b", "[2, 4]", "[2, 3]"});
  Owned<uint8_t> out_flat({6}, std::vector<uint8_t>(6, 0));
  expect(a, b, out_flat, ok, {"out", "[6]"});
  Owned<int8_t> b_i8({2, 3}, std::vector<int8_t>(6, 0));
  expect(a, b_i8, out, ok, {"b", "int8", "uint8"});
  Owned<int16_t> out_i16({2, 3}, std::vector<int16_t>(6, 0));
  expect(a, b, out_i16, ok, {"out", "int16", "uint8"});
  Owned<uint16_t> u16({2, 3}, std::vector<uint16_t>(6, 0));
  expect(u16, u16, u16, ok, {"Unsupported dtype", "uint16"});
  Owned<float> f32({2, 3}, std::vector<float>(6, 0.0f));
  expect(f32, f32, f32, ok, {"Unsupported dtype", "float32"});
  AddArgs p = ok;
  p.a_qmin = -1;
  expect(a, b, out, p, {"a_quant_min -1"});
  p = ok;
  p.b_qmin = 10;
  p.b_qmax = 9;
  expect(a, b, out, p, {"b_quant_min 10", "b_quant_max 9"});
  p = ok;
  p.out_qmax = 256;
  expect(a, b, out, p, {"out_quant_max 256"});
  Owned<int8_t> i8({2, 3}, std::vector<int8_t>(6, 0));
  p = ok;  // 0..255 does not fit int8 (D25)
  expect(i8, i8, i8, p, {"a_quant_max 255", "int8", "127"});
  p.a_qmax = 127;
  p.b_qmax = 127;
  expect(i8, i8, i8, p, {"out_quant_max 255", "int8"});
  p = ok;
  p.a_scale = 0.0;
  expect(a, b, out, p, {"a_scale", "0"});
  p = ok;
  p.b_scale = -kInf;
  expect(a, b, out, p, {"b_scale", "-inf"});
  p = ok;
  p.out_scale = kNaN;
  expect(a, b, out, p, {"out_scale", "nan"});
  Owned<uint8_t> bad({2, 3}, std::vector<uint8_t>(6, 0));
  const int64_t strides[] = {2, 1};
  bad.tensor.raw()->strides = strides;
  expect(a, bad, out, ok, {"b", "strides"});
}

// ---- the C ABI ----

TEST_CASE("add: the C-ABI kernel unpacks its arguments") {
  Owned<uint8_t> a({2}, {8, 1});
  Owned<uint8_t> b({2}, {16, 2});
  Owned<uint8_t> out({2}, {0, 0});
  std::vector<et_ops_value> args = {
      tensor_value(a.tensor), double_value(0.5),  int_value(1),   int_value(0),   int_value(255),
      tensor_value(b.tensor), double_value(0.25), int_value(2),   int_value(0),   int_value(255),
      double_value(0.1),      int_value(5),       int_value(0),   int_value(255), tensor_value(out.tensor)};
  auto ctx = call_kernel(manifest_kernel("quantized_decomposed::add.out"), args);
  REQUIRE(ctx.ok());
  // Element 1: da = 0, db = 0, out = 5.
  CHECK(as_ints(out.values) == std::vector<int64_t>{75, 5});
  args[12] = int_value(100);
  args[13] = int_value(50);
  ctx = call_kernel(manifest_kernel("quantized_decomposed::add.out"), args);
  require_error(ctx, {"add.out", "out_quant_min 100", "out_quant_max 50"});
  args[10] = none_value();
  ctx = call_kernel(manifest_kernel("quantized_decomposed::add.out"), args);
  require_error(ctx, {"add.out", "out_scale"});
}

}  // namespace
