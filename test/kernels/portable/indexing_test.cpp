// embedding, index, index_select, index_put and index_copy: values,
// negative indices where PyTorch wraps them, out-of-range errors naming the
// operator, the index and the bound, and in place writes that touch only
// the indexed elements.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "test_util.h"

using et_ops::OptionalTensorList;

namespace {
// A Tensor?[] of the given tensors (null: None).
struct Indices {
  std::vector<et_ops_tensor*> raw;
  explicit Indices(std::vector<et_ops_tensor*> tensors) : raw(std::move(tensors)) {}
  OptionalTensorList view() const {
    return OptionalTensorList(et_ops_tensor_list{raw.data(), static_cast<int64_t>(raw.size())});
  }
};
}  // namespace

TEST_CASE("embedding gathers rows; out of range is an error", "[portable][indexing]") {
  Owned<float> weight({3, 2}, {0, 1, 10, 11, 20, 21});
  Owned<int64_t> ids({2, 2}, {2, 0, 1, 2});
  Owned<float> out({2, 2, 2}, Owned<float>::filled({2, 2, 2}, 0));
  KernelContext ctx;
  REQUIRE(portable::embedding_out(ctx, weight, ids, -1, false, false, out));
  CHECK(out.values == std::vector<float>{20, 21, 0, 1, 10, 11, 20, 21});
  Owned<int32_t> bad({1}, {3});
  Owned<float> one({1, 2}, {7, 7});
  CHECK_FALSE(portable::embedding_out(ctx, weight, bad, -1, false, false, one));
  CHECK(failed_with(ctx, {"aten::embedding.out", "index 3", "size 3"}));
  CHECK(one.values == std::vector<float>{7, 7});
}

TEST_CASE("index_select picks slices along a dimension", "[portable][indexing]") {
  Owned<int64_t> x({2, 3}, {0, 1, 2, 3, 4, 5});
  Owned<int64_t> index({2}, {2, 0});
  Owned<int64_t> out({2, 2}, {0, 0, 0, 0});
  KernelContext ctx;
  REQUIRE(portable::index_select_out(ctx, x, -1, index, out));
  CHECK(out.values == std::vector<int64_t>{2, 0, 5, 3});
  Owned<int64_t> negative({1}, {-1});
  Owned<int64_t> column({2, 1}, {0, 0});
  CHECK_FALSE(portable::index_select_out(ctx, x, 1, negative, column));
  CHECK(failed_with(ctx, {"aten::index_select.out", "index -1", "size 3"}));
}

TEST_CASE("index: adjacent index tensors stay in place, separated ones go first", "[portable][indexing]") {
  std::vector<float> values(24);
  for (int i = 0; i < 24; ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(i);
  Owned<float> x({2, 3, 4}, values);
  Owned<int64_t> rows({2}, {-1, 0});  // negatives wrap, as x[:, [-1, 0]]
  KernelContext ctx;
  SECTION("x[:, rows]") {
    Indices indices({nullptr, rows.raw()});
    Owned<float> out({2, 2, 4}, Owned<float>::filled({2, 2, 4}, 0));
    REQUIRE(portable::index_out(ctx, x, indices.view(), out));
    CHECK(std::vector<float>(out.values.begin(), out.values.begin() + 8) ==
          std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3});
  }
  SECTION("x[rows, :, cols]: the broadcast dimension comes first") {
    Owned<int64_t> first({2}, {1, 0});
    Owned<int64_t> cols({2}, {3, 1});
    Indices indices({first.raw(), nullptr, cols.raw()});
    Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0));
    REQUIRE(portable::index_out(ctx, x, indices.view(), out));
    CHECK(out.values == std::vector<float>{15, 19, 23, 1, 5, 9});
  }
  SECTION("an index out of range") {
    Owned<int64_t> bad({1}, {-4});
    Indices indices({nullptr, bad.raw()});
    Owned<float> out({2, 1, 4}, Owned<float>::filled({2, 1, 4}, 0));
    CHECK_FALSE(portable::index_out(ctx, x, indices.view(), out));
    CHECK(failed_with(ctx, {"aten::index.Tensor_out", "indices[1]", "index -4", "size 3"}));
  }
}

// x[..., v, ...] for a vector v copies whole slices; the same indices as a
// [1, n] tensor go through the element-by-element path. Both must give
// x's elements at v (negatives wrapped), in any dim order of x and out.
template <typename Index>
void check_vector_index_matches_elements(const std::vector<uint8_t>& x_order, const std::vector<uint8_t>& out_order) {
  std::vector<float> values(2 * 3 * 5);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  Owned<float> x({2, 3, 5}, values, x_order);
  KernelContext ctx;
  for (int64_t d = 0; d < 3; ++d) {
    const int64_t size = x.ref().size(d);
    const std::vector<Index> picks = {static_cast<Index>(size - 1), 0, static_cast<Index>(-1), 1, 0};
    Owned<Index> vector({5}, picks);
    Owned<Index> matrix({1, 5}, picks);
    std::vector<et_ops_tensor*> by_vector(static_cast<std::size_t>(d), nullptr), by_matrix = by_vector;
    by_vector.push_back(vector.raw());
    by_matrix.push_back(matrix.raw());
    std::vector<int64_t> shape = {2, 3, 5};
    shape[static_cast<std::size_t>(d)] = 5;
    Owned<float> fast(shape, Owned<float>::filled(shape, -1), out_order);
    REQUIRE(portable::index_out(ctx, x, Indices(by_vector).view(), fast));
    std::vector<int64_t> wide = shape;
    wide.insert(wide.begin() + d, 1);
    Owned<float> slow(wide, Owned<float>::filled(wide, -1));
    REQUIRE(portable::index_out(ctx, x, Indices(by_matrix).view(), slow));
    CAPTURE(d);
    CHECK(fast.logical() == slow.logical());
    // And against the definition, element by element.
    const std::vector<float> got = fast.logical();
    for (std::size_t i = 0; i < got.size(); ++i) {
      int64_t pos[3] = {};
      for (int64_t k = 2, flat = static_cast<int64_t>(i); k >= 0; --k) {
        pos[k] = flat % shape[static_cast<std::size_t>(k)];
        flat /= shape[static_cast<std::size_t>(k)];
      }
      const int64_t pick = picks[static_cast<std::size_t>(pos[d])];
      pos[d] = pick < 0 ? pick + size : pick;
      CHECK(got[i] == values[static_cast<std::size_t>(pos[0] * 15 + pos[1] * 5 + pos[2])]);
    }
  }
}

TEST_CASE("index by one vector copies slices, the same elements as the general path", "[portable][indexing]") {
  check_vector_index_matches_elements<int64_t>({}, {});
  check_vector_index_matches_elements<int32_t>({}, {});
  check_vector_index_matches_elements<int64_t>({2, 0, 1}, {});
  check_vector_index_matches_elements<int64_t>({}, {1, 2, 0});
}

TEST_CASE("index_put in place writes only the indexed elements", "[portable][indexing]") {
  Owned<float> cache({2, 4}, {1, 1, 1, 1, 2, 2, 2, 2});
  Owned<int64_t> position({1}, {-2});
  Owned<float> values({2, 1}, {7, 8});
  Indices indices({nullptr, position.raw()});
  KernelContext ctx;
  REQUIRE(portable::index_put_out(ctx, cache, indices.view(), values, false, cache));
  CHECK(cache.values == std::vector<float>{1, 1, 7, 1, 2, 2, 8, 2});
  REQUIRE(portable::index_put_out(ctx, cache, indices.view(), values, true, cache));
  CHECK(cache.values == std::vector<float>{1, 1, 14, 1, 2, 2, 16, 2});
  Owned<int64_t> beyond({1}, {4});
  Indices bad({nullptr, beyond.raw()});
  CHECK_FALSE(portable::index_put_out(ctx, cache, bad.view(), values, false, cache));
  CHECK(failed_with(ctx, {"aten::index_put.out", "index 4", "size 4"}));
  CHECK(cache.values == std::vector<float>{1, 1, 14, 1, 2, 2, 16, 2});
}

TEST_CASE("index_copy copies slices, in place or into a fresh out", "[portable][indexing]") {
  Owned<float> self({3, 2}, {0, 0, 1, 1, 2, 2});
  Owned<int64_t> index({2}, {2, 0});
  Owned<float> source({2, 2}, {5, 6, 7, 8});
  Owned<float> out({3, 2}, Owned<float>::filled({3, 2}, -1));
  KernelContext ctx;
  REQUIRE(portable::index_copy_out(ctx, self, 0, index, source, out));
  CHECK(out.values == std::vector<float>{7, 8, 1, 1, 5, 6});
  REQUIRE(portable::index_copy_out(ctx, self, 0, index, source, self));
  CHECK(self.values == std::vector<float>{7, 8, 1, 1, 5, 6});
  Owned<int64_t> bad({1}, {3});
  Owned<float> row({1, 2}, {0, 0});
  CHECK_FALSE(portable::index_copy_out(ctx, self, 0, bad, row, self));
  CHECK(failed_with(ctx, {"aten::index_copy.out", "index 3", "size 3"}));
}
