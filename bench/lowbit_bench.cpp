// The dynamically quantized int4 linear (et_quantized::linear_8da4w) on
// language-model shapes, beside its two limits measured in the same run:
// - decode (one token, GEMV) reads every weight byte once, so its limit is
//   the weight bytes over memcpy's bandwidth (bytes read plus written, a
//   copy far larger than the caches);
// - prefill (128 tokens, GEMM) is bound by integer multiply-adds, so its
//   limit is a register-only loop of the instruction the kernel uses
//   (Highway's ReorderWidenMulAccumulate on int16: vpmaddwd, or VNNI's
//   vpdpwssd where Highway picks it), counted as 2 operations per product.
// Prints each figure's share of its limit at the end. Rates are per CPU
// second of the benchmark thread (Google Benchmark's default), so a busy
// machine slows the wall clock more than the figures.
//
// ET_OPS_BENCH_TARGET=AVX2 (or AVX3, AVX3_DL, SSE4, SCALAR) restricts Highway
// to one target, as the tests do, so both x86 paths can be measured on one
// machine.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lowbit_bench.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "et_ops/kernels/quantized.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit_bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// `iterations` rounds of 8 independent int16 multiply-accumulates into
// int32, kept in registers; returns the products computed.
int64_t MultiplyAddLoop(const int16_t* seed, int64_t iterations, int32_t* sink) {
  const hn::ScalableTag<int16_t> d16;
  const hn::Repartition<int32_t, decltype(d16)> d32;
  const auto a = hn::LoadU(d16, seed);
  const auto b = hn::Reverse(d16, a);
  hn::Vec<decltype(d32)> acc[8], odd[8];
  for (int i = 0; i < 8; ++i) acc[i] = odd[i] = hn::Set(d32, i);
  for (int64_t it = 0; it < iterations; ++it)
    for (int i = 0; i < 8; ++i) acc[i] = hn::ReorderWidenMulAccumulate(d32, a, b, acc[i], odd[i]);
  auto total = hn::Zero(d32);
  for (int i = 0; i < 8; ++i) total = hn::Add(total, hn::Add(acc[i], odd[i]));
  *sink = hn::GetLane(hn::SumOfLanes(d32, total));
  return iterations * 8 * static_cast<int64_t>(hn::Lanes(d16));
}

}  // namespace HWY_NAMESPACE
}  // namespace lowbit_bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lowbit_bench {

HWY_EXPORT(MultiplyAddLoop);

namespace q = et_ops::kernels::quantized;
using et_ops::DType;
using et_ops::KernelContext;
using et_ops::Tensor;

constexpr int64_t kGroupSize = 32;

// memcpy of 256 MiB: bytes read plus written per second.
void BM_memcpy(benchmark::State& state) {
  const std::size_t bytes = std::size_t{256} << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.counters["bytes/s"] = benchmark::Counter(2.0 * static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_multiply_add_peak(benchmark::State& state) {
  std::vector<int16_t> seed(64, 3);
  int32_t sink = 0;
  int64_t products = 0;
  for (auto _ : state) {
    products += HWY_DYNAMIC_DISPATCH(MultiplyAddLoop)(seed.data(), 1 << 20, &sink);
    benchmark::DoNotOptimize(sink);
  }
  state.counters["ops/s"] = benchmark::Counter(2.0 * static_cast<double>(products), benchmark::Counter::kIsRate);
}

struct Linear {
  int64_t tokens, in, out;
  std::vector<float> x, scales, y;
  std::vector<uint8_t> weight;

  Linear(int64_t t, int64_t k, int64_t n) : tokens(t), in(k), out(n) {
    std::mt19937_64 rng(24);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> byte(0, 255);
    x.resize(static_cast<std::size_t>(t * k));
    for (auto& v : x) v = normal(rng);
    weight.resize(static_cast<std::size_t>(n * k / 2));
    for (auto& b : weight) b = static_cast<uint8_t>(byte(rng));
    scales.assign(static_cast<std::size_t>(n * k / kGroupSize), 0.01f);
    y.resize(static_cast<std::size_t>(t * n));
  }
  double weight_bytes() const { return static_cast<double>(weight.size() + 4 * scales.size()); }
  bool run() {
    Tensor xt(DType::Float32, x.data(), {tokens, in});
    Tensor wt(DType::UInt8, weight.data(), {out, in / 2});
    Tensor st(DType::Float32, scales.data(), {out, in / kGroupSize});
    Tensor yt(DType::Float32, y.data(), {tokens, out});
    KernelContext ctx;
    return q::linear_8da4w_out(ctx, xt.ref(), wt.ref(), st.ref(), kGroupSize, std::nullopt, yt.ref());
  }
};

// Args: tokens, in features K, out features N.
void BM_linear_8da4w(benchmark::State& state) {
  Linear linear(state.range(0), state.range(1), state.range(2));
  for (auto _ : state)
    if (!linear.run()) state.SkipWithError("linear_8da4w failed");
  state.counters["weight bytes/s"] = benchmark::Counter(linear.weight_bytes(), benchmark::Counter::kIsIterationInvariantRate);
  const double ops = 2.0 * static_cast<double>(linear.tokens * linear.in * linear.out);
  state.counters["ops/s"] = benchmark::Counter(ops, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_memcpy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_multiply_add_peak)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_linear_8da4w)->Args({1, 768, 2048})->Args({1, 2048, 5632})->Args({128, 768, 2048})
    ->Unit(benchmark::kMillisecond);

// Keeps each run's counters for the ratios printed at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs)
      for (const auto& [name, counter] : run.counters) values[run.benchmark_name() + " " + name] = counter.value;
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> values;
};

void restrict_target() {
  const char* wanted = std::getenv("ET_OPS_BENCH_TARGET");
  if (wanted == nullptr) return;
  for (int64_t target : hwy::SupportedAndGeneratedTargets())
    if (std::string(hwy::TargetName(target)) == wanted) {
      hwy::SetSupportedTargetsForTest(target);
      return;
    }
  std::fprintf(stderr, "ET_OPS_BENCH_TARGET=%s is not a target this CPU and build run\n", wanted);
  std::exit(2);
}

}  // namespace lowbit_bench

int main(int argc, char** argv) {
  lowbit_bench::restrict_target();
  benchmark::Initialize(&argc, argv);
  lowbit_bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto& v = reporter.values;
  const double bandwidth = v["BM_memcpy bytes/s"];
  const double peak = v["BM_multiply_add_peak ops/s"];
  std::printf("\nHighway target %s; memcpy %.1f GB/s (read + written); int16 multiply-add peak %.1f GOP/s\n",
              hwy::TargetName(hwy::SupportedAndGeneratedTargets().front()), bandwidth * 1e-9, peak * 1e-9);
  for (const char* shape : {"1/768/2048", "1/2048/5632"}) {
    const double rate = v[std::string("BM_linear_8da4w/") + shape + " weight bytes/s"];
    std::printf("decode  %-12s weight bytes %.1f GB/s = %.2f of the memcpy limit\n", shape, rate * 1e-9,
                bandwidth > 0 ? rate / bandwidth : 0.0);
  }
  const double prefill = v["BM_linear_8da4w/128/768/2048 ops/s"];
  std::printf("prefill 128/768/2048 %.1f GOP/s = %.2f of the multiply-add peak\n", prefill * 1e-9,
              peak > 0 ? prefill / peak : 0.0);
  benchmark::Shutdown();
  return 0;
}
#endif  // HWY_ONCE
