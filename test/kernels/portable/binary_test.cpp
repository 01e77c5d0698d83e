// aten::add, sub, mul and div with tensor and Scalar operands: hand-computed
// results, broadcasting, integer wrap-around, the conversion of Scalars,
// layouts, aliasing, zero sizes and every error.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

TEST_CASE("add: same shapes, alpha 1", "[portable][add]") {
  Owned<float> a({2, 3}, {1, 2, 3, 4, 5, 6});
  Owned<float> b({2, 3}, {0.5f, -2, 10, 0.25f, -5, 100});
  Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, -1));
  KernelContext ctx;
  REQUIRE(portable::add_out(ctx, a, b, 1, out));
  CHECK(out.logical() == std::vector<float>{1.5f, 0, 13, 4.25f, 0, 106});
}

TEST_CASE("add: alpha as int and as double", "[portable][add]") {
  Owned<float> a({3}, {1, 2, 3});
  Owned<float> b({3}, {1, 10, 100});
  Owned<float> out({3}, {0, 0, 0});
  KernelContext ctx;
  REQUIRE(portable::add_out(ctx, a, b, 2, out));
  CHECK(out.logical() == std::vector<float>{3, 22, 203});
  REQUIRE(portable::add_out(ctx, a, b, -0.5, out));
  CHECK(out.logical() == std::vector<float>{0.5f, -3, -47});
}

TEST_CASE("add: alpha != 1 rounds once, as PyTorch's fused multiply-add", "[portable][add]") {
  // alpha * b = 1 + 2^-22 + 2^-46 exactly; unfused, the 2^-46 is lost.
  const float b_value = 1.0f + std::ldexp(1.0f, -23);
  Owned<float> a({1}, {-(1.0f + std::ldexp(1.0f, -22))});
  Owned<float> b({1}, {b_value});
  Owned<float> out({1}, {0});
  KernelContext ctx;
  REQUIRE(portable::add_out(ctx, a, b, static_cast<double>(b_value), out));
  CHECK(out.values[0] == std::ldexp(1.0f, -46));
}

TEST_CASE("add: broadcasting", "[portable][add]") {
  KernelContext ctx;
  SECTION("bias row [2, 3] + [3]") {
    Owned<float> a({2, 3}, {1, 2, 3, 4, 5, 6});
    Owned<float> bias({3}, {10, 20, 30});
    Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0));
    REQUIRE(portable::add_out(ctx, a, bias, 1, out));
    CHECK(out.logical() == std::vector<float>{11, 22, 33, 14, 25, 36});
  }
  SECTION("column [2, 1] + row [1, 3] gives [2, 3]") {
    Owned<float> col({2, 1}, {1, 2});
    Owned<float> row({1, 3}, {10, 20, 30});
    Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0));
    REQUIRE(portable::add_out(ctx, col, row, 1, out));
    CHECK(out.logical() == std::vector<float>{11, 21, 31, 12, 22, 32});
  }
  SECTION("0-dim self + [2, 2]") {
    Owned<float> scalar({}, {5});
    Owned<float> b({2, 2}, {1, 2, 3, 4});
    Owned<float> out({2, 2}, Owned<float>::filled({2, 2}, 0));
    REQUIRE(portable::add_out(ctx, scalar, b, 1, out));
    CHECK(out.logical() == std::vector<float>{6, 7, 8, 9});
  }
  SECTION("[2, 1, 3] + [2, 1] gives [2, 2, 3]") {
    Owned<float> a({2, 1, 3}, {0, 1, 2, 3, 4, 5});
    Owned<float> b({2, 1}, {100, 200});
    Owned<float> out({2, 2, 3}, Owned<float>::filled({2, 2, 3}, 0));
    REQUIRE(portable::add_out(ctx, a, b, 1, out));
    CHECK(out.logical() == std::vector<float>{100, 101, 102, 200, 201, 202, 103, 104, 105, 203, 204, 205});
  }
}

TEST_CASE("add and mul: integer dtypes wrap around as PyTorch's", "[portable][add][mul]") {
  KernelContext ctx;
  SECTION("int8") {
    Owned<int8_t> a({3}, {100, -128, 5});
    Owned<int8_t> b({3}, {100, -1, -7});
    Owned<int8_t> out({3}, {0, 0, 0});
    REQUIRE(portable::add_out(ctx, a, b, 1, out));
    CHECK(out.values == std::vector<int8_t>{-56, 127, -2});
    REQUIRE(portable::add_out(ctx, a, b, -2, out));  // 100 - 200, -128 + 2, 5 + 14
    CHECK(out.values == std::vector<int8_t>{-100, -126, 19});
  }
  SECTION("uint8") {
    Owned<uint8_t> a({2}, {200, 3});
    Owned<uint8_t> b({2}, {100, 5});
    Owned<uint8_t> out({2}, {0, 0});
    REQUIRE(portable::add_out(ctx, a, b, 1, out));
    CHECK(out.values == std::vector<uint8_t>{44, 8});
    REQUIRE(portable::mul_out(ctx, a, b, out));
    CHECK(out.values == std::vector<uint8_t>{32, 15});  // 20000 mod 256
  }
  SECTION("int16 multiplication") {
    Owned<int16_t> a({2}, {300, -7});
    Owned<int16_t> b({2}, {300, 9});
    Owned<int16_t> out({2}, {0, 0});
    REQUIRE(portable::mul_out(ctx, a, b, out));
    CHECK(out.values == std::vector<int16_t>{24464, -63});  // 90000 - 65536
  }
  SECTION("int32 with alpha") {
    Owned<int32_t> a({2}, {1, 2});
    Owned<int32_t> b({2}, {10, 20});
    Owned<int32_t> out({2}, {0, 0});
    REQUIRE(portable::add_out(ctx, a, b, 3, out));
    CHECK(out.values == std::vector<int32_t>{31, 62});
  }
  SECTION("int64 at the limits, alpha kept exact") {
    const int64_t max = std::numeric_limits<int64_t>::max();
    Owned<int64_t> a({2}, {max, 0});
    Owned<int64_t> b({2}, {1, 1});
    Owned<int64_t> out({2}, {0, 0});
    REQUIRE(portable::add_out(ctx, a, b, 1, out));
    CHECK(out.values == std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 1});
    // 2^53 + 1 is not a double: an alpha that went through double would lose the 1.
    REQUIRE(portable::add_out(ctx, a, b, int64_t{(int64_t{1} << 53) + 1}, out));
    CHECK(out.values[1] == (int64_t{1} << 53) + 1);
  }
}

TEST_CASE("add and mul: float64", "[portable][add][mul]") {
  Owned<double> a({2}, {0.1, 1e300});
  Owned<double> b({2}, {0.2, 1e10});
  Owned<double> out({2}, {0, 0});
  KernelContext ctx;
  REQUIRE(portable::add_out(ctx, a, b, 1, out));
  CHECK(out.values == std::vector<double>{0.1 + 0.2, 1e300 + 1e10});
  REQUIRE(portable::mul_out(ctx, a, b, out));
  CHECK(out.values[0] == 0.1 * 0.2);
  CHECK(std::isinf(out.values[1]));
}

TEST_CASE("mul: broadcasting, NaN and signed zero", "[portable][mul]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Owned<float> a({2, 2}, {1, -0.0f, nan, 4});
  Owned<float> b({2}, {-3, 2});
  Owned<float> out({2, 2}, Owned<float>::filled({2, 2}, 0));
  KernelContext ctx;
  REQUIRE(portable::mul_out(ctx, a, b, out));
  CHECK(out.values[0] == -3);
  CHECK(bits_of(out.values[1]) == bits_of(-0.0f));
  CHECK(std::isnan(out.values[2]));
  CHECK(out.values[3] == 8);
}

TEST_CASE("add: non-contiguous layouts are read and written through strides", "[portable][add]") {
  // Logical [[1, 2, 3], [4, 5, 6]] stored column-major.
  Owned<float> a({2, 3}, {1, 2, 3, 4, 5, 6}, {1, 0});
  Owned<float> b({3}, {10, 20, 30});
  KernelContext ctx;
  SECTION("contiguous out") {
    Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0));
    REQUIRE(portable::add_out(ctx, a, b, 1, out));
    CHECK(out.values == std::vector<float>{11, 22, 33, 14, 25, 36});
  }
  SECTION("column-major out") {
    Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0), {1, 0});
    REQUIRE(portable::add_out(ctx, a, b, 1, out));
    CHECK(out.logical() == std::vector<float>{11, 22, 33, 14, 25, 36});
    CHECK(out.values == std::vector<float>{11, 14, 22, 25, 33, 36});
  }
  SECTION("channels-last 4-D") {
    std::vector<float> logical(2 * 3 * 2 * 2);
    for (std::size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<float>(i);
    Owned<float> x({2, 3, 2, 2}, logical, {0, 2, 3, 1});
    Owned<float> y({3, 1, 1}, {100, 200, 300});
    Owned<float> out({2, 3, 2, 2}, Owned<float>::filled({2, 3, 2, 2}, 0), {0, 2, 3, 1});
    REQUIRE(portable::mul_out(ctx, x, y, out));
    const auto result = out.logical();
    for (std::size_t i = 0; i < logical.size(); ++i)
      CHECK(result[i] == logical[i] * static_cast<float>(100 * ((i / 4) % 3 + 1)));
  }
}

TEST_CASE("add and mul: out may be exactly self or other", "[portable][add][mul]") {
  Owned<float> a({2, 2}, {1, 2, 3, 4});
  Owned<float> b({2}, {10, 100});
  KernelContext ctx;
  REQUIRE(portable::add_out(ctx, a, b, 1, a));
  CHECK(a.values == std::vector<float>{11, 102, 13, 104});
  Owned<float> c({2, 2}, {2, 2, 2, 2});
  REQUIRE(portable::mul_out(ctx, a, c, c));
  CHECK(c.values == std::vector<float>{22, 204, 26, 208});
}

TEST_CASE("add and mul: zero-size tensors", "[portable][add][mul]") {
  KernelContext ctx;
  Owned<float> a({0, 3}, {});
  Owned<float> b({3}, {1, 2, 3});
  Owned<float> out({0, 3}, {});
  CHECK(portable::add_out(ctx, a, b, 1, out));
  CHECK(portable::mul_out(ctx, a, b, out));
  Owned<float> c({2, 0}, {});
  Owned<float> out2({2, 0}, {});
  CHECK(portable::mul_out(ctx, c, c, out2));
  CHECK(ctx.ok());
}

TEST_CASE("add and mul: errors name the argument and the value", "[portable][add][mul][errors]") {
  Owned<float> a({2, 3}, Owned<float>::filled({2, 3}, 1));
  Owned<float> b({3}, {1, 2, 3});
  Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0));
  KernelContext ctx;

  SECTION("other of another dtype") {
    Owned<int32_t> ints({3}, {1, 2, 3});
    CHECK_FALSE(portable::add_out(ctx, a, ints, 1, out));
    CHECK_ERROR(ctx, "aten::add.out", "other has dtype int32, expected float32");
  }
  SECTION("out of another dtype") {
    Owned<double> out64({2, 3}, Owned<double>::filled({2, 3}, 0));
    CHECK_FALSE(portable::mul_out(ctx, a, b, out64));
    CHECK_ERROR(ctx, "aten::mul.out", "out has dtype float64, expected float32");
  }
  SECTION("an unsupported dtype") {
    Owned<uint16_t> h({3}, {1, 2, 3});
    Owned<uint16_t> hout({3}, {0, 0, 0});
    h.retype(DType::Float16);
    hout.retype(DType::Float16);
    CHECK_FALSE(portable::add_out(ctx, h, h, 1, hout));
    CHECK_ERROR(ctx, "self has dtype float16, which is not supported", "float32, float64");
  }
  SECTION("shapes that do not broadcast") {
    Owned<float> c({4}, {1, 2, 3, 4});
    CHECK_FALSE(portable::add_out(ctx, a, c, 1, out));
    CHECK_ERROR(ctx, "self of shape [2, 3] and other of shape [4] cannot be broadcast", "sizes 3 and 4");
  }
  SECTION("out of the wrong shape is never resized") {
    Owned<float> wrong({3, 2}, Owned<float>::filled({3, 2}, 0));
    CHECK_FALSE(portable::add_out(ctx, a, b, 1, wrong));
    CHECK_ERROR(ctx, "out has shape [3, 2], expected [2, 3]", "never resized");
    CHECK(wrong.values == Owned<float>::filled({3, 2}, 0));
    Owned<float> bigger({1, 2, 3}, Owned<float>::filled({1, 2, 3}, 0));
    CHECK_FALSE(portable::mul_out(ctx, a, b, bigger));
  }
  SECTION("a floating alpha for an integral tensor") {
    Owned<int32_t> i({2}, {1, 2});
    Owned<int32_t> iout({2}, {0, 0});
    CHECK_FALSE(portable::add_out(ctx, i, i, 0.5, iout));
    CHECK_ERROR(ctx, "alpha = 0.5 is a floating point number");
  }
  SECTION("an alpha out of the dtype's range") {
    Owned<int8_t> i({2}, {1, 2});
    Owned<int8_t> iout({2}, {0, 0});
    CHECK_FALSE(portable::add_out(ctx, i, i, 300, iout));
    CHECK_ERROR(ctx, "alpha = 300 cannot be converted to int8");
    ctx.reset();
    CHECK_FALSE(portable::add_out(ctx, a, b, 1e300, out));
    CHECK_ERROR(ctx, "cannot be converted to float32");
  }
  SECTION("out partially overlapping self") {
    std::vector<float> buffer(7, 1.0f);
    et_ops::Tensor self(DType::Float32, buffer.data(), {6});
    et_ops::Tensor shifted(DType::Float32, buffer.data() + 1, {6});
    CHECK_FALSE(portable::add_out(ctx, self, self, 1, shifted));
    CHECK_ERROR(ctx, "out overlaps self in memory");
    CHECK(buffer == std::vector<float>(7, 1.0f));
  }
  SECTION("malformed tensors") {
    SECTION("numel that disagrees with sizes") {
      a.raw()->numel = 5;
      CHECK_FALSE(portable::add_out(ctx, a, b, 1, out));
      CHECK_ERROR(ctx, "self has numel 5 but sizes [2, 3] hold 6 elements");
    }
    SECTION("missing data") {
      b.raw()->data = nullptr;
      CHECK_FALSE(portable::add_out(ctx, a, b, 1, out));
      CHECK_ERROR(ctx, "other has 3 elements but no data");
    }
    SECTION("overlapping strides") {
      const int64_t strides[2] = {1, 1};
      out.raw()->strides = strides;
      CHECK_FALSE(portable::add_out(ctx, a, b, 1, out));
      CHECK_ERROR(ctx, "out has strides [1, 1], which are not a dense layout of sizes [2, 3]");
    }
    SECTION("a negative size") {
      const int64_t sizes[1] = {-3};
      b.raw()->sizes = sizes;
      CHECK_FALSE(portable::add_out(ctx, a, b, 1, out));
      CHECK_ERROR(ctx, "other has a negative size -3 in dimension 0");
    }
    SECTION("misaligned data") {
      std::vector<float> buffer(4, 1.0f);
      b.raw()->data = reinterpret_cast<char*>(buffer.data()) + 2;
      CHECK_FALSE(portable::add_out(ctx, a, b, 1, out));
      CHECK_ERROR(ctx, "other data at", "is not aligned to its 4-byte elements");
    }
    SECTION("an invalid dtype code") {
      b.raw()->dtype = 99;
      CHECK_FALSE(portable::mul_out(ctx, a, b, out));
      CHECK_ERROR(ctx, "other has an invalid dtype code 99");
    }
  }
}

TEST_CASE("sub: self - alpha * other, broadcasting and wrap-around", "[portable][sub]") {
  KernelContext ctx;
  SECTION("float32 with a bias row") {
    Owned<float> a({2, 3}, {1, 2, 3, 4, 5, 6});
    Owned<float> bias({3}, {0.5f, -1, 10});
    Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0));
    REQUIRE(portable::sub_out(ctx, a, bias, 1, out));
    CHECK(out.logical() == std::vector<float>{0.5f, 3, -7, 3.5f, 6, -4});
    REQUIRE(portable::sub_out(ctx, a, bias, 2, out));
    CHECK(out.logical() == std::vector<float>{0, 4, -17, 3, 7, -14});
  }
  SECTION("x - x is +0.0, and inf - inf is NaN") {
    const float inf = std::numeric_limits<float>::infinity();
    Owned<float> a({3}, {-0.0f, 2, inf});
    Owned<float> out({3}, {9, 9, 9});
    REQUIRE(portable::sub_out(ctx, a, a, 1, out));
    CHECK(bits_of(out.values[0]) == bits_of(0.0f));
    CHECK(out.values[1] == 0);
    CHECK(std::isnan(out.values[2]));
  }
  SECTION("uint8 wraps; alpha 1 is -alpha = 255") {
    Owned<uint8_t> a({2}, {5, 200});
    Owned<uint8_t> b({2}, {7, 100});
    Owned<uint8_t> out({2}, {0, 0});
    REQUIRE(portable::sub_out(ctx, a, b, 1, out));
    CHECK(out.values == std::vector<uint8_t>{254, 100});
  }
  SECTION("int8: alpha 128 negates to -128, which fits") {
    Owned<int8_t> a({1}, {5});
    Owned<int8_t> b({1}, {1});
    Owned<int8_t> out({1}, {0});
    REQUIRE(portable::sub_out(ctx, a, b, 128, out));
    CHECK(out.values[0] == -123);
  }
  SECTION("int64: the most negative alpha negates to itself, as aten") {
    Owned<int64_t> a({1}, {5});
    Owned<int64_t> b({1}, {1});
    Owned<int64_t> out({1}, {0});
    REQUIRE(portable::sub_out(ctx, a, b, std::numeric_limits<int64_t>::min(), out));
    CHECK(out.values[0] == std::numeric_limits<int64_t>::min() + 5);
  }
}

TEST_CASE("Scalar operands: converted as aten converts a wrapped number", "[portable][add][sub][mul][div]") {
  KernelContext ctx;
  SECTION("float32: the operand rounds to float32, one beyond its range is infinite") {
    Owned<float> x({3}, {1, -2, 0.5f});
    Owned<float> out({3}, {0, 0, 0});
    REQUIRE(portable::add_scalar_out(ctx, x, 0.1, 1, out));
    CHECK(out.values == std::vector<float>{1 + 0.1f, -2 + 0.1f, 0.5f + 0.1f});
    REQUIRE(portable::mul_scalar_out(ctx, x, 1e300, out));
    CHECK(out.values[0] == std::numeric_limits<float>::infinity());
    REQUIRE(portable::div_scalar_out(ctx, x, 1e300, out));
    CHECK(out.values[0] == 0);
    REQUIRE(portable::sub_scalar_out(ctx, x, 3, 2, out));
    CHECK(out.values == std::vector<float>{-5, -8, -5.5f});
    REQUIRE(portable::div_scalar_out(ctx, x, 3, out));
    CHECK(out.values == std::vector<float>{1 / 3.0f, -2 / 3.0f, 0.5f / 3.0f});
  }
  SECTION("integers: an operand beyond the dtype wraps; alpha is checked") {
    Owned<int8_t> x({3}, {1, 2, 3});
    Owned<int8_t> out({3}, {0, 0, 0});
    REQUIRE(portable::add_scalar_out(ctx, x, 300, 1, out));
    CHECK(out.values == std::vector<int8_t>{45, 46, 47});
    REQUIRE(portable::mul_scalar_out(ctx, x, 300, out));
    CHECK(out.values == std::vector<int8_t>{44, 88, -124});
    REQUIRE(portable::sub_scalar_out(ctx, x, -129, 1, out));  // -129 wraps to 127
    CHECK(out.values == std::vector<int8_t>{-126, -125, -124});
    CHECK_FALSE(portable::add_scalar_out(ctx, x, 1, 300, out));
    CHECK_ERROR(ctx, "aten::add.Scalar_out", "alpha = 300 cannot be converted to int8 without overflow");
  }
  SECTION("uint8 with a huge operand") {
    Owned<uint8_t> x({1}, {5});
    Owned<uint8_t> out({1}, {0});
    REQUIRE(portable::add_scalar_out(ctx, x, int64_t{(int64_t{1} << 40) + 3}, 1, out));
    CHECK(out.values[0] == 8);
  }
  SECTION("in place, and a 0-dim self") {
    Owned<double> x({2}, {1.5, -4});
    REQUIRE(portable::mul_scalar_out(ctx, x, -2, x));
    CHECK(x.values == std::vector<double>{-3, 8});
    Owned<int32_t> scalar({}, {7});
    Owned<int32_t> scalar_out({}, {0});
    REQUIRE(portable::sub_scalar_out(ctx, scalar, 10, 1, scalar_out));
    CHECK(scalar_out.values[0] == -3);
  }
}

TEST_CASE("div: true division of floats, IEEE special cases", "[portable][div]") {
  const float inf = std::numeric_limits<float>::infinity();
  Owned<float> a({2, 3}, {1, -1, 0, 6, 1, -0.0f});
  Owned<float> b({3}, {0, 0, 0});
  Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 9));
  KernelContext ctx;
  REQUIRE(portable::div_out(ctx, a, b, out));
  CHECK(out.values[0] == inf);
  CHECK(out.values[1] == -inf);
  CHECK(std::isnan(out.values[2]));
  Owned<float> c({3}, {3, 0.5f, -inf});
  REQUIRE(portable::div_out(ctx, a, c, out));
  CHECK(bits_of(out.logical()) == bits_of(std::vector<float>{1 / 3.0f, -2, -0.0f, 2, 2, 0.0f}));
}

TEST_CASE("sub, Scalar overloads and div: errors", "[portable][sub][div][errors]") {
  Owned<float> a({2, 3}, Owned<float>::filled({2, 3}, 1));
  Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0));
  Owned<int32_t> ints({2}, {1, 2});
  Owned<int32_t> int_out({2}, {0, 0});
  KernelContext ctx;
  SECTION("div refuses integers: the result would be floating point") {
    CHECK_FALSE(portable::div_out(ctx, ints, ints, int_out));
    CHECK_ERROR(ctx, "aten::div.out", "self has dtype int32, which is not supported; expected one of float32, float64");
    ctx.reset();
    CHECK_FALSE(portable::div_scalar_out(ctx, ints, 2, int_out));
    CHECK_ERROR(ctx, "aten::div.Scalar_out", "self has dtype int32");
  }
  SECTION("a floating operand for an integral self") {
    CHECK_FALSE(portable::mul_scalar_out(ctx, ints, 2.5, int_out));
    CHECK_ERROR(ctx, "aten::mul.Scalar_out", "other = 2.5 is a floating point number", "dtypes are not promoted");
    CHECK(int_out.values == std::vector<int32_t>{0, 0});
  }
  SECTION("sub checks the negated alpha") {
    Owned<int8_t> i({1}, {1});
    Owned<int8_t> i_out({1}, {0});
    CHECK_FALSE(portable::sub_out(ctx, i, i, -128, i_out));
    CHECK_ERROR(ctx, "aten::sub.out", "-alpha = 128 cannot be converted to int8 without overflow");
  }
  SECTION("the Scalar overloads: out of another shape or dtype") {
    Owned<float> wrong({3}, {0, 0, 0});
    CHECK_FALSE(portable::add_scalar_out(ctx, a, 1, 1, wrong));
    CHECK_ERROR(ctx, "aten::add.Scalar_out", "out has shape [3], expected [2, 3] (the shape of self)");
    ctx.reset();
    Owned<double> wide({2, 3}, Owned<double>::filled({2, 3}, 0));
    CHECK_FALSE(portable::sub_scalar_out(ctx, a, 1, 1, wide));
    CHECK_ERROR(ctx, "aten::sub.Scalar_out", "out has dtype float64, expected float32");
  }
  SECTION("bool is refused, as aten refuses bool subtraction") {
    Owned<uint8_t> b({2}, {0, 1});
    b.retype(DType::Bool);
    CHECK_FALSE(portable::sub_out(ctx, b, b, 1, b));
    CHECK_ERROR(ctx, "aten::sub.out", "self has dtype bool, which is not supported");
  }
}
