// et_xnnpack::add.out beside a float64 reference of the quantized addition
// (exact but on ties; odd sizes, channels-last and contiguous tensors, saturation and a fused
// clamp) on 1 and 2 threads and with AVX2 and native microkernels, and its
// argument errors.
#include "test_util.h"

namespace {

using et_ops::DType;
using namespace et_ops::test;

constexpr const char* kAdd = "et_xnnpack::add.out";

struct Case {
  std::vector<int64_t> sizes;
  std::vector<uint8_t> dim_order;
  double out_scale = 0.07;
  int64_t out_min = -128, out_max = 127;
  std::vector<int64_t> other_sizes = {};  // broadcast when given (else sizes)
  std::vector<uint8_t> other_dim_order = {};
};

struct Add {
  Case c;
  OwnedTensor self, other, out;
  double self_scale = 0.05, other_scale = 0.03;
  int64_t self_zp = -10, other_zp = 20, out_zp = 3;
  explicit Add(const Case& k)
      : c(k), self(DType::Int8, k.sizes, k.dim_order),
        other(DType::Int8, k.other_sizes.empty() ? k.sizes : k.other_sizes,
              k.other_sizes.empty() ? k.dim_order : k.other_dim_order),
        out(DType::Int8, k.sizes, k.dim_order) {
    fill_random(self.data<int8_t>(), std::size_t(self.tensor->numel()), 21);
    fill_random(other.data<int8_t>(), std::size_t(other.tensor->numel()), 22);
  }
  // Each sum in output steps, before rounding, in out's memory order.
  std::vector<double> sums() const {
    std::vector<double> result(std::size_t(out.tensor->numel()));
    for_each_broadcast(*self.tensor, *other.tensor, *out.tensor, [&](int64_t to, int64_t i, int64_t j) {
      const double a = double(float(self_scale)) * (self.data<int8_t>()[i] - self_zp);
      const double b = double(float(other_scale)) * (other.data<int8_t>()[j] - other_zp);
      result[std::size_t(to)] = (a + b) / double(float(c.out_scale));
    });
    return result;
  }
  std::vector<int8_t> reference() const {
    std::vector<int8_t> expected;
    for (const double sum : sums()) expected.push_back(requantize(sum, out_zp, c.out_min, c.out_max));
    return expected;
  }
  Call call() { return binary_call(*this); }
};

}  // namespace

TEST_CASE("add agrees with the quantized addition's reference", "[xnnpack][add]") {
  const Case cases[] = {
      {{37}, {}},                               // odd, 1-dim
      {{1, 13, 5, 7}, kChannelsLast},           // a channels-last activation
      {{3, 33, 17}, {}},                        // long enough for every vector loop and its tail
      {{2, 9, 11}, {}, 0.012},                  // a small output scale: both ends of int8 saturate
      {{1, 8, 3, 5}, kChannelsLast, 0.02, 3, 90},  // a fused relu at the zero point, clamped above
      {{1, 13, 5, 7}, kChannelsLast, 0.07, -128, 127, {1, 13, 1, 1}, {}},  // a per-channel term, broadcast
      {{2, 3, 4}, {}, 0.07, -128, 127, {2, 1, 4}, {}},                      // broadcast in the middle
      {{2, 3, 1, 4}, kChannelsLast},  // channels-last with a height of 1 (a row of pixels)
      {{2, 3, 1, 4}, kChannelsLast, 0.07, -128, 127, {2, 3, 1, 1}, kChannelsLast},  // ... and a per-channel term
  };
  for (const Case& k : cases) {
    Add add(k);
    INFO("numel=" << add.out.tensor->numel() << " output_scale=" << k.out_scale);
    Call call = add.call();
    run_on_one_and_two_threads(call, kAdd, add.out);
    const std::vector<int8_t> expected = add.reference();
    check_exact_but_at_ties(add.out.data<int8_t>(), expected, add.sums());
    if (k.out_scale < 0.05) check_saturates(expected, k.out_min, k.out_max);  // the saturating cases
  }
}

TEST_CASE("add gives the same bytes with AVX2 and native microkernels", "[xnnpack][add][isa]") {
  check_same_bytes_on_every_isa("[add]~[isa]");
}

TEST_CASE("add names what is wrong with its arguments", "[xnnpack][add]") {
  const Case k{{1, 6, 5, 3}, kChannelsLast};
  auto message = [&](auto&& change) { return error_message<Add>(kAdd, k, change); };
  using Catch::Matchers::Contains;
  CHECK_THAT(message([](Add& a) { a.self = OwnedTensor(DType::UInt8, {1, 6, 5, 3}, kChannelsLast); }),
             Contains("self must be int8, got uint8"));
  CHECK_THAT(message([](Add& a) { a.other = OwnedTensor(DType::Float32, {1, 6, 5, 3}, kChannelsLast); }),
             Contains("other must be int8, got float32"));
  CHECK_THAT(message([](Add& a) { a.out = OwnedTensor(DType::UInt8, {1, 6, 5, 3}, kChannelsLast); }),
             Contains("out must be int8, got uint8"));
  CHECK_THAT(message([](Add& a) { a.other = OwnedTensor(DType::Int8, {1, 5, 5, 3}, kChannelsLast); }),
             Contains("self [1, 6, 5, 3] and other [1, 5, 5, 3] do not broadcast to out [1, 6, 5, 3] (dimension 1)"));
  CHECK_THAT(message([](Add& a) { a.other = OwnedTensor(DType::Int8, {6, 5, 3}); }),
             Contains("other has 3 dimensions, out 4: they must have the same rank"));
  CHECK_THAT(message([](Add& a) { a.out = OwnedTensor(DType::Int8, {1, 6, 5, 4}, kChannelsLast); }),
             Contains("do not broadcast to out [1, 6, 5, 4] (dimension 3)"));
  CHECK_THAT(message([](Add& a) { a.other = OwnedTensor(DType::Int8, {1, 6, 5, 3}); }),
             Contains("other has strides [90, 15, 3, 1], not a dense layout of sizes [1, 6, 5, 3] in out's dim order"));
  CHECK_THAT(message([](Add& a) { a.out = OwnedTensor(DType::Int8, {1, 1, 1, 1, 1, 1, 6, 5, 3}); }),
             Contains("out has 9 dimensions, at most 6 are supported"));
  // An empty out, with self and other of its rank: named (its dim order is
  // still every dimension's; a fuzzed input once read past it).
  CHECK_THAT(message([](Add& a) { a.out = OwnedTensor(DType::Int8, {1, 6, 0, 3}, kChannelsLast); }),
             Contains("out is empty ([1, 6, 0, 3])"));
  CHECK_THAT(message([](Add& a) { a.self_scale = 0.0; }), Contains("self_scale must be a positive"));
  CHECK_THAT(message([](Add& a) { a.other_scale = -0.03; }), Contains("other_scale must be a positive"));
  CHECK_THAT(message([](Add& a) { a.c.out_scale = std::numeric_limits<double>::infinity(); }),
             Contains("output_scale must be a positive"));
  CHECK_THAT(message([](Add& a) { a.self_zp = 128; }), Contains("self_zero_point must lie in [-128, 127]"));
  CHECK_THAT(message([](Add& a) { a.other_zp = -129; }), Contains("other_zero_point must lie in [-128, 127]"));
  CHECK_THAT(message([](Add& a) { a.out_zp = 255; }), Contains("output_zero_point must lie in [-128, 127]"));
  CHECK_THAT(message([](Add& a) { a.c.out_min = 0, a.c.out_max = 0; }), Contains("output_min < output_max"));
  CHECK_THAT(message([](Add& a) { a.c.out_min = -129; }), Contains("-128 <= output_min"));
  CHECK_THAT(message([](Add& a) { a.self_scale = 30.0; }), Contains("self_scale / output_scale"));
  CHECK_THAT(message([](Add& a) { a.other_scale = 1e-6; }), Contains("other_scale / output_scale"));
}
