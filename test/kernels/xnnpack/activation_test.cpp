// et_xnnpack::hardswish.out, hardsigmoid.out and sigmoid.out beside the
// reference path's arithmetic (dequantize, the float32 function, quantize),
// which they must reproduce exactly on every int8 value: contiguous and
// channels-last tensors, saturation and a clamp, on 1 and 2 threads and
// with AVX2 and native microkernels; and their argument errors.
#include "test_util.h"

namespace {

using et_ops::DType;
using namespace et_ops::test;

// The reference path's float32 functions, as the portable kernels compute them.
float relu_six_of_x_plus_three(float x) { return std::fmin(std::fmax(x + 3.0f, 0.0f), 6.0f); }
float hardswish(float x) { return (x * relu_six_of_x_plus_three(x)) / 6.0f; }
float hardsigmoid(float x) { return relu_six_of_x_plus_three(x) / 6.0f; }
float sigmoid(float x) { return 1.0f / (1.0f + float(std::exp(-double(x)))); }

struct Activation {
  const char* op;
  float (*function)(float);
};
const Activation kActivations[] = {{"et_xnnpack::hardswish.out", &hardswish},
                                   {"et_xnnpack::hardsigmoid.out", &hardsigmoid},
                                   {"et_xnnpack::sigmoid.out", &sigmoid}};

struct Case {
  std::vector<int64_t> sizes;
  std::vector<uint8_t> dim_order;
  double self_scale = 0.05, out_scale = 0.02;
  int64_t self_zp = -10, out_zp = -100, out_min = -128, out_max = 127;
};

struct Fixture {
  Case c;
  OwnedTensor self, out;
  explicit Fixture(const Case& k) : c(k), self(DType::Int8, k.sizes, k.dim_order), out(DType::Int8, k.sizes, k.dim_order) {
    // every int8 value, then random ones
    int8_t* data = self.data<int8_t>();
    const auto n = std::size_t(self.tensor->numel());
    for (std::size_t i = 0; i < n && i < 256; ++i) data[i] = int8_t(int(i) - 128);
    if (n > 256) fill_random(data + 256, n - 256, 31);
  }
  // dequantize -> function -> quantize, in the reference's float32 steps.
  std::vector<int8_t> reference(float (*function)(float)) const {
    std::vector<int8_t> expected(std::size_t(out.tensor->numel()));
    const float inverse = float(1.0 / c.out_scale);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const float x = (float(self.data<int8_t>()[i]) - float(c.self_zp)) * float(c.self_scale);
      const float q = std::nearbyint(function(x) * inverse) + float(c.out_zp);
      expected[i] = int8_t(std::fmin(std::fmax(q, float(c.out_min)), float(c.out_max)));
    }
    return expected;
  }
  Call call() {
    Call call;
    call.tensor(self).real(c.self_scale).integer(c.self_zp).real(c.out_scale).integer(c.out_zp).integer(c.out_min)
        .integer(c.out_max).tensor(out);
    return call;
  }
};

}  // namespace

TEST_CASE("activations give the reference path's bytes on every int8 value", "[xnnpack][activation]") {
  const Case cases[] = {
      {{256}, {}},                                              // every value once
      {{1, 13, 5, 7}, kChannelsLast, 0.1, 1.0 / 256, -128},     // hardsigmoid's fixed output parameters
      {{3, 33, 17}, {}, 0.03, 0.004, 5},                        // a small output scale: both ends saturate
      {{1, 8, 6, 5}, kChannelsLast, 0.05, 0.02, -100, -100, 90},  // a clamp (relu) folded in
  };
  for (const Activation& a : kActivations)
    for (const Case& k : cases) {
      Fixture f(k);
      INFO(a.op << " numel=" << f.out.tensor->numel() << " output_scale=" << k.out_scale);
      Call call = f.call();
      run_on_one_and_two_threads(call, a.op, f.out);
      const std::vector<int8_t> expected = f.reference(a.function);
      const std::vector<uint8_t> got = f.out.contents();
      REQUIRE(std::equal(expected.begin(), expected.end(), reinterpret_cast<const int8_t*>(got.data())));
    }
  Fixture small({{3, 33, 17}, {}, 0.03, 0.004, 5});
  check_saturates(small.reference(&hardswish), -128, 127);
}

TEST_CASE("activations give the same bytes with AVX2 and native microkernels", "[xnnpack][activation][isa]") {
  check_same_bytes_on_every_isa("[activation]~[isa]");
}

TEST_CASE("activations name what is wrong with their arguments", "[xnnpack][activation]") {
  const Case k{{1, 6, 5, 3}, kChannelsLast};
  using Catch::Matchers::Contains;
  for (const Activation& a : kActivations) {
    INFO(a.op);
    auto message = [&](auto&& change) { return error_message<Fixture>(a.op, k, change); };
    CHECK_THAT(message([](Fixture& f) { f.self = OwnedTensor(DType::UInt8, {1, 6, 5, 3}, kChannelsLast); }),
               Contains("self must be int8, got uint8"));
    CHECK_THAT(message([](Fixture& f) { f.out = OwnedTensor(DType::Float32, {1, 6, 5, 3}, kChannelsLast); }),
               Contains("out must be int8, got float32"));
    CHECK_THAT(message([](Fixture& f) { f.out = OwnedTensor(DType::Int8, {1, 6, 5, 4}, kChannelsLast); }),
               Contains("out has sizes [1, 6, 5, 4], but self has [1, 6, 5, 3]"));
    CHECK_THAT(message([](Fixture& f) { f.out = OwnedTensor(DType::Int8, {1, 6, 5, 3}); }), Contains("out has strides"));
    CHECK_THAT(message([](Fixture& f) { f.self = OwnedTensor(DType::Int8, {0, 6}); }), Contains("self is empty"));
    CHECK_THAT(message([](Fixture& f) { f.c.self_scale = 0.0; }), Contains("self_scale must be a positive"));
    CHECK_THAT(message([](Fixture& f) { f.c.out_scale = std::nan(""); }), Contains("output_scale must be a positive"));
    CHECK_THAT(message([](Fixture& f) { f.c.self_zp = 128; }), Contains("self_zero_point must lie in [-128, 127]"));
    CHECK_THAT(message([](Fixture& f) { f.c.out_zp = -129; }), Contains("output_zero_point must lie in [-128, 127]"));
    CHECK_THAT(message([](Fixture& f) { f.c.out_min = 5, f.c.out_max = 5; }), Contains("output_min < output_max"));
  }
}
