// The portable kernels' float32 activations beside a plain scalar loop of
// the same formula measured in the same run (with libm's expf and tanhf,
// which the kernels do not use: their results would depend on the CPU).
// items_per_second is elements; kernel / loop is the speed-up of the
// vectorised, fixed-bits version.
//
//   activation_bench --benchmark_filter=65536
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "et_ops/tensor.h"

namespace {

using et_ops::DType;
using et_ops::KernelContext;
using et_ops::Tensor;
using et_ops::TensorRef;
namespace portable = et_ops::kernels::portable;

std::vector<float> inputs(std::size_t n) {
  std::mt19937_64 rng(1);
  std::normal_distribution<float> dist(0.0f, 4.0f);
  std::vector<float> out(n);
  for (float& v : out) v = dist(rng);
  return out;
}

template <typename Kernel>
void run_kernel(benchmark::State& state, Kernel kernel) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<float> x = inputs(n);
  std::vector<float> y(n);
  const Tensor self(DType::Float32, x.data(), {state.range(0)});
  const Tensor out(DType::Float32, y.data(), {state.range(0)});
  for (auto _ : state) {
    KernelContext ctx;
    if (!kernel(ctx, self.ref(), out.ref())) state.SkipWithError(std::string(ctx.message()).c_str());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

template <typename Formula>
void run_loop(benchmark::State& state, Formula formula) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<float> x = inputs(n);
  std::vector<float> y(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) y[i] = formula(x[i]);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

void BM_sigmoid_kernel(benchmark::State& s) { run_kernel(s, portable::sigmoid_out); }
void BM_sigmoid_loop(benchmark::State& s) {
  run_loop(s, [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
}
void BM_tanh_kernel(benchmark::State& s) { run_kernel(s, portable::tanh_out); }
void BM_tanh_loop(benchmark::State& s) {
  run_loop(s, [](float v) { return std::tanh(v); });
}
void BM_hardswish_kernel(benchmark::State& s) { run_kernel(s, portable::hardswish_out); }
void BM_hardswish_loop(benchmark::State& s) {
  run_loop(s, [](float v) { return v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f; });
}
void BM_relu6_kernel(benchmark::State& s) {
  run_kernel(s, [](KernelContext& c, TensorRef x, TensorRef o) { return portable::hardtanh_out(c, x, 0, 6, o); });
}
void BM_relu6_loop(benchmark::State& s) {
  run_loop(s, [](float v) { return std::min(std::max(v, 0.0f), 6.0f); });
}

#define ACTIVATION_BENCHMARK(name) BENCHMARK(name)->Arg(4096)->Arg(65536)->Arg(1 << 20)
ACTIVATION_BENCHMARK(BM_sigmoid_kernel);
ACTIVATION_BENCHMARK(BM_sigmoid_loop);
ACTIVATION_BENCHMARK(BM_tanh_kernel);
ACTIVATION_BENCHMARK(BM_tanh_loop);
ACTIVATION_BENCHMARK(BM_hardswish_kernel);
ACTIVATION_BENCHMARK(BM_hardswish_loop);
ACTIVATION_BENCHMARK(BM_relu6_kernel);
ACTIVATION_BENCHMARK(BM_relu6_loop);

}  // namespace

BENCHMARK_MAIN();
