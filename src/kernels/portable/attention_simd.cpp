// The products of the fused attention (attention_simd.h), compiled once per
// Highway target and dispatched at run time. Both read the cache straight
// from where it is, one row at a time (float32, float16 or bfloat16
// elements), widening to float64 as they go: a
// score keeps its kScorePartials partial sums in float64 lanes (as many
// vectors as that takes on the target, the same sums on every one), the
// values product keeps float64 sums of neighbouring output columns. Query
// rows go in tiles of up to four, so each key and value row is loaded once
// per tile. A fused multiply-add changes nothing: every product of two
// float32 values is exact in float64. The row loops between the products
// (scaling, the largest score) are here too, for the target's width.
#define HWY_TARGET_INCLUDE "attention_simd.cpp"
#include "common/hwy_per_target.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <hwy/cache_control.h>

#include "attention_simd.h"
#include "et_ops/half.h"
#include "float16_vectors-inl.h"
#include "vector_math-inl.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::portable::detail)
namespace {

using namespace simd::HWY_NAMESPACE;  // DD, VD, DH and DemoteToFloat

constexpr int kTileRows = 4;
constexpr int64_t kLanes = static_cast<int64_t>(hn::MaxLanes(DD()));
constexpr int64_t kPartialVectors = kScorePartials / kLanes;  // x86 targets: 1, 2, 4 or 8
static_assert(kPartialVectors * kLanes == kScorePartials, "the partial sums fill whole vectors");

double add_partials(const double* p) { return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])); }

// add_partials of the partial sums in the vectors v[0 .. kPartialVectors),
// in registers: neighbouring lanes, then neighbouring 128-bit blocks, then
// halves (a + b and b + a are the same bits, so the shuffled copies' lanes
// are too).
template <class D>
HWY_INLINE double add_partial_vectors(D d, const hn::Vec<D>* v) {
#if HWY_TARGET == HWY_SCALAR
  (void)d;
  double p[kScorePartials];
  for (int64_t i = 0; i < kScorePartials; ++i) p[i] = hn::GetLane(v[i]);
  return add_partials(p);
#else
  if constexpr (kLanes == 8) {
    auto x = hn::Add(v[0], hn::Shuffle01(v[0]));
    x = hn::Add(x, hn::SwapAdjacentBlocks(x));
    return hn::GetLane(hn::Add(x, hn::ConcatLowerUpper(d, x, x)));
  } else if constexpr (kLanes == 4) {
    auto low = hn::Add(v[0], hn::Shuffle01(v[0]));
    auto high = hn::Add(v[1], hn::Shuffle01(v[1]));
    low = hn::Add(low, hn::SwapAdjacentBlocks(low));
    high = hn::Add(high, hn::SwapAdjacentBlocks(high));
    return hn::GetLane(hn::Add(low, high));
  } else {
    hn::Vec<D> pairs[4];
    for (int i = 0; i < 4; ++i) pairs[i] = hn::Add(v[i], hn::Shuffle01(v[i]));
    return hn::GetLane(hn::Add(hn::Add(pairs[0], pairs[1]), hn::Add(pairs[2], pairs[3])));
  }
#endif
}

using Float16 = ::et_ops::Half;
using BFloat16 = ::et_ops::BFloat16;

// Rows of one element type: element (i, j) at data[i * row_stride + j * col_stride].
template <typename T>
struct Rows {
  const T* data;
  int64_t row_stride, col_stride;
};

// An element as float64, exactly.
HWY_INLINE double widen(float x) { return x; }
HWY_INLINE double widen(Float16 x) { return x.to_float(); }
HWY_INLINE double widen(BFloat16 x) { return x.to_float(); }

// kLanes elements from p, widened to float64 exactly.
template <typename T>
HWY_INLINE VD load_wide(const T* p) {
  const DD dd;
  const DH dh;
  if constexpr (std::is_same_v<T, float>) {
    return hn::PromoteTo(dd, hn::LoadU(dh, p));
  } else {
    const hn::Rebind<uint16_t, DD> d16;
    const hn::RebindToUnsigned<DH> du;
    const auto bits = hn::PromoteTo(du, hn::LoadU(d16, reinterpret_cast<const uint16_t*>(p)));
    if constexpr (std::is_same_v<T, BFloat16>) return hn::PromoteTo(dd, WidenBFloat16(dh, bits));
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
    // F16C's conversion (vcvtph2ps), exact for every input (Highway's
    // emulated one, on the other targets, is not: WidenFloat16 there).
    (void)bits;
    const hn::Rebind<hwy::float16_t, DD> dh16;
    return hn::PromoteTo(dd, hn::PromoteTo(dh, hn::LoadU(dh16, reinterpret_cast<const hwy::float16_t*>(p))));
#else
    return hn::PromoteTo(dd, WidenFloat16(dh, bits));
#endif
  }
}

// Asks for the cache lines of `bytes` bytes from `at` (a read the caller
// makes a few rows later: the cache streams from memory in a decode step,
// and the hardware prefetchers start each head's rows late).
HWY_INLINE void prefetch_bytes(const void* at, int64_t bytes) {
  const char* p = reinterpret_cast<const char*>(at);
  for (int64_t line = 0; line < bytes; line += 64) hwy::Prefetch(p + line);
}

// How many rows ahead of the one they read the products ask for the cache,
// in the first tile of query rows: it reads the cache from memory in a
// decode step; the next tiles read it from the caches, where asking again
// only costs.
constexpr int64_t kPrefetchRows = 8;

// Key rows per step of R query rows' scores: independent sums to overlap
// (one query row alone would wait on one chain of depth / 8 additions).
template <int R>
constexpr int kKeyRows = R == 1 ? 4 : R == 2 ? 2 : 1;

// Scores of R query rows against K key rows (`step` elements apart) whose
// terms are contiguous: scores[r * length + i] for key row i.
template <int R, int K, typename T>
void score_tile(const double* query, int64_t depth, const T* key, int64_t step, float* scores, int64_t length) {
  const DD dd;
  VD sums[R][K][kPartialVectors];
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < K; ++i)
      for (int64_t v = 0; v < kPartialVectors; ++v) sums[r][i][v] = hn::Zero(dd);
  const int64_t whole = depth / kScorePartials * kScorePartials;
  for (int64_t d0 = 0; d0 < whole; d0 += kScorePartials)
    for (int64_t v = 0; v < kPartialVectors; ++v)
      for (int i = 0; i < K; ++i) {
        const VD k = load_wide(key + i * step + d0 + v * kLanes);
        for (int r = 0; r < R; ++r)
          sums[r][i][v] = hn::MulAdd(hn::LoadU(dd, query + r * depth + d0 + v * kLanes), k, sums[r][i][v]);
      }
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < K; ++i) {
      if (whole == depth) {
        scores[r * length + i] = static_cast<float>(add_partial_vectors(dd, sums[r][i]));
        continue;
      }
      HWY_ALIGN double partials[kScorePartials];
      for (int64_t v = 0; v < kPartialVectors; ++v) hn::Store(sums[r][i][v], dd, partials + v * kLanes);
      for (int64_t d = whole; d < depth; ++d)
        partials[d % kScorePartials] += query[r * depth + d] * widen(key[i * step + d]);
      scores[r * length + i] = static_cast<float>(add_partials(partials));
    }
}

// The same sums for any key layout, one term at a time.
template <typename T>
void score_strided(const double* query, int64_t rows, const T* key, int64_t step, int64_t depth, float* scores,
                   int64_t length) {
  for (int64_t r = 0; r < rows; ++r) {
    double partials[kScorePartials] = {};
    for (int64_t d = 0; d < depth; ++d) partials[d % kScorePartials] += query[r * depth + d] * widen(key[d * step]);
    scores[r * length] = static_cast<float>(add_partials(partials));
  }
}

// With prefetch_rows, asks for the key rows kPrefetchRows ahead of those it
// scores, and for the rows of `next` at those positions (the value rows
// the values product reads next) when its columns are contiguous.
template <int R, typename T>
void score_rows(const double* query, Rows<T> key, CacheRows next, bool prefetch_rows, Span span, int64_t length,
                int64_t depth, float* scores) {
  if (key.col_stride != 1) {
    for (int64_t s = span.begin; s < span.end; ++s)
      score_strided(query, R, key.data + s * key.row_stride, key.col_stride, depth, scores + s, length);
    return;
  }
  const int64_t row_bytes = depth * int64_t{sizeof(T)};
  const int64_t next_element = next.element == RowElement::kFloat32 ? 4 : 2;
  const auto prefetch = [&](int64_t s) {
    if (!prefetch_rows || s >= span.end) return;
    prefetch_bytes(key.data + s * key.row_stride, row_bytes);
    if (next.col_stride == 1)
      prefetch_bytes(static_cast<const char*>(next.data) + s * next.row_stride * next_element, depth * next_element);
  };
  constexpr int K = kKeyRows<R>;
  int64_t s = span.begin;
  for (; s + K <= span.end; s += K) {
    for (int i = 0; i < K; ++i) prefetch(s + kPrefetchRows + i);
    score_tile<R, K>(query, depth, key.data + s * key.row_stride, key.row_stride, scores + s, length);
  }
  for (; s < span.end; ++s) score_tile<R, 1>(query, depth, key.data + s * key.row_stride, 0, scores + s, length);
}

// Output columns [j, j + kValueVectorsOf<R> * kLanes) of R rows, value rows
// contiguous: R * kValueVectorsOf<R> independent sums.
template <int R>
constexpr int64_t kValueVectorsOf = R == 1 ? 8 : R == 2 ? 4 : 2;
template <int R, typename T>
void value_tile(const float* p, int64_t length, Rows<T> value, bool prefetch_rows, Span span, int64_t j, float* out,
                int64_t out_row_stride, int64_t out_col_stride) {
  const DD dd;
  const DH dh;
  constexpr int64_t kValueVectors = kValueVectorsOf<R>;
  VD sums[R][kValueVectors];
  for (int r = 0; r < R; ++r)
    for (int64_t v = 0; v < kValueVectors; ++v) sums[r][v] = hn::Zero(dd);
  const int64_t row_bytes = kValueVectors * kLanes * int64_t{sizeof(T)};
  for (int64_t s = span.begin; s < span.end; ++s) {
    if (prefetch_rows && s + kPrefetchRows < span.end)
      prefetch_bytes(value.data + (s + kPrefetchRows) * value.row_stride + j, row_bytes);
    const T* row = value.data + s * value.row_stride + j;
    for (int64_t v = 0; v < kValueVectors; ++v) {
      const VD x = load_wide(row + v * kLanes);
      for (int r = 0; r < R; ++r)
        sums[r][v] = hn::MulAdd(hn::Set(dd, static_cast<double>(p[r * length + s])), x, sums[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int64_t v = 0; v < kValueVectors; ++v) {
      HWY_ALIGN float lanes[kLanes];
      hn::Store(DemoteToFloat(dh, sums[r][v]), dh, lanes);
      for (int64_t i = 0; i < kLanes; ++i) out[r * out_row_stride + (j + v * kLanes + i) * out_col_stride] = lanes[i];
    }
}

// One output element at a time, for the columns past the vectors and any layout.
template <typename T>
void value_column(const float* p, int64_t rows, int64_t length, Rows<T> value, Span span, int64_t j, float* out,
                  int64_t out_row_stride, int64_t out_col_stride) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t s = span.begin; s < span.end; ++s)
      sum += static_cast<double>(p[r * length + s]) * widen(value.data[s * value.row_stride + j * value.col_stride]);
    out[r * out_row_stride + j * out_col_stride] = static_cast<float>(sum);
  }
}

template <int R, typename T>
void value_rows(const float* p, int64_t length, Rows<T> value, bool prefetch_rows, Span span, int64_t cols,
                float* out, int64_t out_row_stride, int64_t out_col_stride) {
  constexpr int64_t width = kValueVectorsOf<R> * kLanes;
  int64_t j = 0;
  if (value.col_stride == 1)
    for (; j + width <= cols; j += width)
      value_tile<R>(p, length, value, prefetch_rows, span, j, out, out_row_stride, out_col_stride);
  for (; j < cols; ++j) value_column(p, R, length, value, span, j, out, out_row_stride, out_col_stride);
}

// The positions any of rows [r, r + count) needs (an empty span if none).
Span tile_span(const Span* spans, int64_t r, int64_t count) {
  Span tile{0, 0};
  for (int64_t i = r; i < r + count; ++i) {
    if (spans[i].begin >= spans[i].end) continue;
    tile = tile.begin >= tile.end ? spans[i]
                                  : Span{std::min(tile.begin, spans[i].begin), std::max(tile.end, spans[i].end)};
  }
  return tile;
}

// Runs f.template operator()<R>(r, span) on tiles of R <= kTileRows rows
// from r, span the positions the tile needs.
template <typename F>
void for_each_tile(int64_t rows, const Span* spans, const F& f) {
  int64_t r = 0;
  for (; r + kTileRows <= rows; r += kTileRows)
    f(std::integral_constant<int, kTileRows>(), r, tile_span(spans, r, kTileRows));
  const Span rest = tile_span(spans, r, rows - r);
  switch (rows - r) {
    case 3: f(std::integral_constant<int, 3>(), r, rest); break;
    case 2: f(std::integral_constant<int, 2>(), r, rest); break;
    case 1: f(std::integral_constant<int, 1>(), r, rest); break;
    default: break;
  }
}

}  // namespace

// f(typed rows) for the rows' element type.
template <typename F>
void with_rows(CacheRows rows, const F& f) {
  switch (rows.element) {
    case RowElement::kFloat16:
      return f(Rows<Float16>{static_cast<const Float16*>(rows.data), rows.row_stride, rows.col_stride});
    case RowElement::kBFloat16:
      return f(Rows<BFloat16>{static_cast<const BFloat16*>(rows.data), rows.row_stride, rows.col_stride});
    case RowElement::kFloat32:
      break;
  }
  f(Rows<float>{static_cast<const float*>(rows.data), rows.row_stride, rows.col_stride});
}

void AttentionScores(const double* query, int64_t rows, CacheRows key, CacheRows next, int64_t length,
                     int64_t depth, const Span* spans, float* scores) {
  with_rows(key, [&](auto typed) {
    for_each_tile(rows, spans, [&](auto tile, int64_t r, Span span) {
      score_rows<decltype(tile)::value>(query + r * depth, typed, next, r == 0, span, length, depth,
                                        scores + r * length);
    });
  });
}

void AttentionValues(const float* probabilities, int64_t rows, int64_t length, CacheRows value, int64_t cols,
                     const Span* spans, float* out, int64_t out_row_stride, int64_t out_col_stride) {
  with_rows(value, [&](auto typed) {
    for_each_tile(rows, spans, [&](auto tile, int64_t r, Span span) {
      value_rows<decltype(tile)::value>(probabilities + r * length, length, typed, r == 0, span, cols,
                                        out + r * out_row_stride, out_row_stride, out_col_stride);
    });
  });
}

void ScaleScores(float* row, Span span, float scale, float divisor) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto times = hn::Set(d, scale), over = hn::Set(d, divisor);
  int64_t s = span.begin;
  for (; s + lanes <= span.end; s += lanes)
    hn::StoreU(hn::Div(hn::Mul(hn::LoadU(d, row + s), times), over), d, row + s);
  for (; s < span.end; ++s) row[s] = row[s] * scale / divisor;
}

SpanMax LargestOf(const float* row, Span span) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  float largest = -std::numeric_limits<float>::infinity();
  auto best = hn::Set(d, largest);
  auto nan = hn::Zero(du);  // all ones in the lanes where a NaN was seen
  int64_t s = span.begin;
  for (; s + lanes <= span.end; s += lanes) {
    const auto v = hn::LoadU(d, row + s);
    nan = hn::Or(nan, hn::BitCast(du, hn::VecFromMask(d, hn::IsNaN(v))));
    best = hn::Max(best, v);
  }
  largest = hn::GetLane(hn::MaxOfLanes(d, best));
  bool any_nan = !hn::AllFalse(du, hn::Ne(nan, hn::Zero(du)));
  for (; s < span.end; ++s) {
    any_nan = any_nan || std::isnan(row[s]);
    largest = std::max(largest, row[s]);
  }
  return {largest, any_nan};
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::portable::detail)

#if HWY_ONCE
namespace et_ops::kernels::portable::detail {

HWY_EXPORT(AttentionScores);
HWY_EXPORT(AttentionValues);
HWY_EXPORT(ScaleScores);
HWY_EXPORT(LargestOf);

void scale_scores(float* row, Span span, float scale, float divisor) {
  HWY_DYNAMIC_DISPATCH(ScaleScores)(row, span, scale, divisor);
}

SpanMax span_max(const float* row, Span span) { return HWY_DYNAMIC_DISPATCH(LargestOf)(row, span); }

void attention_scores(const double* query, int64_t rows, CacheRows key, CacheRows next, int64_t length,
                      int64_t depth, const Span* spans, float* scores) {
  HWY_DYNAMIC_DISPATCH(AttentionScores)(query, rows, key, next, length, depth, spans, scores);
}

void attention_values(const float* probabilities, int64_t rows, int64_t length, CacheRows value, int64_t cols,
                      const Span* spans, float* out, int64_t out_row_stride, int64_t out_col_stride) {
  HWY_DYNAMIC_DISPATCH(AttentionValues)(probabilities, rows, length, value, cols, spans, out, out_row_stride,
                                        out_col_stride);
}

}  // namespace et_ops::kernels::portable::detail
#endif  // HWY_ONCE
