// aten::mean.out: which dimensions are reduced (none, empty, negative,
// keepdim), the computation dtype, the compensated binary64 sum, NaN and
// infinities, empty reductions, layouts and every error.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

using et_ops::kernels::portable::IntList;

namespace {

// mean over `dims` (std::nullopt: all), without a dtype.
template <typename In, typename Out>
bool mean(KernelContext& ctx, const Owned<In>& self, std::optional<Sizes> dims, bool keepdim, Owned<Out>& out,
          std::optional<DType> dtype = std::nullopt) {
  std::optional<IntList> dim;
  if (dims) dim = IntList(*dims);
  return portable::mean_out(ctx, self, dim, keepdim, dtype, out);
}

}  // namespace

TEST_CASE("mean: the dimensions reduced", "[portable][mean]") {
  KernelContext ctx;
  Owned<float> x({2, 3}, {1, 2, 3, 4, 5, 6});
  SECTION("one dimension, dropped or kept") {
    Owned<float> rows({2}, {0, 0});
    REQUIRE(mean(ctx, x, Sizes{1}, false, rows));
    CHECK(rows.values == std::vector<float>{2, 5});
    Owned<float> columns({1, 3}, {0, 0, 0});
    REQUIRE(mean(ctx, x, Sizes{-2}, true, columns));
    CHECK(columns.values == std::vector<float>{2.5f, 3.5f, 4.5f});
  }
  SECTION("none and an empty list reduce everything") {
    Owned<float> all({}, {0});
    REQUIRE(mean(ctx, x, std::nullopt, false, all));
    CHECK(all.values[0] == 3.5f);
    Owned<float> kept({1, 1}, {0});
    REQUIRE(mean(ctx, x, Sizes{}, true, kept));
    CHECK(kept.values[0] == 3.5f);
  }
  SECTION("global average pooling: [N, C, H, W] over H and W") {
    Owned<double> planes({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
    Owned<double> pooled({1, 2, 1, 1}, {0, 0});
    REQUIRE(mean(ctx, planes, Sizes{-1, -2}, true, pooled));
    CHECK(pooled.values == std::vector<double>{2.5, 25});
  }
  SECTION("a 0-dim self reduces over its one element") {
    Owned<float> scalar({}, {4});
    Owned<float> out({}, {0});
    REQUIRE(mean(ctx, scalar, Sizes{0}, false, out));
    CHECK(out.values[0] == 4);
    REQUIRE(mean(ctx, scalar, Sizes{-1}, true, out));
    CHECK(out.values[0] == 4);
  }
  SECTION("an empty reduction is NaN (0 / 0); an empty result is fine") {
    Owned<float> empty({3, 0}, {});
    Owned<float> nans({3}, {0, 0, 0});
    REQUIRE(mean(ctx, empty, Sizes{1}, false, nans));
    for (float v : nans.values) CHECK(std::isnan(v));
    Owned<float> none({0}, {});
    CHECK(mean(ctx, empty, Sizes{0}, false, none));
  }
  SECTION("an empty self without data is never offset (fuzz_portable_kernels: mean_over_empty_self_without_data)") {
    // Dim order {1, 0} gives the kept dimension a stride of 1, so offsetting
    // the null data would be undefined behaviour (UBSan's pointer-overflow).
    Owned<float> empty({3, 0}, {}, {1, 0});
    empty.raw()->data = nullptr;
    REQUIRE(empty.ref().stride(0) == 1);
    Owned<double> nans({3, 1}, {0, 0, 0});
    REQUIRE(mean(ctx, empty, Sizes{1}, true, nans));
    for (double v : nans.values) CHECK(std::isnan(v));
  }
}

TEST_CASE("mean: float32 over a contiguous run adds in float32, in aten's order", "[portable][mean]") {
  KernelContext ctx;
  // aten adds 16777216 + 1 + 1 + 1 in float32: each 1 is lost, as in
  // torch.mean (the Python cross-check compares many sizes bit for bit).
  Owned<float> x({4}, {16777216.0f, 1, 1, 1});
  Owned<float> out({}, {0});
  REQUIRE(mean(ctx, x, std::nullopt, false, out));
  CHECK(out.values[0] == 4194304.0f);
}

TEST_CASE("mean: any other sum is compensated binary64, divided once, rounded once", "[portable][mean]") {
  KernelContext ctx;
  SECTION("float32 elements that a float32 sum would lose (a strided column)") {
    Owned<float> x({4, 2}, {16777216.0f, 0, 1, 0, 1, 0, 1, 0});
    Owned<float> out({2}, {0, 0});
    REQUIRE(mean(ctx, x, Sizes{0}, false, out));
    CHECK(out.values[0] == static_cast<float>((16777216.0 + 3) / 4));
  }
  SECTION("float64 cancellation that a plain binary64 sum would lose") {
    Owned<double> x({4}, {1e16, 1, -1e16, 1});
    Owned<double> out({}, {0});
    REQUIRE(mean(ctx, x, std::nullopt, false, out));
    CHECK(out.values[0] == 0.5);
  }
}

TEST_CASE("mean: a compensated mean does not depend on the layout", "[portable][mean]") {
  KernelContext ctx;
  std::mt19937_64 rng(5);
  const auto values = et_ops::test::random_floats(rng, 2 * 8 * 5 * 3);
  Owned<float> x({2, 8, 5, 3}, values);
  Owned<float> x_last({2, 8, 5, 3}, values, {0, 2, 3, 1});
  // Dimensions 0 and 2 are no contiguous run in either layout.
  const Sizes dims{0, 2};
  Sizes shape = {1, 8, 1, 3};
  Owned<float> out(shape, Owned<float>::filled(shape, 0));
  Owned<float> out_last(shape, Owned<float>::filled(shape, 0), {0, 2, 3, 1});
  REQUIRE(mean(ctx, x, dims, true, out));
  REQUIRE(mean(ctx, x_last, dims, true, out_last));
  CHECK(bits_of(out_last.logical()) == bits_of(out.logical()));
}

TEST_CASE("mean: errors name the argument and the value", "[portable][mean][errors]") {
  Owned<float> x({2, 3}, {1, 2, 3, 4, 5, 6});
  Owned<float> out({2}, {0, 0});
  KernelContext ctx;
  SECTION("an integral self without dtype") {
    Owned<int32_t> i({2}, {1, 2});
    Owned<float> i_out({}, {0});
    CHECK_FALSE(mean(ctx, i, std::nullopt, false, i_out));
    CHECK_ERROR(ctx, "aten::mean.out", "self has dtype int32 and dtype is none");
  }
  SECTION("an integral dtype, or an out that is not dtype") {
    CHECK_FALSE(mean(ctx, x, Sizes{1}, false, out, DType::Int32));
    CHECK_ERROR(ctx, "dtype = int32 is not supported; expected float32 or float64");
    ctx.reset();
    CHECK_FALSE(mean(ctx, x, Sizes{1}, false, out, DType::Float64));
    CHECK_ERROR(ctx, "out must be float64, got float32");
  }
  SECTION("an integral out") {
    Owned<int32_t> i_out({2}, {0, 0});
    CHECK_FALSE(mean(ctx, x, Sizes{1}, false, i_out));
    CHECK_ERROR(ctx, "out has dtype int32, which is not supported");
  }
  SECTION("a dim out of range, or repeated") {
    CHECK_FALSE(mean(ctx, x, Sizes{2}, false, out));
    CHECK_ERROR(ctx, "dim = 2 is out of range for a 2-D tensor (expected a value in [-2, 1])");
    ctx.reset();
    CHECK_FALSE(mean(ctx, x, Sizes{1, -1}, false, out));
    CHECK_ERROR(ctx, "dim [1, -1] names dimension 1 more than once");
  }
  SECTION("out of the wrong shape: keepdim matters") {
    Owned<float> kept({2, 1}, {0, 0});
    CHECK_FALSE(mean(ctx, x, Sizes{1}, false, kept));
    CHECK_ERROR(ctx, "out has shape [2, 1], expected [2] (self's shape without the reduced dimensions)");
    ctx.reset();
    CHECK_FALSE(mean(ctx, x, Sizes{1}, true, out));
    CHECK_ERROR(ctx, "out has shape [2], expected [2, 1] (self's shape with the reduced dimensions 1)");
  }
  SECTION("a malformed dim list") {
    CHECK_FALSE(portable::mean_out(ctx, x, IntList(nullptr, 2), false, std::nullopt, out));
    CHECK_ERROR(ctx, "dim is a malformed int list");
  }
  SECTION("out overlapping self") {
    CHECK_FALSE(mean(ctx, x, Sizes{0, 1}, true, x));
    CHECK_ERROR(ctx, "out has shape [2, 3], expected [1, 1]");
    ctx.reset();
    std::vector<float> buffer(6, 1.0f);
    et_ops::Tensor self(DType::Float32, buffer.data(), {2, 3});
    et_ops::Tensor aliased(DType::Float32, buffer.data() + 1, {2});
    CHECK_FALSE(portable::mean_out(ctx, self, IntList(std::vector<int64_t>{1}), false, std::nullopt, aliased));
    CHECK_ERROR(ctx, "out overlaps self in memory");
  }
}

TEST_CASE("sum: float rows, integers in int64, a dtype", "[portable][sum]") {
  KernelContext ctx;
  Owned<float> x({2, 3}, {1, 2, 3, 4, 5, 6});
  Owned<float> rows({2}, {0, 0});
  const std::vector<int64_t> last = {-1};
  REQUIRE(portable::sum_out(ctx, x, IntList(last), false, std::nullopt, rows));
  CHECK(rows.values == std::vector<float>{6, 15});
  Owned<int32_t> ints({3}, {2147483647, 1, 1});
  Owned<int64_t> total({}, {0});
  REQUIRE(portable::sum_out(ctx, ints, std::nullopt, false, DType::Int64, total));
  CHECK(total.values[0] == 2147483649);
  Owned<int64_t> wrong({}, {0});
  CHECK_FALSE(portable::sum_out(ctx, x, std::nullopt, false, std::nullopt, wrong));
  CHECK(et_ops::test::failed_with(ctx, {"aten::sum.IntList_out", "float32", "int64"}));
}

TEST_CASE("max.dim: the first maximum, the first NaN", "[portable][max]") {
  KernelContext ctx;
  Owned<float> x({2, 4}, {1, 3, 3, 2, 5, std::nanf(""), 7, std::nanf("")});
  Owned<float> values({2, 1}, {0, 0});
  Owned<int64_t> indices({2, 1}, {0, 0});
  REQUIRE(portable::max_dim_out(ctx, x, 1, true, values, indices));
  CHECK(values.values[0] == 3);
  CHECK(std::isnan(values.values[1]));
  CHECK(indices.values == std::vector<int64_t>{1, 1});
  Owned<float> flat({2}, {0, 0});
  CHECK_FALSE(portable::max_dim_out(ctx, x, 2, false, flat, indices));
  CHECK(et_ops::test::failed_with(ctx, {"aten::max.dim_max", "dim = 2"}));
}
