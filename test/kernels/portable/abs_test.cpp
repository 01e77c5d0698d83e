// aten::abs: signed zeros and NaN, every arithmetic dtype, the lowest signed
// integer, strided layouts, in place, and the errors.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

TEST_CASE("abs: float32 clears the sign of zeros and keeps NaN and infinities", "[portable][abs]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Owned<float> x({6}, {-2.5f, -0.0f, 0.0f, 3.0f, -inf, nan});
  Owned<float> out({6}, Owned<float>::filled({6}, 9));
  KernelContext ctx;
  REQUIRE(portable::abs_out(ctx, x, out));
  CHECK(bits_of(out.values) == bits_of(std::vector<float>{2.5f, 0.0f, 0.0f, 3.0f, inf, nan}));
}

TEMPLATE_TEST_CASE("abs: integer and float64 dtypes; the lowest signed value stays itself", "[portable][abs]",
                   double, int8_t, int16_t, int32_t, int64_t) {
  const TestType lowest = std::numeric_limits<TestType>::lowest();
  Owned<TestType> x({2, 2}, {TestType(-5), TestType(0), TestType(7), lowest});
  Owned<TestType> out({2, 2}, Owned<TestType>::filled({2, 2}, TestType(1)));
  KernelContext ctx;
  REQUIRE(portable::abs_out(ctx, x, out));
  const TestType expected_lowest = std::is_floating_point_v<TestType> ? -lowest : lowest;
  CHECK(out.values == std::vector<TestType>{TestType(5), TestType(0), TestType(7), expected_lowest});
}

TEST_CASE("abs: uint8 passes through; in place", "[portable][abs]") {
  Owned<uint8_t> x({3}, {0, 128, 255});
  KernelContext ctx;
  REQUIRE(portable::abs_out(ctx, x, x));
  CHECK(x.values == std::vector<uint8_t>{0, 128, 255});
}

TEST_CASE("abs: a mismatched out is refused with the operator's name", "[portable][abs]") {
  Owned<float> x({3}, {1, 2, 3});
  Owned<float> short_out({2}, {0, 0});
  KernelContext ctx;
  CHECK_FALSE(portable::abs_out(ctx, x, short_out));
  CHECK(ctx.message().find("aten::abs.out") != std::string::npos);
  Owned<int32_t> wrong_dtype({3}, {0, 0, 0});
  KernelContext ctx2;
  CHECK_FALSE(portable::abs_out(ctx2, x, wrong_dtype));
  CHECK(!ctx2.message().empty());
}
