// aten::relu.out: every supported dtype, NaN and signed zeros, layouts,
// in place, zero sizes and errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

using et_ops::DType;
using et_ops::KernelContext;
using et_ops::test::bits_of;
using et_ops::test::Owned;
namespace portable = et_ops::kernels::portable;

TEST_CASE("relu: float32 keeps NaN and -0.0 as PyTorch's clamp_min", "[portable][relu]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Owned<float> x({7}, {-2, -0.0f, 0, 3.5f, nan, -inf, inf});
  Owned<float> out({7}, Owned<float>::filled({7}, 9));
  KernelContext ctx;
  REQUIRE(portable::relu_out(ctx, x, out));
  CHECK(bits_of(out.values) == bits_of(std::vector<float>{0, -0.0f, 0, 3.5f, nan, 0, inf}));
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

TEST_CASE("relu: layouts, in place and zero sizes", "[portable][relu]") {
  KernelContext ctx;
  SECTION("column-major self into row-major out") {
    Owned<float> x({2, 3}, {-1, 2, -3, 4, -5, 6}, {1, 0});
    Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 9));
    REQUIRE(portable::relu_out(ctx, x, out));
    CHECK(out.values == std::vector<float>{0, 2, 0, 4, 0, 6});
  }
  SECTION("in place") {
    Owned<float> x({4}, {-1, 1, -2, 2});
    REQUIRE(portable::relu_out(ctx, x, x));
    CHECK(x.values == std::vector<float>{0, 1, 0, 2});
  }
  SECTION("zero size") {
    Owned<float> x({3, 0}, {});
    Owned<float> out({3, 0}, {});
    CHECK(portable::relu_out(ctx, x, out));
  }
  SECTION("0-dim") {
    Owned<float> x({}, {-4});
    Owned<float> out({}, {9});
    REQUIRE(portable::relu_out(ctx, x, out));
    CHECK(out.values[0] == 0);
  }
}

TEST_CASE("relu: errors", "[portable][relu][errors]") {
  Owned<float> x({2, 2}, {1, 2, 3, 4});
  KernelContext ctx;
  SECTION("out of another dtype") {
    Owned<int32_t> out({2, 2}, {0, 0, 0, 0});
    CHECK_FALSE(portable::relu_out(ctx, x, out));
    CHECK_ERROR(ctx, "aten::relu.out", "out has dtype int32, expected float32");
  }
  SECTION("out of another shape") {
    Owned<float> out({4}, {0, 0, 0, 0});
    CHECK_FALSE(portable::relu_out(ctx, x, out));
    CHECK_ERROR(ctx, "out has shape [4], expected [2, 2] (the shape of self)");
  }
  SECTION("bool is not supported") {
    Owned<uint8_t> b({2}, {0, 1});
    b.retype(DType::Bool);
    CHECK_FALSE(portable::relu_out(ctx, b, b));
    CHECK_ERROR(ctx, "self has dtype bool, which is not supported");
  }
  SECTION("out partially overlapping self") {
    std::vector<float> buffer(5, -1.0f);
    et_ops::Tensor self(DType::Float32, buffer.data(), {4});
    et_ops::Tensor out(DType::Float32, buffer.data() + 1, {4});
    CHECK_FALSE(portable::relu_out(ctx, self, out));
    CHECK_ERROR(ctx, "out overlaps self in memory without being the very same tensor");
    CHECK(buffer == std::vector<float>(5, -1.0f));
  }
}
