// The two products of et_portable::attention (attention.cpp), vectorised
// per Highway target with one summation order for all of them, so the
// bits are the same on every CPU; and the loops over a row of scores
// between them (scaling, the largest score).
#ifndef ET_OPS_SRC_KERNELS_PORTABLE_ATTENTION_SIMD_H
#define ET_OPS_SRC_KERNELS_PORTABLE_ATTENTION_SIMD_H

#include <cstdint>

namespace et_ops::kernels::portable::detail {

// The order of a score's sum: term d of a dot product goes to partial sum
// d % kScorePartials (each partial adds its terms in increasing d from
// +0.0, every product exact in float64), and the partials are added as
// ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7)), rounded to float32 once.
inline constexpr int64_t kScorePartials = 8;

// The element types of the key and value rows (a cache): float32, or a
// 16-bit float (float16, bfloat16), which the products widen exactly.
enum class RowElement { kFloat32, kFloat16, kBFloat16 };

// A matrix of such elements: element (i, j) at data[i * row_stride + j *
// col_stride] (strides in elements).
struct CacheRows {
  const void* data;
  int64_t row_stride, col_stride;
  RowElement element;
};

// The positions [begin, end) of a row that a product needs.
struct Span {
  int64_t begin, end;
};

// scores[r * length + s] = query row r . key row s (depth terms, in the
// order above, each key element widened to float64 exactly), for r < rows
// and s in spans[r]; `query` holds the rows
// promoted to float64, `depth` apart. Positions outside spans[r] may be
// scored too (rows go in tiles) or left as they were. The rows of `next`
// (the values) at the positions scored are asked for from memory as it
// goes.
void attention_scores(const double* query, int64_t rows, CacheRows key, CacheRows next, int64_t length,
                      int64_t depth, const Span* spans, float* scores);

// out(r, j) = sum over s of probabilities[r * length + s] * value(s, j), for
// r < rows and j < cols: from +0.0 in increasing s, each product exact in
// float64 and each sum rounded to float64, rounded to float32 once (the
// order of gemm.h, so the bits of bmm). Row r's probabilities outside
// spans[r] are zero: their terms are skipped, value rows no row needs are
// not read. For finite values that changes no bit (a sum from +0.0 is never
// -0.0, and adding a zero product leaves any other sum as it is).
void attention_values(const float* probabilities, int64_t rows, int64_t length, CacheRows value, int64_t cols,
                      const Span* spans, float* out, int64_t out_row_stride, int64_t out_col_stride);

// row[s] = row[s] * scale / divisor for s in span (mul.Scalar then
// div.Scalar, each rounded to float32).
void scale_scores(float* row, Span span, float scale, float divisor);

// The largest of row[span] and whether any of them is NaN (the largest
// means nothing then). Of zeros of both signs, either may come out.
struct SpanMax {
  float max;
  bool nan;
};
SpanMax span_max(const float* row, Span span);

}  // namespace et_ops::kernels::portable::detail

#endif  // ET_OPS_SRC_KERNELS_PORTABLE_ATTENTION_SIMD_H
