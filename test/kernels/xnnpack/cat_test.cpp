// et_xnnpack::cat.out beside the elementwise definition of a
// concatenation: along channels of channels-last tensors (an inception
// block), along the outermost and innermost dimensions of contiguous ones,
// a negative dim, on 1 and 2 threads and with AVX2 and native
// microkernels; and its argument errors.
#include "test_util.h"

namespace {

using et_ops::DType;
using et_ops::TensorRef;
using namespace et_ops::test;

constexpr const char* kCat = "et_xnnpack::cat.out";

struct Case {
  std::vector<std::vector<int64_t>> sizes;  // each input's
  int64_t dim;
  std::vector<uint8_t> dim_order;
};

int64_t wrap(int64_t dim, std::size_t rank) { return dim < 0 ? dim + int64_t(rank) : dim; }

struct Cat {
  Case c;
  std::deque<OwnedTensor> inputs;
  OwnedTensor out;
  static std::vector<int64_t> joined(const Case& k) {
    std::vector<int64_t> sizes = k.sizes[0];
    sizes[std::size_t(wrap(k.dim, sizes.size()))] = 0;
    for (const auto& s : k.sizes) sizes[std::size_t(wrap(k.dim, sizes.size()))] += s[std::size_t(wrap(k.dim, sizes.size()))];
    return sizes;
  }
  explicit Cat(const Case& k) : c(k), out(DType::Int8, joined(k), k.dim_order) {
    for (std::size_t i = 0; i < k.sizes.size(); ++i) {
      inputs.emplace_back(DType::Int8, k.sizes[i], k.dim_order);
      fill_random(inputs.back().data<int8_t>(), std::size_t(inputs.back().tensor->numel()), uint32_t(50 + i));
    }
  }
  // out's bytes: element (index) of out comes from the input whose range of dim holds it.
  std::vector<int8_t> reference() const {
    const TensorRef o = out.tensor->ref();
    const int64_t d = wrap(c.dim, c.sizes[0].size());
    std::vector<int8_t> expected(std::size_t(o.numel()));
    std::vector<int64_t> index(std::size_t(o.dim()), 0);
    for (int64_t n = 0; n < o.numel(); ++n) {
      int64_t along = index[std::size_t(d)], which = 0;
      while (along >= c.sizes[std::size_t(which)][std::size_t(d)]) along -= c.sizes[std::size_t(which++)][std::size_t(d)];
      const TensorRef t = inputs[std::size_t(which)].tensor->ref();
      int64_t from = 0, to = 0;
      for (int64_t k = 0; k < o.dim(); ++k) {
        from += (k == d ? along : index[std::size_t(k)]) * t.stride(k);
        to += index[std::size_t(k)] * o.stride(k);
      }
      expected[std::size_t(to)] = inputs[std::size_t(which)].data<int8_t>()[from];
      for (int64_t k = o.dim(); k-- > 0;) {
        if (++index[std::size_t(k)] < o.size(k)) break;
        index[std::size_t(k)] = 0;
      }
    }
    return expected;
  }
  Call call() {
    std::vector<OwnedTensor*> list;
    for (OwnedTensor& t : inputs) list.push_back(&t);
    Call call;
    call.tensors(list).integer(c.dim).tensor(out);
    return call;
  }
};

}  // namespace

TEST_CASE("cat joins int8 tensors in their dim order", "[xnnpack][cat]") {
  const Case cases[] = {
      {{{1, 64, 5, 7}, {1, 128, 5, 7}, {1, 32, 5, 7}, {1, 3, 5, 7}}, 1, kChannelsLast},  // an inception block
      {{{2, 5, 3, 3}, {2, 9, 3, 3}}, -3, kChannelsLast},                                // a batch, a negative dim
      {{{2, 3, 4}, {1, 3, 4}, {3, 3, 4}}, 0, {}},                                       // the outermost dimension
      {{{2, 3, 4}, {2, 3, 1}}, 2, {}},                                                  // the innermost dimension
      {{{1, 8, 1, 1}, {1, 4, 1, 1}}, 1, {}},                                            // pooled features
      {{{2, 3, 1, 4}, {2, 5, 1, 4}}, 1, kChannelsLast},                                 // a height of 1
      {{{2, 3, 1, 4}, {2, 3, 1, 2}}, 3, kChannelsLast},                                 // ... along its width
  };
  for (const Case& k : cases) {
    Cat cat(k);
    INFO("dim=" << k.dim << " out numel=" << cat.out.tensor->numel());
    Call call = cat.call();
    run_on_one_and_two_threads(call, kCat, cat.out);
    const std::vector<int8_t> expected = cat.reference();
    const std::vector<uint8_t> got = cat.out.contents();
    REQUIRE(std::equal(expected.begin(), expected.end(), reinterpret_cast<const int8_t*>(got.data())));
  }
}

TEST_CASE("cat gives the same bytes with AVX2 and native microkernels", "[xnnpack][cat][isa]") {
  check_same_bytes_on_every_isa("[cat]~[isa]");
}

TEST_CASE("cat names what is wrong with its arguments", "[xnnpack][cat]") {
  const Case k{{{1, 6, 5, 3}, {1, 2, 5, 3}}, 1, kChannelsLast};
  auto message = [&](auto&& change) { return error_message<Cat>(kCat, k, change); };
  using Catch::Matchers::Contains;
  CHECK_THAT(message([](Cat& c) { c.inputs[1] = OwnedTensor(DType::UInt8, {1, 2, 5, 3}, kChannelsLast); }),
             Contains("tensors[1] must be int8, got uint8"));
  CHECK_THAT(message([](Cat& c) { c.out = OwnedTensor(DType::Float32, {1, 8, 5, 3}, kChannelsLast); }),
             Contains("out must be int8, got float32"));
  CHECK_THAT(message([](Cat& c) { c.inputs[1] = OwnedTensor(DType::Int8, {1, 2, 4, 3}, kChannelsLast); }),
             Contains("tensors[1] has sizes [1, 2, 4, 3] and out [1, 8, 5, 3]: they must match but in dimension 1"));
  CHECK_THAT(message([](Cat& c) { c.inputs[0] = OwnedTensor(DType::Int8, {1, 6, 5, 3}); }),
             Contains("tensors[0] has strides [90, 15, 3, 1], not out's dim order"));
  CHECK_THAT(message([](Cat& c) { c.out = OwnedTensor(DType::Int8, {1, 9, 5, 3}, kChannelsLast); }),
             Contains("out has 9 elements in dimension 1, the tensors 8 together"));
  CHECK_THAT(message([](Cat& c) { c.c.dim = 4; }), Contains("dim 4 is out of range for 4 dimensions"));
  CHECK_THAT(message([](Cat& c) { c.inputs.clear(); }), Contains("tensors is empty"));
  CHECK_THAT(message([](Cat& c) { c.inputs[0] = OwnedTensor(DType::Int8, {6, 5, 3}); }),
             Contains("tensors[0] must have 4 dimensions, got 3"));
}
