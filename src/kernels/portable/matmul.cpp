// aten::mm.out and aten::addmm.out on float32, accumulated in float32.
//
// Every output element is the sum over the inner index in increasing
// order, starting from 0: the result does not depend on the operands'
// layouts. PyTorch's BLAS sums in another (blocked) order, so results agree
// with it to rounding, not bit for bit.
#include <cstdint>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::Shape;

constexpr const char* kMmOp = "aten::mm.out";
constexpr const char* kAddmmOp = "aten::addmm.out";

// A 2-D float32 operand addressed through its strides.
struct Matrix {
  float* data;
  int64_t rows;
  int64_t cols;
  int64_t row_stride;
  int64_t col_stride;

  static Matrix of(TensorRef t) {
    return Matrix{t.data_as<float>(), t.size(0), t.size(1), t.stride(0), t.stride(1)};
  }
  float& at(int64_t i, int64_t j) const { return data[i * row_stride + j * col_stride]; }
};

// out = a @ b as dot products: used when b's columns are contiguous.
void multiply_by_columns(const Matrix& a, const Matrix& b, const Matrix& out) {
  for (int64_t i = 0; i < out.rows; ++i)
    for (int64_t j = 0; j < out.cols; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < a.cols; ++p) sum += a.at(i, p) * b.at(p, j);
      out.at(i, j) = sum;
    }
}

// out = a @ b by adding scaled rows of b into each row of out: the same
// per-element summation order as multiply_by_columns, but streaming along
// rows of b, which the compiler vectorises when rows are contiguous.
void multiply_by_rows(const Matrix& a, const Matrix& b, const Matrix& out) {
  const bool contiguous_rows = out.col_stride == 1 && b.col_stride == 1;
  for (int64_t i = 0; i < out.rows; ++i) {
    float* out_row = &out.at(i, 0);
    for (int64_t j = 0; j < out.cols; ++j) out_row[j * out.col_stride] = 0.0f;
    for (int64_t p = 0; p < a.cols; ++p) {
      const float scale = a.at(i, p);
      const float* b_row = &b.at(p, 0);
      if (contiguous_rows) {
        for (int64_t j = 0; j < out.cols; ++j) out_row[j] += scale * b_row[j];
      } else {
        for (int64_t j = 0; j < out.cols; ++j) out_row[j * out.col_stride] += scale * b_row[j * b.col_stride];
      }
    }
  }
}

void multiply(const Matrix& a, const Matrix& b, const Matrix& out) {
  if (out.rows == 0 || out.cols == 0) return;
  if (b.row_stride == 1 && b.col_stride != 1) multiply_by_columns(a, b, out);
  else multiply_by_rows(a, b, out);
}

// a @ b into out: float32 2-D operands whose inner sizes agree, out of the
// product's shape and disjoint from both (it is written while they are read).
bool check_product(KernelContext& ctx, const char* op, const char* a_name, TensorRef a, const char* b_name,
                   TensorRef b, TensorRef out, Shape& shape) {
  const bool operands_ok =
      detail::check_tensor(ctx, op, a_name, a) && detail::check_tensor(ctx, op, b_name, b) &&
      detail::check_tensor(ctx, op, "out", out) && detail::check_dtype(ctx, op, a_name, a, DType::Float32) &&
      detail::check_dtype(ctx, op, b_name, b, DType::Float32) &&
      detail::check_dtype(ctx, op, "out", out, DType::Float32) && detail::check_rank(ctx, op, a_name, a, 2) &&
      detail::check_rank(ctx, op, b_name, b, 2);
  if (!operands_ok) return false;
  if (a.size(1) != b.size(0))
    return detail::fail(ctx, op, "{} of shape {} and {} of shape {} cannot be multiplied: {}.size(1) = {} != {}.size(0) = {}",
                        a_name, detail::shape_string(a), b_name, detail::shape_string(b), a_name, a.size(1), b_name,
                        b.size(0));
  shape.dim = 2;
  shape.sizes[0] = a.size(0);
  shape.sizes[1] = b.size(1);
  return detail::check_out_shape(ctx, op, "out", out, shape, "rows of the first operand, columns of the second") &&
         detail::check_no_overlap(ctx, op, "out", out, a_name, a, Alias::Forbidden) &&
         detail::check_no_overlap(ctx, op, "out", out, b_name, b, Alias::Forbidden);
}

// out = beta * bias + alpha * out, with bias broadcast to out's shape;
// beta == 0 ignores bias entirely (its NaNs too), as PyTorch does.
void scale_and_add_bias(TensorRef bias, TensorRef out, float beta, float alpha) {
  const TensorRef operands[2] = {out, bias};
  const auto loop = detail::broadcast_loop(detail::shape_of(out), operands);
  float* o = out.data_as<float>();
  const float* c = bias.data_as<const float>();
  detail::for_each_row(loop, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    for (int64_t j = 0; j < length; ++j) {
      float& value = o[offset[0] + j * step[0]];
      const float product = alpha == 1.0f ? value : alpha * value;
      if (beta == 0.0f) {
        value = product;
      } else {
        const float term = c[offset[1] + j * step[1]];
        value = (beta == 1.0f ? term : beta * term) + product;
      }
    }
  });
}

}  // namespace

bool mm_out(KernelContext& ctx, TensorRef self, TensorRef mat2, TensorRef out) {
  Shape shape;
  if (!check_product(ctx, kMmOp, "self", self, "mat2", mat2, out, shape)) return false;
  multiply(Matrix::of(self), Matrix::of(mat2), Matrix::of(out));
  return ctx.ok();
}

bool addmm_out(KernelContext& ctx, TensorRef self, TensorRef mat1, TensorRef mat2, Scalar beta, Scalar alpha,
               TensorRef out) {
  const char* op = kAddmmOp;
  Shape shape;
  float beta_value = 0.0f;
  float alpha_value = 0.0f;
  const bool valid = check_product(ctx, op, "mat1", mat1, "mat2", mat2, out, shape) &&
                     detail::check_tensor(ctx, op, "self", self) &&
                     detail::check_dtype(ctx, op, "self", self, DType::Float32) &&
                     detail::check_broadcastable_to(ctx, op, "self", self, shape, "mat1 @ mat2") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::Forbidden) &&
                     detail::scalar_to(ctx, op, "beta", beta, beta_value) &&
                     detail::scalar_to(ctx, op, "alpha", alpha, alpha_value);
  if (!valid) return false;
  multiply(Matrix::of(mat1), Matrix::of(mat2), Matrix::of(out));
  scale_and_add_bias(self, out, beta_value, alpha_value);
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
