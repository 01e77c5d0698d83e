// where and masked_fill: broadcasting, every element size, in place
// (masked_fill writes only the masked elements), value conversion, errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

TEST_CASE("where picks self or other with all three broadcast", "[portable][select]") {
  Mask condition({2, 1}, {1, 0});
  Owned<int64_t> self({3}, {1, 2, 3});
  Owned<int64_t> other({}, {-1});
  Owned<int64_t> out({2, 3}, Owned<int64_t>::filled({2, 3}, 0));
  KernelContext ctx;
  REQUIRE(portable::where_self_out(ctx, condition, self, other, out));
  CHECK(out.values == std::vector<int64_t>{1, 2, 3, -1, -1, -1});
}

TEST_CASE("masked_fill: a causal mask of -inf, in place", "[portable][select]") {
  Owned<float> scores({2, 2}, {1, 2, 3, 4});
  Mask causal({2, 2}, {0, 1, 0, 0});
  KernelContext ctx;
  REQUIRE(portable::masked_fill_scalar_out(ctx, scores, causal, -std::numeric_limits<double>::infinity(), scores));
  CHECK(scores.values == std::vector<float>{1, -std::numeric_limits<float>::infinity(), 3, 4});
}

TEST_CASE("masked_fill converts the value as PyTorch's Scalar::to", "[portable][select]") {
  KernelContext ctx;
  Owned<int32_t> x({2}, {5, 6});
  Mask mask({1}, {1});
  Owned<int32_t> out({2}, {0, 0});
  REQUIRE(portable::masked_fill_scalar_out(ctx, x, mask, 2.75, out));
  CHECK(out.values == std::vector<int32_t>{2, 2});
  CHECK_FALSE(portable::masked_fill_scalar_out(ctx, x, mask, int64_t{1} << 40, out));
  CHECK(failed_with(ctx, {"aten::masked_fill.Scalar_out", "value", "int32"}));
}

TEST_CASE("selection errors name the operator and the argument", "[portable][select]") {
  KernelContext ctx;
  Owned<float> x({2}, {1, 2});
  Owned<float> out({2}, {0, 0});
  Owned<float> not_a_mask({2}, {1, 0});
  CHECK_FALSE(portable::where_self_out(ctx, not_a_mask, x, x, out));
  CHECK(failed_with(ctx, {"aten::where.self_out", "condition", "bool"}));
  ctx.reset();
  Mask wide({3}, {0, 1, 0});
  CHECK_FALSE(portable::masked_fill_scalar_out(ctx, x, wide, 0, out));
  CHECK(failed_with(ctx, {"aten::masked_fill.Scalar_out", "mask", "[3]", "[2]"}));
  ctx.reset();
  Owned<float> other({3}, {0, 0, 0});
  Mask condition({2}, {1, 0});
  CHECK_FALSE(portable::where_self_out(ctx, condition, x, other, out));
  CHECK(failed_with(ctx, {"aten::where.self_out", "other", "[3]"}));
}
