// et_portable::attention beside the chain it replaces (permute_copy of the
// key cache, bmm, div, where, _softmax, bmm; expand_copy of the repeated
// heads for grouped-query attention) and beside memcpy of the cache bytes
// it reads, measured in the same run, on one layer of stories110m's and
// TinyLlama's shapes: a decode step (T = 1) and a 128-token prompt, over a
// cache of 256 positions (and a decode step over 2048), the rows at the
// middle of the cache. bytes_per_second is the key and value bytes one
// call reads (the positions its causal mask attends; memcpy copies as many
// float32 bytes); fused / memcpy is the share of the memory-bound limit. The
// _streamed figures read each call's cache from memory (one layer after
// another of caches filling 256 MiB), as in a decode step; the _float16
// and _bfloat16 ones from a cache of 16-bit floats (half the bytes).
//
//   attention_bench --benchmark_filter=decode
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "et_ops/half.h"
#include "et_ops/kernels/portable.h"
#include "et_ops/tensor.h"

namespace {

using et_ops::DType;
using et_ops::KernelContext;
using et_ops::Tensor;
namespace portable = et_ops::kernels::portable;

struct Shape {
  int64_t heads, kv_heads, rows, length, depth;
};

// args: heads, kv heads, rows (T), cache positions (S), head dim.
Shape shape_of(const benchmark::State& state) {
  return {state.range(0), state.range(1), state.range(2), state.range(3), state.range(4)};
}

std::vector<float> random(int64_t n) {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> out(static_cast<std::size_t>(n));
  for (float& v : out) v = dist(rng);
  return out;
}

// A causal mask for rows that are the last T positions before S / 2.
std::vector<uint8_t> causal(const Shape& s) {
  std::vector<uint8_t> m;
  for (int64_t t = 0; t < s.rows; ++t)
    for (int64_t j = 0; j < s.length; ++j) m.push_back(j <= s.length / 2 + t ? 1 : 0);
  return m;
}

int64_t cache_bytes(const Shape& s) { return 2 * s.kv_heads * s.length * s.depth * int64_t{sizeof(float)}; }

// The key and value bytes a call reads: the positions up to the last row's
// (S / 2 + T of them), of `element` bytes each.
int64_t read_bytes(const Shape& s, int64_t element = sizeof(float)) {
  return 2 * s.kv_heads * std::min(s.length, s.length / 2 + s.rows) * s.depth * element;
}

struct Operands {
  Shape s;
  std::vector<float> q, k, v, out;
  std::vector<uint8_t> mask;
  float fill = -1e30f;
  Tensor query, key, value, output, mask_tensor, fill_tensor;

  explicit Operands(const Shape& shape)
      : s(shape),
        q(random(s.heads * s.rows * s.depth)),
        k(random(s.kv_heads * s.length * s.depth)),
        v(random(s.kv_heads * s.length * s.depth)),
        out(static_cast<std::size_t>(s.heads * s.rows * s.depth)),
        mask(causal(s)),
        query(DType::Float32, q.data(), {1, s.heads, s.rows, s.depth}),
        key(DType::Float32, k.data(), {1, s.kv_heads, s.length, s.depth}),
        value(DType::Float32, v.data(), {1, s.kv_heads, s.length, s.depth}),
        output(DType::Float32, out.data(), {1, s.heads, s.rows, s.depth}),
        mask_tensor(DType::Bool, mask.data(), {s.rows, s.length}),
        fill_tensor(DType::Float32, &fill, {}) {}
};

void fused(benchmark::State& state) {
  Operands o(shape_of(state));
  for (auto _ : state) {
    KernelContext ctx;
    if (!portable::attention_out(ctx, o.query, o.key, o.value, o.mask_tensor.ref(), o.fill_tensor.ref(), 1.0, 8.0,
                                 o.output))
      state.SkipWithError(std::string(ctx.message()).c_str());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * read_bytes(o.s));
}

// Layers' caches for the streamed figures: as many as fill 256 MiB, so
// that each call reads its cache from memory, as a model's decode step
// does after its linears have streamed their weights through the caches.
int64_t streamed_layers(const Shape& s) { return (int64_t{256} << 20) / cache_bytes(s) + 1; }

// The fused kernel on one layer after another of the streamed caches of
// T elements (float, et_ops::Half or et_ops::BFloat16).
template <typename T>
void fused_streamed(benchmark::State& state) {
  const Shape s = shape_of(state);
  const int64_t layers = streamed_layers(s), per_layer = s.kv_heads * s.length * s.depth;
  const auto element = [](float x) {
    if constexpr (std::is_same_v<T, float>) return x;
    else return T::from_float(x);
  };
  std::vector<T> k(static_cast<std::size_t>(layers * per_layer), element(0.5f)), v(k.size(), element(-0.25f));
  const DType dtype = et_ops::dtype_of<T>();
  Operands o(s);
  int64_t layer = 0;
  for (auto _ : state) {
    const Tensor key(dtype, k.data() + layer * per_layer, {1, s.kv_heads, s.length, s.depth});
    const Tensor value(dtype, v.data() + layer * per_layer, {1, s.kv_heads, s.length, s.depth});
    KernelContext ctx;
    if (!portable::attention_out(ctx, o.query, key, value, o.mask_tensor.ref(), o.fill_tensor.ref(), 1.0, 8.0,
                                 o.output))
      state.SkipWithError(std::string(ctx.message()).c_str());
    benchmark::ClobberMemory();
    layer = (layer + 1) % layers;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * read_bytes(s, sizeof(T)));
}

// memcpy of one layer's cache after another, from the streamed caches.
void memcpy_streamed(benchmark::State& state) {
  const Shape s = shape_of(state);
  const int64_t layers = streamed_layers(s);
  const auto n = static_cast<std::size_t>(cache_bytes(s)), read = static_cast<std::size_t>(read_bytes(s));
  std::vector<char> from(static_cast<std::size_t>(layers) * n, 1), to(read);
  int64_t layer = 0;
  for (auto _ : state) {
    std::memcpy(to.data(), from.data() + static_cast<std::size_t>(layer) * n, read);
    benchmark::ClobberMemory();
    layer = (layer + 1) % layers;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * read_bytes(s));
}

// The unfused program's instructions for one layer, on buffers it plans.
void chain(benchmark::State& state) {
  Operands o(shape_of(state));
  const Shape& s = o.s;
  const int64_t repeat = s.heads / s.kv_heads;
  std::vector<float> k_rep(static_cast<std::size_t>(s.heads * s.length * s.depth)), v_rep(k_rep.size());
  std::vector<float> k_t(k_rep.size()), scores(static_cast<std::size_t>(s.heads * s.rows * s.length));
  std::vector<float> divided(scores.size()), masked(scores.size()), probabilities(scores.size());
  const Tensor k5(DType::Float32, o.k.data(), {1, s.kv_heads, 1, s.length, s.depth});
  const Tensor v5(DType::Float32, o.v.data(), {1, s.kv_heads, 1, s.length, s.depth});
  const Tensor k_rep5(DType::Float32, k_rep.data(), {1, s.kv_heads, repeat, s.length, s.depth});
  const Tensor v_rep5(DType::Float32, v_rep.data(), {1, s.kv_heads, repeat, s.length, s.depth});
  const Tensor k4(DType::Float32, repeat == 1 ? o.k.data() : k_rep.data(), {1, s.heads, s.length, s.depth});
  const Tensor k_t4(DType::Float32, k_t.data(), {1, s.heads, s.depth, s.length});
  const Tensor q3(DType::Float32, o.q.data(), {s.heads, s.rows, s.depth});
  const Tensor k_t3(DType::Float32, k_t.data(), {s.heads, s.depth, s.length});
  const Tensor scores3(DType::Float32, scores.data(), {s.heads, s.rows, s.length});
  const Tensor scores4(DType::Float32, scores.data(), {1, s.heads, s.rows, s.length});
  const Tensor divided4(DType::Float32, divided.data(), {1, s.heads, s.rows, s.length});
  const Tensor masked4(DType::Float32, masked.data(), {1, s.heads, s.rows, s.length});
  const Tensor probabilities4(DType::Float32, probabilities.data(), {1, s.heads, s.rows, s.length});
  const Tensor probabilities3(DType::Float32, probabilities.data(), {s.heads, s.rows, s.length});
  const Tensor v3(DType::Float32, repeat == 1 ? o.v.data() : v_rep.data(), {s.heads, s.length, s.depth});
  const Tensor out3(DType::Float32, o.out.data(), {s.heads, s.rows, s.depth});
  const std::vector<int64_t> swap = {0, 1, 3, 2}, repeated = {1, s.kv_heads, repeat, s.length, s.depth};
  std::vector<uint8_t> negated(o.mask.size());
  const Tensor not_mask(DType::Bool, negated.data(), {s.rows, s.length});
  for (auto _ : state) {
    KernelContext ctx;
    bool ok = true;
    if (repeat > 1)
      ok = portable::expand_copy_out(ctx, k5, portable::IntList(repeated), false, k_rep5) &&
           portable::expand_copy_out(ctx, v5, portable::IntList(repeated), false, v_rep5);
    ok = ok && portable::permute_copy_out(ctx, k4, portable::IntList(swap), k_t4) &&
         portable::bmm_out(ctx, q3, k_t3, scores3) &&
         portable::div_scalar_out(ctx, scores4, portable::Scalar(8.0), divided4) &&
         portable::logical_not_out(ctx, o.mask_tensor, not_mask) &&
         portable::where_self_out(ctx, not_mask, o.fill_tensor, divided4, masked4) &&
         portable::softmax_out(ctx, masked4, -1, false, probabilities4) &&
         portable::bmm_out(ctx, probabilities3, v3, out3);
    if (!ok) state.SkipWithError(std::string(ctx.message()).c_str());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * read_bytes(o.s));
}

// The memory-bound reference: copying the cache bytes the kernel reads.
void memcpy_cache(benchmark::State& state) {
  const Shape s = shape_of(state);
  const auto n = static_cast<std::size_t>(read_bytes(s));
  std::vector<char> from(n, 1), to(n);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * read_bytes(s));
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"heads", "kv_heads", "T", "S", "D"});
  for (int64_t rows : {1, 128}) {
    b->Args({12, 12, rows, 256, 64});  // stories110m
    b->Args({32, 4, rows, 256, 64});   // TinyLlama
  }
  b->Args({12, 12, 1, 2048, 64});  // stories110m's decode halfway through a cache of 2048
}

BENCHMARK(fused)->Name("attention/fused")->Apply(shapes);
BENCHMARK(chain)->Name("attention/chain")->Apply(shapes);
BENCHMARK(memcpy_cache)->Name("attention/memcpy")->Apply(shapes);
BENCHMARK(fused_streamed<float>)->Name("attention/fused_streamed")->Apply(shapes);
BENCHMARK(fused_streamed<et_ops::Half>)->Name("attention/fused_streamed_float16")->Apply(shapes);
BENCHMARK(fused_streamed<et_ops::BFloat16>)->Name("attention/fused_streamed_bfloat16")->Apply(shapes);
BENCHMARK(memcpy_streamed)->Name("attention/memcpy_streamed")->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
