// aten::cat.out: joining along each dimension, legacy empty tensors,
// every dtype, layouts, and every error.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

using et_ops::TensorList;

namespace {

// The raw tensors of a call, kept alive while the list points at them.
struct List {
  std::vector<et_ops_tensor*> raw;

  template <typename... T>
  explicit List(Owned<T>&... tensors) : raw{tensors.raw()...} {}
  TensorList view() const { return TensorList(et_ops_tensor_list{raw.data(), static_cast<int64_t>(raw.size())}); }
};

}  // namespace

TEST_CASE("cat: joins along a dimension", "[portable][cat]") {
  KernelContext ctx;
  Owned<int32_t> a({2, 2}, {1, 2, 3, 4});
  Owned<int32_t> b({1, 2}, {5, 6});
  Owned<int32_t> c({2, 3}, {7, 8, 9, 10, 11, 12});
  SECTION("dim 0") {
    Owned<int32_t> out({3, 2}, Owned<int32_t>::filled({3, 2}, 0));
    REQUIRE(portable::cat_out(ctx, List(a, b).view(), 0, out));
    CHECK(out.values == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  }
  SECTION("dim -1 (channels of a row-major matrix)") {
    Owned<int32_t> out({2, 5}, Owned<int32_t>::filled({2, 5}, 0));
    REQUIRE(portable::cat_out(ctx, List(a, c).view(), -1, out));
    CHECK(out.values == std::vector<int32_t>{1, 2, 7, 8, 9, 3, 4, 10, 11, 12});
  }
  SECTION("one tensor is a copy; empty parts add nothing") {
    Owned<int32_t> none({2, 0}, {});
    Owned<int32_t> out({2, 2}, Owned<int32_t>::filled({2, 2}, 0));
    REQUIRE(portable::cat_out(ctx, List(none, a, none).view(), 1, out));
    CHECK(out.values == a.values);
  }
  SECTION("legacy 1-D empty tensors are skipped, whatever dim") {
    Owned<int32_t> legacy({0}, {});
    Owned<int32_t> out({2, 5}, Owned<int32_t>::filled({2, 5}, 0));
    REQUIRE(portable::cat_out(ctx, List(legacy, a, legacy, c).view(), 1, out));
    CHECK(out.values == std::vector<int32_t>{1, 2, 7, 8, 9, 3, 4, 10, 11, 12});
    Owned<int32_t> empty({0}, {});
    CHECK(portable::cat_out(ctx, List(legacy, legacy).view(), 3, empty));
  }
}

TEST_CASE("cat: channels of NCHW tensors, in any layouts, every dtype", "[portable][cat]") {
  KernelContext ctx;
  std::vector<uint16_t> first(2 * 1 * 2 * 2);
  std::vector<uint16_t> second(2 * 2 * 2 * 2);
  for (std::size_t i = 0; i < first.size(); ++i) first[i] = static_cast<uint16_t>(100 + i);
  for (std::size_t i = 0; i < second.size(); ++i) second[i] = static_cast<uint16_t>(200 + i);
  Owned<uint16_t> x({2, 1, 2, 2}, first);
  Owned<uint16_t> y({2, 2, 2, 2}, second, {0, 2, 3, 1});
  Owned<uint16_t> out({2, 3, 2, 2}, Owned<uint16_t>::filled({2, 3, 2, 2}, 0), {0, 2, 3, 1});
  for (auto* t : {&x, &y, &out}) t->retype(DType::Float16);
  REQUIRE(portable::cat_out(ctx, List(x, y).view(), 1, out));
  std::vector<uint16_t> want;
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 4; ++i) want.push_back(static_cast<uint16_t>(100 + n * 4 + i));
    for (int i = 0; i < 8; ++i) want.push_back(static_cast<uint16_t>(200 + n * 8 + i));
  }
  CHECK(out.logical() == want);
}

TEST_CASE("cat: errors name the argument and the value", "[portable][cat][errors]") {
  KernelContext ctx;
  Owned<float> a({2, 3}, Owned<float>::filled({2, 3}, 1));
  Owned<float> b({3, 3}, Owned<float>::filled({3, 3}, 2));
  Owned<float> out({5, 3}, Owned<float>::filled({5, 3}, 0));
  SECTION("an empty list") {
    CHECK_FALSE(portable::cat_out(ctx, TensorList(), 0, out));
    CHECK_ERROR(ctx, "aten::cat.out", "tensors is empty");
  }
  SECTION("sizes that differ outside dim") {
    Owned<float> wide({5, 6}, Owned<float>::filled({5, 6}, 0));
    CHECK_FALSE(portable::cat_out(ctx, List(a, b).view(), 1, wide));
    CHECK_ERROR(ctx, "tensors[1] has shape [3, 3] and tensors[0] [2, 3]: sizes must match except in dimension 1");
  }
  SECTION("ranks that differ; a 0-dim tensor") {
    Owned<float> row({3}, {1, 2, 3});
    CHECK_FALSE(portable::cat_out(ctx, List(a, row).view(), 0, out));
    CHECK_ERROR(ctx, "tensors[1] is 1-D, but tensors[0] is 2-D");
    ctx.reset();
    Owned<float> scalar({}, {1});
    CHECK_FALSE(portable::cat_out(ctx, List(a, scalar).view(), 0, out));
    CHECK_ERROR(ctx, "tensors[1] is 0-dim");
  }
  SECTION("a dim out of range") {
    CHECK_FALSE(portable::cat_out(ctx, List(a, b).view(), 2, out));
    CHECK_ERROR(ctx, "dim = 2 is out of range for a 2-D tensor");
  }
  SECTION("dtypes are not promoted") {
    Owned<int32_t> ints({3, 3}, Owned<int32_t>::filled({3, 3}, 0));
    CHECK_FALSE(portable::cat_out(ctx, List(a, ints).view(), 0, out));
    CHECK_ERROR(ctx, "tensors[1] has dtype int32, expected float32 (the dtype of out)");
  }
  SECTION("out of the wrong shape is never resized") {
    Owned<float> wrong({6, 3}, Owned<float>::filled({6, 3}, 0));
    CHECK_FALSE(portable::cat_out(ctx, List(a, b).view(), 0, wrong));
    CHECK_ERROR(ctx, "out has shape [6, 3], expected [5, 3]");
  }
  SECTION("out overlapping an input; a malformed element") {
    std::vector<float> buffer(15, 1.0f);
    et_ops::Tensor first(DType::Float32, buffer.data(), {2, 3});
    et_ops::Tensor joined(DType::Float32, buffer.data(), {5, 3});
    et_ops_tensor* const raw[] = {first.raw(), b.raw()};
    CHECK_FALSE(portable::cat_out(ctx, TensorList(et_ops_tensor_list{raw, 2}), 0, joined));
    CHECK_ERROR(ctx, "out overlaps tensors[0] in memory");
    CHECK(buffer == std::vector<float>(15, 1.0f));
    ctx.reset();
    b.raw()->numel = 7;
    CHECK_FALSE(portable::cat_out(ctx, List(a, b).view(), 0, out));
    CHECK_ERROR(ctx, "tensors[1] has numel 7 but sizes [3, 3] hold 9 elements");
  }
}
