// aten::upsample_nearest2d.out: PyTorch's source index rule (exact for equal
// and doubled sizes, float32 otherwise), scales, every dtype, layouts and
// every error.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

namespace {

bool upsample(KernelContext& ctx, TensorRef self, const Sizes& size, TensorRef out,
              std::optional<double> scales_h = std::nullopt, std::optional<double> scales_w = std::nullopt) {
  return portable::upsample_nearest2d_out(ctx, self, size, scales_h, scales_w, out);
}

}  // namespace

TEST_CASE("upsample_nearest2d: nearest source elements", "[portable][upsample_nearest2d]") {
  KernelContext ctx;
  Owned<int64_t> x({1, 1, 2, 3}, iota_values(6));
  SECTION("doubling repeats each element twice") {
    Owned<int64_t> out({1, 1, 4, 6}, Owned<int64_t>::filled({1, 1, 4, 6}, -1));
    REQUIRE(upsample(ctx, x, {4, 6}, out));
    CHECK(out.values == std::vector<int64_t>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 3, 3, 4, 4, 5, 5});
  }
  SECTION("other sizes: floor(o * in / out) in float32") {
    Owned<int64_t> out({1, 1, 3, 5}, Owned<int64_t>::filled({1, 1, 3, 5}, -1));
    REQUIRE(upsample(ctx, x, {3, 5}, out));
    CHECK(out.values == std::vector<int64_t>{0, 0, 1, 1, 2, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5});
  }
  SECTION("positive scales replace in / out; others are ignored") {
    Owned<int64_t> out({1, 1, 3, 5}, Owned<int64_t>::filled({1, 1, 3, 5}, -1));
    REQUIRE(upsample(ctx, x, {3, 5}, out, 1.3, 2.2));
    CHECK(out.values == std::vector<int64_t>{0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 3, 3, 3, 4, 4});
    REQUIRE(upsample(ctx, x, {3, 5}, out, -1.0, 0.0));
    CHECK(out.values == std::vector<int64_t>{0, 0, 1, 1, 2, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5});
  }
  SECTION("a scale whose inverse overflows float32 picks the first, then the last element") {
    Owned<int64_t> out({1, 1, 3, 5}, Owned<int64_t>::filled({1, 1, 3, 5}, -1));
    REQUIRE(upsample(ctx, x, {3, 5}, out, 1e-300, 1e-300));
    CHECK(out.values == std::vector<int64_t>{0, 2, 2, 2, 2, 3, 5, 5, 5, 5, 3, 5, 5, 5, 5});
  }
  SECTION("downsampling and equal sizes") {
    Owned<int64_t> big({1, 1, 4, 4}, iota_values(16));
    Owned<int64_t> out({1, 1, 2, 3}, Owned<int64_t>::filled({1, 1, 2, 3}, -1));
    REQUIRE(upsample(ctx, big, {2, 3}, out));
    CHECK(out.values == std::vector<int64_t>{0, 1, 2, 8, 9, 10});
    Owned<int64_t> same({1, 1, 4, 4}, Owned<int64_t>::filled({1, 1, 4, 4}, -1));
    REQUIRE(upsample(ctx, big, {4, 4}, same));
    CHECK(same.values == big.values);
  }
  SECTION("every dtype; an empty batch") {
    Owned<uint8_t> bytes({1, 1, 1, 2}, {7, 9});
    Owned<uint8_t> bytes_out({1, 1, 2, 4}, Owned<uint8_t>::filled({1, 1, 2, 4}, 0));
    bytes.retype(DType::Bool);
    bytes_out.retype(DType::Bool);
    REQUIRE(upsample(ctx, bytes, {2, 4}, bytes_out));
    CHECK(bytes_out.values == std::vector<uint8_t>{7, 7, 9, 9, 7, 7, 9, 9});
    Owned<double> empty({0, 2, 2, 2}, {});
    Owned<double> empty_out({0, 2, 4, 4}, {});
    CHECK(upsample(ctx, empty, {4, 4}, empty_out));
  }
  SECTION("channels-last tensors give the same elements") {
    Owned<int64_t> planes({2, 3, 2, 3}, iota_values(36), {0, 2, 3, 1});
    Owned<int64_t> contiguous({2, 3, 2, 3}, iota_values(36));
    Owned<int64_t> out({2, 3, 5, 7}, Owned<int64_t>::filled({2, 3, 5, 7}, -1), {0, 2, 3, 1});
    Owned<int64_t> expected({2, 3, 5, 7}, Owned<int64_t>::filled({2, 3, 5, 7}, -1));
    REQUIRE(upsample(ctx, planes, {5, 7}, out));
    REQUIRE(upsample(ctx, contiguous, {5, 7}, expected));
    CHECK(out.logical() == expected.logical());
  }
}

TEST_CASE("upsample_nearest2d: errors", "[portable][upsample_nearest2d][errors]") {
  KernelContext ctx;
  Owned<float> x({1, 1, 2, 2}, {1, 2, 3, 4});
  Owned<float> out({1, 1, 4, 4}, Owned<float>::filled({1, 1, 4, 4}, 0));
  SECTION("self not 4-D, or empty outside the batch") {
    Owned<float> planes({1, 2, 2}, {1, 2, 3, 4});
    CHECK_FALSE(upsample(ctx, planes, {4, 4}, out));
    CHECK_ERROR(ctx, "aten::upsample_nearest2d.out", "self must be 4-D [N, C, H, W], got shape [1, 2, 2]");
    ctx.reset();
    Owned<float> empty({1, 0, 2, 2}, {});
    CHECK_FALSE(upsample(ctx, empty, {4, 4}, out));
    CHECK_ERROR(ctx, "self of shape [1, 0, 2, 2] is empty in dimension 1");
  }
  SECTION("output_size of the wrong length, or not positive") {
    CHECK_FALSE(upsample(ctx, x, {4, 4, 4}, out));
    CHECK_ERROR(ctx, "output_size must hold 2 values greater than 0, got [4, 4, 4]");
    ctx.reset();
    CHECK_FALSE(upsample(ctx, x, {0, 4}, out));
    CHECK_ERROR(ctx, "output_size must hold 2 values greater than 0, got [0, 4]");
  }
  SECTION("out of another shape or dtype") {
    CHECK_FALSE(upsample(ctx, x, {3, 4}, out));
    CHECK_ERROR(ctx, "out has shape [1, 1, 4, 4], expected [1, 1, 3, 4]");
    ctx.reset();
    Owned<double> wide({1, 1, 4, 4}, Owned<double>::filled({1, 1, 4, 4}, 0));
    CHECK_FALSE(upsample(ctx, x, {4, 4}, wide));
    CHECK_ERROR(ctx, "out has dtype float64, expected float32");
  }
  SECTION("out overlapping self") {
    std::vector<float> buffer(20, 1.0f);
    et_ops::Tensor self(DType::Float32, buffer.data(), {1, 1, 2, 2});
    et_ops::Tensor aliased(DType::Float32, buffer.data() + 2, {1, 1, 3, 3});
    CHECK_FALSE(upsample(ctx, self, {3, 3}, aliased));
    CHECK_ERROR(ctx, "out overlaps self in memory");
  }
}
