// The low-bit linears of the quantized set, prepared kernels: their
// constant weights are repacked when a program loads (lowbit_layout.h) into
// blocks of output channels that the microkernels stream, one SIMD lane per
// output channel; runs split the blocks over the run state's threads.
//
// et_quantized::linear_8da4w.out / linear_8da8w.out: float32 activations
// quantized per token inside the kernel (exactly
// choose_qparams_per_token_asymmetric, then quantize_per_token to int8)
// times int4 group-wise or int8 per-channel symmetric weights in integers,
// the fusion of quantize -> dequantize_per_token -> dequantize weights ->
// linear. Per token t (scale s_t, zero point z_t, values q) and channel n:
//   P_g = sum over group g of q[k] * w[n][k]                    (exact, int32)
//   acc = 0; for g ascending: acc = fl32(acc + fl32(fl32(P_g) * ws[n][g]))
//   C_n = 0; for g ascending: C_n = fl32(C_n + fl32(fl32(W_g) * ws[n][g]))
//         (W_g the sum of the row's weights over g; made when the layout is)
//   out = fl32(fl32(acc - fl32(fl32(z_t) * C_n)) * s_t), then fl32(out + bias[n]).
//
// et_quantized::linear_int4.out / linear_int8.out: float32 activations
// times the integer weights, each group's sum scaled by its scale:
//   S_g = 0; S_g = fl32(S_g + fl32(x[k] * fl32(w[n][k]))) for k ascending in g
//   acc = 0; for g ascending: acc = fl32(acc + fl32(S_g * ws[n][g]))
//   out = fl32(acc + bias[n]).
// One order for every target and thread count, so the same bytes everywhere.
#include <pthreadpool.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "checks.h"
#include "et_ops/kernels/quantized.h"
#include "lowbit_linear.h"
#include "per_token.h"

namespace et_ops::kernels::quantized {
namespace {

using detail::check_dtype;
using detail::check_tensor;
using detail::fail;
using detail::shape_string;
using lowbit::kBlockRows;

struct Shape {
  int64_t tokens;      // T: input rows
  int64_t in;          // K
  int64_t out;         // N
  int64_t group_size;  // elements per weight scale
  int64_t groups;      // K / group_size
};

// The integer sums stay exact in int32 while |q - z| * |w| * group_size,
// at most 255 * 128 * group_size, does.
constexpr int64_t kMaxGroupSize = 65536;
// A tensor the program fills at run time has no data when the program
// loads: its sizes are checked then, its data at run time.
bool check_prepared_tensor(KernelContext& ctx, const LowbitOperator& o, const char* what, TensorRef t) {
  if (t.data() != nullptr || t.numel() == 0) return check_tensor(ctx, o.op, what, t);
  if (t.dim() <= ET_OPS_MAX_DIMS) return true;
  return fail(ctx, o.op, "{} has {} dimensions; at most {} are supported", what, t.dim(), ET_OPS_MAX_DIMS);
}

bool check_contiguous(KernelContext& ctx, const LowbitOperator& o, const char* what, TensorRef t) {
  if (t.is_contiguous()) return true;
  return fail(ctx, o.op, "{} must be contiguous (row-major), got shape {} in another dim order", what,
              shape_string(t));
}

std::optional<Shape> check_shapes(KernelContext& ctx, const LowbitOperator& o, TensorRef input, TensorRef weight,
                                  TensorRef scales, int64_t group_size) {
  if (input.dim() < 1 || input.size(input.dim() - 1) < 1) {
    fail(ctx, o.op, "input must have at least one dimension and a non-empty last one, got shape {}",
         shape_string(input));
    return std::nullopt;
  }
  const int64_t in = input.size(input.dim() - 1);
  if (weight.dim() != 2 || weight.size(1) * (o.four_bit ? 2 : 1) != in) {
    fail(ctx, o.op, "weight must be [N, {}] for an input of {} features, got shape {}",
         o.four_bit ? in / 2 : in, in, shape_string(weight));
    return std::nullopt;
  }
  if (group_size < 1 || in % group_size != 0 || group_size > kMaxGroupSize) {
    fail(ctx, o.op, "group_size {} must be in [1, {}] and divide the {} input features", group_size, kMaxGroupSize,
         in);
    return std::nullopt;
  }
  const Shape shape{input.numel() / in, in, weight.size(0), group_size, in / group_size};
  if (scales.numel() != shape.out * shape.groups) {
    fail(ctx, o.op, "weight_scales has {} elements (shape {}), expected N * K / group_size = {} * {}",
         scales.numel(), shape_string(scales), shape.out, shape.groups);
    return std::nullopt;
  }
  return shape;
}

bool check_out(KernelContext& ctx, const LowbitOperator& o, TensorRef input, const Shape& shape, TensorRef out) {
  bool matches = out.dim() == input.dim() && out.size(out.dim() - 1) == shape.out;
  for (int64_t d = 0; matches && d + 1 < input.dim(); ++d) matches = out.size(d) == input.size(d);
  if (!matches)
    return fail(ctx, o.op, "out has shape {}, expected the input's shape {} with the last dim {}; outputs are never "
                "resized", shape_string(out), shape_string(input), shape.out);
  return check_dtype(ctx, o.op, "out", out, DType::Float32) && check_contiguous(ctx, o, "out", out);
}

bool check_scale_values(KernelContext& ctx, const LowbitOperator& o, TensorRef scales) {
  const float* s = scales.data_as<const float>();
  for (int64_t i = 0; i < scales.numel(); ++i)
    if (!(std::isfinite(s[i]) && s[i] > 0.0f))
      return fail(ctx, o.op, "weight_scales[{}] must be finite and > 0, got {}", i, s[i]);
  return true;
}

std::optional<Shape> check_arguments(KernelContext& ctx, const LowbitOperator& o, TensorRef input, TensorRef weight,
                                     TensorRef scales, int64_t group_size, std::optional<TensorRef> bias,
                                     TensorRef out) {
  if (!check_prepared_tensor(ctx, o, "input", input) || !check_tensor(ctx, o.op, "weight", weight) ||
      !check_tensor(ctx, o.op, "weight_scales", scales) || (bias && !check_prepared_tensor(ctx, o, "bias", *bias)) ||
      !check_prepared_tensor(ctx, o, "out", out))
    return std::nullopt;
  if (!check_dtype(ctx, o.op, "input", input, DType::Float32) ||
      !check_dtype(ctx, o.op, "weight", weight, o.four_bit ? DType::UInt8 : DType::Int8) ||
      !check_dtype(ctx, o.op, "weight_scales", scales, DType::Float32))
    return std::nullopt;
  const std::optional<Shape> shape = check_shapes(ctx, o, input, weight, scales, group_size);
  if (!shape || !check_out(ctx, o, input, *shape, out)) return std::nullopt;
  if (bias && (!check_dtype(ctx, o.op, "bias", *bias, DType::Float32) || bias->numel() != shape->out)) {
    if (ctx.ok()) fail(ctx, o.op, "bias has shape {}, expected [{}]", shape_string(*bias), shape->out);
    return std::nullopt;
  }
  if (!check_contiguous(ctx, o, "input", input) || !check_contiguous(ctx, o, "weight", weight) ||
      !check_contiguous(ctx, o, "weight_scales", scales) || (bias && !check_contiguous(ctx, o, "bias", *bias)))
    return std::nullopt;
  return shape;
}

// ---- activations: the reference's per-token quantization ----

// The per-token int8 activations of an 8da* call, in the layout the blocks
// read.
struct Activations {
  std::vector<int8_t> q;         // [T][groups][padded_group], zeros in the padding
  std::vector<int32_t> shifts;   // [T][groups]: off * sum of q over the group, wrapping (lowbit_layout.h)
  std::vector<int64_t> zero_points;
  std::vector<double> scales;    // [T]: s_t (a binary32 value)
  std::vector<int8_t> rows;      // [T][K]: the quantized rows before regrouping (padded groups only)
};

// Quantizes `tokens` rows of input into a (its buffers keep their capacity:
// assign and resize allocate only past it). Groups that fill whole chunks
// need no padding: the rows are quantized in place, in the blocks' layout.
bool quantize_activations(KernelContext& ctx, TensorRef input, const lowbit::Geometry& g, int64_t tokens,
                          Activations& a) {
  const auto t_count = static_cast<std::size_t>(tokens);
  const bool padded = g.padded_group != g.group_size;
  if (padded)
    a.q.assign(t_count * g.groups * g.padded_group, 0);
  else
    a.q.resize(t_count * g.in);
  a.shifts.resize(t_count * g.groups);
  a.zero_points.resize(t_count);
  a.scales.resize(t_count);
  a.rows.resize(padded ? t_count * g.in : 0);
  int8_t* rows = padded ? a.rows.data() : a.q.data();
  const auto k = static_cast<int64_t>(g.in);
  const Tensor row_view(DType::Float32, const_cast<void*>(input.data()), {tokens, k});
  const Tensor scale_out(DType::Float64, a.scales.data(), {tokens, 1});
  const Tensor zp_out(DType::Int64, a.zero_points.data(), {tokens, 1});
  const Tensor q_out(DType::Int8, rows, {tokens, k});
  if (!detail::choose_qparams_per_token(ctx, row_view.ref(), scale_out.ref(), zp_out.ref()) ||
      !detail::quantize_per_token(ctx, row_view.ref(), scale_out.ref(), zp_out.ref(), -128, 127, DType::Int8,
                                  q_out.ref()))
    return false;
  for (std::size_t t = 0; t < t_count; ++t)
    for (std::size_t grp = 0; grp < g.groups; ++grp) {
      const int8_t* from = rows + t * g.in + grp * g.group_size;
      if (padded) std::copy(from, from + g.group_size, a.q.data() + (t * g.groups + grp) * g.padded_group);
      int32_t sum = 0;
      for (std::size_t i = 0; i < g.group_size; ++i) sum += from[i];
      const uint32_t shift = (g.four_bit ? 8u : 128u) * static_cast<uint32_t>(sum);
      std::memcpy(&a.shifts[t * g.groups + grp], &shift, sizeof shift);
    }
  return true;
}

// ---- the product, block by block ----

struct Product {
  const LowbitLinear* state;
  const Activations* activations;  // the 8da* operators
  const float* x;                  // the weight-only ones: [T, K]
  const float* bias;
  float* y;
  std::size_t tokens;
  std::size_t tasks;
};

// The bias of a block's rows, padded to kBlockRows.
const float* block_bias(const Product& p, std::size_t block, float* padded) {
  if (p.bias == nullptr) return nullptr;
  const std::size_t n0 = block * kBlockRows, rows = std::min(kBlockRows, p.state->weights.geometry.out - n0);
  std::fill(padded, padded + kBlockRows, 0.0f);
  std::copy(p.bias + n0, p.bias + n0 + rows, padded);
  return padded;
}

void store_rows(const Product& p, std::size_t block, std::size_t t, const float* values) {
  const std::size_t n = p.state->weights.geometry.out, n0 = block * kBlockRows;
  std::copy(values, values + std::min(kBlockRows, n - n0), p.y + t * n + n0);
}

// Whether block `block` lies wholly within the output's rows: the kernels
// then write its outputs in place, a row of the output apart.
bool whole_block(const Product& p, std::size_t block) {
  return (block + 1) * kBlockRows <= p.state->weights.geometry.out;
}

// The end of the whole blocks among [first, end) (first < end): only the
// layer's last block can be a part one.
std::size_t whole_blocks_end(const Product& p, std::size_t end) { return whole_block(p, end - 1) ? end : end - 1; }

// Tokens (or blocks) per microkernel call: bounds the scratch of results.
constexpr std::size_t kBatch = 64;

void dynamic_blocks(const Product& p, std::size_t first, std::size_t end) {
  if (first == end) return;
  const lowbit::Geometry& g = p.state->weights.geometry;
  const Activations& a = *p.activations;
  std::vector<lowbit::TokenView> tokens;
  for (std::size_t t = 0; t < p.tokens; ++t)
    tokens.push_back({a.q.data() + t * g.groups * g.padded_group, a.shifts.data() + t * g.groups,
                      static_cast<int32_t>(a.zero_points[t]), static_cast<float>(a.scales[t])});
  // Whole blocks write their outputs in place, consecutive in each output
  // row, kBatch blocks a call (the kernel pairs neighbours).
  const std::size_t whole_end = whole_blocks_end(p, end);
  std::array<lowbit::BlockView, kBatch> blocks;
  for (std::size_t b0 = first; b0 < whole_end; b0 += kBatch) {
    const std::size_t count = std::min(kBatch, whole_end - b0);
    for (std::size_t i = 0; i < count; ++i) {
      const float* bias = p.bias == nullptr ? nullptr : p.bias + (b0 + i) * kBlockRows;
      blocks[i] = lowbit::block_view(p.state->weights, b0 + i, bias);
    }
    lowbit::dynamic_blocks(blocks.data(), count, tokens.data(), p.tokens, p.y + b0 * kBlockRows, kBlockRows, g.out);
  }
  if (whole_end == end) return;
  float bias[kBlockRows];
  const lowbit::BlockView part = lowbit::block_view(p.state->weights, whole_end, block_bias(p, whole_end, bias));
  std::vector<float> values(std::min(p.tokens, kBatch) * kBlockRows);
  for (std::size_t t0 = 0; t0 < p.tokens; t0 += kBatch) {
    const std::size_t count = std::min(kBatch, p.tokens - t0);
    lowbit::dynamic_blocks(&part, 1, tokens.data() + t0, count, values.data(), kBlockRows, kBlockRows);
    for (std::size_t i = 0; i < count; ++i) store_rows(p, whole_end, t0 + i, values.data() + i * kBlockRows);
  }
}

// Up to this many tokens, the weight-only kernel reads the packed weights
// as it goes, token by token; more tokens share a block's weights
// converted to floats once.
constexpr std::size_t kDecodeTokens = 2;

void float_decode_blocks(const Product& p, std::size_t first, std::size_t end) {
  if (first == end) return;
  const lowbit::Geometry& g = p.state->weights.geometry;
  std::vector<float> biases((end - first) * kBlockRows), values(kBlockRows);
  std::vector<lowbit::BlockView> blocks;
  for (std::size_t b = first; b < end; ++b)
    blocks.push_back(lowbit::block_view(p.state->weights, b, block_bias(p, b, biases.data() + (b - first) * kBlockRows)));
  // Consecutive whole blocks' outputs are consecutive in the output row.
  const std::size_t whole_end = whole_blocks_end(p, end);
  for (std::size_t t = 0; t < p.tokens; ++t) {
    const float* x = p.x + t * g.in;
    if (whole_end > first)
      lowbit::float_decode(blocks.data(), whole_end - first, g.group_size, x, p.y + t * g.out + first * kBlockRows);
    if (whole_end < end) {
      lowbit::float_decode(blocks.data() + (whole_end - first), 1, g.group_size, x, values.data());
      store_rows(p, whole_end, t, values.data());
    }
  }
}

void float_blocks(const Product& p, std::size_t first, std::size_t end) {
  if (p.tokens <= kDecodeTokens) return float_decode_blocks(p, first, end);
  const lowbit::Geometry& g = p.state->weights.geometry;
  std::vector<float> weights(g.in * kBlockRows), values(std::min(p.tokens, kBatch) * kBlockRows);
  float bias[kBlockRows];
  for (std::size_t b = first; b < end; ++b) {
    const lowbit::BlockView block = lowbit::block_view(p.state->weights, b, nullptr);
    lowbit::integer_weights(block, g.group_size, weights.data());
    const float* padded_bias = block_bias(p, b, bias);
    for (std::size_t t0 = 0; t0 < p.tokens; t0 += kBatch) {
      const std::size_t count = std::min(kBatch, p.tokens - t0);
      lowbit::float_block(block, weights.data(), g.group_size, p.x + t0 * g.in, count, padded_bias, values.data(),
                          kBlockRows);
      for (std::size_t i = 0; i < count; ++i) store_rows(p, b, t0 + i, values.data() + i * kBlockRows);
    }
  }
}

// Task i of p.tasks takes a contiguous share of the blocks: which thread
// computes a block never changes its bytes.
void run_task(void* context, std::size_t i) {
  const auto& p = *static_cast<const Product*>(context);
  const std::size_t blocks = p.state->weights.geometry.blocks;
  const std::size_t first = blocks * i / p.tasks, end = blocks * (i + 1) / p.tasks;
  if (p.state->op.dynamic)
    dynamic_blocks(p, first, end);
  else
    float_blocks(p, first, end);
}

}  // namespace

std::unique_ptr<LowbitLinear> prepare_lowbit_linear(KernelContext& ctx, const LowbitOperator& o, TensorRef input,
                                                    TensorRef weight, TensorRef scales, int64_t group_size,
                                                    std::optional<TensorRef> bias, TensorRef out) {
  if ((weight.data() == nullptr && weight.numel() > 0) || (scales.data() == nullptr && scales.numel() > 0)) {
    fail(ctx, o.op, "weight and weight_scales must be constants of the program (their layout is made when it loads)");
    return nullptr;
  }
  const std::optional<Shape> shape = check_arguments(ctx, o, input, weight, scales, group_size, bias, out);
  if (!shape) return nullptr;
  if (!check_scale_values(ctx, o, scales)) return nullptr;
  const lowbit::Geometry g = lowbit::make_geometry(static_cast<std::size_t>(shape->in),
                                                   static_cast<std::size_t>(shape->out),
                                                   static_cast<std::size_t>(shape->group_size), o.four_bit);
  try {
    return std::make_unique<LowbitLinear>(
        LowbitLinear{o, lowbit::pack_weights(g, static_cast<const uint8_t*>(weight.data()), scales.data_as<float>())});
  } catch (const std::bad_alloc&) {
    fail(ctx, o.op, "cannot allocate the repacked weights of a [{}, {}] layer", g.out, g.in);
    return nullptr;
  }
}

bool run_lowbit_linear(KernelContext& ctx, const LowbitLinear& state, const RunEnvironment& env, TensorRef input,
                       std::optional<TensorRef> bias, TensorRef out) {
  const lowbit::Geometry& g = state.weights.geometry;
  const LowbitOperator& o = state.op;
  if (input.dim() < 1 || input.size(input.dim() - 1) != static_cast<int64_t>(g.in) ||
      out.numel() != input.numel() / static_cast<int64_t>(g.in) * static_cast<int64_t>(g.out))
    return fail(ctx, o.op, "input {} and out {} do not have the shapes the kernel was prepared for", shape_string(input),
                shape_string(out));
  if (!check_tensor(ctx, o.op, "input", input) || !check_tensor(ctx, o.op, "out", out) ||
      (bias && !check_tensor(ctx, o.op, "bias", *bias)))
    return false;
  if (out.numel() == 0) return true;
  Product p{&state, nullptr, input.data_as<float>(), bias ? bias->data_as<float>() : nullptr, out.data_as<float>(),
            static_cast<std::size_t>(input.numel()) / g.in, 1};
  if (o.dynamic) {
    // The calling thread's buffers, kept from call to call: a prompt's
    // activations are large enough that allocating them per call would map
    // and fault fresh pages every time (and the heap's trimming makes other
    // kernels' allocations do the same).
    thread_local Activations activations;
    try {
      if (!quantize_activations(ctx, input, g, static_cast<int64_t>(p.tokens), activations)) return false;
    } catch (const std::bad_alloc&) {
      return fail(ctx, o.op, "cannot allocate the per-token activations of {} tokens", p.tokens);
    }
    p.activations = &activations;
  }
  auto* pool = static_cast<pthreadpool_t>(env.threadpool);
  p.tasks = pool == nullptr ? 1 : std::min<std::size_t>(std::max<uint32_t>(env.thread_count, 1), g.blocks);
  if (p.tasks == 1)
    run_task(&p, 0);
  else
    pthreadpool_parallelize_1d(pool, &run_task, &p, p.tasks, 0);
  return ctx.ok();
}

namespace {

// The typed entry points: the prepared form's prepare and run in one call,
// on one thread.
template <typename Kernel, typename... Arguments>
bool prepare_and_run(KernelContext& ctx, TensorRef input, Arguments... arguments) {
  const std::unique_ptr<LowbitLinear> state = Kernel::prepare_fn(ctx, input, arguments...);
  if (!state) return false;
  const RunEnvironment one_thread{sizeof(RunEnvironment), 1, nullptr};
  return Kernel::run_fn(ctx, *state, one_thread, input, arguments...);
}

}  // namespace

bool linear_8da4w_out(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef weight_scales,
                      int64_t group_size, std::optional<TensorRef> bias, TensorRef out) {
  return prepare_and_run<GroupedLinearKernel<k8da4w>>(ctx, input, weight, weight_scales, group_size, bias, out);
}

bool linear_8da8w_out(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef weight_scales,
                      std::optional<TensorRef> bias, TensorRef out) {
  return prepare_and_run<ChannelLinearKernel<k8da8w>>(ctx, input, weight, weight_scales, bias, out);
}

bool linear_int4_out(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef weight_scales,
                     int64_t group_size, std::optional<TensorRef> bias, TensorRef out) {
  return prepare_and_run<GroupedLinearKernel<kInt4>>(ctx, input, weight, weight_scales, group_size, bias, out);
}

bool linear_int8_out(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef weight_scales,
                     std::optional<TensorRef> bias, TensorRef out) {
  return prepare_and_run<ChannelLinearKernel<kInt8>>(ctx, input, weight, weight_scales, bias, out);
}

}  // namespace et_ops::kernels::quantized
