// et_xnnpack::conv2d.out beside a float64 reference of the quantized
// convolution (grouped, depthwise, strided, padded, per-channel and
// per-tensor weights, fused clamp) on 1 and 2 threads and with AVX2 and
// native microkernels, and its argument errors.
#include <omp.h>

#include <array>
#include <filesystem>
#include <random>

#include "simd_targets.h"
#include "test_util.h"

namespace {

using et_ops::DType;
using namespace et_ops::test;

constexpr const char* kConv = "et_xnnpack::conv2d.out";
struct Case {
  int64_t n, c, h, w, o, k, stride, padding, groups;
  bool per_channel;
  int64_t out_min = -128, out_max = 127;
};

struct Conv {
  Case c;
  int64_t oh, ow;
  OwnedTensor input, weight, scales, bias, out;
  double in_scale = 0.02, out_scale = 0.5;
  int64_t in_zp = -3, out_zp = 5;
  explicit Conv(const Case& k)
      : c(k), oh((k.h + 2 * k.padding - k.k) / k.stride + 1), ow((k.w + 2 * k.padding - k.k) / k.stride + 1),
        input(DType::Int8, {k.n, k.c, k.h, k.w}, kChannelsLast),
        weight(DType::Int8, {k.o, k.c / k.groups, k.k, k.k}),
        scales(DType::Float32, {k.per_channel ? k.o : 1}),
        bias(DType::Float32, {k.o}),
        out(DType::Int8, {k.n, k.o, oh, ow}, kChannelsLast) {
    fill_random(input.data<int8_t>(), std::size_t(input.tensor->numel()), 1);
    fill_random(weight.data<int8_t>(), std::size_t(weight.tensor->numel()), 2);
    for (int64_t i = 0; i < scales.tensor->numel(); ++i) scales.data<float>()[i] = 0.01f + 0.003f * float(i % 7);
    for (int64_t i = 0; i < k.o; ++i) bias.data<float>()[i] = 0.25f * float(i % 5) - 0.5f;
  }
  // Element [n][c][y][x] of a channels-last tensor.
  static std::size_t at(const Case& k, int64_t channels, int64_t h, int64_t w, int64_t n, int64_t c, int64_t y,
                        int64_t x) {
    (void)k;
    return std::size_t(((n * h + y) * w + x) * channels + c);
  }
  std::vector<int8_t> reference() const {
    std::vector<int8_t> expected(std::size_t(out.tensor->numel()));
    const auto* in = reinterpret_cast<const int8_t*>(input.bytes.data());
    const auto* wt = reinterpret_cast<const int8_t*>(weight.bytes.data());
    const auto* sc = reinterpret_cast<const float*>(scales.bytes.data());
    const auto* b = reinterpret_cast<const float*>(bias.bytes.data());
    const int64_t cg = c.c / c.groups, og = c.o / c.groups;
    for (int64_t n = 0; n < c.n; ++n)
      for (int64_t o = 0; o < c.o; ++o)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            const double ws = sc[c.per_channel ? o : 0];
            int64_t acc = int64_t(std::nearbyint(double(b[o]) / (float(in_scale) * ws)));
            const int64_t g = o / og;
            for (int64_t i = 0; i < cg; ++i)
              for (int64_t ky = 0; ky < c.k; ++ky)
                for (int64_t kx = 0; kx < c.k; ++kx) {
                  const int64_t iy = y * c.stride - c.padding + ky, ix = x * c.stride - c.padding + kx;
                  if (iy < 0 || ix < 0 || iy >= c.h || ix >= c.w) continue;
                  acc += (int64_t(in[at(c, c.c, c.h, c.w, n, g * cg + i, iy, ix)]) - in_zp) *
                         wt[((o * cg + i) * c.k + ky) * c.k + kx];
                }
            expected[at(c, c.o, oh, ow, n, o, y, x)] = requantize(
                double(acc) * (double(float(in_scale)) * ws / double(float(out_scale))), out_zp, c.out_min, c.out_max);
          }
    return expected;
  }
  Call call() {
    Call call;
    call.tensor(input).real(in_scale).integer(in_zp).tensor(weight).tensor(scales).tensor(bias)
        .list({c.stride, c.stride}).list({c.padding, c.padding}).list({1, 1}).integer(c.groups)
        .real(out_scale).integer(out_zp).integer(c.out_min).integer(c.out_max).tensor(out);
    return call;
  }
};

}  // namespace

// The threads of this process.
std::size_t process_threads() {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) count += entry.is_directory();
  return count;
}

// First in the file: oneDNN's OpenMP threads, once started, would stay.
// The application asks OpenMP for 3 threads; a conv2d on one thread (made
// and run under that setting) must still start none (oneDNN plans its work
// for the thread count it is created under).
TEST_CASE("conv2d on one thread starts no other thread", "[xnnpack][conv2d][openmp]") {
  const Case k{1, 64, 9, 9, 64, 3, 1, 1, 1, true};  // dense, many products per output: oneDNN where it runs
  Conv conv(k);
  Call call = conv.call();
  omp_set_num_threads(3);
  const std::size_t before = process_threads();
  REQUIRE(call.run(kConv, 1).ok());
  CHECK(process_threads() == before);
  check_close(conv.out.data<int8_t>(), conv.reference());
}

TEST_CASE("conv2d agrees with the quantized convolution's reference", "[xnnpack][conv2d]") {
  const Case cases[] = {
      {1, 3, 9, 9, 8, 3, 2, 1, 1, true},          // a stem: few input channels, strided
      {1, 16, 7, 7, 24, 1, 1, 0, 1, true},        // pointwise
      {1, 12, 8, 8, 12, 3, 1, 1, 12, true},       // depthwise
      {2, 8, 6, 6, 8, 3, 2, 1, 2, false},         // grouped, batch 2, per-tensor weights
      {1, 8, 5, 5, 16, 3, 1, 1, 1, true, 5, 60},  // fused relu6-like clamp
  };
  for (const Case& k : cases) {
    INFO("c=" << k.c << " o=" << k.o << " k=" << k.k << " groups=" << k.groups);
    Conv conv(k);
    Call call = conv.call();
    run_on_one_and_two_threads(call, kConv, conv.out);
    check_close(conv.out.data<int8_t>(), conv.reference());
  }
}

// Random layers of the sizes real networks have, with random scales, zero
// points and clamps. On CPUs with int8 dot products the native run computes
// the dense ones with many products per output on oneDNN (in one slice of
// output channels per thread), the AVX2 run all on XNNPACK: the [isa] case
// below requires the same bytes.
TEST_CASE("conv2d agrees with the reference on random layers", "[xnnpack][conv2d]") {
  std::mt19937 rng(2024);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int i = 0; i < 40; ++i) {
    const int64_t kernel = std::array<int64_t, 4>{1, 3, 5, 7}[std::size_t(pick(0, 3))];
    const bool depthwise = pick(0, 2) == 0;
    const int64_t channels = depthwise ? pick(1, 48) : pick(1, 96), size = pick(kernel, 20);
    const Case k{pick(1, 2), channels, size, size + pick(0, 3), depthwise ? channels : pick(1, 160), kernel,
                 pick(1, 2), pick(0, kernel / 2), depthwise ? channels : 1, pick(0, 1) == 1,
                 pick(-128, -1), pick(0, 127)};
    INFO("case " << i << ": n=" << k.n << " c=" << k.c << " " << k.h << "x" << k.w << " o=" << k.o << " k=" << k.k
                 << " stride=" << k.stride << " padding=" << k.padding << " groups=" << k.groups);
    Conv conv(k);
    conv.in_scale = std::uniform_real_distribution<double>(0.005, 0.05)(rng);
    // Outputs spread over some tens of steps, some saturating.
    conv.out_scale = conv.in_scale * std::sqrt(double(k.c / k.groups * k.k * k.k)) *
                     std::uniform_real_distribution<double>(0.7, 2.8)(rng);
    conv.in_zp = pick(-128, 127);
    conv.out_zp = pick(-60, 60);
    Call call = conv.call();
    run_on_one_and_two_threads(call, kConv, conv.out);
    check_close(conv.out.data<int8_t>(), conv.reference());
  }
}

// Input bytes drawn from [low, high].
void fill_window(OwnedTensor& t, uint32_t seed, int low, int high) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(low, high);
  for (int64_t i = 0; i < t.tensor->numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(d(rng));
}

// An output scale that spreads the outputs over some tens of steps.
double spread_out_scale(const Case& k, double in_scale, double factor) {
  return in_scale * std::sqrt(double(k.c / k.groups * k.k * k.k)) * factor;
}

// Random layers whose input bytes all lie within 127 of the smallest (7-bit
// activations: a ReLU's output from its zero point up, PyTorch's
// reduce_range, or narrower): on AVX2 and AVX-512 without VNNI, oneDNN's
// vpmaddubsw kernels run them (the [isa] case compares their bytes with
// XNNPACK's).
TEST_CASE("conv2d agrees with the reference on inputs within 128 values", "[xnnpack][conv2d]") {
  std::mt19937 rng(77);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int i = 0; i < 24; ++i) {
    const int64_t kernel = std::array<int64_t, 3>{1, 3, 5}[std::size_t(pick(0, 2))];
    const bool depthwise = pick(0, 2) == 0;
    const int64_t channels = depthwise ? pick(1, 64) : pick(1, 128), size = pick(kernel, 16);
    const Case k{pick(1, 2), channels, size, size + pick(0, 2), depthwise ? channels : pick(1, 160), kernel,
                 pick(1, 2), pick(0, kernel / 2), depthwise ? channels : 1, true, pick(-128, -1), pick(0, 127)};
    Conv conv(k);
    conv.in_zp = pick(-128, 100);
    // From the zero point up (a ReLU's output), the lowest 128 values, or a window anywhere.
    const int start = i % 3 == 0 ? int(conv.in_zp) : i % 3 == 1 ? -128 : int(pick(-128, 127));
    const int width = i % 4 == 3 ? int(pick(0, 127)) : 127;
    fill_window(conv.input, uint32_t(i), start, std::min(127, start + width));
    INFO("case " << i << ": n=" << k.n << " c=" << k.c << " " << k.h << "x" << k.w << " o=" << k.o << " k=" << k.k
                 << " groups=" << k.groups << " input in [" << start << ", " << start + width << "]");
    conv.in_scale = std::uniform_real_distribution<double>(0.005, 0.05)(rng);
    conv.out_scale = spread_out_scale(k, conv.in_scale, std::uniform_real_distribution<double>(0.4, 1.5)(rng));
    conv.out_zp = pick(-60, 60);
    Call call = conv.call();
    run_on_one_and_two_threads(call, kConv, conv.out);
    check_close(conv.out.data<int8_t>(), conv.reference());
  }
}

// The largest pairs of products a 16-bit sum can hold exactly: every input
// byte 127 above the window's start (some 126) and every weight -128 (some
// -127), with a 3x3x32 layer (the fused form) and a 3x3x64 one (int32
// accumulators); and the same weights over inputs that span all 256 values,
// whose pairs of products do not fit 16 bits (vpmaddubsw would saturate
// them): XNNPACK must run those.
TEST_CASE("conv2d is exact at the edge of 16-bit pairs and beyond", "[xnnpack][conv2d]") {
  for (const int64_t channels : {32, 64}) {
    for (const bool full_range : {false, true}) {
      const Case k{1, channels, 8, 8, 64, 3, 1, 1, 1, true};
      Conv conv(k);
      conv.in_zp = full_range ? 0 : -20;
      if (full_range) {  // -128 and 127 alternating, some bytes between
        for (int64_t i = 0; i < conv.input.tensor->numel(); ++i)
          conv.input.data<int8_t>()[i] = int8_t(i % 7 == 0 ? (i * 37) % 256 - 128 : i % 2 == 0 ? -128 : 127);
      } else {
        fill_window(conv.input, 5, int(conv.in_zp) + 126, int(conv.in_zp) + 127);
      }
      fill_window(conv.weight, 6, -128, -127);
      conv.in_scale = 0.01;
      conv.out_scale = conv.in_scale * 0.02 * 128.0 * 127.0 * double(channels * 9) / (full_range ? 3000.0 : 150.0);
      INFO(channels << " channels, " << (full_range ? "inputs over 256 values" : "inputs 127 above the window's start"));
      Call call = conv.call();
      run_on_one_and_two_threads(call, kConv, conv.out);
      const std::vector<int8_t> expected = conv.reference();
      check_close(conv.out.data<int8_t>(), expected);
      // Not all clamped: a saturated sum would move outputs the check sees.
      CHECK(std::count(expected.begin(), expected.end(), int8_t(-128)) < int64_t(expected.size()) / 2);
    }
  }
}

// 7-bit inputs with a few bytes far above the window (an activation beyond
// the range its scale was calibrated for): at corners, edges and inside,
// in dense, strided, grouped and depthwise layers, on every Highway target. oneDNN's 7-bit kernels
// read them clamped into the window; the output pixels they reach must
// come out exact all the same (the images are large enough that the pixels
// they reach stay below an eighth of the output, where XNNPACK would run
// the layer). Every weight -128: a byte of 127 is 255 steps above the
// window's start, whose pairs of products would not fit 16 bits.
TEST_CASE("conv2d is exact where a few input bytes lie beyond a 7-bit window", "[xnnpack][conv2d]") {
  const Case cases[] = {
      {1, 32, 24, 24, 48, 3, 1, 1, 1, true},   // dense, the fused form
      {2, 64, 16, 16, 64, 3, 1, 1, 1, true},   // dense, int32 accumulators; batch 2
      {1, 24, 31, 31, 32, 3, 2, 1, 1, true},   // strided
      {1, 16, 40, 40, 16, 5, 1, 2, 16, true},  // depthwise 5x5
      {1, 24, 26, 26, 36, 3, 1, 0, 3, false},  // grouped, no padding, per-tensor weights
      {1, 40, 9, 9, 40, 1, 1, 0, 1, true},     // pointwise
  };
  for (const Case& k : cases) {
    Conv conv(k);
    conv.in_zp = -128;  // a ReLU's output: from the zero point up
    fill_window(conv.input, 21, -128, -30);
    fill_window(conv.weight, 22, -128, -128);
    const int64_t h = k.h, w = k.w, c = k.c;
    // Corners, edges, the middle, and two channels of one pixel; bytes of 127 (255 steps above -128).
    const int64_t spots[][4] = {{0, 0, 0, 0},         {0, h - 1, w - 1, c - 1}, {0, 0, w / 2, 1 % c},
                                {0, h / 2, 0, 2 % c}, {0, h / 2, w / 2, 0},      {0, h / 2, w / 2, c - 1},
                                {k.n - 1, h - 1, 0, c / 2}};
    for (const auto& spot : spots)
      conv.input.data<int8_t>()[((spot[0] * h + spot[1]) * w + spot[2]) * c + spot[3]] = 127;
    conv.out_scale = conv.in_scale * 0.02 * 128.0 * 60.0 * double(k.c / k.groups * k.k * k.k) / 100.0;
    INFO("c=" << k.c << " o=" << k.o << " k=" << k.k << " stride=" << k.stride << " groups=" << k.groups);
    Call call = conv.call();
    const std::vector<int8_t> expected = conv.reference();
    for_each_simd_target([&] {  // the pixels computed again are Highway code
      run_on_one_and_two_threads(call, kConv, conv.out);
      check_close(conv.out.data<int8_t>(), expected);
    });
  }
}

// 8-bit activations whose bytes mostly lie in a window of 128 values, with
// tails beyond it (1.5 % of the bytes, up to 255 steps from its start):
// a ReLU's output (from its zero point up) and a signed one (around its
// zero point), in the fused form, the int32 form, a 7x7 stem with stride
// 2 and pointwise layers. With oneDNN's 7-bit kernels the window's bytes
// are read clamped and the tails too many for computing their pixels
// again: the int32 accumulators are corrected, also across the tiles of
// two threads, or (pointwise, few input channels) the pixels they reach
// gathered for XNNPACK; every output must still be the reference's.
TEST_CASE("conv2d is exact on 8-bit inputs with tails beyond a 7-bit window", "[xnnpack][conv2d]") {
  const Case cases[] = {
      {1, 32, 24, 24, 48, 3, 1, 1, 1, true},   // 3x3, the fused form (its int32 form runs these)
      {2, 64, 16, 16, 64, 3, 1, 1, 1, true},   // 3x3, int32 accumulators; batch 2
      {1, 3, 48, 48, 32, 7, 2, 3, 1, true},    // a 7x7 stem with stride 2
      {1, 40, 20, 20, 24, 3, 2, 1, 1, false},  // strided, per-tensor weights
      {2, 16, 24, 24, 48, 1, 1, 0, 1, true},   // pointwise, few input channels: the pixels they reach to XNNPACK
      {1, 96, 12, 12, 64, 1, 1, 0, 1, true},   // pointwise, many input channels: the int32 form
  };
  for (const Case& k : cases) {
    for (const bool relu : {true, false}) {
      Conv conv(k);
      conv.in_zp = relu ? -128 : 3;
      const int start = relu ? -128 : int(conv.in_zp) - 64;
      fill_window(conv.input, 31, start, start + 127);
      std::mt19937 rng(32);
      std::uniform_int_distribution<int> tail(relu ? start + 128 : -128, 127);
      std::bernoulli_distribution in_tail(0.015);
      for (int64_t i = 0; i < conv.input.tensor->numel(); ++i) {
        if (!in_tail(rng)) continue;
        int value = tail(rng);
        if (!relu) value = value < start ? value : std::max(value, start + 128);  // below or above the window
        conv.input.data<int8_t>()[i] = int8_t(value);
      }
      // A ReLU's output meets every weight -128; the signed input random weights, with outputs some tens of
      // steps apart (where a byte left clamped would move its outputs by several).
      fill_window(conv.weight, 33, -128, relu ? -128 : 127);
      conv.out_scale = spread_out_scale(k, conv.in_scale, relu ? 40.0 : 0.8);
      conv.out_zp = relu ? 20 : -10;
      INFO("c=" << k.c << " o=" << k.o << " k=" << k.k << " stride=" << k.stride << (relu ? ", a ReLU's output"
                                                                                           : ", around the zero point"));
      Call call = conv.call();
      const std::vector<int8_t> expected = conv.reference();
      CHECK(std::count(expected.begin(), expected.end(), int8_t(-128)) < int64_t(expected.size()) / 4);
      CHECK(std::count(expected.begin(), expected.end(), int8_t(127)) < int64_t(expected.size()) / 4);
      for_each_simd_target([&] {  // the corrections are Highway code
        run_on_one_and_two_threads(call, kConv, conv.out);
        check_close(conv.out.data<int8_t>(), expected);
      });
    }
  }
}

// One run state over runs whose inputs lie in different windows, then in
// no window of 128 values, then in the first again: each run's output is
// the reference's (the window the last run found is not assumed).
TEST_CASE("conv2d follows its input's range from run to run", "[xnnpack][conv2d]") {
  const Case k{1, 48, 10, 10, 64, 3, 1, 1, 1, true, -100, 120};
  const int windows[][2] = {{-7, 120}, {-128, -1}, {-128, 127}, {-7, 120}, {0, 60}};
  for (const std::size_t threads : {1, 2}) {
    Conv conv(k);
    conv.in_zp = -7;
    conv.out_scale = spread_out_scale(k, conv.in_scale, 0.6);
    Call call = conv.call();
    const et_ops::KernelContext ctx = call.run_prepared(
        kConv, threads, 5, [&](int i) { fill_window(conv.input, uint32_t(10 + i), windows[i][0], windows[i][1]); },
        [&](int i) {
          INFO(threads << " threads, run " << i << ": input in [" << windows[i][0] << ", " << windows[i][1] << "]");
          check_close(conv.out.data<int8_t>(), conv.reference());
          record_output(conv.out);
        });
    INFO(ctx.message());
    REQUIRE(ctx.ok());
  }
}

// The conv2d runs as the reference says on the best target, and every
// other target this machine can run (AVX2, SSE4 and scalar included) gives
// the same bytes.
void check_every_highway_target(Conv& conv) {
  Call call = conv.call();
  REQUIRE(call.run(kConv, 1).ok());
  const std::vector<uint8_t> best = conv.out.contents();
  check_close(conv.out.data<int8_t>(), conv.reference());
  for_each_simd_target([&] {
    std::fill(conv.out.bytes.begin(), conv.out.bytes.end(), 0x55);
    REQUIRE(call.run(kConv, 1).ok());
    CHECK(conv.out.contents() == best);
  });
}

// The uint8 copy of the input (clamped into the window, less its start; the
// range of the bytes found on the way) is a Highway kernel.
TEST_CASE("conv2d's input conversion gives the same bytes on every Highway target", "[xnnpack][conv2d]") {
  const Case k{1, 40, 9, 9, 64, 3, 1, 1, 1, true};
  for (const int start : {-128, -3}) {
    Conv conv(k);
    conv.in_zp = -3;
    fill_window(conv.input, 3, start, start + 127);
    conv.out_scale = spread_out_scale(k, conv.in_scale, 0.8);
    check_every_highway_target(conv);
  }
}

// oneDNN runs on OpenMP; the kernel must not leave the application's
// thread with its own OpenMP setting (an application's later parallel
// regions would run on one thread).
TEST_CASE("conv2d leaves the calling thread's OpenMP thread count alone", "[xnnpack][conv2d][openmp]") {
  const Case k{1, 64, 9, 9, 64, 3, 1, 1, 1, true};  // dense, many products per output: oneDNN where it runs
  Conv conv(k);
  Call call = conv.call();
  omp_set_num_threads(3);
  run_on_one_and_two_threads(call, kConv, conv.out);
  CHECK(omp_get_max_threads() == 3);
  check_close(conv.out.data<int8_t>(), conv.reference());
}

// The int32-accumulator form requantizes in a Highway kernel. Weights of
// full range over 3x3x160 products exceed the fused form's bound.
TEST_CASE("conv2d's requantization gives the same bytes on every Highway target", "[xnnpack][conv2d]") {
  const Case k{1, 160, 7, 7, 64, 3, 1, 1, 1, true};
  Conv conv(k);
  conv.out_scale = conv.in_scale * std::sqrt(160.0 * 9.0);
  check_every_highway_target(conv);
}

TEST_CASE("conv2d gives the same bytes on every engine and microkernel path", "[xnnpack][conv2d][isa]") {
  check_same_bytes_on_every_isa("[conv2d]~[isa]");
}

TEST_CASE("conv2d names what is wrong with its arguments", "[xnnpack][conv2d]") {
  const Case k{1, 4, 6, 6, 8, 3, 1, 1, 1, true};
  auto message = [&](auto&& change) { return error_message<Conv>(kConv, k, change); };
  CHECK(message([](Conv& c) { c.in_scale = 0.0; }).find("input_scale must be a positive") != std::string::npos);
  CHECK(message([](Conv& c) { c.out_zp = 300; }).find("output_zero_point must lie in [-128, 127]") != std::string::npos);
  CHECK(message([](Conv& c) { c.input = OwnedTensor(DType::UInt8, {1, 4, 6, 6}, kChannelsLast); })
            .find("input must be int8, got uint8") != std::string::npos);
  CHECK(message([](Conv& c) { c.input = OwnedTensor(DType::Int8, {1, 4, 6, 6}); })
            .find("input ([1, 4, 6, 6]) must be channels-last") != std::string::npos);
  CHECK(message([](Conv& c) { c.out = OwnedTensor(DType::Int8, {1, 8, 5, 5}, kChannelsLast); })
            .find("out has sizes [1, 8, 5, 5], expected [1, 8, 6, 6]") != std::string::npos);
  CHECK(message([](Conv& c) { c.scales = OwnedTensor(DType::Float32, {3}); })
            .find("weight_scales must have 1 or 8 elements") != std::string::npos);
  CHECK(message([](Conv& c) { c.c.out_min = 10, c.c.out_max = 10; }).find("output_min < output_max") != std::string::npos);
  CHECK(message([](Conv& c) { c.c.groups = 3; }).find("groups (3) must be positive and divide") != std::string::npos);
  CHECK(message([](Conv& c) { c.scales.data<float>()[2] = -1.0f; }).find("weight_scales[2] must be a positive") !=
        std::string::npos);
}

TEST_CASE("conv2d checks XNNPACK's buffers against ET_OPS_KERNEL_MAX_BYTES before calling it", "[xnnpack][conv2d][limits]") {
  const Case k{1, 64, 6, 6, 64, 3, 1, 1, 1, true};
  auto message = [&] { return error_message<Conv>(kConv, k, [](Conv&) {}); };
  using Catch::Matchers::Contains;
  // 64 output channels of 3x3 taps of 64 input channels, an int32 bias and a float scale each.
  REQUIRE(setenv("ET_OPS_KERNEL_MAX_BYTES", "4096", 1) == 0);
  CHECK_THAT(message(), Contains("et_xnnpack::conv2d.out: XNNPACK's packed weights for 1 groups of 64 -> 64 channels, "
                                 "a 3x3 kernel over 6x6 output pixels would take 37376 bytes, beyond the kernel memory "
                                 "limit of 4096 bytes (raise it with ET_OPS_KERNEL_MAX_BYTES)"));
  // One channel over a 30x30 image: 8 bytes per tap and output pixel (plus a tile of rows), 8 * 9 * (900 + 16).
  const Case image{1, 1, 30, 30, 1, 3, 1, 1, 1, true};
  CHECK_THAT(error_message<Conv>(kConv, image, [](Conv&) {}),
             Contains("XNNPACK's indirection buffer for 1 groups of 1 -> 1 channels, a 3x3 kernel over 30x30 output "
                      "pixels would take 65952 bytes, beyond the kernel memory limit of 4096 bytes"));
  REQUIRE(setenv("ET_OPS_KERNEL_MAX_BYTES", "lots", 1) == 0);
  CHECK_THAT(message(), Contains("et_xnnpack::conv2d.out: ET_OPS_KERNEL_MAX_BYTES=lots is not a positive number of bytes"));
  REQUIRE(unsetenv("ET_OPS_KERNEL_MAX_BYTES") == 0);
  Conv fits(k);
  CHECK(fits.call().run(kConv).ok());
}
