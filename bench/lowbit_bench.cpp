// The low-bit linears of the quantized set (et_quantized::linear_8da4w and
// the weight-only linear_int4, prepared kernels: weights repacked once,
// outside the timed loop) on language-model shapes, on 1 and 2 threads of a
// pthreadpool, beside their two limits measured in the same run:
// - decode (one token, GEMV) reads every weight byte once, so its limit is
//   the weight bytes over memcpy's bandwidth (bytes read plus written, a
//   copy far larger than the caches); measured on one layer run again and
//   again (its weights in the caches) and "streamed from memory", through
//   256 MiB of layers as a model's decode step reads them, and beside
//   what one thread's loads of the target's width alone read from memory
//   (BM_read): on some machines less than memcpy's figure;
// - prefill (128 tokens, GEMM) is bound by integer multiply-adds, so its
//   limit is a register-only loop of the instructions the kernel uses for
//   its u8 x s8 products (vpdpbusd on AVX3_DL; vpmaddubsw + vpmaddwd on
//   AVX3 and AVX2, one thread), counted as 2 operations per product.
// Prints each figure's share of its limit at the end. Rates are per second
// of wall-clock time (several threads): on a busy machine every figure,
// the limits included, drops with the time other processes take.
//
// ET_OPS_BENCH_TARGET=AVX2 (or AVX3, AVX3_DL, SSE4, SCALAR) restricts Highway
// to one target, as the tests do, so both x86 paths can be measured on one
// machine.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lowbit_bench.cpp"
#define HWY_WANT_AVX3_DL  // the kernels' AVX-512 VNNI target
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <pthreadpool.h>

#include "et_ops/kernels/quantized.h"
#include "et_ops/registry.h"
#include "et_ops/value.h"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

#include "common/hwy_vnni_begin.h"
namespace lowbit_bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// `iterations` rounds of kChains independent chains of the u8 x s8
// multiply-add instruction the kernels use on this target (vpdpbusd with
// VNNI, else vpmaddubsw), kept in registers; returns the products
// computed. Each instruction takes its chain's last result as an operand,
// so none can be hoisted out of the loop: the loop times the instruction's
// throughput, not that of an add.
constexpr int kChains = 12;
int64_t MultiplyAddLoop(const int16_t* seed, int64_t iterations, int32_t* sink) {
#if HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2
#if HWY_TARGET == HWY_AVX2
  using Raw = __m256i;
  const auto step = [](Raw acc, Raw b) { return _mm256_maddubs_epi16(acc, b); };
  const auto add = [](Raw a, Raw b) { return _mm256_add_epi32(a, b); };
  const Raw a = _mm256_loadu_si256(reinterpret_cast<const Raw*>(seed));
  const Raw b = _mm256_loadu_si256(reinterpret_cast<const Raw*>(seed + 16));
#else
  using Raw = __m512i;
#if HWY_TARGET == HWY_AVX3_DL
  const auto step = [](Raw acc, Raw b) { return _mm512_dpbusd_epi32(acc, b, b); };
#else
  const auto step = [](Raw acc, Raw b) { return _mm512_maddubs_epi16(acc, b); };
#endif
  const auto add = [](Raw x, Raw y) { return _mm512_add_epi32(x, y); };
  const Raw a = _mm512_loadu_si512(seed);
  const Raw b = _mm512_loadu_si512(seed + 32);
#endif
  Raw acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = a;
  for (int64_t it = 0; it < iterations; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = step(acc[i], b);
  int32_t lanes[sizeof(Raw) / 4];
  Raw total = acc[0];
  for (int i = 1; i < kChains; ++i) total = add(total, acc[i]);
  std::memcpy(lanes, &total, sizeof lanes);
  *sink = lanes[0];
  return iterations * kChains * static_cast<int64_t>(sizeof(Raw));
#else
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
#endif
}

// The sum of `bytes` bytes (a multiple of 4 vectors) read as 64-bit lanes,
// four vectors at a time: what one thread's loads alone move from memory.
uint64_t ReadLoop(const uint8_t* data, std::size_t bytes) {
  const hn::ScalableTag<uint64_t> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto* words = reinterpret_cast<const uint64_t*>(data);
  auto a = hn::Zero(d), b = a, c = a, e = a;
  for (std::size_t i = 0; i < bytes / 8; i += 4 * lanes) {
    a = hn::Add(a, hn::LoadU(d, words + i));
    b = hn::Add(b, hn::LoadU(d, words + i + lanes));
    c = hn::Add(c, hn::LoadU(d, words + i + 2 * lanes));
    e = hn::Add(e, hn::LoadU(d, words + i + 3 * lanes));
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a, b), hn::Add(c, e))));
}

}  // namespace HWY_NAMESPACE
}  // namespace lowbit_bench
#include "common/hwy_vnni_end.h"

#if HWY_ONCE
namespace lowbit_bench {

HWY_EXPORT(MultiplyAddLoop);
HWY_EXPORT(ReadLoop);

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
  benchmark::DoNotOptimize(dst.data());
  state.counters["bytes/s"] = benchmark::Counter(2.0 * static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}

// One thread reading 256 MiB through the target's vectors: what a decode
// kernel's loads of that width can stream on one thread (on some CPUs less
// than memcpy's figure, which counts the written bytes too).
void BM_read(benchmark::State& state) {
  const std::size_t bytes = std::size_t{256} << 20;
  std::vector<uint8_t> src(bytes, 1);
  for (auto _ : state) benchmark::DoNotOptimize(HWY_DYNAMIC_DISPATCH(ReadLoop)(src.data(), bytes));
  state.counters["bytes/s"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_multiply_add_peak(benchmark::State& state) {
  std::vector<int16_t> seed(64, 0x0305);
  int32_t sink = 0;
  int64_t products = 0;
  for (auto _ : state) {
    products += HWY_DYNAMIC_DISPATCH(MultiplyAddLoop)(seed.data(), 1 << 20, &sink);
    benchmark::DoNotOptimize(sink);
  }
  state.counters["ops/s"] = benchmark::Counter(2.0 * static_cast<double>(products), benchmark::Counter::kIsRate);
}

// One linear layer with random int4 weights, its kernel prepared once (the
// weights repacked) and run on a pool of `threads`.
class Linear {
 public:
  Linear(const char* op, int64_t t, int64_t k, int64_t n, std::size_t threads, pthreadpool_t shared_pool = nullptr)
      : tokens_(t), in_(k), out_(n), threads_(threads), x_(static_cast<std::size_t>(t * k)),
        weight_(static_cast<std::size_t>(n * k / 2)), scales_(static_cast<std::size_t>(n * k / kGroupSize), 0.01f),
        y_(static_cast<std::size_t>(t * n)), xt_(DType::Float32, x_.data(), {t, k}),
        wt_(DType::UInt8, weight_.data(), {n, k / 2}), st_(DType::Float32, scales_.data(), {n, k / kGroupSize}),
        yt_(DType::Float32, y_.data(), {t, n}),
        pool_(threads > 1 && shared_pool == nullptr ? pthreadpool_create(threads) : nullptr, pthreadpool_destroy),
        shared_pool_(shared_pool) {
    std::mt19937_64 rng(24);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& v : x_) v = normal(rng);
    for (auto& b : weight_) b = static_cast<uint8_t>(byte(rng));
    values_ = {et_ops::tensor_value(xt_), et_ops::tensor_value(wt_), et_ops::tensor_value(st_),
               et_ops::int_value(kGroupSize), et_ops::none_value(), et_ops::tensor_value(yt_)};
    for (et_ops_value& v : values_) args_.push_back(&v);
    kernel_ = et_ops::lookup_kernel(op).prepared;
    KernelContext ctx;
    if (kernel_ != nullptr) state_ = kernel_->prepare(ctx.raw(), args_.data(), args_.size());
  }
  ~Linear() {
    if (state_ != nullptr) kernel_->release_prepared(state_);
  }
  Linear(const Linear&) = delete;
  Linear& operator=(const Linear&) = delete;

  bool run() {
    if (state_ == nullptr) return false;
    KernelContext ctx;
    const et_ops_run_environment env{sizeof(et_ops_run_environment), static_cast<uint32_t>(threads_),
                                     shared_pool_ != nullptr ? shared_pool_ : pool_.get()};
    kernel_->run(ctx.raw(), state_, nullptr, &env, args_.data(), args_.size());
    return ctx.ok();
  }
  double weight_bytes() const { return static_cast<double>(weight_.size() + 4 * scales_.size()); }
  double ops() const { return 2.0 * static_cast<double>(tokens_ * in_ * out_); }

 private:
  int64_t tokens_, in_, out_;
  std::size_t threads_;
  std::vector<float> x_;
  std::vector<uint8_t> weight_;
  std::vector<float> scales_, y_;
  Tensor xt_, wt_, st_, yt_;
  std::unique_ptr<pthreadpool, void (*)(pthreadpool_t)> pool_;
  pthreadpool_t shared_pool_;  // a pool of the caller's, or null
  std::vector<et_ops_value> values_;
  std::vector<et_ops_value*> args_;
  const et_ops_prepared_kernel* kernel_ = nullptr;
  void* state_ = nullptr;
};

// Args: tokens, in features K, out features N, threads.
void run_linear(benchmark::State& state, const char* op) {
  Linear linear(op, state.range(0), state.range(1), state.range(2), static_cast<std::size_t>(state.range(3)));
  for (auto _ : state)
    if (!linear.run()) state.SkipWithError("the linear failed");
  state.counters["weight bytes/s"] = benchmark::Counter(linear.weight_bytes(), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ops/s"] = benchmark::Counter(linear.ops(), benchmark::Counter::kIsIterationInvariantRate);
}

// Decode through enough layers of one shape that their weights (256 MiB at
// least) stream from memory, as a model's do in a decode step, not from a
// cache that holds one layer. Args: K, N, threads.
void run_streamed(benchmark::State& state, const char* op) {
  const int64_t k = state.range(0), n = state.range(1);
  const double layer_bytes = static_cast<double>(n * k / 2 + 4 * n * k / kGroupSize);
  const auto count = static_cast<std::size_t>(256.0 * (1 << 20) / layer_bytes) + 1;
  const auto threads = static_cast<std::size_t>(state.range(2));
  const std::unique_ptr<pthreadpool, void (*)(pthreadpool_t)> pool(threads > 1 ? pthreadpool_create(threads) : nullptr,
                                                                    pthreadpool_destroy);
  std::vector<std::unique_ptr<Linear>> layers;
  for (std::size_t i = 0; i < count; ++i) layers.push_back(std::make_unique<Linear>(op, 1, k, n, threads, pool.get()));
  for (auto _ : state)
    for (auto& layer : layers)
      if (!layer->run()) state.SkipWithError("the linear failed");
  state.counters["weight bytes/s"] =
      benchmark::Counter(layer_bytes * static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate);
}

namespace op_name = et_ops::kernels::quantized::op_name;

void BM_linear_8da4w(benchmark::State& state) { run_linear(state, op_name::linear_8da4w_out); }
void BM_linear_int4(benchmark::State& state) { run_linear(state, op_name::linear_int4_out); }
void BM_streamed_8da4w(benchmark::State& state) { run_streamed(state, op_name::linear_8da4w_out); }
void BM_streamed_int4(benchmark::State& state) { run_streamed(state, op_name::linear_int4_out); }

void streamed_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) b->Args({768, 2048, threads})->Args({2048, 5632, threads});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2})
    b->Args({1, 768, 2048, threads})->Args({1, 2048, 5632, threads})->Args({128, 768, 2048, threads});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_memcpy)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_read)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_multiply_add_peak)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_linear_8da4w)->Apply(shapes);
BENCHMARK(BM_linear_int4)->Apply(shapes);
BENCHMARK(BM_streamed_8da4w)->Apply(streamed_shapes);
BENCHMARK(BM_streamed_int4)->Apply(streamed_shapes);

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
      // AVX3_DL: only the low-bit linears have it; the rest runs AVX3.
      hwy::SetSupportedTargetsForTest(target == HWY_AVX3_DL ? (HWY_AVX3_DL | HWY_AVX3) : target);
      return;
    }
  std::fprintf(stderr, "ET_OPS_BENCH_TARGET=%s is not a target this CPU and build run\n", wanted);
  std::exit(2);
}

}  // namespace lowbit_bench

int main(int argc, char** argv) {
  lowbit_bench::restrict_target();
  if (!et_ops::kernels::quantized::register_kernels().ok()) return 1;
  benchmark::Initialize(&argc, argv);
  lowbit_bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto& v = reporter.values;
  const double bandwidth = v["BM_memcpy/real_time bytes/s"];
  const double peak = v["BM_multiply_add_peak/real_time ops/s"];
  const double read = v["BM_read/real_time bytes/s"];
  std::printf("\nHighway target %s; memcpy %.1f GB/s (read + written); one thread reads %.1f GB/s (%.2f of "
              "memcpy's figure); u8 x s8 multiply-add peak %.1f GOP/s (one thread)\n",
              hwy::TargetName(hwy::SupportedAndGeneratedTargets().front()), bandwidth * 1e-9, read * 1e-9,
              bandwidth > 0 ? read / bandwidth : 0.0, peak * 1e-9);
  for (const char* op : {"BM_linear_8da4w", "BM_linear_int4"})
    for (const char* threads : {"1", "2"}) {
      for (const char* shape : {"1/768/2048", "1/2048/5632"}) {
        const double rate = v[std::string(op) + "/" + shape + "/" + threads + "/real_time weight bytes/s"];
        std::printf("%-16s decode  %-12s %s thread(s): weight bytes %.1f GB/s = %.2f of the memcpy limit\n", op,
                    shape, threads, rate * 1e-9, bandwidth > 0 ? rate / bandwidth : 0.0);
      }
      for (const char* shape : {"768/2048", "2048/5632"}) {
        const std::string streamed = std::string(op).replace(3, 6, "streamed");  // BM_linear_x -> BM_streamed_x
        const double rate = v[streamed + "/" + shape + "/" + threads + "/real_time weight bytes/s"];
        std::printf("%-16s decode  %-12s %s thread(s), streamed from memory: weight bytes %.1f GB/s = %.2f of the "
                    "memcpy limit, %.2f of one thread's reads\n",
                    op, shape, threads, rate * 1e-9, bandwidth > 0 ? rate / bandwidth : 0.0,
                    read > 0 ? rate / read : 0.0);
      }
      const double prefill = v[std::string(op) + "/128/768/2048/" + threads + "/real_time ops/s"];
      std::printf("%-16s prefill 128/768/2048 %s thread(s): %.1f GOP/s = %.2f of the multiply-add peak\n", op, threads,
                  prefill * 1e-9, peak > 0 ? prefill / peak : 0.0);
    }
  benchmark::Shutdown();
  return 0;
}
#endif  // HWY_ONCE
