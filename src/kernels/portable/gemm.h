// The float32 matrix product behind aten::mm, addmm, linear and
// convolution: out[i, j] = sum over k of a[i, k] * b[k, j], then + bias.
//
// Summation order (the numeric contract of every kernel built on it): each
// output element starts from +0.0 in float64 and adds a[i, k] * b[k, j] for
// k = 0, 1, ... in increasing order, the float32 operands promoted to
// float64 (so each product is exact: 24 + 24 bits fit float64's 53) and
// each sum rounded to float64 (never a fused multiply-add); then it is
// scaled (addmm's alpha, when not 1), adds its bias (promoted, addmm's beta
// applied exactly in float64), and is rounded to float32 once. The float64
// sum is within k * 2^-53 of the sum of the terms' magnitudes of the exact
// sum, so the result is the correctly rounded float32 of the exact value
// unless that lies closer than this to a float32 rounding boundary.
// Vectors hold neighbouring output columns, never parts of one sum, so the
// result is the same on every SIMD target and for every operand layout.
//
// The right operand is a plain strided matrix, or the patches of a 2-D
// convolution (the "im2col" matrix, read straight from the input, never
// materialised): row k = (channel, kernel row, kernel column), column
// j = output pixel (oh, ow), zero where a tap falls in the padding.
#ifndef ET_OPS_SRC_KERNELS_PORTABLE_GEMM_H
#define ET_OPS_SRC_KERNELS_PORTABLE_GEMM_H

#include <cstdint>

namespace et_ops::kernels::portable::detail {

// a[i, k] for a row i and a reduction index k that splits into
// (k / (sizes[1] * sizes[2]), k / sizes[2] % sizes[1], k % sizes[2]), each
// with its own stride: a convolution weight's (input channel, kernel row,
// kernel column); a plain matrix has sizes[1] = sizes[2] = 1.
struct GemmLhs {
  const float* data;
  int64_t row_stride;
  int64_t sizes[3];
  int64_t strides[3];
};

// b[k, j] = data[k * row_stride + j * col_stride].
struct GemmMatrix {
  const float* data;
  int64_t row_stride;
  int64_t col_stride;
};

// The patch matrix of one image and one group of a convolution.
struct GemmPatches {
  const float* input;  // the group's first input channel in this image
  int64_t channel_stride, row_stride, col_stride;
  int64_t in_h, in_w;
  int64_t kernel_h, kernel_w;
  int64_t out_w;  // column j is output pixel (j / out_w, j % out_w)
  int64_t stride_h, stride_w, padding_h, padding_w, dilation_h, dilation_w;
};

struct GemmRhs {
  enum class Kind { Matrix, Patches } kind;
  GemmMatrix matrix;
  GemmPatches patches;
};

// out[i, j] = data[i * row_stride + (j / segment) * segment_stride +
// (j % segment) * col_stride]: a plain matrix has segment = cols; a
// convolution's output plane has segment = out_w (its rows).
struct GemmOut {
  float* data;
  int64_t row_stride;
  int64_t col_stride;
  int64_t segment;
  int64_t segment_stride;
};

// The term added to out[i, j] after the sum: scale * data[i * row_stride +
// j * col_stride] (a stride of 0 broadcasts: per output row, per output
// column, or one value), the product computed exactly in float64. No data:
// no bias.
struct GemmBias {
  const float* data;
  int64_t row_stride;
  int64_t col_stride;
  float scale = 1.0f;
};

struct Gemm {
  int64_t rows, cols, depth;
  GemmLhs a;
  GemmRhs b;
  GemmOut out;
  GemmBias bias;
  float sum_scale = 1.0f;  // the sum is multiplied by it (in float64) before the bias
};

// Writes every element of out (rows x cols) and reads nothing outside the
// operands; depth 0 gives +0.0 (scaled, plus the bias).
void gemm(const Gemm& problem);

}  // namespace et_ops::kernels::portable::detail

#endif  // ET_OPS_SRC_KERNELS_PORTABLE_GEMM_H
