// et_portable::attention.out: the attention of a transformer layer in one
// kernel, reading the key and value tensors (a cache, typically) where they
// are, transposed or not, instead of the chain an exported model spells it
// as: bmm(query, permute(key)), mul or div by a scalar, where(mask), _softmax over
// the last dimension, bmm with value, and the view and permute copies
// around them.
//
// The bits are the chain's: the two products are the matrix product of
// gemm.h (float64 sums in index order, rounded once), each score is
// multiplied by scale and divided by divisor in float32 as mul.Scalar and
// div.Scalar do (a factor of 1 changes nothing), and each row goes through _softmax's own
// row function. So a program gives the same bytes whether its exporter
// fused the chain or not, on every SIMD target.
#include <cstdint>
#include <new>
#include <optional>
#include <vector>

#include "checks.h"
#include "et_ops/kernels/portable.h"
#include "gemm.h"
#include "softmax.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::Shape;

// The scores of at most this many elements are held at once: a prompt's
// rows go through in blocks (one row at least).
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

// Rows t0 .. t0 + rows of head h of batch b.
void attend_rows(const Attention& a, int64_t b, int64_t h, int64_t t0, int64_t rows, float* scores) {
  const TensorRef q = a.query, k = a.key, v = a.value, o = a.out;
  const int64_t kv = h / (q.size(1) / k.size(1));
  const int64_t length = k.size(2);
  const int64_t depth = q.size(3);
  // scores = query rows @ key^T: key's rows are the product's columns.
  detail::Gemm p{};
  p.rows = rows;
  p.cols = length;
  p.depth = depth;
  const float* q_rows = q.data_as<const float>() + b * q.stride(0) + h * q.stride(1) + t0 * q.stride(2);
  const float* k_head = k.data_as<const float>() + b * k.stride(0) + kv * k.stride(1);
  p.a = detail::GemmLhs{depth == 0 ? nullptr : q_rows, q.stride(2), {depth, 1, 1}, {q.stride(3), 0, 0}};
  p.b.kind = detail::GemmRhs::Kind::Matrix;
  p.b.matrix = detail::GemmMatrix{depth == 0 ? nullptr : k_head, k.stride(3), k.stride(2)};
  p.out = detail::GemmOut{scores, length, 1, length, 0};
  if (length > 0) detail::gemm(p);
  scale_and_mask(a, b, h, t0, rows, length, scores);
  for (int64_t r = 0; r < rows; ++r) detail::softmax_row(scores + r * length, scores + r * length, length);
  // out rows = probabilities @ value.
  p.cols = v.size(3);
  p.depth = length;
  const float* v_head = v.data_as<const float>() + b * v.stride(0) + kv * v.stride(1);
  p.a = detail::GemmLhs{length == 0 ? nullptr : scores, length, {length, 1, 1}, {1, 0, 0}};
  p.b.matrix = detail::GemmMatrix{length == 0 ? nullptr : v_head, v.stride(2), v.stride(3)};
  float* o_rows = o.data_as<float>() + b * o.stride(0) + h * o.stride(1) + t0 * o.stride(2);
  p.out = detail::GemmOut{o_rows, o.stride(2), o.stride(3), p.cols, 0};
  if (p.cols > 0) detail::gemm(p);
}

bool run_attention(KernelContext& ctx, const Attention& a, const Shape& shape) {
  const int64_t length = shape.sizes[3];
  const int64_t block = length == 0 ? shape.sizes[2] : std::max<int64_t>(1, kScoreBlockElements / length);
  std::vector<float> scores;
  try {
    scores.resize(static_cast<std::size_t>(std::min(block, shape.sizes[2]) * length));
  } catch (const std::bad_alloc&) {
    return detail::fail(ctx, op_name::attention_out, "cannot allocate the scores of one query row ({} floats)",
                        length);
  }
  for (int64_t b = 0; b < shape.sizes[0]; ++b)
    for (int64_t h = 0; h < shape.sizes[1]; ++h)
      for (int64_t t0 = 0; t0 < shape.sizes[2]; t0 += block)
        attend_rows(a, b, h, t0, std::min(block, shape.sizes[2] - t0), scores.data());
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
