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
// rounded once). The same bits on every SIMD target and thread count: a
// run state of several threads splits the key/value heads and blocks of
// query rows among them, each computed as on one thread.
// Only what the result depends on is read: positions the mask hides from
// a whole row are not scored (they take masked_score), positions whose
// probability is 0 add no value row. Against the chain that changes no bit
// unless the cache holds an infinity or NaN where a row does not look.
#include <pthreadpool.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <vector>

#include "checks.h"
#include "et_ops/kernels/portable.h"
#include "activation_simd.h"
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

// Key and value (a cache) may hold float16 or bfloat16 elements too.
bool check_cache_operand(KernelContext& ctx, const char* op, const char* name, TensorRef t) {
  if (!detail::check_tensor(ctx, op, name, t) || !detail::check_rank(ctx, op, name, t, 4)) return false;
  if (t.dtype() == DType::Float32 || t.dtype() == DType::Float16 || t.dtype() == DType::BFloat16) return true;
  return detail::fail(ctx, op, "{} has dtype {}; expected float32, float16 or bfloat16", name, dtype_name(t.dtype()));
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
  const bool operands_ok = check_operand(ctx, op, "query", a.query) && check_cache_operand(ctx, op, "key", a.key) &&
                           check_cache_operand(ctx, op, "value", a.value) && detail::check_tensor(ctx, op, "out", a.out) &&
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

const uint8_t* mask_row(const Attention& a, int64_t b, int64_t h, int64_t t) {
  return static_cast<const uint8_t*>(a.mask->data()) + b * a.mask_strides[0] + h * a.mask_strides[1] +
         t * a.mask_strides[2];
}

// The first and one past the last nonzero of the n bytes `step` apart
// from `bytes` ({n, n} when none). Adjacent bytes (step 1) go eight at a
// time first: a causal mask row is mostly a run of zeros, the future, that
// a byte at a time would spend longer scanning than the scores take.
detail::Span nonzero_bytes(const uint8_t* bytes, int64_t step, int64_t n) {
  constexpr int64_t kWord = sizeof(uint64_t);
  const auto zero_word = [&](int64_t at) {
    uint64_t word;
    std::memcpy(&word, bytes + at, sizeof word);
    return word == 0;
  };
  int64_t begin = 0, end = n;
  if (step == 1) {
    while (begin + kWord <= end && zero_word(begin)) begin += kWord;
    while (end - kWord >= begin && zero_word(end - kWord)) end -= kWord;
  }
  while (begin < end && bytes[begin * step] == 0) ++begin;
  while (end > begin && bytes[(end - 1) * step] == 0) --end;
  return begin < end ? detail::Span{begin, end} : detail::Span{n, n};
}

// The positions rows t0 .. t0 + rows of head h attend, from each row's
// first position the mask keeps to its last (all of them without a mask):
// only those are scored, a causal mask's future is not read.
void attended_spans(const Attention& a, int64_t b, int64_t h, int64_t t0, int64_t rows, int64_t length,
                    detail::Span* spans) {
  for (int64_t r = 0; r < rows; ++r)
    spans[r] = a.mask ? nonzero_bytes(mask_row(a, b, h, t0 + r), a.mask_strides[3], length) : detail::Span{0, length};
}

// row[s] = masked where m[s] is 0, for s in span, as a select of bits: a
// loop the compiler vectorises (it keeps a float select, or a conditional
// store, a byte at a time). The same bits as the assignment.
void mask_contiguous(const uint8_t* m, float masked, detail::Span span, float* row) {
  uint32_t masked_bits;
  std::memcpy(&masked_bits, &masked, sizeof masked_bits);
  for (int64_t s = span.begin; s < span.end; ++s) {
    uint32_t bits;
    std::memcpy(&bits, row + s, sizeof bits);
    const uint32_t keep = 0u - uint32_t(m[s] != 0);
    bits = (bits & keep) | (masked_bits & ~keep);
    std::memcpy(row + s, &bits, sizeof bits);
  }
}

// scores[r, s] = scores[r, s] * scale / divisor, then masked_score where the
// mask is false, for s in the row's span (the rest was not scored: its
// masked_score comes with the softmax, where it matters).
void scale_and_mask(const Attention& a, int64_t b, int64_t h, int64_t t0, int64_t rows, int64_t length,
                    const detail::Span* spans, float* scores) {
  // Locals: the row cannot alias them, so the mask loops vectorise.
  const float scale = a.scale, divisor = a.divisor, masked = a.masked_score_value;
  const int64_t mask_step = a.mask_strides[3];
  for (int64_t r = 0; r < rows; ++r) {
    float* row = scores + r * length;
    const detail::Span span = spans[r];
    detail::scale_scores(row, span, scale, divisor);
    if (!a.mask) continue;
    const uint8_t* m = mask_row(a, b, h, t0 + r);
    if (mask_step == 1) {
      mask_contiguous(m, masked, span, row);
      continue;
    }
    for (int64_t s = span.begin; s < span.end; ++s)
      if (m[s * mask_step] == 0) row[s] = masked;
  }
}

// A row's softmax, over its span alone when every position outside it
// would come out exactly 0 (exp(masked_score - max) is 0 and the span holds
// no NaN): the same bits as the whole row's, whose sum only adds those
// zeros, without an exponential per masked position; true then. Else the
// whole row, masked_score outside the span; false.
bool softmax_of_row(const Attention& a, float* row, int64_t length, detail::Span span) {
  const bool masked_outside = a.mask && (span.begin > 0 || span.end < length);
  if (masked_outside && span.begin < span.end) {
    const auto [max, nan] = detail::span_max(row, span);
    float outside = a.masked_score_value - max;
    if (!nan && a.masked_score_value < max) simd::apply<simd::Unary::Exp>(&outside, &outside, 1, simd::UnaryParams{});
    if (!nan && a.masked_score_value < max && outside == 0.0f) {
      detail::softmax_row(row + span.begin, row + span.begin, span.end - span.begin);
      std::fill(row, row + span.begin, 0.0f);
      std::fill(row + span.end, row + length, 0.0f);
      return true;
    }
  }
  if (masked_outside) {
    std::fill(row, row + span.begin, a.masked_score_value);
    std::fill(row + span.end, row + length, a.masked_score_value);
  }
  detail::softmax_row(row, row, length);
  return false;
}

// The positions of a row from its first probability that is not zero to
// its last, looked for within `within` (every probability outside it is
// zero): the values product skips the rest (a masked future, typically).
detail::Span weighted_span(const float* p, int64_t length, detail::Span within) {
  int64_t begin = within.begin, end = within.end;
  while (begin < end && p[begin] == 0.0f) ++begin;
  while (end > begin && p[end - 1] == 0.0f) --end;
  return begin < end ? detail::Span{begin, end} : detail::Span{length, length};
}

// Head kv of batch b of a key or value tensor [B, Hkv, S, D], as rows.
detail::CacheRows cache_rows(TensorRef t, int64_t b, int64_t kv) {
  const detail::RowElement element = t.dtype() == DType::Float16    ? detail::RowElement::kFloat16
                                     : t.dtype() == DType::BFloat16 ? detail::RowElement::kBFloat16
                                                                    : detail::RowElement::kFloat32;
  const auto* base = static_cast<const unsigned char*>(t.data()) +
                     (b * t.stride(0) + kv * t.stride(1)) * static_cast<int64_t>(dtype_size(t.dtype()));
  return {base, t.stride(2), t.stride(3), element};
}

// Scratch for one block: the query rows promoted to float64, their scores
// and the spans of positions each row needs.
struct Scratch {
  std::vector<double> query;
  std::vector<float> scores;
  std::vector<detail::Span> spans;
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
  const detail::CacheRows key = cache_rows(k, b, kv);
  float* scores = scratch.scores.data();
  detail::Span* spans = scratch.spans.data();
  for (int64_t g = 0; g < group; ++g) attended_spans(a, b, h0 + g, t0, rows, length, spans + g * rows);
  const detail::CacheRows value = cache_rows(v, b, kv);
  detail::attention_scores(scratch.query.data(), group * rows, key, value, length, depth, spans, scores);
  for (int64_t g = 0; g < group; ++g)
    scale_and_mask(a, b, h0 + g, t0, rows, length, spans + g * rows, scores + g * rows * length);
  for (int64_t r = 0; r < group * rows; ++r) {
    float* row = scores + r * length;
    const bool zero_outside = softmax_of_row(a, row, length, spans[r]);
    spans[r] = weighted_span(row, length, zero_outside ? spans[r] : detail::Span{0, length});
  }
  float* o_head = o.data_as<float>() + b * o.stride(0) + h0 * o.stride(1) + t0 * o.stride(2);
  if (rows == 1) {  // one row per head: the group's output rows are o.stride(1) apart
    detail::attention_values(scores, group, length, value, v.size(3), spans, o_head, o.stride(1), o.stride(3));
    return;
  }
  for (int64_t g = 0; g < group; ++g)
    detail::attention_values(scores + g * rows * length, rows, length, value, v.size(3), spans + g * rows,
                             o_head + g * o.stride(1), o.stride(2), o.stride(3));
}

// The tiles of one call: for each batch and key/value head, blocks of query
// rows whose scores fit kScoreBlockElements; each on one thread, with that
// thread's scratch.
struct Tiles {
  const Attention& a;
  int64_t kv_heads, group, rows, block, depth, length;
  std::atomic<bool> out_of_memory{false};

  int64_t blocks_per_head() const { return (rows + block - 1) / block; }
  int64_t count() const { return a.query.size(0) * kv_heads * blocks_per_head(); }

  void run(int64_t i) {
    // The thread's scratch, kept from call to call: a prompt's scores are
    // large enough that allocating them per call would map and fault fresh
    // pages every time.
    thread_local Scratch scratch;
    try {
      scratch.query.resize(static_cast<std::size_t>(group * block * depth));
      scratch.scores.resize(static_cast<std::size_t>(group * block * length));
      scratch.spans.resize(static_cast<std::size_t>(group * block));
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
      return;
    }
    const int64_t t0 = i % blocks_per_head() * block, head = i / blocks_per_head();
    attend_group(a, head / kv_heads, head % kv_heads, group, t0, std::min(block, rows - t0), scratch);
  }
};

bool run_attention(KernelContext& ctx, const Attention& a, const Shape& shape) {
  const int64_t kv_heads = a.key.size(1);
  const int64_t group = shape.sizes[1] / kv_heads;
  const int64_t length = shape.sizes[3];
  const int64_t depth = a.query.size(3);
  const int64_t widest = group * std::max<int64_t>({1, length, depth});
  const int64_t block = std::min(shape.sizes[2], std::max<int64_t>(1, kScoreBlockElements / widest));
  Tiles tiles{a, kv_heads, group, shape.sizes[2], block, depth, length};
  const et_ops_run_environment* env = ctx.run_environment();
  if (env != nullptr && env->thread_count > 1 && env->threadpool != nullptr && tiles.count() > 1) {
    pthreadpool_parallelize_1d(
        static_cast<pthreadpool_t>(env->threadpool),
        [](void* t, std::size_t i) { static_cast<Tiles*>(t)->run(int64_t(i)); }, &tiles,
        static_cast<std::size_t>(tiles.count()), 0);
  } else {
    for (int64_t i = 0; i < tiles.count() && !tiles.out_of_memory; ++i) tiles.run(i);
  }
  if (tiles.out_of_memory)
    return detail::fail(ctx, op_name::attention_out, "cannot allocate the scores of {} query rows ({} floats each)",
                        group, length);
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
