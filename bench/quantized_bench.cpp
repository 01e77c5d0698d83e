// The streaming quantized kernels beside two references measured in the same
// run: memcpy of the same total bytes (read + written), the bandwidth bound,
// and a plain loop of the same formula, as a kernel library without
// hand-written SIMD ships it (compiled with the same flags; the compiler
// vectorises what it can). Every benchmark reports bytes_per_second over the
// bytes it reads plus the bytes it writes, so kernel / memcpy is the fraction
// of copy bandwidth the kernel reaches.
//
// The sweep (BM_sweep_*, 64Ki to 64Mi elements) also runs et_ops with
// non-temporal stores forced on and off, to show where the default
// threshold (the last-level cache, see et_ops/kernels/quantized.h) switches
// and that no size is slower than ordinary stores or the plain loop;
// bench/streaming_sweep.py runs it and prints the ratios.
//
//   quantized_bench --benchmark_filter=16777216
#include <benchmark/benchmark.h>
#include <hwy/targets.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "et_ops/kernels/quantized.h"
#include "et_ops/tensor.h"

namespace {

using et_ops::DType;
using et_ops::KernelContext;
using et_ops::Tensor;
namespace q = et_ops::kernels::quantized;

constexpr double kScale = 0.0473;
constexpr int64_t kZeroPoint = -3;
constexpr int64_t kChannels = 64;

// Buffers are allocated and touched once per size, outside the timed loop.
template <typename T>
std::vector<T> random_values(std::size_t n, double lo, double hi, uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> out(n);
  for (auto& v : out) v = static_cast<T>(dist(rng));
  return out;
}

void report(benchmark::State& state, std::size_t bytes_read, std::size_t bytes_written) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes_read + bytes_written));
  state.counters["elements"] = static_cast<double>(state.range(0));
}

// memcpy moving `total` bytes: total / 2 read plus total / 2 written.
void memcpy_of_total(benchmark::State& state, std::size_t total) {
  const std::size_t half = total / 2;
  std::vector<char> src(half, 1);
  std::vector<char> dst(half, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), half);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  report(state, half, half);
}

// ---- quantize_per_tensor f32 -> i8 ----

void BM_quantize_f32_i8(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto x = random_values<float>(n, -6.0, 6.0);
  std::vector<int8_t> y(n);
  Tensor in(DType::Float32, x.data(), {static_cast<int64_t>(n)});
  Tensor out(DType::Int8, y.data(), {static_cast<int64_t>(n)});
  for (auto _ : state) {
    KernelContext ctx;
    q::quantize_per_tensor_out(ctx, in, kScale, kZeroPoint, -128, 127, DType::Int8, out);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  report(state, n * sizeof(float), n);
}

void BM_quantize_f32_i8_plain_loop(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto x = random_values<float>(n, -6.0, 6.0);
  std::vector<int8_t> y(n);
  const auto inv = static_cast<float>(1.0 / kScale);
  const auto zp = static_cast<float>(kZeroPoint);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) {
      const float t = std::nearbyint(x[i] * inv) + zp;
      y[i] = static_cast<int8_t>(std::isnan(t) ? -128.0f : std::fmin(std::fmax(t, -128.0f), 127.0f));
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  report(state, n * sizeof(float), n);
}

void BM_quantize_f32_i8_memcpy(benchmark::State& state) {
  memcpy_of_total(state, static_cast<std::size_t>(state.range(0)) * (sizeof(float) + 1));
}

// ---- dequantize_per_tensor i8 -> f32 ----

void BM_dequantize_i8_f32(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto x = random_values<int8_t>(n, -128, 127);
  std::vector<float> y(n);
  Tensor in(DType::Int8, x.data(), {static_cast<int64_t>(n)});
  Tensor out(DType::Float32, y.data(), {static_cast<int64_t>(n)});
  for (auto _ : state) {
    KernelContext ctx;
    q::dequantize_per_tensor_out(ctx, in, kScale, kZeroPoint, -128, 127, DType::Int8, std::nullopt, out);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  report(state, n, n * sizeof(float));
}

void BM_dequantize_i8_f32_plain_loop(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto x = random_values<int8_t>(n, -128, 127);
  std::vector<float> y(n);
  const auto scale = static_cast<float>(kScale);
  const auto zp = static_cast<float>(kZeroPoint);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) y[i] = (static_cast<float>(x[i]) - zp) * scale;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  report(state, n, n * sizeof(float));
}

void BM_dequantize_i8_f32_memcpy(benchmark::State& state) {
  memcpy_of_total(state, static_cast<std::size_t>(state.range(0)) * (sizeof(float) + 1));
}

// ---- quantize_per_channel f32 -> i8, [64, n / 64], axis 0 ----

void BM_quantize_per_channel(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto x = random_values<float>(n, -6.0, 6.0);
  std::vector<int8_t> y(n);
  auto scales = random_values<double>(kChannels, 0.01, 0.1);
  std::vector<int64_t> zps(kChannels, kZeroPoint);
  const int64_t inner = static_cast<int64_t>(n) / kChannels;
  Tensor in(DType::Float32, x.data(), {kChannels, inner});
  Tensor out(DType::Int8, y.data(), {kChannels, inner});
  Tensor scales_t(DType::Float64, scales.data(), {kChannels});
  Tensor zps_t(DType::Int64, zps.data(), {kChannels});
  for (auto _ : state) {
    KernelContext ctx;
    q::quantize_per_channel_out(ctx, in, scales_t, zps_t, 0, -128, 127, DType::Int8, out);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  report(state, n * sizeof(float), n);
}

void BM_quantize_per_channel_plain_loop(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto x = random_values<float>(n, -6.0, 6.0);
  std::vector<int8_t> y(n);
  auto scales = random_values<double>(kChannels, 0.01, 0.1);
  const auto inner = n / kChannels;
  for (auto _ : state) {
    for (std::size_t c = 0; c < static_cast<std::size_t>(kChannels); ++c) {
      const double inv = 1.0 / scales[c];
      for (std::size_t i = c * inner; i < (c + 1) * inner; ++i) {
        const double t = std::nearbyint(static_cast<double>(x[i]) * inv) + static_cast<double>(kZeroPoint);
        y[i] = static_cast<int8_t>(std::isnan(t) ? -128.0 : std::fmin(std::fmax(t, -128.0), 127.0));
      }
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  report(state, n * sizeof(float), n);
}

void BM_quantize_per_channel_memcpy(benchmark::State& state) {
  memcpy_of_total(state, static_cast<std::size_t>(state.range(0)) * (sizeof(float) + 1));
}

// ---- add u8 + u8 -> u8 ----

void BM_add_u8(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto a = random_values<uint8_t>(n, 0, 255);
  auto b = random_values<uint8_t>(n, 0, 255, 2);
  std::vector<uint8_t> y(n);
  Tensor ta(DType::UInt8, a.data(), {static_cast<int64_t>(n)});
  Tensor tb(DType::UInt8, b.data(), {static_cast<int64_t>(n)});
  Tensor out(DType::UInt8, y.data(), {static_cast<int64_t>(n)});
  for (auto _ : state) {
    KernelContext ctx;
    q::add_out(ctx, ta, 0.02, 128, 0, 255, tb, 0.03, 120, 0, 255, 0.05, 125, 0, 255, out);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  report(state, 2 * n, n);
}

void BM_add_u8_plain_loop(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  auto a = random_values<uint8_t>(n, 0, 255);
  auto b = random_values<uint8_t>(n, 0, 255, 2);
  std::vector<uint8_t> y(n);
  const auto inv = static_cast<float>(1.0 / 0.05);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) {
      const float da = (static_cast<float>(a[i]) - 128.0f) * 0.02f;
      const float db = (static_cast<float>(b[i]) - 120.0f) * 0.03f;
      const float t = std::nearbyint((da + db) * inv) + 125.0f;
      y[i] = static_cast<uint8_t>(std::isnan(t) ? 0.0f : std::fmin(std::fmax(t, 0.0f), 255.0f));
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  report(state, 2 * n, n);
}

void BM_add_u8_memcpy(benchmark::State& state) {
  memcpy_of_total(state, static_cast<std::size_t>(state.range(0)) * 3);
}

// ---- the sweep: quantize f32 -> i8 and dequantize i8 -> f32, 64Ki to 64Mi elements ----

// Non-temporal stores as the library decides (kDefault), always, or never.
enum class Stores { kDefault, kNonTemporal, kOrdinary };

class StoresFor {
 public:
  explicit StoresFor(Stores stores) {
    if (stores == Stores::kNonTemporal) q::set_streaming_threshold_bytes(0);
    if (stores == Stores::kOrdinary) q::set_streaming_threshold_bytes(std::numeric_limits<std::size_t>::max());
  }
  ~StoresFor() { q::reset_streaming_threshold_bytes(); }
  StoresFor(const StoresFor&) = delete;
  StoresFor& operator=(const StoresFor&) = delete;
};

template <Stores kStores>
void BM_sweep_quantize(benchmark::State& state) {
  const StoresFor stores(kStores);
  BM_quantize_f32_i8(state);
  state.counters["threshold_bytes"] = static_cast<double>(q::streaming_threshold_bytes());
}

template <Stores kStores>
void BM_sweep_dequantize(benchmark::State& state) {
  const StoresFor stores(kStores);
  BM_dequantize_i8_f32(state);
  state.counters["threshold_bytes"] = static_cast<double>(q::streaming_threshold_bytes());
}

void sweep_sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n = int64_t{1} << 16; n <= int64_t{1} << 26; n *= 2) b->Arg(n);
}

BENCHMARK_TEMPLATE(BM_sweep_quantize, Stores::kDefault)->Apply(sweep_sizes);
BENCHMARK_TEMPLATE(BM_sweep_quantize, Stores::kNonTemporal)->Apply(sweep_sizes);
BENCHMARK_TEMPLATE(BM_sweep_quantize, Stores::kOrdinary)->Apply(sweep_sizes);
BENCHMARK(BM_quantize_f32_i8_plain_loop)->Name("BM_sweep_quantize_plain_loop")->Apply(sweep_sizes);
BENCHMARK(BM_quantize_f32_i8_memcpy)->Name("BM_sweep_quantize_memcpy")->Apply(sweep_sizes);
BENCHMARK_TEMPLATE(BM_sweep_dequantize, Stores::kDefault)->Apply(sweep_sizes);
BENCHMARK_TEMPLATE(BM_sweep_dequantize, Stores::kNonTemporal)->Apply(sweep_sizes);
BENCHMARK_TEMPLATE(BM_sweep_dequantize, Stores::kOrdinary)->Apply(sweep_sizes);
BENCHMARK(BM_dequantize_i8_f32_plain_loop)->Name("BM_sweep_dequantize_plain_loop")->Apply(sweep_sizes);
BENCHMARK(BM_dequantize_i8_f32_memcpy)->Name("BM_sweep_dequantize_memcpy")->Apply(sweep_sizes);

// ---- the other kernels at four sizes ----

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {int64_t{1} << 10, int64_t{1} << 16, int64_t{1} << 20, int64_t{1} << 24}) b->Arg(n);
}

BENCHMARK(BM_quantize_f32_i8)->Apply(sizes);
BENCHMARK(BM_quantize_f32_i8_memcpy)->Apply(sizes);
BENCHMARK(BM_quantize_f32_i8_plain_loop)->Apply(sizes);
BENCHMARK(BM_dequantize_i8_f32)->Apply(sizes);
BENCHMARK(BM_dequantize_i8_f32_memcpy)->Apply(sizes);
BENCHMARK(BM_dequantize_i8_f32_plain_loop)->Apply(sizes);
BENCHMARK(BM_quantize_per_channel)->Apply(sizes);
BENCHMARK(BM_quantize_per_channel_memcpy)->Apply(sizes);
BENCHMARK(BM_quantize_per_channel_plain_loop)->Apply(sizes);
BENCHMARK(BM_add_u8)->Apply(sizes);
BENCHMARK(BM_add_u8_memcpy)->Apply(sizes);
BENCHMARK(BM_add_u8_plain_loop)->Apply(sizes);

// --simd_target=AVX2 (a Highway target name: AVX3, AVX2, SSE4, SSSE3,
// SCALAR) runs every kernel on that target, e.g. to measure on this machine
// what an AVX2-only one runs. Returns false for an unknown or unsupported name.
bool force_simd_target(const std::string& name) {
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    if (name == hwy::TargetName(target)) {
      hwy::SetSupportedTargetsForTest(target);
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string prefix = "--simd_target=";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind(prefix, 0) != 0) {
      argv[kept++] = argv[i];
      continue;
    }
    if (!force_simd_target(arg.substr(prefix.size()))) {
      std::fprintf(stderr, "quantized_bench: %s is not a Highway target this CPU supports\n", arg.c_str());
      return 2;
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
