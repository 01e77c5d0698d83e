// et_xnnpack::mul.out beside the reference path's arithmetic (dequantize
// both operands, multiply in float32, quantize), which it must reproduce
// exactly: equal sizes, either operand broadcast (a squeeze-excitation's
// [N, C, 1, 1] scale of a channels-last activation), both broadcast,
// saturation and a clamp, on 1 and 2 threads and with AVX2 and native
// microkernels; and its argument errors.
#include "test_util.h"

namespace {

using et_ops::DType;
using namespace et_ops::test;

constexpr const char* kMul = "et_xnnpack::mul.out";

struct Case {
  std::vector<int64_t> self_sizes, other_sizes, out_sizes;
  std::vector<uint8_t> self_order, other_order, out_order;
  double out_scale = 0.004;
  int64_t out_min = -128, out_max = 127;
};

struct Mul {
  Case c;
  OwnedTensor self, other, out;
  double self_scale = 0.05, other_scale = 1.0 / 256;
  int64_t self_zp = -10, other_zp = -128, out_zp = 3;
  explicit Mul(const Case& k)
      : c(k), self(DType::Int8, k.self_sizes, k.self_order), other(DType::Int8, k.other_sizes, k.other_order),
        out(DType::Int8, k.out_sizes, k.out_order) {
    fill_random(self.data<int8_t>(), std::size_t(self.tensor->numel()), 41);
    fill_random(other.data<int8_t>(), std::size_t(other.tensor->numel()), 42);
  }
  // Expected bytes of out, in its memory.
  std::vector<int8_t> reference() const {
    std::vector<int8_t> expected(std::size_t(out.tensor->numel()));
    const float inverse = float(1.0 / c.out_scale);
    for_each_broadcast(*self.tensor, *other.tensor, *out.tensor, [&](int64_t to, int64_t i, int64_t j) {
      const float a = (float(self.data<int8_t>()[i]) - float(self_zp)) * float(self_scale);
      const float b = (float(other.data<int8_t>()[j]) - float(other_zp)) * float(other_scale);
      const float q = std::nearbyint((a * b) * inverse) + float(out_zp);
      expected[std::size_t(to)] = int8_t(std::fmin(std::fmax(q, float(c.out_min)), float(c.out_max)));
    });
    return expected;
  }
  Call call() { return binary_call(*this); }
};

}  // namespace

TEST_CASE("mul gives the reference path's bytes, broadcasting", "[xnnpack][mul]") {
  const std::vector<uint8_t> cl = kChannelsLast;
  const Case cases[] = {
      {{1, 13, 5, 7}, {1, 13, 5, 7}, {1, 13, 5, 7}, cl, cl, cl},   // equal sizes, channels-last
      {{1, 24, 9, 11}, {1, 24, 1, 1}, {1, 24, 9, 11}, cl, {}, cl},  // a squeeze-excitation's scale
      {{2, 24, 1, 1}, {2, 24, 6, 5}, {2, 24, 6, 5}, {}, cl, cl},    // the scale first
      {{2, 1, 5}, {1, 4, 1}, {2, 4, 5}, {}, {}, {}},                 // both broadcast
      {{37}, {1}, {37}, {}, {}, {}, 0.0004},                         // a small output scale: both ends saturate
      {{1, 8, 6, 5}, {1, 8, 1, 1}, {1, 8, 6, 5}, cl, {}, cl, 0.004, 3, 90},  // a clamp (relu) folded in
      {{2, 3, 1, 4}, {2, 3, 1, 4}, {2, 3, 1, 4}, cl, cl, cl},       // channels-last, a height of 1
      {{2, 3, 1, 4}, {2, 3, 1, 1}, {2, 3, 1, 4}, cl, cl, cl},       // ... scaled per channel
  };
  for (const Case& k : cases) {
    Mul mul(k);
    INFO("out numel=" << mul.out.tensor->numel() << " output_scale=" << k.out_scale);
    Call call = mul.call();
    run_on_one_and_two_threads(call, kMul, mul.out);
    const std::vector<int8_t> expected = mul.reference();
    const std::vector<uint8_t> got = mul.out.contents();
    REQUIRE(std::equal(expected.begin(), expected.end(), reinterpret_cast<const int8_t*>(got.data())));
    if (k.out_scale < 0.001) check_saturates(expected, k.out_min, k.out_max);
  }
}

TEST_CASE("mul gives the same bytes with AVX2 and native microkernels", "[xnnpack][mul][isa]") {
  check_same_bytes_on_every_isa("[mul]~[isa]");
}

TEST_CASE("mul names what is wrong with its arguments", "[xnnpack][mul]") {
  const Case k{{1, 6, 5, 3}, {1, 6, 1, 1}, {1, 6, 5, 3}, kChannelsLast, {}, kChannelsLast};
  auto message = [&](auto&& change) { return error_message<Mul>(kMul, k, change); };
  using Catch::Matchers::Contains;
  CHECK_THAT(message([](Mul& m) { m.self = OwnedTensor(DType::UInt8, {1, 6, 5, 3}, kChannelsLast); }),
             Contains("self must be int8, got uint8"));
  CHECK_THAT(message([](Mul& m) { m.other = OwnedTensor(DType::Float32, {1, 6, 1, 1}); }),
             Contains("other must be int8, got float32"));
  CHECK_THAT(message([](Mul& m) { m.other = OwnedTensor(DType::Int8, {6, 1, 1}); }),
             Contains("other has 3 dimensions, out 4: they must have the same rank"));
  CHECK_THAT(message([](Mul& m) { m.other = OwnedTensor(DType::Int8, {1, 5, 1, 1}); }),
             Contains("self [1, 6, 5, 3] and other [1, 5, 1, 1] do not broadcast to out [1, 6, 5, 3] (dimension 1)"));
  CHECK_THAT(message([](Mul& m) { m.out = OwnedTensor(DType::Int8, {1, 6, 5, 1}); }),
             Contains("do not broadcast to out [1, 6, 5, 1] (dimension 3)"));
  CHECK_THAT(message([](Mul& m) { m.out = OwnedTensor(DType::Int8, {1, 6, 0, 3}); }), Contains("out is empty"));
  CHECK_THAT(message([](Mul& m) { m.self_scale = -1.0; }), Contains("self_scale must be a positive"));
  CHECK_THAT(message([](Mul& m) { m.other_scale = 0.0; }), Contains("other_scale must be a positive"));
  CHECK_THAT(message([](Mul& m) { m.c.out_scale = 1e300; }), Contains("output_scale must be a positive"));
  CHECK_THAT(message([](Mul& m) { m.other_zp = 200; }), Contains("other_zero_point must lie in [-128, 127]"));
  CHECK_THAT(message([](Mul& m) { m.c.out_min = 100, m.c.out_max = 99; }), Contains("output_min < output_max"));
}
