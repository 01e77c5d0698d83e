// et_xnnpack::convert_layout.out: every element lands where the output's
// dim order puts it (contiguous <-> channels-last, other orders, dtypes,
// odd sizes) on 1 and 2 threads, and its argument errors.
#include "test_util.h"

namespace {

using et_ops::DType;
using namespace et_ops::test;

constexpr const char* kConvertLayout = "et_xnnpack::convert_layout.out";

struct Case {
  DType dtype;
  std::vector<int64_t> sizes;
  std::vector<uint8_t> from, to;  // dim orders, outermost first
};

// The memory offset of the element at `index` in `order`: the dimensions
// nest as the order lists them.
int64_t offset(const std::vector<int64_t>& sizes, const std::vector<uint8_t>& order, const std::vector<int64_t>& index) {
  int64_t at = 0;
  for (const uint8_t d : order) at = at * sizes[d] + index[d];
  return at;
}

std::vector<uint8_t> identity(std::size_t rank) {
  std::vector<uint8_t> order(rank);
  for (std::size_t d = 0; d < rank; ++d) order[d] = uint8_t(d);
  return order;
}

struct Layout {
  Case c;
  OwnedTensor self, out;
  explicit Layout(const Case& k) : c(k), self(k.dtype, k.sizes, k.from), out(k.dtype, k.sizes, k.to) {
    for (std::size_t i = 0; i + 64 < self.bytes.size(); ++i) self.bytes[i] = uint8_t(i * 7 + i / 251);
  }
  std::vector<uint8_t> reference() const {
    const std::size_t element = et_ops::dtype_size(c.dtype);
    const std::vector<uint8_t> from = c.from.empty() ? identity(c.sizes.size()) : c.from;
    const std::vector<uint8_t> to = c.to.empty() ? identity(c.sizes.size()) : c.to;
    std::vector<uint8_t> expected(self.bytes.size() - 64);
    std::vector<int64_t> index(c.sizes.size(), 0);
    for (std::size_t n = 0; n < expected.size() / element; ++n) {
      std::copy_n(&self.bytes[std::size_t(offset(c.sizes, from, index)) * element], element,
                  &expected[std::size_t(offset(c.sizes, to, index)) * element]);
      for (std::size_t d = index.size(); d-- > 0 && ++index[d] == c.sizes[d];) index[d] = 0;
    }
    return expected;
  }
  Call call() {
    Call call;
    call.tensor(self).tensor(out);
    return call;
  }
};

const std::vector<uint8_t> kContiguous{0, 1, 2, 3};

}  // namespace

TEST_CASE("convert_layout puts every element where the output's dim order says", "[xnnpack][layout]") {
  const Case cases[] = {
      {DType::Int8, {2, 5, 3, 7}, kContiguous, kChannelsLast},  // into an int8 region
      {DType::Int8, {1, 13, 9, 11}, kChannelsLast, kContiguous},  // out of it
      {DType::Float32, {3, 4, 5, 6}, kChannelsLast, kContiguous},  // any dtype
      {DType::Int64, {2, 3, 1, 1}, kContiguous, kChannelsLast},  // 1x1: the same bytes either way
      {DType::UInt8, {3, 5, 7}, {2, 0, 1}, {1, 2, 0}},           // other orders and ranks
      {DType::Int8, {37}, {}, {}},                               // a plain copy
      {DType::Int8, {1, 3, 224, 224}, kContiguous, kChannelsLast},  // an image: tasks split among threads
      {DType::UInt8, {2, 4, 150, 130}, kContiguous, kChannelsLast},  // four channels
      {DType::Float32, {3, 2, 21, 19}, kContiguous, kChannelsLast},  // two channels
      {DType::Float32, {2, 40, 33, 35}, kChannelsLast, kContiguous},  // tiles with remainders, two images
      {DType::Int8, {1, 1, 9, 11}, kContiguous, kChannelsLast},     // one channel: the same bytes either way
      {DType::Int16, {3, 4, 5, 6}, kContiguous, {3, 1, 0, 2}},      // no transpose of two blocks: element by element
  };
  for (const Case& k : cases) {
    INFO("dtype " << et_ops::dtype_name(k.dtype) << ", rank " << k.sizes.size());
    Layout layout(k);
    Call call = layout.call();
    run_on_one_and_two_threads(call, kConvertLayout, layout.out);
    CHECK(layout.out.contents() == layout.reference());
  }
}

TEST_CASE("convert_layout names what is wrong with its arguments", "[xnnpack][layout]") {
  const Case k{DType::Int8, {1, 6, 5, 3}, kContiguous, kChannelsLast};
  auto message = [&](auto&& change) { return error_message<Layout>(kConvertLayout, k, change); };
  using Catch::Matchers::Contains;
  CHECK_THAT(message([](Layout& l) { l.out = OwnedTensor(DType::Float32, {1, 6, 5, 3}, kChannelsLast); }),
             Contains("out must have self's dtype int8, got float32"));
  CHECK_THAT(message([](Layout& l) { l.out = OwnedTensor(DType::Int8, {1, 6, 3, 5}, kChannelsLast); }),
             Contains("out has sizes [1, 6, 3, 5], but self has [1, 6, 5, 3]"));
  CHECK_THAT(message([](Layout& l) { l.out = OwnedTensor(DType::Int8, {6, 5, 3}); }),
             Contains("out has sizes [6, 5, 3], but self has [1, 6, 5, 3]"));
}
