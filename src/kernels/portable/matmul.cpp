// aten::mm.out, aten::addmm.out, aten::linear.out, aten::bmm.out and
// aten::baddbmm.out on float32, by the matrix product of gemm.h: float32
// operands, float64 sums (bmm and baddbmm: one product per batch).
//
// Every output element of the product is the sum over the inner index in
// increasing order, starting from +0.0, each product exact and each sum
// rounded in float64; linear then adds its bias, addmm computes
// beta * self + alpha * sum (in float64, as PyTorch writes it), and the
// result is rounded to float32 once: the correctly rounded float32 of the
// exact value but for values closer to a rounding boundary than float64's
// error, on every SIMD target and for every operand layout. PyTorch's BLAS
// sums in float32 in another (blocked, fused) order, so results agree with
// it to rounding, not bit for bit.
#include <cstdint>

#include "checks.h"
#include "et_ops/kernels/portable.h"
#include "gemm.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::Shape;


// out = alpha * (a @ b) + bias for 2-D float32 tensors whose shapes agree
// (checked).
void multiply(TensorRef a, TensorRef b, TensorRef out, detail::GemmBias bias = {}, float alpha = 1.0f) {
  detail::Gemm p{};
  p.bias = bias;
  p.sum_scale = alpha;
  p.rows = out.size(0);
  p.cols = out.size(1);
  p.depth = a.size(1);
  if (p.rows == 0 || p.cols == 0) return;
  p.a = detail::GemmLhs{a.data_as<const float>(), a.stride(0), {p.depth, 1, 1}, {a.stride(1), 0, 0}};
  p.b.kind = detail::GemmRhs::Kind::Matrix;
  p.b.matrix = detail::GemmMatrix{b.data_as<const float>(), b.stride(0), b.stride(1)};
  p.out = detail::GemmOut{out.data_as<float>(), out.stride(0), out.stride(1), p.cols, 0};
  detail::gemm(p);
}

// a @ b into out: float32 operands, 2-D ([n, k] @ [k, m]) or batched 3-D
// ([B, n, k] @ [B, k, m]), whose inner sizes agree, out of the product's
// shape and disjoint from both (it is written while they are read).
bool check_product(KernelContext& ctx, const char* op, const char* a_name, TensorRef a, const char* b_name,
                   TensorRef b, TensorRef out, Shape& shape, bool batched = false) {
  const int64_t rank = batched ? 3 : 2;
  const bool operands_ok =
      detail::check_tensor(ctx, op, a_name, a) && detail::check_tensor(ctx, op, b_name, b) &&
      detail::check_tensor(ctx, op, "out", out) && detail::check_dtype(ctx, op, a_name, a, DType::Float32) &&
      detail::check_dtype(ctx, op, b_name, b, DType::Float32) &&
      detail::check_dtype(ctx, op, "out", out, DType::Float32) && detail::check_rank(ctx, op, a_name, a, rank) &&
      detail::check_rank(ctx, op, b_name, b, rank);
  if (!operands_ok) return false;
  if (batched && a.size(0) != b.size(0))
    return detail::fail(ctx, op, "{} of shape {} and {} of shape {} have different batch sizes", a_name,
                        detail::shape_string(a), b_name, detail::shape_string(b));
  const int64_t inner = rank - 1;
  if (a.size(inner) != b.size(inner - 1))
    return detail::fail(ctx, op, "{} of shape {} and {} of shape {} cannot be multiplied: {}.size({}) = {} != {}.size({}) = {}",
                        a_name, detail::shape_string(a), b_name, detail::shape_string(b), a_name, inner,
                        a.size(inner), b_name, inner - 1, b.size(inner - 1));
  shape.dim = rank;
  if (batched) shape.sizes[0] = a.size(0);
  shape.sizes[rank - 2] = a.size(rank - 2);
  shape.sizes[rank - 1] = b.size(rank - 1);
  return detail::check_out_shape(ctx, op, "out", out, shape,
                                 batched ? "batches, rows of the first operand, columns of the second"
                                         : "rows of the first operand, columns of the second") &&
         detail::check_no_overlap(ctx, op, "out", out, a_name, a, Alias::Forbidden) &&
         detail::check_no_overlap(ctx, op, "out", out, b_name, b, Alias::Forbidden);
}

// The bias of addmm: beta * self, self broadcast to out's shape; none when
// beta == 0 (self is then ignored entirely, its NaNs too, as PyTorch does).
detail::GemmBias addmm_bias(TensorRef self, TensorRef out, float beta) {
  if (beta == 0.0f) return {};
  int64_t strides[2];
  detail::broadcast_strides(self, detail::shape_of(out), strides);
  return detail::GemmBias{self.data_as<const float>(), strides[0], strides[1], beta};
}

// ---- batched ----

// out[i] = alpha * (a[i] @ b[i]) + beta * self[i] (self broadcast to out; none when beta is 0).
void multiply_batches(TensorRef a, TensorRef b, TensorRef out, std::optional<TensorRef> self, float beta,
                      float alpha) {
  int64_t self_strides[3] = {};
  if (self) detail::broadcast_strides(*self, detail::shape_of(out), self_strides);
  detail::Gemm p{};
  p.sum_scale = alpha;
  p.rows = out.size(1);
  p.cols = out.size(2);
  p.depth = a.size(2);
  if (p.rows == 0 || p.cols == 0) return;
  p.b.kind = detail::GemmRhs::Kind::Matrix;
  for (int64_t i = 0; i < out.size(0); ++i) {
    // With no inner dimension the product reads neither operand: their data may be null.
    const float* a_data = p.depth == 0 ? nullptr : a.data_as<const float>() + i * a.stride(0);
    const float* b_data = p.depth == 0 ? nullptr : b.data_as<const float>() + i * b.stride(0);
    p.a = detail::GemmLhs{a_data, a.stride(1), {p.depth, 1, 1}, {a.stride(2), 0, 0}};
    p.b.matrix = detail::GemmMatrix{b_data, b.stride(1), b.stride(2)};
    p.out = detail::GemmOut{out.data_as<float>() + i * out.stride(0), out.stride(1), out.stride(2), p.cols, 0};
    p.bias = self && beta != 0.0f ? detail::GemmBias{self->data_as<const float>() + i * self_strides[0], self_strides[1],
                                                      self_strides[2], beta}
                                  : detail::GemmBias{};
    detail::gemm(p);
  }
}

// ---- linear ----

bool check_linear(KernelContext& ctx, TensorRef input, TensorRef weight, std::optional<TensorRef> bias,
                  TensorRef out) {
  const char* op = op_name::linear_out;
  if (!detail::check_layer_tensors(ctx, op, input, weight, bias, out) ||
      !detail::check_rank(ctx, op, "weight", weight, 2))
    return false;
  if (input.dim() < 1)
    return detail::fail(ctx, op, "input must have at least 1 dimension [*, in_features], got a 0-D tensor");
  const int64_t in_features = input.size(input.dim() - 1);
  const int64_t out_features = weight.size(0);
  if (weight.size(1) != in_features)
    return detail::fail(ctx, op,
                        "weight of shape {} expects {} input features, but input of shape {} has {} (its last "
                        "dimension)",
                        detail::shape_string(weight), weight.size(1), detail::shape_string(input), in_features);
  if (bias && !(bias->dim() == 0 || (bias->dim() == 1 && (bias->size(0) == out_features || bias->size(0) == 1))))
    return detail::fail(ctx, op, "bias of shape {} cannot be broadcast to [{}] (the output features of weight)",
                        detail::shape_string(*bias), out_features);
  Shape shape = detail::shape_of(input);
  shape.sizes[shape.dim - 1] = out_features;
  return detail::check_out_shape(ctx, op, "out", out, shape, "input's shape with the last dimension out_features") &&
         detail::check_no_overlap(ctx, op, "out", out, "input", input, Alias::Forbidden) &&
         detail::check_no_overlap(ctx, op, "out", out, "weight", weight, Alias::Forbidden) &&
         (!bias || detail::check_no_overlap(ctx, op, "out", out, "bias", *bias, Alias::Forbidden));
}

// out[..., j] = input[..., :] . weight[j, :] (+ bias[j]): one product per
// run of rows that the leading dimensions of input and out step through
// with one stride each.
void multiply_linear(TensorRef input, TensorRef weight, std::optional<TensorRef> bias, TensorRef out) {
  const int64_t last = input.dim() - 1;
  detail::Gemm p{};
  p.cols = weight.size(0);
  p.depth = weight.size(1);
  p.b.kind = detail::GemmRhs::Kind::Matrix;
  p.b.matrix = detail::GemmMatrix{weight.data_as<const float>(), weight.stride(1), weight.stride(0)};
  if (bias) {
    const bool broadcast = bias->dim() == 0 || bias->size(0) == 1;
    p.bias = detail::GemmBias{bias->data_as<const float>(), 0, broadcast ? 0 : bias->stride(0)};
  }
  detail::StridedLoop<2> rows;
  rows.dim = last;
  for (int64_t d = 0; d < last; ++d) {
    rows.sizes[d] = input.size(d);
    rows.strides[0][d] = input.stride(d);
    rows.strides[1][d] = out.stride(d);
  }
  rows.coalesce();
  const float* in = input.data_as<const float>();
  float* o = out.data_as<float>();
  detail::for_each_row(rows, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    p.rows = length;
    // With no input features the product reads no input: its data may be null.
    p.a = detail::GemmLhs{p.depth == 0 ? nullptr : in + offset[0], step[0], {p.depth, 1, 1},
                          {input.stride(last), 0, 0}};
    p.out = detail::GemmOut{o + offset[1], step[1], out.stride(last), p.cols, 0};
    detail::gemm(p);
  });
}

// addmm's and baddbmm's operands a and b (named as in the schema, their
// product as "a @ b"), self (broadcast to the product's shape, apart from
// out) and their beta and alpha, converted to float32.
struct Scaling {
  float beta = 0.0f;
  float alpha = 0.0f;
};
struct Operand {
  const char* name;
  TensorRef tensor;
};
bool check_scaled_product(KernelContext& ctx, const char* op, TensorRef self, Operand a, Operand b, const char* product,
                          TensorRef out, Scalar beta, Scalar alpha, bool batched, Scaling& scaling) {
  Shape shape;
  return check_product(ctx, op, a.name, a.tensor, b.name, b.tensor, out, shape, batched) &&
         detail::check_tensor(ctx, op, "self", self) && detail::check_dtype(ctx, op, "self", self, DType::Float32) &&
         detail::check_broadcastable_to(ctx, op, "self", self, shape, product) &&
         detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::Forbidden) &&
         detail::scalar_to(ctx, op, "beta", beta, scaling.beta) &&
         detail::scalar_to(ctx, op, "alpha", alpha, scaling.alpha);
}

}  // namespace

bool mm_out(KernelContext& ctx, TensorRef self, TensorRef mat2, TensorRef out) {
  Shape shape;
  if (!check_product(ctx, op_name::mm_out, "self", self, "mat2", mat2, out, shape)) return false;
  multiply(self, mat2, out);
  return ctx.ok();
}

bool addmm_out(KernelContext& ctx, TensorRef self, TensorRef mat1, TensorRef mat2, Scalar beta, Scalar alpha,
               TensorRef out) {
  Scaling scaling;
  if (!check_scaled_product(ctx, op_name::addmm_out, self, {"mat1", mat1}, {"mat2", mat2}, "mat1 @ mat2", out, beta,
                            alpha, false, scaling))
    return false;
  multiply(mat1, mat2, out, addmm_bias(self, out, scaling.beta), scaling.alpha);
  return ctx.ok();
}

bool linear_out(KernelContext& ctx, TensorRef input, TensorRef weight, std::optional<TensorRef> bias,
                TensorRef out) {
  if (!check_linear(ctx, input, weight, bias, out)) return false;
  if (out.numel() > 0) multiply_linear(input, weight, bias, out);
  return ctx.ok();
}

bool bmm_out(KernelContext& ctx, TensorRef self, TensorRef mat2, TensorRef out) {
  Shape shape;
  if (!check_product(ctx, op_name::bmm_out, "self", self, "mat2", mat2, out, shape, true)) return false;
  multiply_batches(self, mat2, out, std::nullopt, 0.0f, 1.0f);
  return ctx.ok();
}

bool baddbmm_out(KernelContext& ctx, TensorRef self, TensorRef batch1, TensorRef batch2, Scalar beta, Scalar alpha,
                 TensorRef out) {
  Scaling scaling;
  if (!check_scaled_product(ctx, op_name::baddbmm_out, self, {"batch1", batch1}, {"batch2", batch2}, "batch1 @ batch2",
                            out, beta, alpha, true, scaling))
    return false;
  multiply_batches(batch1, batch2, out, self, scaling.beta, scaling.alpha);
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
