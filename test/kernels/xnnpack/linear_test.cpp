// et_xnnpack::linear.out beside a float64 reference of the quantized linear
// layer (per-channel and per-tensor weights, inputs of any rank, odd sizes,
// saturation and a fused clamp) on 1 and 2 threads and with AVX2 and
// native microkernels, and its argument errors.
#include "test_util.h"

namespace {

using et_ops::DType;
using namespace et_ops::test;

constexpr const char* kLinear = "et_xnnpack::linear.out";

struct Case {
  std::vector<int64_t> rows;  // the input's sizes but the last
  int64_t in_features, out_features;
  bool per_channel;
  double out_scale = 0.5;
  int64_t out_min = -128, out_max = 127;
  bool with_bias = true;
};

std::vector<int64_t> with_last(std::vector<int64_t> sizes, int64_t last) {
  sizes.push_back(last);
  return sizes;
}

struct Linear {
  Case c;
  OwnedTensor input, weight, scales, bias, out;
  double in_scale = 0.02;
  int64_t in_zp = 7, out_zp = -4;
  explicit Linear(const Case& k)
      : c(k), input(DType::Int8, with_last(k.rows, k.in_features)),
        weight(DType::Int8, {k.out_features, k.in_features}),
        scales(DType::Float32, {k.per_channel ? k.out_features : 1}),
        bias(DType::Float32, {k.out_features}),
        out(DType::Int8, with_last(k.rows, k.out_features)) {
    fill_random(input.data<int8_t>(), std::size_t(input.tensor->numel()), 11);
    fill_random(weight.data<int8_t>(), std::size_t(weight.tensor->numel()), 12);
    for (int64_t i = 0; i < scales.tensor->numel(); ++i) scales.data<float>()[i] = 0.004f + 0.0015f * float(i % 5);
    for (int64_t i = 0; i < k.out_features; ++i) bias.data<float>()[i] = 0.3f * float(i % 7) - 0.9f;
  }
  std::vector<int8_t> reference() const {
    const int64_t k_count = c.in_features, o_count = c.out_features, rows = input.tensor->numel() / k_count;
    const auto* x = input.data<int8_t>();
    const auto* w = weight.data<int8_t>();
    const auto* sc = scales.data<float>();
    std::vector<int8_t> expected(std::size_t(rows * o_count));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < o_count; ++o) {
        const float ws = sc[c.per_channel ? o : 0];
        int64_t acc = c.with_bias ? quantized_bias(bias.data<float>()[o], in_scale, ws) : 0;
        for (int64_t i = 0; i < k_count; ++i) acc += (int64_t(x[r * k_count + i]) - in_zp) * w[o * k_count + i];
        const double multiplier = double(float(in_scale)) * double(ws) / double(float(c.out_scale));
        expected[std::size_t(r * o_count + o)] =
            requantize(double(acc) * multiplier, out_zp, c.out_min, c.out_max);
      }
    return expected;
  }
  Call call() {
    Call call;
    call.tensor(input).real(in_scale).integer(in_zp).tensor(weight).tensor(scales);
    if (c.with_bias) call.tensor(bias);
    else call.none();
    call.real(c.out_scale).integer(out_zp).integer(c.out_min).integer(c.out_max).tensor(out);
    return call;
  }
};

}  // namespace

TEST_CASE("linear agrees with the quantized linear layer's reference", "[xnnpack][linear]") {
  const Case cases[] = {
      {{17}, 37, 19, true},                     // odd sizes, per-channel weights
      {{3, 5}, 16, 24, false},                  // a 3-dim input, per-tensor weights
      {{1}, 200, 33, true},                     // one row, long rows
      {{9}, 21, 13, true, 0.5, -128, 127, false},  // no bias
      {{2, 2, 4}, 24, 10, true, 0.08},          // a small output scale: both ends of int8 saturate
      {{11}, 15, 12, false, 0.03, -20, 30},     // a fused clamp
  };
  for (const Case& k : cases) {
    INFO("in_features=" << k.in_features << " out_features=" << k.out_features << " per_channel=" << k.per_channel
                        << " output_scale=" << k.out_scale);
    Linear linear(k);
    Call call = linear.call();
    run_on_one_and_two_threads(call, kLinear, linear.out);
    const std::vector<int8_t> expected = linear.reference();
    check_close(linear.out.data<int8_t>(), expected);
    if (k.out_scale < 0.1) check_saturates(expected, k.out_min, k.out_max);  // the saturating cases
  }
}

TEST_CASE("linear gives the same bytes with AVX2 and native microkernels", "[xnnpack][linear][isa]") {
  check_same_bytes_on_every_isa("[linear]~[isa]");
}

TEST_CASE("linear names what is wrong with its arguments", "[xnnpack][linear]") {
  const Case k{{5}, 13, 7, true};
  auto message = [&](auto&& change) { return error_message<Linear>(kLinear, k, change); };
  using Catch::Matchers::Contains;
  CHECK_THAT(message([](Linear& l) { l.input = OwnedTensor(DType::UInt8, {5, 13}); }),
             Contains("input must be int8, got uint8"));
  CHECK_THAT(message([](Linear& l) { l.input = OwnedTensor(DType::Int8, {}); }),
             Contains("input must have at least 1 dimension"));
  CHECK_THAT(message([](Linear& l) { l.weight = OwnedTensor(DType::Float32, {7, 13}); }),
             Contains("weight must be int8, got float32"));
  CHECK_THAT(message([](Linear& l) { l.weight = OwnedTensor(DType::Int8, {7, 12}); }),
             Contains("weight must have sizes [out_features, 13] for input [5, 13], got [7, 12]"));
  CHECK_THAT(message([](Linear& l) { l.weight = OwnedTensor(DType::Int8, {1, 7, 13}); }),
             Contains("weight must have sizes [out_features, 13]"));
  CHECK_THAT(message([](Linear& l) { l.scales = OwnedTensor(DType::Float32, {3}); }),
             Contains("weight_scales must have 1 or 7 elements"));
  CHECK_THAT(message([](Linear& l) { l.scales = OwnedTensor(DType::Float64, {7}); }),
             Contains("weight_scales must be float32, got float64"));
  CHECK_THAT(message([](Linear& l) { l.bias = OwnedTensor(DType::Float32, {6}); }),
             Contains("bias must have sizes [7]"));
  CHECK_THAT(message([](Linear& l) { l.in_scale = 0.0; }), Contains("input_scale must be a positive"));
  CHECK_THAT(message([](Linear& l) { l.in_scale = -0.02; }), Contains("input_scale must be a positive"));
  CHECK_THAT(message([](Linear& l) { l.c.out_scale = 0.0; }), Contains("output_scale must be a positive"));
  CHECK_THAT(message([](Linear& l) { l.c.out_scale = std::nan(""); }), Contains("output_scale must be a positive"));
  CHECK_THAT(message([](Linear& l) { l.scales.data<float>()[2] = 0.0f; }),
             Contains("weight_scales[2] must be a positive"));
  CHECK_THAT(message([](Linear& l) { l.scales.data<float>()[4] = -0.01f; }),
             Contains("weight_scales[4] must be a positive"));
  CHECK_THAT(message([](Linear& l) { l.in_zp = 128; }), Contains("input_zero_point must lie in [-128, 127]"));
  CHECK_THAT(message([](Linear& l) { l.out_zp = -129; }), Contains("output_zero_point must lie in [-128, 127]"));
  CHECK_THAT(message([](Linear& l) { l.out = OwnedTensor(DType::Int8, {5, 6}); }),
             Contains("out has sizes [5, 6], expected [5, 7]"));
  CHECK_THAT(message([](Linear& l) { l.out = OwnedTensor(DType::Int8, {7, 5}); }),
             Contains("out has sizes [7, 5], expected [5, 7]"));
  CHECK_THAT(message([](Linear& l) { l.out = OwnedTensor(DType::UInt8, {5, 7}); }), Contains("out must be int8"));
  CHECK_THAT(message([](Linear& l) { l.c.out_min = 10, l.c.out_max = 5; }), Contains("output_min < output_max"));
  CHECK_THAT(message([](Linear& l) { l.c.out_max = 128; }), Contains("output_max <= 127"));
  CHECK_THAT(message([](Linear& l) { l.in_scale = 100.0, l.c.out_scale = 1e-4; }),
             Contains("input_scale * weight_scales[0] / output_scale"));
}
