// et_portable::attention.out: the attention of a transformer layer in one
// kernel, reading the key and value tensors (a cache, typically) where they
// are, transposed or not, instead of the chain an exported model spells it
// as: bmm(query, permute(key)), mul or div by a scalar, where(mask), _softmax over
// the last dimension, bmm with value, and the view and permute copies
// around them.
//
// The steps are the chain's but for one summation order: a score is a
// float64 dot product of exact products in the fixed order of
// attention_simd.h (bmm sums in index order, so the two differ in a
// score's last bit now and then); each score is then multiplied by scale
// and divided by divisor in float32 as mul.Scalar and div.Scalar do (a
// factor of 1 changes nothing), each row goes through _softmax's own row
// function, and the values product is bmm's (float64 sums in index order,
// rounded once). The same bits on every SIMD target and thread count.
#include <cstdint>
#include <new>
#include <optional>
#include <vector>

#include "checks.h"
#include "et_ops/kernels/portable.h"
#include "attention_simd.h"
#include "softmax.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::Shape;

// The scores (and promoted query rows) of at most this many elements are
// held at once, for the query heads that share a key/value head: a
// prompt's rows go through in blocks (one row at least).
constexpr int64_t kScoreBlockElements = int64_t{1} << 16;

struct Attention {
  TensorRef query, key, value, out;
  std::optional<TensorRef> mask, masked_score;
  int64_t mask_strides[4] = {};  // mask seen in [B, H, T, S]; 0 where broadcast
  float scale = 1.0f;
  float divisor = 1.0f;
  float masked_score_value = 0.0f;
};

bool check_operand(KernelContext& ctx, const char* op, const char* name, TensorRef t) {
  return detail::check_tensor(ctx, op, name, t) && detail::check_dtype(ctx, op, name, t, DType::Float32) &&
         detail::check_rank(ctx, op, name, t, 4);
}

bool check_size(KernelContext& ctx, const char* op, const char* a_name, TensorRef a, int64_t a_dim,
                const char* b_name, TensorRef b, int64_t b_dim) {
  if (a.size(a_dim) == b.size(b_dim)) return true;
  return detail::fail(ctx, op, "{} of shape {} and {} of shape {} disagree: {}.size({}) = {} != {}.size({}) = {}",
                      a_name, detail::shape_string(a), b_name, detail::shape_string(b), a_name, a_dim, a.size(a_dim),
                      b_name, b_dim, b.size(b_dim));
}

// A bool mask and the one float32 masked_score, both or neither.
bool check_mask(KernelContext& ctx, std::optional<TensorRef> mask, std::optional<TensorRef> masked_score) {
  const char* op = op_name::attention_out;
  if (mask.has_value() != masked_score.has_value())
    return detail::fail(ctx, op, "mask and masked_score come together: got {} without {}",
                        mask ? "a mask" : "a masked_score", mask ? "a masked_score" : "a mask");
  if (!mask) return true;
  if (!detail::check_tensor(ctx, op, "mask", *mask) || !detail::check_dtype(ctx, op, "mask", *mask, DType::Bool) ||
      !detail::check_tensor(ctx, op, "masked_score", *masked_score) ||
      !detail::check_dtype(ctx, op, "masked_score", *masked_score, DType::Float32))
    return false;
  if (masked_score->numel() != 1)
    return detail::fail(ctx, op, "masked_score must hold one element, got shape {}",
                        detail::shape_string(*masked_score));
  return true;
}

// query [B, H, T, D], key [B, Hkv, S, D], value [B, Hkv, S, Dv] with H a
// multiple of Hkv, mask bool broadcastable to [B, H, T, S], out [B, H, T, Dv]
// disjoint from every operand.
bool check_attention(KernelContext& ctx, const Attention& a, Shape& scores) {
  const char* op = op_name::attention_out;
  const bool operands_ok = check_operand(ctx, op, "query", a.query) && check_operand(ctx, op, "key", a.key) &&
                           check_operand(ctx, op, "value", a.value) && detail::check_tensor(ctx, op, "out", a.out) &&
                           detail::check_dtype(ctx, op, "out", a.out, DType::Float32);
  if (!operands_ok || !check_mask(ctx, a.mask, a.masked_score) || !check_size(ctx, op, "key", a.key, 0, "query", a.query, 0) ||
      !check_size(ctx, op, "value", a.value, 0, "query", a.query, 0) ||
      !check_size(ctx, op, "value", a.value, 1, "key", a.key, 1) ||
      !check_size(ctx, op, "key", a.key, 3, "query", a.query, 3) ||
      !check_size(ctx, op, "value", a.value, 2, "key", a.key, 2))
    return false;
  const int64_t heads = a.query.size(1);
  const int64_t kv_heads = a.key.size(1);
  if (kv_heads == 0 ? heads != 0 : heads % kv_heads != 0)
    return detail::fail(ctx, op,
                        "query has {} heads, not a multiple of key's and value's {} (each key/value head serves the "
                        "same number of query heads)",
                        heads, kv_heads);
  scores.dim = 4;
  scores.sizes[0] = a.query.size(0);
  scores.sizes[1] = heads;
  scores.sizes[2] = a.query.size(2);
  scores.sizes[3] = a.key.size(2);
  if (a.mask && !detail::check_broadcastable_to(ctx, op, "mask", *a.mask, scores, "the scores [B, H, T, S]"))
    return false;
  Shape result = scores;
  result.sizes[3] = a.value.size(3);
  return detail::check_out_shape(ctx, op, "out", a.out, result, "[B, H, T, Dv]: query's first three, value's last") &&
         detail::check_no_overlap(ctx, op, "out", a.out, "query", a.query, Alias::Forbidden) &&
         detail::check_no_overlap(ctx, op, "out", a.out, "key", a.key, Alias::Forbidden) &&
         detail::check_no_overlap(ctx, op, "out", a.out, "value", a.value, Alias::Forbidden) &&
         (!a.mask || (detail::check_no_overlap(ctx, op, "out", a.out, "mask", *a.mask, Alias::Forbidden) &&
                      detail::check_no_overlap(ctx, op, "out", a.out, "masked_score", *a.masked_score,
                                               Alias::Forbidden)));
}

// scores[r, s] = scores[r, s] * scale / divisor, then masked_score where the mask is false.
void scale_and_mask(const Attention& a, int64_t b, int64_t h, int64_t t0, int64_t rows, int64_t length,
                    float* scores) {
  const auto* mask = a.mask ? static_cast<const uint8_t*>(a.mask->data()) : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = scores + r * length;
    for (int64_t s = 0; s < length; ++s) row[s] = row[s] * a.scale / a.divisor;
    if (mask == nullptr) continue;
    const uint8_t* m = mask + b * a.mask_strides[0] + h * a.mask_strides[1] + (t0 + r) * a.mask_strides[2];
    for (int64_t s = 0; s < length; ++s)
      if (m[s * a.mask_strides[3]] == 0) row[s] = a.masked_score_value;
  }
}

// Scratch for one block: the query rows promoted to float64 and their
// scores.
struct Scratch {
  std::vector<double> query;
  std::vector<float> scores;
};

// Rows t0 .. t0 + rows of the `group` query heads from h0 that share
// key/value head kv of batch b: their scores come from one pass over the
// key (row g * rows + r is head h0 + g, query row t0 + r), so a decode
// step of grouped-query attention reads each key row once per tile.
void attend_group(const Attention& a, int64_t b, int64_t kv, int64_t group, int64_t t0, int64_t rows,
                  Scratch& scratch) {
  const TensorRef q = a.query, k = a.key, v = a.value, o = a.out;
  const int64_t h0 = kv * group;
  const int64_t length = k.size(2);
  const int64_t depth = q.size(3);
  double* promoted = scratch.query.data();
  for (int64_t g = 0; g < group; ++g) {
    const float* q_rows = q.data_as<const float>() + b * q.stride(0) + (h0 + g) * q.stride(1) + t0 * q.stride(2);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t d = 0; d < depth; ++d) *promoted++ = q_rows[r * q.stride(2) + d * q.stride(3)];
  }
  const detail::FloatRows key{k.data_as<const float>() + b * k.stride(0) + kv * k.stride(1), k.stride(2), k.stride(3)};
  float* scores = scratch.scores.data();
  detail::attention_scores(scratch.query.data(), group * rows, key, length, depth, scores);
  for (int64_t g = 0; g < group; ++g) scale_and_mask(a, b, h0 + g, t0, rows, length, scores + g * rows * length);
  for (int64_t r = 0; r < group * rows; ++r)
    detail::softmax_row(scores + r * length, scores + r * length, length);
  const detail::FloatRows value{v.data_as<const float>() + b * v.stride(0) + kv * v.stride(1), v.stride(2),
                                v.stride(3)};
  float* o_head = o.data_as<float>() + b * o.stride(0) + h0 * o.stride(1) + t0 * o.stride(2);
  if (rows == 1) {  // one row per head: the group's output rows are o.stride(1) apart
    detail::attention_values(scores, group, length, value, v.size(3), o_head, o.stride(1), o.stride(3));
    return;
  }
  for (int64_t g = 0; g < group; ++g)
    detail::attention_values(scores + g * rows * length, rows, length, value, v.size(3), o_head + g * o.stride(1),
                             o.stride(2), o.stride(3));
}

bool run_attention(KernelContext& ctx, const Attention& a, const Shape& shape) {
  const int64_t kv_heads = a.key.size(1);
  const int64_t group = shape.sizes[1] / kv_heads;
  const int64_t length = shape.sizes[3];
  const int64_t depth = a.query.size(3);
  const int64_t widest = group * std::max<int64_t>({1, length, depth});
  const int64_t block = std::min(shape.sizes[2], std::max<int64_t>(1, kScoreBlockElements / widest));
  // The calling thread's scratch, kept from call to call: a prompt's scores
  // are large enough that allocating them per call would map and fault
  // fresh pages every time.
  thread_local Scratch scratch;
  try {
    scratch.query.resize(static_cast<std::size_t>(group * block * depth));
    scratch.scores.resize(static_cast<std::size_t>(group * block * length));
  } catch (const std::bad_alloc&) {
    return detail::fail(ctx, op_name::attention_out, "cannot allocate the scores of {} query rows ({} floats each)",
                        group, length);
  }
  for (int64_t b = 0; b < shape.sizes[0]; ++b)
    for (int64_t kv = 0; kv < kv_heads; ++kv)
      for (int64_t t0 = 0; t0 < shape.sizes[2]; t0 += block)
        attend_group(a, b, kv, group, t0, std::min(block, shape.sizes[2] - t0), scratch);
  return ctx.ok();
}

}  // namespace

bool attention_out(KernelContext& ctx, TensorRef query, TensorRef key, TensorRef value, std::optional<TensorRef> mask,
                   std::optional<TensorRef> masked_score, double scale, double divisor, TensorRef out) {
  Attention a{query, key, value, out, mask, masked_score};
  a.scale = static_cast<float>(scale);
  a.divisor = static_cast<float>(divisor);
  Shape scores;
  if (!check_attention(ctx, a, scores)) return false;
  if (mask) {
    detail::broadcast_strides(*mask, scores, a.mask_strides);
    a.masked_score_value = *masked_score->data_as<const float>();
  }
  if (out.numel() == 0) return ctx.ok();
  return run_attention(ctx, a, scores);
}

}  // namespace et_ops::kernels::portable
