// et_xnnpack::adaptive_avg_pool2d.out (global average pooling) beside a
// float64 reference (exact but on ties), and et_xnnpack::max_pool2d.out beside an exact one
// (odd sizes, strides, padding, dilation, saturation, int8's range ends),
// on 1 and 2 threads and with AVX2 and native microkernels, and their
// argument errors.
#include "test_util.h"

namespace {

using et_ops::DType;
using namespace et_ops::test;

constexpr const char* kAveragePool = "et_xnnpack::adaptive_avg_pool2d.out";
constexpr const char* kMaxPool = "et_xnnpack::max_pool2d.out";
// Element [n][c][y][x] of a channels-last [N, C, H, W] tensor.
std::size_t at(int64_t c_count, int64_t height, int64_t width, int64_t n, int64_t c, int64_t y, int64_t x) {
  return std::size_t(((n * height + y) * width + x) * c_count + c);
}

struct AverageCase {
  int64_t n, c, h, w;
  double out_scale = 0.04;
  int64_t out_min = -128, out_max = 127;
};

struct AveragePool {
  AverageCase k;
  OwnedTensor self, out;
  double self_scale = 0.05;
  int64_t self_zp = 9, out_zp = -6;
  std::vector<int64_t> output_size{1, 1};
  explicit AveragePool(const AverageCase& c)
      : k(c), self(DType::Int8, {c.n, c.c, c.h, c.w}, kChannelsLast), out(DType::Int8, {c.n, c.c, 1, 1}, kChannelsLast) {
    fill_random(self.data<int8_t>(), std::size_t(self.tensor->numel()), 31);
    // A bias to one end per channel, so that the means spread to both ends of int8.
    for (int64_t i = 0; i < self.tensor->numel(); ++i) {
      int8_t& v = self.data<int8_t>()[i];
      v = int8_t(std::clamp(int(v) / 2 + (i % k.c % 3 == 0 ? 90 : i % k.c % 3 == 1 ? -90 : 0), -128, 127));
    }
  }
  // The mean of each [n][c] in output steps, before rounding.
  std::vector<double> means() const {
    std::vector<double> out_steps(std::size_t(k.n * k.c));
    for (int64_t n = 0; n < k.n; ++n)
      for (int64_t c = 0; c < k.c; ++c) {
        int64_t sum = 0;
        for (int64_t y = 0; y < k.h; ++y)
          for (int64_t x = 0; x < k.w; ++x) sum += self.data<int8_t>()[at(k.c, k.h, k.w, n, c, y, x)] - self_zp;
        out_steps[std::size_t(n * k.c + c)] =
            double(sum) / double(k.h * k.w) * double(float(self_scale)) / double(float(k.out_scale));
      }
    return out_steps;
  }
  std::vector<int8_t> reference() const {
    std::vector<int8_t> expected;
    for (const double mean : means()) expected.push_back(requantize(mean, out_zp, k.out_min, k.out_max));
    return expected;
  }
  Call call() {
    Call call;
    call.tensor(self).real(self_scale).integer(self_zp).list(output_size).real(k.out_scale).integer(out_zp)
        .integer(k.out_min).integer(k.out_max).tensor(out);
    return call;
  }
};

struct MaxCase {
  int64_t n, c, h, w;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;
};

// The output extent of one dimension as PyTorch computes it (the error
// cases' invalid strides count as 1): with ceil_mode rounded up, but the
// last window starts inside the input or its leading padding.
int64_t extent(int64_t in, int64_t k, int64_t stride, int64_t padding, int64_t dilation, bool ceil_mode) {
  stride = std::max<int64_t>(stride, 1);
  const int64_t span = in + 2 * padding - dilation * (k - 1) - 1;
  int64_t out = (span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + padding) --out;
  return out;
}

struct MaxPool {
  MaxCase k;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
  OwnedTensor self, out;
  explicit MaxPool(const MaxCase& c)
      : k(c), kh(c.kernel[0]), kw(c.kernel.back()), sh(c.stride.empty() ? kh : c.stride[0]),
        sw(c.stride.empty() ? kw : c.stride.back()), ph(c.padding[0]), pw(c.padding.back()), dh(c.dilation[0]),
        dw(c.dilation.back()), oh(extent(c.h, kh, sh, ph, dh, c.ceil_mode)), ow(extent(c.w, kw, sw, pw, dw, c.ceil_mode)),
        self(DType::Int8, {c.n, c.c, c.h, c.w}, kChannelsLast), out(DType::Int8, {c.n, c.c, oh, ow}, kChannelsLast) {
    fill_random(self.data<int8_t>(), std::size_t(self.tensor->numel()), 32);
  }
  // The largest input of each window; padding is no value at all.
  std::vector<int8_t> reference() const {
    std::vector<int8_t> expected(std::size_t(out.tensor->numel()));
    for (int64_t n = 0; n < k.n; ++n)
      for (int64_t c = 0; c < k.c; ++c)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            int best = -1000;  // below int8: a window of padding only would show
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t iy = y * sh - ph + i * dh, ix = x * sw - pw + j * dw;
                if (iy >= 0 && ix >= 0 && iy < k.h && ix < k.w)
                  best = std::max(best, int(self.data<int8_t>()[at(k.c, k.h, k.w, n, c, iy, ix)]));
              }
            expected[at(k.c, oh, ow, n, c, y, x)] = int8_t(best);
          }
    return expected;
  }
  Call call() {
    Call call;
    call.tensor(self).list(k.kernel).list(k.stride).list(k.padding).list(k.dilation).boolean(k.ceil_mode).tensor(out);
    return call;
  }
};

}  // namespace

TEST_CASE("adaptive_avg_pool2d agrees with the quantized global average's reference", "[xnnpack][pooling]") {
  const AverageCase cases[] = {
      {1, 13, 7, 5},             // odd sizes
      {2, 64, 7, 7},             // batch 2, a classifier's last feature map
      {1, 24, 1, 1},             // one pixel
      {1, 9, 3, 11, 0.02},       // a small output scale: both ends of int8 saturate
      {2, 17, 4, 6, 0.02, -9, 40},  // a fused clamp
  };
  for (const AverageCase& k : cases) {
    INFO("n=" << k.n << " c=" << k.c << " h=" << k.h << " w=" << k.w << " output_scale=" << k.out_scale);
    AveragePool pool(k);
    Call call = pool.call();
    run_on_one_and_two_threads(call, kAveragePool, pool.out);
    const std::vector<int8_t> expected = pool.reference();
    check_exact_but_at_ties(pool.out.data<int8_t>(), expected, pool.means());
    if (k.out_scale < 0.04) check_saturates(expected, k.out_min, k.out_max);  // the saturating cases
  }
}

TEST_CASE("max_pool2d agrees with the exact maximum of each window", "[xnnpack][pooling]") {
  const MaxCase cases[] = {
      {1, 13, 9, 7, {3}, {2}, {1}, {1}},                   // a stem's 3x3/2, padded, odd sizes
      {2, 5, 8, 8, {2, 2}, {}, {0}, {1}},                  // an empty stride: the kernel size
      {1, 7, 11, 10, {3, 3}, {1, 1}, {1, 1}, {2, 2}},      // dilated
      {1, 16, 6, 9, {2, 3}, {1, 2}, {1, 1}, {1}},          // rectangular windows and strides
      {1, 3, 5, 5, {1, 1}, {2, 2}, {0, 0}, {1, 1}},        // a 1x1 window: subsampling
      {1, 9, 14, 13, {3}, {2}, {0}, {1}, true},            // ceil_mode: GoogLeNet's partial last windows
      {1, 5, 7, 8, {2, 3}, {2, 2}, {1, 1}, {1}, true},     // ceil_mode, padded: the last window dropped
      {1, 6, 10, 9, {3}, {2}, {1}, {2}, true},             // ceil_mode, dilated
      {1, 3, 6, 6, {1}, {2}, {0}, {1}, true},              // ceil_mode, a 1x1 window
  };
  for (const MaxCase& k : cases) {
    INFO("c=" << k.c << " h=" << k.h << " w=" << k.w << " kernel=" << k.kernel[0] << "x" << k.kernel.back());
    MaxPool pool(k);
    Call call = pool.call();
    run_on_one_and_two_threads(call, kMaxPool, pool.out);
    const std::vector<int8_t> expected = pool.reference();
    CHECK(std::vector<int8_t>(pool.out.data<int8_t>(), pool.out.data<int8_t>() + expected.size()) == expected);
  }
}

TEST_CASE("max_pool2d keeps int8's range ends and pads with no value", "[xnnpack][pooling]") {
  for (const int8_t value : {int8_t(-128), int8_t(127)}) {
    INFO("every input " << int(value));
    MaxPool pool({1, 10, 5, 7, {3}, {2}, {1}, {1}});
    std::fill_n(pool.self.data<int8_t>(), pool.self.tensor->numel(), value);
    Call call = pool.call();
    run_on_one_and_two_threads(call, kMaxPool, pool.out);
    const int8_t* got = pool.out.data<int8_t>();
    CHECK(std::all_of(got, got + pool.out.tensor->numel(), [&](int8_t v) { return v == value; }));
  }
}

TEST_CASE("pooling gives the same bytes with AVX2 and native microkernels", "[xnnpack][pooling][isa]") {
  check_same_bytes_on_every_isa("[pooling]~[isa]");
}

TEST_CASE("adaptive_avg_pool2d names what is wrong with its arguments", "[xnnpack][pooling]") {
  const AverageCase k{1, 6, 5, 3};
  auto message = [&](auto&& change) { return error_message<AveragePool>(kAveragePool, k, change); };
  using Catch::Matchers::Contains;
  CHECK_THAT(message([](AveragePool& p) { p.self = OwnedTensor(DType::UInt8, {1, 6, 5, 3}, kChannelsLast); }),
             Contains("self must be int8, got uint8"));
  CHECK_THAT(message([](AveragePool& p) { p.self = OwnedTensor(DType::Int8, {6, 5, 3}); }),
             Contains("self must have 4 dimensions, got 3"));
  CHECK_THAT(message([](AveragePool& p) { p.self = OwnedTensor(DType::Int8, {1, 6, 5, 3}); }),
             Contains("self ([1, 6, 5, 3]) must be channels-last"));
  CHECK_THAT(message([](AveragePool& p) { p.output_size = {2, 2}; }),
             Contains("output_size must be [1, 1] (global average pooling), got [2, 2]"));
  CHECK_THAT(message([](AveragePool& p) { p.out = OwnedTensor(DType::Int8, {1, 5, 1, 1}, kChannelsLast); }),
             Contains("out has sizes [1, 5, 1, 1], expected [1, 6, 1, 1]"));
  CHECK_THAT(message([](AveragePool& p) { p.out = OwnedTensor(DType::Int8, {1, 6}); }),
             Contains("out has sizes [1, 6], expected [1, 6, 1, 1]"));
  CHECK_THAT(message([](AveragePool& p) { p.out = OwnedTensor(DType::Float32, {1, 6, 1, 1}, kChannelsLast); }),
             Contains("out must be int8, got float32"));
  CHECK_THAT(message([](AveragePool& p) { p.self_scale = 0.0; }), Contains("self_scale must be a positive"));
  CHECK_THAT(message([](AveragePool& p) { p.k.out_scale = -0.04; }), Contains("output_scale must be a positive"));
  CHECK_THAT(message([](AveragePool& p) { p.self_zp = 128; }), Contains("self_zero_point must lie in [-128, 127]"));
  CHECK_THAT(message([](AveragePool& p) { p.out_zp = -300; }), Contains("output_zero_point must lie in [-128, 127]"));
  CHECK_THAT(message([](AveragePool& p) { p.k.out_min = 50, p.k.out_max = 40; }), Contains("output_min < output_max"));
  CHECK_THAT(message([](AveragePool& p) { p.self_scale = 1e4, p.k.out_scale = 1e-3; }),
             Contains("self_scale / (output_scale * 15 pixels)"));
}

TEST_CASE("max_pool2d names what is wrong with its arguments", "[xnnpack][pooling]") {
  const MaxCase k{1, 6, 7, 7, {3}, {2}, {1}, {1}};
  auto message = [&](auto&& change) { return error_message<MaxPool>(kMaxPool, k, change); };
  using Catch::Matchers::Contains;
  CHECK_THAT(message([](MaxPool& p) { p.self = OwnedTensor(DType::UInt8, {1, 6, 7, 7}, kChannelsLast); }),
             Contains("self must be int8, got uint8"));
  CHECK_THAT(message([](MaxPool& p) { p.self = OwnedTensor(DType::Int8, {1, 1, 6, 7, 7}); }),
             Contains("self must have 4 dimensions, got 5"));
  CHECK_THAT(message([](MaxPool& p) { p.self = OwnedTensor(DType::Int8, {1, 6, 7, 7}); }),
             Contains("self ([1, 6, 7, 7]) must be channels-last"));
  CHECK_THAT(message([](MaxPool& p) { p.k.kernel = {3, 3, 3}; }), Contains("kernel_size must have 1 or 2 values, got 3"));
  CHECK_THAT(message([](MaxPool& p) { p.k.kernel = {0, 3}; }), Contains("kernel_size must be at least 1"));
  CHECK_THAT(message([](MaxPool& p) { p.k.stride = {0}; }), Contains("stride must be at least 1"));
  CHECK_THAT(message([](MaxPool& p) { p.k.padding = {-1}; }), Contains("padding must be at least 0"));
  CHECK_THAT(message([](MaxPool& p) { p.k.padding = {2}; }), Contains("padding [2, 2] must be at most half of kernel_size [3, 3]"));
  CHECK_THAT(message([](MaxPool& p) { p.k.dilation = {1, 0}; }), Contains("dilation must be at least 1"));
  CHECK_THAT(message([](MaxPool& p) { p.k.ceil_mode = true, p.self = OwnedTensor(DType::Int8, {1, 6, 8, 8}, kChannelsLast); }),
             Contains("out has sizes [1, 6, 4, 4], expected [1, 6, 5, 5]"));
  CHECK_THAT(message([](MaxPool& p) { p.k.kernel = {5}, p.k.padding = {0}, p.self = OwnedTensor(DType::Int8, {1, 6, 3, 3}, kChannelsLast); }),
             Contains("the pooling window does not fit self [1, 6, 3, 3]"));
  CHECK_THAT(message([](MaxPool& p) { p.out = OwnedTensor(DType::Int8, {1, 6, 3, 4}, kChannelsLast); }),
             Contains("out has sizes [1, 6, 3, 4], expected [1, 6, 4, 4]"));
  CHECK_THAT(message([](MaxPool& p) { p.out = OwnedTensor(DType::Int8, {1, 5, 4, 4}, kChannelsLast); }),
             Contains("out has sizes [1, 5, 4, 4], expected [1, 6, 4, 4]"));
  CHECK_THAT(message([](MaxPool& p) { p.out = OwnedTensor(DType::UInt8, {1, 6, 4, 4}, kChannelsLast); }),
             Contains("out must be int8, got uint8"));
  CHECK_THAT(message([](MaxPool& p) { p.out = OwnedTensor(DType::Int8, {1, 6, 4, 4}); }),
             Contains("out ([1, 6, 4, 4]) must be channels-last"));
}

TEST_CASE("max_pool2d refuses a window whose indirection buffer is beyond the kernel memory limit "
          "(fuzz_xnnpack_kernels: workspace_beyond_limits)", "[xnnpack][pooling][limits]") {
  // A 65535x65535 window padded by 32767 over a 3x3 image: 9 output
  // pixels, but XNNPACK's indirection buffer would hold 8 * (16 + 3 *
  // (65535^2 + 2 * 65535)) bytes (103 GB). The kernel refuses when it is
  // prepared, before XNNPACK is asked to create the operator.
  const MaxCase k{1, 1, 3, 3, {65535}, {1}, {32767}, {1}};
  using Catch::Matchers::Contains;
  CHECK_THAT(error_message<MaxPool>(kMaxPool, k, [](MaxPool&) {}),
             Contains("et_xnnpack::max_pool2d.out: XNNPACK's indirection buffer for a 65535x65535 window (stride 1, "
                      "dilation 1) over 3x3 output pixels would take 103079215208 bytes, beyond the kernel memory "
                      "limit of 1073741824 bytes (raise it with ET_OPS_KERNEL_MAX_BYTES)"));
}
