// aten::constant_pad_nd.out: padding and cropping of trailing dimensions,
// the fill value in every dtype (with aten's conversions), layouts, zero
// sizes and every error.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "et_ops/half.h"
#include "et_ops/kernels/portable.h"
#include "test_util.h"

namespace {

bool pad(KernelContext& ctx, TensorRef self, const Sizes& padding, Scalar value, TensorRef out) {
  return portable::constant_pad_nd_out(ctx, self, padding, value, out);
}

}  // namespace

TEST_CASE("constant_pad_nd: pads the last dimensions first", "[portable][constant_pad_nd]") {
  KernelContext ctx;
  Owned<float> x({2, 2}, {1, 2, 3, 4});
  SECTION("[left, right] of the last dimension") {
    Owned<float> out({2, 5}, Owned<float>::filled({2, 5}, -1));
    REQUIRE(pad(ctx, x, {1, 2}, 0, out));
    CHECK(out.logical() == std::vector<float>{0, 1, 2, 0, 0, 0, 3, 4, 0, 0});
  }
  SECTION("ZeroPad2d-style [left, right, top, bottom] with a value") {
    Owned<float> out({3, 4}, Owned<float>::filled({3, 4}, -1));
    REQUIRE(pad(ctx, x, {1, 1, 1, 0}, 7.5, out));
    CHECK(out.logical() == std::vector<float>{7.5f, 7.5f, 7.5f, 7.5f, 7.5f, 1, 2, 7.5f, 7.5f, 3, 4, 7.5f});
  }
  SECTION("negative entries crop, mixed with padding") {
    Owned<int32_t> row({1, 5}, {1, 2, 3, 4, 5});
    Owned<int32_t> out({1, 5}, Owned<int32_t>::filled({1, 5}, -1));
    REQUIRE(pad(ctx, row, {-2, 2}, 9, out));
    CHECK(out.logical() == std::vector<int32_t>{3, 4, 5, 9, 9});
    Owned<int32_t> cropped({1, 0}, {});
    REQUIRE(pad(ctx, row, {-3, -2}, 0, cropped));
  }
  SECTION("an empty pad copies; an empty self is all value") {
    Owned<float> copy({2, 2}, {0, 0, 0, 0});
    REQUIRE(pad(ctx, x, {}, 5, copy));
    CHECK(copy.logical() == x.logical());
    Owned<float> empty({0}, {});
    Owned<float> filled({3}, {0, 0, 0});
    REQUIRE(pad(ctx, empty, {1, 2}, 3, filled));
    CHECK(filled.values == std::vector<float>{3, 3, 3});
  }
  SECTION("channels-last self and out: layouts do not matter") {
    std::vector<float> values(2 * 3 * 2 * 2);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i + 1);
    Owned<float> nchw({2, 3, 2, 2}, values);
    Owned<float> nhwc({2, 3, 2, 2}, values, {0, 2, 3, 1});
    Owned<float> out({2, 3, 4, 3}, Owned<float>::filled({2, 3, 4, 3}, -1));
    Owned<float> out_last({2, 3, 4, 3}, Owned<float>::filled({2, 3, 4, 3}, -1), {0, 2, 3, 1});
    REQUIRE(pad(ctx, nchw, {0, 1, 1, 1}, 0, out));
    REQUIRE(pad(ctx, nhwc, {0, 1, 1, 1}, 0, out_last));
    CHECK(out_last.logical() == out.logical());
    CHECK(out.logical()[3] == 1);  // row 1, column 0 of the first plane
  }
}

TEST_CASE("constant_pad_nd: the value in every dtype, as aten's fill_ converts it", "[portable][constant_pad_nd]") {
  KernelContext ctx;
  SECTION("a floating value truncates for integers") {
    Owned<int8_t> x({1}, {5});
    Owned<int8_t> out({3}, {0, 0, 0});
    REQUIRE(pad(ctx, x, {1, 1}, 1.9, out));
    CHECK(out.values == std::vector<int8_t>{1, 5, 1});
    REQUIRE(pad(ctx, x, {1, 1}, -1.9, out));
    CHECK(out.values == std::vector<int8_t>{-1, 5, -1});
  }
  SECTION("bool: non-zero is true") {
    Owned<uint8_t> x({1}, {0});
    Owned<uint8_t> out({3}, {7, 7, 7});
    x.retype(DType::Bool);
    out.retype(DType::Bool);
    REQUIRE(pad(ctx, x, {1, 1}, 2, out));
    CHECK(out.values == std::vector<uint8_t>{1, 0, 1});
  }
  SECTION("float16 and bfloat16 round to nearest") {
    Owned<uint16_t> h({1}, {0});
    Owned<uint16_t> h_out({2}, {0, 0});
    h.retype(DType::Float16);
    h_out.retype(DType::Float16);
    REQUIRE(pad(ctx, h, {0, 1}, 0.1, h_out));
    CHECK(h_out.values[1] == et_ops::Half::from_float(0.1f).bits);
    Owned<uint16_t> b({1}, {0});
    Owned<uint16_t> b_out({2}, {0, 0});
    b.retype(DType::BFloat16);
    b_out.retype(DType::BFloat16);
    REQUIRE(pad(ctx, b, {0, 1}, -3, b_out));
    CHECK(b_out.values[1] == et_ops::BFloat16::from_float(-3.0f).bits);
  }
  SECTION("int64 keeps every bit of an int64 value") {
    Owned<int64_t> x({1}, {0});
    Owned<int64_t> out({2}, {0, 0});
    REQUIRE(pad(ctx, x, {1, 0}, std::numeric_limits<int64_t>::max(), out));
    CHECK(out.values[0] == std::numeric_limits<int64_t>::max());
  }
}

TEST_CASE("constant_pad_nd: errors name the argument and the value", "[portable][constant_pad_nd][errors]") {
  KernelContext ctx;
  Owned<float> x({2, 3}, Owned<float>::filled({2, 3}, 1));
  Owned<float> out({2, 5}, Owned<float>::filled({2, 5}, 0));
  SECTION("an odd pad, or one longer than self's dimensions") {
    CHECK_FALSE(pad(ctx, x, {1}, 0, out));
    CHECK_ERROR(ctx, "aten::constant_pad_nd.out", "pad [1] has 1 entries; it needs an even number");
    ctx.reset();
    CHECK_FALSE(pad(ctx, x, {1, 1, 1, 1, 1, 1}, 0, out));
    CHECK_ERROR(ctx, "pad [1, 1, 1, 1, 1, 1] pads 3 dimensions, but self is 2-D");
  }
  SECTION("cropping more than there is") {
    CHECK_FALSE(pad(ctx, x, {-2, -2}, 0, out));
    CHECK_ERROR(ctx, "pad [-2, -2] crops more than the 3 elements of dimension 1");
  }
  SECTION("padding that leaves a padded dimension empty") {
    CHECK_FALSE(pad(ctx, x, {1, 1, -2, 0}, 0, out));
    CHECK_ERROR(ctx, "pad [1, 1, -2, 0] leaves dimension 0 (of size 2) empty");
  }
  SECTION("sizes that overflow") {
    CHECK_FALSE(pad(ctx, x, {std::numeric_limits<int64_t>::max(), 1}, 0, out));
    CHECK_ERROR(ctx, "overflows the size of dimension 1");
  }
  SECTION("a value the dtype cannot hold") {
    Owned<int8_t> i({1}, {1});
    Owned<int8_t> i_out({3}, {0, 0, 0});
    CHECK_FALSE(pad(ctx, i, {1, 1}, 300, i_out));
    CHECK_ERROR(ctx, "value = 300 cannot be converted to int8 without overflow");
    ctx.reset();
    Owned<uint16_t> h({1}, {0});
    Owned<uint16_t> h_out({3}, {0, 0, 0});
    h.retype(DType::Float16);
    h_out.retype(DType::Float16);
    CHECK_FALSE(pad(ctx, h, {1, 1}, 70000, h_out));
    CHECK_ERROR(ctx, "value = 70000 cannot be converted to float16 without overflow");
    ctx.reset();
    CHECK_FALSE(pad(ctx, i, {1, 1}, std::nan(""), i_out));
    CHECK_ERROR(ctx, "value = nan cannot be converted to int64 without overflow");
  }
  SECTION("out of another shape or dtype, or overlapping self") {
    Owned<float> wrong({2, 4}, Owned<float>::filled({2, 4}, 0));
    CHECK_FALSE(pad(ctx, x, {1, 1}, 0, wrong));
    CHECK_ERROR(ctx, "out has shape [2, 4], expected [2, 5] (self's shape with pad applied)");
    CHECK(wrong.values == Owned<float>::filled({2, 4}, 0));
    ctx.reset();
    Owned<double> wide({2, 5}, Owned<double>::filled({2, 5}, 0));
    CHECK_FALSE(pad(ctx, x, {1, 1}, 0, wide));
    CHECK_ERROR(ctx, "out has dtype float64, expected float32");
    ctx.reset();
    std::vector<float> buffer(8, 1.0f);
    et_ops::Tensor self(DType::Float32, buffer.data(), {4});
    et_ops::Tensor aliased(DType::Float32, buffer.data() + 2, {6});
    CHECK_FALSE(pad(ctx, self, {1, 1}, 0, aliased));
    CHECK_ERROR(ctx, "out overlaps self in memory");
  }
  SECTION("a malformed pad list") {
    CHECK_FALSE(portable::constant_pad_nd_out(ctx, x, portable::IntList(nullptr, 2), 0, out));
    CHECK_ERROR(ctx, "pad is a malformed int list");
  }
}
