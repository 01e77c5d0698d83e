// White-box tests of the shared helpers in src/kernels/quantized/checks.h:
// tensor structure checks, dense layouts, logical-order traversal, flat
// parameter reads, saturation and conversions.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "checks.h"
#include "streaming_reference.h"

namespace {

using namespace et_ops;
using namespace et_ops::test;
namespace d = et_ops::kernels::quantized::detail;

constexpr const char* kOp = "test_op";

TEST_CASE("checks: is_dense accepts every dim order and rejects gaps and overlaps") {
  std::mt19937_64 rng = seeded_rng(1);
  for (int i = 0; i < 200; ++i) {
    auto sizes = random_shape(rng);
    Owned<float> t(sizes, Owned<float>::filled(sizes, 0.0f), random_order(sizes.size(), rng));
    // Empty tensors are never read, so their (degenerate) strides do not matter.
    INFO("sizes " << ::Catch::Detail::stringify(sizes));
    if (t.tensor.numel() > 0) CHECK(d::is_dense(t));
  }
  Owned<float> t({2, 3}, std::vector<float>(6, 0.0f));
  const int64_t gap[] = {4, 1};
  const int64_t overlap[] = {1, 1};
  const int64_t transposed[] = {1, 2};
  t.tensor.raw()->strides = gap;
  CHECK_FALSE(d::is_dense(t));
  t.tensor.raw()->strides = overlap;
  CHECK_FALSE(d::is_dense(t));
  t.tensor.raw()->strides = transposed;
  CHECK(d::is_dense(t));
  // Size-1 dimensions may carry any stride.
  Owned<float> one({1, 3}, std::vector<float>(3, 0.0f));
  const int64_t odd[] = {1000, 1};
  one.tensor.raw()->strides = odd;
  CHECK(d::is_dense(one));
}

TEST_CASE("checks: check_tensor names the argument and the problem") {
  Owned<float> t({2, 3}, std::vector<float>(6, 0.0f));
  KernelContext ctx;
  CHECK(d::check_tensor(ctx, kOp, "x", t));
  const int64_t negative_sizes[] = {2, -3};
  t.tensor.raw()->sizes = negative_sizes;
  CHECK_FALSE(d::check_tensor(ctx, kOp, "x", t));
  require_error(ctx, {"test_op", "x", "negative size -3"});
  const int64_t huge_sizes[] = {int64_t{1} << 40, int64_t{1} << 40};
  t.tensor.raw()->sizes = huge_sizes;
  ctx.reset();
  CHECK_FALSE(d::check_tensor(ctx, kOp, "x", t));
  require_error(ctx, {"x", "overflows"});
  Owned<float> empty({0}, {});
  empty.tensor.raw()->data = nullptr;
  ctx.reset();
  CHECK(d::check_tensor(ctx, kOp, "empty", empty));
  Owned<float> shifted({2}, {1.0f, 2.0f, 3.0f});
  shifted.tensor.raw()->data = reinterpret_cast<char*>(shifted.values.data()) + 1;
  ctx.reset();
  CHECK_FALSE(d::check_tensor(ctx, kOp, "shifted", shifted));
  require_error(ctx, {"shifted", "aligned", "4-byte"});
  t.tensor.raw()->dim = -1;
  ctx.reset();
  CHECK_FALSE(d::check_tensor(ctx, kOp, "x", t));
  require_error(ctx, {"x", "-1 dimensions"});
}

TEST_CASE("checks: same_layout ignores strides of size-1 dimensions only") {
  Owned<float> a({2, 1, 3}, std::vector<float>(6, 0.0f));
  Owned<float> b({2, 1, 3}, std::vector<float>(6, 0.0f), {1, 0, 2});
  Owned<float> c({2, 1, 3}, std::vector<float>(6, 0.0f), {2, 0, 1});
  Owned<float> e({2, 3}, std::vector<float>(6, 0.0f));
  CHECK(d::same_layout(a, b));  // only the size-1 dim moved
  CHECK_FALSE(d::same_layout(a, c));
  CHECK_FALSE(d::same_layout(a, e));
}

TEST_CASE("checks: flat_offset and FlatElements read logical order in any layout") {
  std::mt19937_64 rng = seeded_rng(2);
  for (int i = 0; i < 100; ++i) {
    auto sizes = random_shape(rng);
    std::vector<int64_t> logical(static_cast<std::size_t>(numel_of(sizes)));
    std::iota(logical.begin(), logical.end(), int64_t{0});
    auto t = make_tensor<int64_t>(sizes, logical, random_order(sizes.size(), rng));
    const d::FlatElements<int64_t> flat(*t);
    const d::FlatIntegers ints(*t);
    for (std::size_t k = 0; k < logical.size(); ++k) {
      REQUIRE(flat[static_cast<int64_t>(k)] == logical[k]);
      REQUIRE(ints[static_cast<int64_t>(k)] == logical[k]);
      REQUIRE(t->values[static_cast<std::size_t>(d::flat_offset(*t, static_cast<int64_t>(k)))] == logical[k]);
    }
  }
  Owned<float> f32({2}, {0.5f, 0.25f});
  CHECK(d::FlatScales(f32)[1] == 0.25);
  Owned<int32_t> i32({2}, {-7, 9});
  CHECK(d::FlatIntegers(i32)[0] == -7);
}

TEST_CASE("checks: for_each_row visits rows in logical order with every tensor's offsets") {
  std::mt19937_64 rng = seeded_rng(3);
  for (int i = 0; i < 100; ++i) {
    auto sizes = random_shape(rng);
    std::vector<int64_t> logical(static_cast<std::size_t>(numel_of(sizes)));
    std::iota(logical.begin(), logical.end(), int64_t{0});
    auto a = make_tensor<int64_t>(sizes, logical, random_order(sizes.size(), rng));
    auto b = make_tensor<int64_t>(sizes, logical, random_order(sizes.size(), rng));
    const TensorRef tensors[] = {*a, *b};
    int64_t next = 0;
    int64_t expected_row = 0;
    d::for_each_row(tensors, [&](int64_t row, const int64_t* index, const int64_t* offsets) {
      REQUIRE(row == expected_row++);
      int64_t flat = 0;
      for (std::size_t k = 0; k + 1 < sizes.size(); ++k) flat = flat * sizes[k] + index[k];
      if (!sizes.empty()) flat *= sizes.back();
      REQUIRE(flat == next);
      for (int64_t j = 0; j < d::row_length(*a); ++j) {
        REQUIRE(a->values[static_cast<std::size_t>(offsets[0] + j * d::row_stride(*a))] == next);
        REQUIRE(b->values[static_cast<std::size_t>(offsets[1] + j * d::row_stride(*b))] == next);
        ++next;
      }
    });
    REQUIRE(next == numel_of(sizes));
  }
}

TEST_CASE("checks: for_each_row ignores the strides of size-1 dimensions") {
  std::vector<int64_t> logical(12);
  std::iota(logical.begin(), logical.end(), int64_t{0});
  Owned<int64_t> t({3, 1, 4}, logical);
  const int64_t strides[] = {4, std::numeric_limits<int64_t>::max(), 1};
  t.tensor.raw()->strides = strides;
  KernelContext ctx;
  REQUIRE(d::check_tensor(ctx, kOp, "t", t));
  const TensorRef tensors[] = {t};
  int64_t next = 0;
  d::for_each_row(tensors, [&](int64_t, const int64_t*, const int64_t* offsets) {
    for (int64_t j = 0; j < 4; ++j) REQUIRE(t.values[static_cast<std::size_t>(offsets[0] + j)] == next++);
  });
  CHECK(next == 12);
}

TEST_CASE("checks: saturate is exact at the int32 bounds and sends NaN to quant_min") {
  CHECK(d::saturate(2147483520.0f, INT32_MIN, INT32_MAX) == 2147483520);
  CHECK(d::saturate(2147483648.0f, INT32_MIN, INT32_MAX) == INT32_MAX);
  CHECK(d::saturate(-2147483648.0f, INT32_MIN, INT32_MAX) == INT32_MIN);
  CHECK(d::saturate(-2147483904.0f, INT32_MIN, INT32_MAX) == INT32_MIN);
  CHECK(d::saturate(std::numeric_limits<float>::quiet_NaN(), -5, 5) == -5);
  CHECK(d::saturate(std::numeric_limits<double>::infinity(), -5, 5) == 5);
  CHECK(d::saturate(-std::numeric_limits<double>::infinity(), -5, 5) == -5);
  CHECK(d::saturate(3.0, -5, 5) == 3);
}

TEST_CASE("checks: binary64 to f16 goes through binary32 (two roundings)") {
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(d::from_f64<Half>(x).to_float() == 1.0f);
  CHECK(d::from_f64<BFloat16>(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)).to_float() == 1.0f);
  CHECK(d::from_f64<float>(0.1) == 0.1f);
}

TEST_CASE("checks: quant range and axis checks") {
  KernelContext ctx;
  CHECK(d::check_quant_range(ctx, kOp, DType::UInt16, 0, 65535));
  CHECK_FALSE(d::check_quant_range(ctx, kOp, DType::UInt16, -1, 65535));
  require_error(ctx, {"quant_min -1", "uint16"});
  ctx.reset();
  CHECK(d::normalize_axis(ctx, kOp, -1, 3) == 2);
  CHECK_FALSE(d::normalize_axis(ctx, kOp, 3, 3).has_value());
  require_error(ctx, {"axis 3"});
  CHECK(d::dtype_of<BFloat16>() == DType::BFloat16);
  CHECK(d::dtype_of<uint16_t>() == DType::UInt16);
}

}  // namespace
