// mixed_mm / mixed_linear (f32 and f16) in GFLOP/s beside a plain float matmul of
// the same shape, and embedding_byte in rows/s and bytes/s beside a memcpy
// of its output bytes, all measured in the same run.
//
// A matmul of [m, n] x [n, p] counts 2*m*n*p floating-point operations (one
// multiply and one add per term), whatever the kernel spends on scales.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "et_ops/half.h"
#include "et_ops/kernels/quantized.h"

namespace {

namespace q = et_ops::kernels::quantized;
using et_ops::DType;
using et_ops::KernelContext;
using et_ops::Tensor;

struct Shape {
  int64_t m, n, p;
};

Shape shape_of(const benchmark::State& state) { return Shape{state.range(0), state.range(1), state.range(2)}; }

void set_flop_counter(benchmark::State& state, const Shape& s) {
  const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.p);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

std::vector<float> random_floats(std::size_t count, float lo, float hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(count);
  for (auto& v : out) v = dist(rng);
  return out;
}

std::vector<int8_t> random_weights(std::size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> out(count);
  for (auto& v : out) v = static_cast<int8_t>(dist(rng));
  return out;
}

// The reference: out[m, p] = x[m, n] @ w[n, p] in f32, i-k-j order over
// column blocks that keep a slice of w in cache; the inner loop vectorises.
void plain_matmul(const float* x, const float* w, float* out, const Shape& s) {
  constexpr int64_t kColumnBlock = 256;
  for (int64_t j0 = 0; j0 < s.p; j0 += kColumnBlock) {
    const int64_t j1 = std::min(j0 + kColumnBlock, s.p);
    for (int64_t i = 0; i < s.m; ++i) {
      float* row = out + i * s.p;
      for (int64_t j = j0; j < j1; ++j) row[j] = 0.0f;
      for (int64_t k = 0; k < s.n; ++k) {
        const float xv = x[i * s.n + k];
        const float* wrow = w + k * s.p;
        for (int64_t j = j0; j < j1; ++j) row[j] += xv * wrow[j];
      }
    }
  }
}

void BM_plain_float_matmul(benchmark::State& state) {
  const Shape s = shape_of(state);
  auto x = random_floats(static_cast<std::size_t>(s.m * s.n), -1.0f, 1.0f, 1);
  auto w = random_floats(static_cast<std::size_t>(s.n * s.p), -1.0f, 1.0f, 2);
  std::vector<float> out(static_cast<std::size_t>(s.m * s.p));
  for (auto _ : state) {
    plain_matmul(x.data(), w.data(), out.data(), s);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_flop_counter(state, s);
}

// Input, scales and output elements of type T (float or Half).
template <typename T>
struct Element;
template <>
struct Element<float> {
  static constexpr DType kDType = DType::Float32;
  static std::vector<float> random(std::size_t count, float lo, float hi, uint64_t seed) {
    return random_floats(count, lo, hi, seed);
  }
};
template <>
struct Element<et_ops::Half> {
  static constexpr DType kDType = DType::Float16;
  static std::vector<et_ops::Half> random(std::size_t count, float lo, float hi, uint64_t seed) {
    std::vector<et_ops::Half> out;
    for (float v : random_floats(count, lo, hi, seed)) out.push_back(et_ops::Half::from_float(v));
    return out;
  }
};

template <typename T>
void BM_mixed_mm(benchmark::State& state) {
  const Shape s = shape_of(state);
  auto x = Element<T>::random(static_cast<std::size_t>(s.m * s.n), -1.0f, 1.0f, 1);
  auto w = random_weights(static_cast<std::size_t>(s.n * s.p), 2);
  auto scales = Element<T>::random(static_cast<std::size_t>(s.n), 0.001f, 0.1f, 3);
  std::vector<T> out(static_cast<std::size_t>(s.m * s.p));
  Tensor xt(Element<T>::kDType, x.data(), {s.m, s.n});
  Tensor wt(DType::Int8, w.data(), {s.n, s.p});
  Tensor st(Element<T>::kDType, scales.data(), {s.n});
  Tensor ot(Element<T>::kDType, out.data(), {s.m, s.p});
  KernelContext ctx;
  for (auto _ : state) {
    q::mixed_mm_out(ctx, xt, wt, st, std::nullopt, ot);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  if (!ctx.ok()) state.SkipWithError(std::string(ctx.message()).c_str());
  set_flop_counter(state, s);
}

// state.range(3): scale groups per output row (0: 1-D per-channel scales).
template <typename T>
void BM_mixed_linear(benchmark::State& state) {
  const Shape s = shape_of(state);
  const int64_t groups = state.range(3);
  auto x = Element<T>::random(static_cast<std::size_t>(s.m * s.n), -1.0f, 1.0f, 1);
  auto w = random_weights(static_cast<std::size_t>(s.p * s.n), 2);
  auto scales = Element<T>::random(static_cast<std::size_t>(s.p * std::max<int64_t>(groups, 1)), 0.001f, 0.1f, 3);
  std::vector<T> out(static_cast<std::size_t>(s.m * s.p));
  Tensor xt(Element<T>::kDType, x.data(), {s.m, s.n});
  Tensor wt(DType::Int8, w.data(), {s.p, s.n});
  Tensor st = groups == 0 ? Tensor(Element<T>::kDType, scales.data(), {s.p})
                          : Tensor(Element<T>::kDType, scales.data(), {s.p, groups});
  Tensor ot(Element<T>::kDType, out.data(), {s.m, s.p});
  KernelContext ctx;
  for (auto _ : state) {
    q::mixed_linear_out(ctx, xt, wt, st, std::nullopt, std::nullopt, ot);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  if (!ctx.ok()) state.SkipWithError(std::string(ctx.message()).c_str());
  set_flop_counter(state, s);
}

// ---- embedding_byte: a [rows, dim] u8 table, per-group f32 scales and
// zero points, `lookups` random indices per call ----

struct EmbeddingWorkload {
  int64_t rows, dim, groups, lookups;
  std::vector<uint8_t> weight;
  std::vector<float> scales, zero_points, out, source;
  std::vector<int64_t> indices;

  EmbeddingWorkload(int64_t r, int64_t d, int64_t g, int64_t l) : rows(r), dim(d), groups(g), lookups(l) {
    std::mt19937_64 rng(5);
    weight.resize(static_cast<std::size_t>(rows * dim));
    for (auto& v : weight) v = static_cast<uint8_t>(rng());
    scales = random_floats(static_cast<std::size_t>(rows * groups), 0.001f, 0.1f, 6);
    zero_points = random_floats(static_cast<std::size_t>(rows * groups), 100.0f, 150.0f, 7);
    indices.resize(static_cast<std::size_t>(lookups));
    for (auto& i : indices) i = static_cast<int64_t>(rng() % static_cast<uint64_t>(rows));
    out.resize(static_cast<std::size_t>(lookups * dim));
    source = random_floats(out.size(), -1.0f, 1.0f, 8);
  }
  void set_counters(benchmark::State& state) const {
    state.counters["rows/s"] =
        benchmark::Counter(static_cast<double>(lookups), benchmark::Counter::kIsIterationInvariantRate);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * lookups * dim *
                            static_cast<int64_t>(sizeof(float)));
  }
};

EmbeddingWorkload embedding_workload(const benchmark::State& state) {
  return EmbeddingWorkload(state.range(0), state.range(1), state.range(2), state.range(3));
}

void BM_embedding_byte(benchmark::State& state) {
  EmbeddingWorkload e = embedding_workload(state);
  Tensor weight(DType::UInt8, e.weight.data(), {e.rows, e.dim});
  Tensor scales(DType::Float32, e.scales.data(), {e.rows, e.groups});
  Tensor zps(DType::Float32, e.zero_points.data(), {e.rows, e.groups});
  Tensor indices(DType::Int64, e.indices.data(), {e.lookups});
  Tensor out(DType::Float32, e.out.data(), {e.lookups, e.dim});
  KernelContext ctx;
  for (auto _ : state) {
    q::embedding_byte_out(ctx, weight, scales, zps.ref(), 0, 255, indices, out);
    benchmark::DoNotOptimize(e.out.data());
    benchmark::ClobberMemory();
  }
  if (!ctx.ok()) state.SkipWithError(std::string(ctx.message()).c_str());
  e.set_counters(state);
}

// The reference: copying the same number of output bytes.
void BM_embedding_memcpy_reference(benchmark::State& state) {
  EmbeddingWorkload e = embedding_workload(state);
  for (auto _ : state) {
    std::memcpy(e.out.data(), e.source.data(), e.out.size() * sizeof(float));
    benchmark::DoNotOptimize(e.out.data());
    benchmark::ClobberMemory();
  }
  e.set_counters(state);
}

void matmul_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "p"});
  b->Args({1, 4096, 4096});
  b->Args({64, 256, 256});
  b->Args({256, 1024, 1024});
  b->Unit(benchmark::kMicrosecond);
}

void linear_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "p", "groups"});
  b->Args({1, 4096, 4096, 0});
  b->Args({64, 256, 256, 0});
  b->Args({256, 1024, 1024, 0});
  b->Args({256, 1024, 1024, 32});  // group size 32
  b->Unit(benchmark::kMicrosecond);
}

void embedding_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "dim", "groups", "lookups"});
  b->Args({32000, 4096, 1, 32});
  b->Args({32000, 4096, 128, 32});
  b->Args({4096, 512, 16, 1024});
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_plain_float_matmul)->Apply(matmul_shapes);
BENCHMARK_TEMPLATE(BM_mixed_mm, float)->Apply(matmul_shapes);
BENCHMARK_TEMPLATE(BM_mixed_linear, float)->Apply(linear_shapes);
// float16 input, scales and out: every step rounds to binary16 (reference §1.5).
BENCHMARK_TEMPLATE(BM_mixed_mm, et_ops::Half)->Apply(matmul_shapes);
BENCHMARK_TEMPLATE(BM_mixed_linear, et_ops::Half)->Apply(linear_shapes);
BENCHMARK(BM_embedding_memcpy_reference)->Apply(embedding_shapes);
BENCHMARK(BM_embedding_byte)->Apply(embedding_shapes);

}  // namespace

BENCHMARK_MAIN();
