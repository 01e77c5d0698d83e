// aten::view_copy.out, aten::permute_copy.out and
// aten::slice_copy.Tensor_out: every dtype's bytes, -1 inference, slice
// bounds, logical order across layouts, zero sizes and errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "simd_targets.h"
#include "test_util.h"

TEST_CASE("view_copy: reshapes in logical order", "[portable][view_copy]") {
  KernelContext ctx;
  SECTION("[2, 3] to [3, 2]") {
    Owned<float> x({2, 3}, {1, 2, 3, 4, 5, 6});
    Owned<float> out({3, 2}, Owned<float>::filled({3, 2}, 0));
    REQUIRE(portable::view_copy_out(ctx, x, Sizes{3, 2}, out));
    CHECK(out.values == std::vector<float>{1, 2, 3, 4, 5, 6});
  }
  SECTION("-1 is inferred") {
    Owned<int64_t> x({2, 3, 4}, iota_values(24));
    Owned<int64_t> out({2, 12}, Owned<int64_t>::filled({2, 12}, 0));
    REQUIRE(portable::view_copy_out(ctx, x, Sizes{2, -1}, out));
    CHECK(out.values == iota_values(24));
    Owned<int64_t> flat({24}, Owned<int64_t>::filled({24}, 0));
    REQUIRE(portable::view_copy_out(ctx, x, Sizes{-1}, flat));
    CHECK(flat.values == iota_values(24));
  }
  SECTION("a column-major self is read in logical order") {
    Owned<float> x({2, 3}, {1, 2, 3, 4, 5, 6}, {1, 0});
    REQUIRE(x.values == std::vector<float>{1, 4, 2, 5, 3, 6});
    Owned<float> out({6}, Owned<float>::filled({6}, 0));
    REQUIRE(portable::view_copy_out(ctx, x, Sizes{6}, out));
    CHECK(out.values == std::vector<float>{1, 2, 3, 4, 5, 6});
  }
  SECTION("a column-major out is written in logical order") {
    Owned<float> x({6}, {1, 2, 3, 4, 5, 6});
    Owned<float> out({3, 2}, Owned<float>::filled({3, 2}, 0), {1, 0});
    REQUIRE(portable::view_copy_out(ctx, x, Sizes{3, 2}, out));
    CHECK(out.logical() == std::vector<float>{1, 2, 3, 4, 5, 6});
  }
  SECTION("out may be self itself") {
    Owned<float> x({2, 2}, {1, 2, 3, 4});
    et_ops::Tensor same(DType::Float32, x.values.data(), {4});
    REQUIRE(portable::view_copy_out(ctx, x, Sizes{4}, same));
    CHECK(x.values == std::vector<float>{1, 2, 3, 4});
  }
  SECTION("0-dim to [1, 1] and back") {
    Owned<double> x({}, {2.5});
    Owned<double> out({1, 1}, {0});
    REQUIRE(portable::view_copy_out(ctx, x, Sizes{1, 1}, out));
    CHECK(out.values[0] == 2.5);
    Owned<double> back({}, {0});
    REQUIRE(portable::view_copy_out(ctx, out, Sizes{}, back));
    CHECK(back.values[0] == 2.5);
  }
  SECTION("zero sizes") {
    Owned<float> x({0, 3}, {});
    Owned<float> out({3, 0}, {});
    CHECK(portable::view_copy_out(ctx, x, Sizes{3, 0}, out));
    Owned<float> inferred({0, 3}, {});
    CHECK(portable::view_copy_out(ctx, x, Sizes{-1, 3}, inferred));
  }
}

TEST_CASE("view_copy: the stride of a size-1 dimension is never used", "[portable][view_copy]") {
  KernelContext ctx;
  // Column-major [2, 1, 3] whose size-1 dimension carries an extreme stride:
  // it is still a dense layout, and walking it must never step by it.
  Owned<int32_t> x({2, 1, 3}, {1, 2, 3, 4, 5, 6}, {2, 1, 0});
  const int64_t strides[3] = {1, std::numeric_limits<int64_t>::max(), 2};
  x.tensor.raw()->strides = strides;
  Owned<int32_t> out({6}, Owned<int32_t>::filled({6}, 0));
  REQUIRE(portable::view_copy_out(ctx, x, Sizes{6}, out));
  CHECK(out.values == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("view_copy and permute_copy: bytes of every dtype move unchanged", "[portable][view_copy][permute_copy]") {
  KernelContext ctx;
  for (DType dtype : {DType::Float16, DType::BFloat16, DType::Int16, DType::UInt16}) {
    Owned<uint16_t> x({2, 2}, {0x7E00, 0x8001, 0xFFFF, 0x1234});
    Owned<uint16_t> out({2, 2}, {0, 0, 0, 0});
    x.retype(dtype);
    out.retype(dtype);
    REQUIRE(portable::permute_copy_out(ctx, x, Sizes{1, 0}, out));
    CHECK(out.values == std::vector<uint16_t>{0x7E00, 0xFFFF, 0x8001, 0x1234});
  }
  for (DType dtype : {DType::Bool, DType::UInt8, DType::Int8}) {
    Owned<uint8_t> x({4}, {1, 0, 0xFF, 0x80});
    Owned<uint8_t> out({2, 2}, {9, 9, 9, 9}, {1, 0});
    x.retype(dtype);
    out.retype(dtype);
    REQUIRE(portable::view_copy_out(ctx, x, Sizes{2, 2}, out));
    CHECK(out.logical() == std::vector<uint8_t>{1, 0, 0xFF, 0x80});
  }
  Owned<double> d({3}, {0.1, -0.0, 1e300});
  Owned<double> dout({3, 1}, {0, 0, 0});
  REQUIRE(portable::view_copy_out(ctx, d, Sizes{3, 1}, dout));
  CHECK(et_ops::test::bits_of(dout.values) == et_ops::test::bits_of(d.values));
}

TEST_CASE("permute_copy: permutes dimensions", "[portable][permute_copy]") {
  KernelContext ctx;
  SECTION("transpose") {
    Owned<float> x({2, 3}, {1, 2, 3, 4, 5, 6});
    Owned<float> out({3, 2}, Owned<float>::filled({3, 2}, 0));
    REQUIRE(portable::permute_copy_out(ctx, x, Sizes{1, 0}, out));
    CHECK(out.values == std::vector<float>{1, 4, 2, 5, 3, 6});
  }
  SECTION("3-D with negative dims: out[i, j, k] = self[j, k, i]") {
    Owned<int32_t> x({2, 3, 4}, [] {
      std::vector<int32_t> v(24);
      for (int32_t i = 0; i < 24; ++i) v[static_cast<std::size_t>(i)] = i;
      return v;
    }());
    Owned<int32_t> out({4, 2, 3}, Owned<int32_t>::filled({4, 2, 3}, -1));
    REQUIRE(portable::permute_copy_out(ctx, x, Sizes{-1, 0, 1}, out));
    for (int32_t i = 0; i < 4; ++i)
      for (int32_t j = 0; j < 2; ++j)
        for (int32_t k = 0; k < 3; ++k) CHECK(out.values[static_cast<std::size_t>(i * 6 + j * 3 + k)] == j * 12 + k * 4 + i);
  }
  SECTION("NCHW to NHWC, from a channels-last self into a column-major out") {
    std::vector<float> logical(12);
    for (std::size_t i = 0; i < 12; ++i) logical[i] = static_cast<float>(i);
    Owned<float> x({1, 2, 2, 3}, logical, {0, 2, 3, 1});
    Owned<float> out({1, 2, 3, 2}, Owned<float>::filled({1, 2, 3, 2}, 0), {3, 2, 1, 0});
    REQUIRE(portable::permute_copy_out(ctx, x, Sizes{0, 2, 3, 1}, out));
    const auto result = out.logical();
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t w = 0; w < 3; ++w)
        for (int64_t c = 0; c < 2; ++c) CHECK(result[h * 6 + w * 2 + c] == logical[c * 6 + h * 3 + w]);
  }
  SECTION("the last two dimensions of a large tensor swap (copied in tiles), every element size") {
    // sizes that leave partial tiles on both sides, and an outer dimension
    const int64_t heads = 3, rows = 37, columns = 70;
    std::vector<int64_t> values(static_cast<std::size_t>(heads * rows * columns));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i) * 7 + 1;
    const auto check = [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> typed(values.begin(), values.end());
      Owned<T> x({1, heads, rows, columns}, typed);
      Owned<T> out({1, heads, columns, rows}, Owned<T>::filled({1, heads, columns, rows}, T(0)));
      REQUIRE(portable::permute_copy_out(ctx, x, Sizes{0, 1, 3, 2}, out));
      bool all_equal = true;
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t c = 0; c < columns; ++c)
          for (int64_t r = 0; r < rows; ++r)
            all_equal = all_equal && out.values[static_cast<std::size_t>((h * columns + c) * rows + r)] ==
                                         typed[static_cast<std::size_t>((h * rows + r) * columns + c)];
      CHECK(all_equal);
    };
    check(int8_t{0});
    check(int16_t{0});
    check(float{0});
    check(int64_t{0});
  }
  SECTION("0-dim with no dims") {
    Owned<int64_t> x({}, {42});
    Owned<int64_t> out({}, {0});
    REQUIRE(portable::permute_copy_out(ctx, x, Sizes{}, out));
    CHECK(out.values[0] == 42);
  }
  SECTION("zero size") {
    Owned<float> x({2, 0, 3}, {});
    Owned<float> out({3, 2, 0}, {});
    CHECK(portable::permute_copy_out(ctx, x, Sizes{2, 0, 1}, out));
  }
}

TEST_CASE("view_copy: errors", "[portable][view_copy][errors]") {
  Owned<float> x({2, 3}, {1, 2, 3, 4, 5, 6});
  Owned<float> out({6}, Owned<float>::filled({6}, 0));
  KernelContext ctx;
  SECTION("two -1") {
    CHECK_FALSE(portable::view_copy_out(ctx, x, Sizes{-1, -1}, out));
    CHECK_ERROR(ctx, "aten::view_copy.out", "size [-1, -1] has more than one -1");
  }
  SECTION("a negative size") {
    CHECK_FALSE(portable::view_copy_out(ctx, x, Sizes{-2, -3}, out));
    CHECK_ERROR(ctx, "size [-2, -3] has an invalid entry -2 at index 0");
  }
  SECTION("a size of another numel") {
    CHECK_FALSE(portable::view_copy_out(ctx, x, Sizes{7}, out));
    CHECK_ERROR(ctx, "size [7] holds 7 elements, but self has 6");
  }
  SECTION("a -1 that does not divide") {
    CHECK_FALSE(portable::view_copy_out(ctx, x, Sizes{4, -1}, out));
    CHECK_ERROR(ctx, "size [4, -1] is invalid for self with 6 elements");
  }
  SECTION("an ambiguous -1") {
    Owned<float> empty({0}, {});
    CHECK_FALSE(portable::view_copy_out(ctx, empty, Sizes{0, -1}, out));
    CHECK_ERROR(ctx, "size [0, -1] is ambiguous");
  }
  SECTION("too many dimensions") {
    CHECK_FALSE(portable::view_copy_out(ctx, x, Sizes(17, 1), out));
    CHECK_ERROR(ctx, "size has 17 entries; at most 16");
  }
  SECTION("out of another shape") {
    Owned<float> wrong({3, 2}, Owned<float>::filled({3, 2}, 0));
    CHECK_FALSE(portable::view_copy_out(ctx, x, Sizes{6}, wrong));
    CHECK_ERROR(ctx, "out has shape [3, 2], expected [6]");
  }
  SECTION("out of another dtype") {
    Owned<int32_t> wrong({6}, Owned<int32_t>::filled({6}, 0));
    CHECK_FALSE(portable::view_copy_out(ctx, x, Sizes{6}, wrong));
    CHECK_ERROR(ctx, "out has dtype int32, expected float32");
  }
  SECTION("out partially overlapping self") {
    std::vector<float> buffer(7, 3.0f);
    et_ops::Tensor self(DType::Float32, buffer.data(), {6});
    et_ops::Tensor shifted(DType::Float32, buffer.data() + 1, {2, 3});
    CHECK_FALSE(portable::view_copy_out(ctx, self, Sizes{2, 3}, shifted));
    CHECK_ERROR(ctx, "out overlaps self in memory");
  }
  SECTION("a malformed int list") {
    CHECK_FALSE(portable::view_copy_out(ctx, x, portable::IntList(nullptr, 2), out));
    CHECK_ERROR(ctx, "size is a malformed int list");
  }
}

TEST_CASE("permute_copy: errors", "[portable][permute_copy][errors]") {
  Owned<float> x({2, 3}, {1, 2, 3, 4, 5, 6});
  Owned<float> out({3, 2}, Owned<float>::filled({3, 2}, 0));
  KernelContext ctx;
  SECTION("dims of the wrong length") {
    CHECK_FALSE(portable::permute_copy_out(ctx, x, Sizes{1, 0, 2}, out));
    CHECK_ERROR(ctx, "aten::permute_copy.out", "dims [1, 0, 2] has 3 entries, but self is 2-D");
  }
  SECTION("a dim out of range") {
    CHECK_FALSE(portable::permute_copy_out(ctx, x, Sizes{2, 0}, out));
    CHECK_ERROR(ctx, "dims [2, 0] has entry 2 out of range for a 2-D self");
    ctx.reset();
    CHECK_FALSE(portable::permute_copy_out(ctx, x, Sizes{-3, 0}, out));
    CHECK_ERROR(ctx, "entry -3 out of range");
  }
  SECTION("a repeated dim") {
    CHECK_FALSE(portable::permute_copy_out(ctx, x, Sizes{1, -1}, out));
    CHECK_ERROR(ctx, "dims [1, -1] repeats dimension 1");
  }
  SECTION("out of another shape") {
    Owned<float> wrong({2, 3}, Owned<float>::filled({2, 3}, 0));
    CHECK_FALSE(portable::permute_copy_out(ctx, x, Sizes{1, 0}, wrong));
    CHECK_ERROR(ctx, "out has shape [2, 3], expected [3, 2]");
  }
  SECTION("out of another dtype") {
    Owned<double> wrong({3, 2}, Owned<double>::filled({3, 2}, 0));
    CHECK_FALSE(portable::permute_copy_out(ctx, x, Sizes{1, 0}, wrong));
    CHECK_ERROR(ctx, "out has dtype float64, expected float32");
  }
  SECTION("out sharing self's memory") {
    et_ops::Tensor same(DType::Float32, x.values.data(), {3, 2});
    CHECK_FALSE(portable::permute_copy_out(ctx, x, Sizes{1, 0}, same));
    CHECK_ERROR(ctx, "out overlaps self in memory");
    CHECK(x.values == std::vector<float>{1, 2, 3, 4, 5, 6});
  }
}

// ---- slice_copy ----

namespace {

bool slice(KernelContext& ctx, TensorRef self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
           int64_t step, TensorRef out) {
  return portable::slice_copy_out(ctx, self, dim, start, end, step, out);
}

}  // namespace

TEST_CASE("slice_copy: Python slice semantics along one dimension", "[portable][slice_copy]") {
  KernelContext ctx;
  Owned<int32_t> x({2, 6}, {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15});
  SECTION("start:end:step") {
    Owned<int32_t> out({2, 2}, {0, 0, 0, 0});
    REQUIRE(slice(ctx, x, 1, 1, 5, 2, out));
    CHECK(out.logical() == std::vector<int32_t>{1, 3, 11, 13});
  }
  SECTION("none means the ends; negative values count from the end") {
    Owned<int32_t> out({2, 2}, {0, 0, 0, 0});
    REQUIRE(slice(ctx, x, -1, -2, std::nullopt, 1, out));
    CHECK(out.logical() == std::vector<int32_t>{4, 5, 14, 15});
    Owned<int32_t> all({2, 6}, Owned<int32_t>::filled({2, 6}, 0));
    REQUIRE(slice(ctx, x, 1, std::nullopt, std::nullopt, 1, all));
    CHECK(all.logical() == x.logical());
  }
  SECTION("bounds beyond the size are clamped; an end before the start keeps nothing") {
    Owned<int32_t> out({2, 3}, Owned<int32_t>::filled({2, 3}, 0));
    REQUIRE(slice(ctx, x, 1, -100, 100, 2, out));
    CHECK(out.logical() == std::vector<int32_t>{0, 2, 4, 10, 12, 14});
    Owned<int32_t> empty({2, 0}, {});
    REQUIRE(slice(ctx, x, 1, 4, 2, 1, empty));
    REQUIRE(slice(ctx, x, 1, std::numeric_limits<int64_t>::max(), std::nullopt, 1, empty));
  }
  SECTION("chunk of the first dimension, from a column-major self") {
    Owned<int32_t> column_major({2, 6}, x.logical(), {1, 0});
    Owned<int32_t> out({1, 6}, Owned<int32_t>::filled({1, 6}, 0));
    REQUIRE(slice(ctx, column_major, 0, 1, 2, 1, out));
    CHECK(out.logical() == std::vector<int32_t>{10, 11, 12, 13, 14, 15});
  }
  SECTION("a huge step keeps the first element") {
    Owned<int32_t> out({2, 1}, {0, 0});
    REQUIRE(slice(ctx, x, 1, 2, std::nullopt, std::numeric_limits<int64_t>::max(), out));
    CHECK(out.logical() == std::vector<int32_t>{2, 12});
  }
  SECTION("channels: x[:, 1:3] of a channels-last NCHW tensor") {
    std::vector<float> values(2 * 4 * 2 * 2);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    Owned<float> nchw({2, 4, 2, 2}, values, {0, 2, 3, 1});
    Owned<float> out({2, 2, 2, 2}, Owned<float>::filled({2, 2, 2, 2}, 0));
    REQUIRE(slice(ctx, nchw, 1, 1, 3, 1, out));
    CHECK(out.logical() == std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11, 20, 21, 22, 23, 24, 25, 26, 27});
  }
}

TEST_CASE("slice_copy: errors", "[portable][slice_copy][errors]") {
  KernelContext ctx;
  Owned<float> x({2, 6}, Owned<float>::filled({2, 6}, 1));
  Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0));
  SECTION("a step that is not positive") {
    CHECK_FALSE(slice(ctx, x, 1, 0, 6, 0, out));
    CHECK_ERROR(ctx, "aten::slice_copy.Tensor_out", "step = 0 must be positive");
  }
  SECTION("a dim out of range, a 0-dim self") {
    CHECK_FALSE(slice(ctx, x, 2, 0, 3, 1, out));
    CHECK_ERROR(ctx, "dim = 2 is out of range for a 2-D tensor");
    ctx.reset();
    Owned<float> scalar({}, {1});
    CHECK_FALSE(slice(ctx, scalar, 0, 0, 1, 1, scalar));
    CHECK_ERROR(ctx, "self is 0-dim");
  }
  SECTION("out of another shape or dtype, or overlapping self") {
    CHECK_FALSE(slice(ctx, x, 1, 0, 4, 1, out));
    CHECK_ERROR(ctx, "out has shape [2, 3], expected [2, 4] (self's shape with the sliced length)");
    ctx.reset();
    Owned<int32_t> ints({2, 3}, Owned<int32_t>::filled({2, 3}, 0));
    CHECK_FALSE(slice(ctx, x, 1, 0, 3, 1, ints));
    CHECK_ERROR(ctx, "out has dtype int32, expected float32");
    ctx.reset();
    std::vector<float> buffer(12, 1.0f);
    et_ops::Tensor self(DType::Float32, buffer.data(), {12});
    et_ops::Tensor aliased(DType::Float32, buffer.data() + 6, {6});
    CHECK_FALSE(slice(ctx, self, 0, 0, 6, 1, aliased));
    CHECK_ERROR(ctx, "out overlaps self in memory");
  }
}

TEST_CASE("expand_copy and select_copy", "[portable][copy]") {
  KernelContext ctx;
  Owned<int64_t> x({2, 1}, {1, 2});
  Owned<int64_t> wide({3, 2, 2}, Owned<int64_t>::filled({3, 2, 2}, 0));
  const std::vector<int64_t> size = {3, -1, 2};
  REQUIRE(portable::expand_copy_out(ctx, x, size, false, wide));
  CHECK(wide.values == std::vector<int64_t>{1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2});
  const std::vector<int64_t> bad = {3, 3, 2};
  CHECK_FALSE(portable::expand_copy_out(ctx, x, bad, false, wide));
  CHECK(et_ops::test::failed_with(ctx, {"aten::expand_copy.out", "size [3, 3, 2]", "entry 1"}));
  ctx.reset();
  Owned<int64_t> plane({2, 2}, Owned<int64_t>::filled({2, 2}, 0));
  REQUIRE(portable::select_copy_int_out(ctx, wide, 0, -1, plane));
  CHECK(plane.values == std::vector<int64_t>{1, 1, 2, 2});
  CHECK_FALSE(portable::select_copy_int_out(ctx, wide, 2, 2, plane));
  CHECK(et_ops::test::failed_with(ctx, {"aten::select_copy.int_out", "index = 2", "size 2"}));
}

TEST_CASE("copy: broadcasts src into self's shape and converts to out's dtype, in place", "[portable][copy]") {
  KernelContext ctx;
  Owned<float> state({2, 3}, Owned<float>::filled({2, 3}, 9));
  Owned<float> src({3}, {1.5f, -2.5f, 3});
  REQUIRE(portable::copy_out(ctx, state, src, false, state));
  CHECK(state.values == std::vector<float>{1.5f, -2.5f, 3, 1.5f, -2.5f, 3});
  Owned<int64_t> ints({2, 3}, Owned<int64_t>::filled({2, 3}, 0));
  REQUIRE(portable::copy_out(ctx, state, state, false, ints));
  CHECK(ints.values == std::vector<int64_t>{1, -2, 3, 1, -2, 3});
  Owned<float> special({3}, {std::nanf(""), 1e30f, -1e30f});
  Owned<int32_t> narrow({3}, {0, 0, 0});
  REQUIRE(portable::copy_out(ctx, special, special, false, narrow));  // x86's conversion: the lowest int32
  CHECK(narrow.values == std::vector<int32_t>(3, std::numeric_limits<int32_t>::min()));
  Owned<float> too_big({4}, {0, 0, 0, 0});
  CHECK_FALSE(portable::copy_out(ctx, state, too_big, false, state));
  CHECK(et_ops::test::failed_with(ctx, {"aten::copy.out", "src", "[4]", "[2, 3]"}));
}

TEST_CASE("copy: bfloat16 from float32 rounds to nearest even, and widens exactly", "[portable][copy]") {
  KernelContext ctx;
  const std::vector<float> values = {1.0f, 1.00390625f, 1.01171875f, std::nanf(""), -INFINITY, 3.3961e38f, -0.0f, 1e-40f};
  Owned<float> src({8}, values);
  Owned<et_ops::BFloat16> narrow({8}, std::vector<et_ops::BFloat16>(8));
  REQUIRE(portable::copy_out(ctx, src, src, false, narrow));
  std::vector<uint16_t> bits;
  for (const et_ops::BFloat16& b : narrow.values) bits.push_back(b.bits);
  CHECK((bits[3] & 0x7F80u) == 0x7F80u);  // NaN stays a NaN
  CHECK((bits[3] & 0x007Fu) != 0u);
  bits[3] = 0;
  CHECK(bits == std::vector<uint16_t>{0x3F80, 0x3F80, 0x3F82, 0, 0xFF80, 0x7F7F, 0x8000, 0x0001});
  Owned<float> back({8}, Owned<float>::filled({8}, 0));
  REQUIRE(portable::copy_out(ctx, narrow, narrow, false, back));
  CHECK(back.values[2] == 1.015625f);
  CHECK(back.values[7] == et_ops::BFloat16::from_bits(1).to_float());
  CHECK(std::isnan(back.values[3]));
  Owned<et_ops::Half> half({8}, std::vector<et_ops::Half>(8));
  REQUIRE(portable::copy_out(ctx, narrow, narrow, false, half));  // through float32
  CHECK(half.values[2].to_float() == 1.015625f);
  CHECK(half.values[5].bits == 0x7C00u);  // 3.39e38 overflows float16
}

namespace {
float float_of_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
uint32_t bits_of_float(float f) { return static_cast<uint32_t>(et_ops::test::bits_of(f)); }
// The first index where got and expected differ, -1 if none (a failure
// names one element instead of printing vectors of half a million).
template <typename T>
int64_t first_mismatch(const std::vector<T>& got, const std::vector<T>& expected) {
  if (got.size() != expected.size()) return 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != expected[i]) return static_cast<int64_t>(i);
  return -1;
}
}  // namespace

// Every float16 value, the floats halfway between neighbours (ties) and
// one ulp either side of them, the same around bfloat16's, and random bit
// patterns (NaN payloads, subnormals, overflow): narrowed as Half and
// BFloat16 do and widened back exactly, through the vectorised rows and
// through strided ones, on every SIMD target.
TEST_CASE("copy: float16 and bfloat16 conversions have the bits of Half and BFloat16 on every SIMD target",
          "[portable][copy]") {
  std::vector<float> x;
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t b = bits_of_float(et_ops::Half::from_bits(static_cast<uint16_t>(h)).to_float());
    for (uint32_t delta : {0u, 0x0FFFu, 0x1000u, 0x1001u, 0x7FFFu, 0x8000u, 0x8001u}) x.push_back(float_of_bits(b + delta));
  }
  auto rng = et_ops::test::seeded_rng(21);
  for (int i = 0; i < 100000; ++i) x.push_back(float_of_bits(static_cast<uint32_t>(rng())));
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint16_t> half_bits, bfloat_bits;
  for (float f : x) {
    half_bits.push_back(et_ops::Half::from_float(f).bits);
    bfloat_bits.push_back(et_ops::BFloat16::from_float(f).bits);
  }
  std::vector<uint16_t> every(65536);
  for (uint32_t h = 0; h < 65536; ++h) every[h] = static_cast<uint16_t>(h);
  const auto halves_of = [](const std::vector<uint16_t>& b) {
    std::vector<et_ops::Half> out;
    for (uint16_t v : b) out.push_back(et_ops::Half::from_bits(v));
    return out;
  };
  const auto bfloats_of = [](const std::vector<uint16_t>& b) {
    std::vector<et_ops::BFloat16> out;
    for (uint16_t v : b) out.push_back(et_ops::BFloat16::from_bits(v));
    return out;
  };
  std::vector<uint32_t> from_half, from_bfloat;
  for (uint16_t h : every) {
    from_half.push_back(bits_of_float(et_ops::Half::from_bits(h).to_float()));
    from_bfloat.push_back(bits_of_float(et_ops::BFloat16::from_bits(h).to_float()));
  }
  Owned<float> src({n}, x);
  Owned<float> rows({n / 7, 7}, std::vector<float>(x.begin(), x.begin() + n / 7 * 7));
  et_ops::test::for_each_simd_target([&] {
    KernelContext ctx;
    Owned<et_ops::Half> half({n}, std::vector<et_ops::Half>(static_cast<std::size_t>(n)));
    REQUIRE(portable::copy_out(ctx, src, src, false, half));
    std::vector<uint16_t> got;
    for (const auto& h : half.values) got.push_back(h.bits);
    CHECK(first_mismatch(got, half_bits) == -1);
    Owned<et_ops::BFloat16> bfloat({n}, std::vector<et_ops::BFloat16>(static_cast<std::size_t>(n)));
    REQUIRE(portable::copy_out(ctx, src, src, false, bfloat));
    got.clear();
    for (const auto& b : bfloat.values) got.push_back(b.bits);
    CHECK(first_mismatch(got, bfloat_bits) == -1);
    // A column-major out: one element at a time.
    Owned<et_ops::Half> strided({n / 7, 7}, std::vector<et_ops::Half>(static_cast<std::size_t>(n / 7 * 7)), {1, 0});
    REQUIRE(portable::copy_out(ctx, rows, rows, false, strided));
    got.clear();
    for (const auto& h : strided.logical()) got.push_back(h.bits);
    CHECK(first_mismatch(got, std::vector<uint16_t>(half_bits.begin(), half_bits.begin() + n / 7 * 7)) == -1);
    Owned<et_ops::Half> halves({65536}, halves_of(every));
    Owned<et_ops::BFloat16> bfloats({65536}, bfloats_of(every));
    Owned<float> wide({65536}, std::vector<float>(65536));
    REQUIRE(portable::copy_out(ctx, wide, halves, false, wide));
    std::vector<uint32_t> wide_bits;
    for (float f : wide.values) wide_bits.push_back(bits_of_float(f));
    CHECK(first_mismatch(wide_bits, from_half) == -1);
    REQUIRE(portable::copy_out(ctx, wide, bfloats, false, wide));
    wide_bits.clear();
    for (float f : wide.values) wide_bits.push_back(bits_of_float(f));
    CHECK(first_mismatch(wide_bits, from_bfloat) == -1);
  });
}
