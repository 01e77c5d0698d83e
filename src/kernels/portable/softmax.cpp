// aten::_softmax.out on float32 along one dimension: exp(x - max) / sum,
// with the sum accumulated in float32 in index order and the library's own
// exp (activation_simd.h), so the bits are the same on every CPU. PyTorch's
// vectorised exp and summation order differ, so results agree with it to
// rounding.
#include <cmath>
#include <cstdint>
#include <limits>

#include "activation_simd.h"
#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

// Softmax of `length` elements `in_step` apart into elements `out_step`
// apart. A NaN anywhere makes the whole lane NaN, as in PyTorch; so does
// an infinite maximum (inf - inf).
void softmax_lane(const float* in, int64_t in_step, float* out, int64_t out_step, int64_t length) {
  float max_value = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < length; ++i) {
    const float value = in[i * in_step];
    if (std::isnan(value)) {
      max_value = value;
      break;
    }
    if (value > max_value) max_value = value;
  }
  // The exponentials go through a buffer in chunks (the vectorised exp
  // wants consecutive elements); the sum runs in index order whatever the
  // vector width.
  constexpr int64_t kChunk = 256;
  float buffer[kChunk];
  float sum = 0.0f;
  for (int64_t start = 0; start < length; start += kChunk) {
    const int64_t n = length - start < kChunk ? length - start : kChunk;
    for (int64_t j = 0; j < n; ++j) buffer[j] = in[(start + j) * in_step] - max_value;
    simd::apply(simd::Unary::Exp, buffer, buffer, static_cast<std::size_t>(n), simd::UnaryParams{});
    for (int64_t j = 0; j < n; ++j) {
      out[(start + j) * out_step] = buffer[j];
      sum += buffer[j];
    }
  }
  for (int64_t i = 0; i < length; ++i) out[i * out_step] /= sum;
}

void run_softmax(TensorRef self, int64_t dim, TensorRef out) {
  // Iterate every position of the other dimensions (dim collapsed to 1);
  // each is the start of one lane along dim.
  detail::Shape lanes = detail::shape_of(self);
  int64_t length = 1;
  int64_t in_step = 0;
  int64_t out_step = 0;
  if (self.dim() > 0) {
    length = self.size(dim);
    in_step = self.stride(dim);
    out_step = out.stride(dim);
    lanes.sizes[dim] = 1;
  }
  if (length == 0) return;
  const TensorRef operands[2] = {self, out};
  const auto loop = detail::broadcast_loop(lanes, operands);
  const float* in = self.data_as<const float>();
  float* o = out.data_as<float>();
  detail::for_each_row(loop, [&](const int64_t* offset, int64_t count, const int64_t* step) {
    for (int64_t j = 0; j < count; ++j)
      softmax_lane(in + offset[0] + j * step[0], in_step, o + offset[1] + j * step[1], out_step, length);
  });
}

}  // namespace

bool softmax_out(KernelContext& ctx, TensorRef self, int64_t dim, bool half_to_float, TensorRef out) {
  const char* op = op_name::softmax_out;
  if (half_to_float)
    return detail::fail(ctx, op, "half_to_float = true is not supported (it needs a float16 self, and only float32 is)");
  int64_t wrapped = 0;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                     detail::check_dtype(ctx, op, "self", self, DType::Float32) &&
                     detail::check_dtype(ctx, op, "out", out, DType::Float32) &&
                     detail::wrap_dim(ctx, op, "dim", dim, self.dim(), wrapped) &&
                     detail::check_out_shape(ctx, op, "out", out, detail::shape_of(self), "the shape of self") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::ExactAllowed);
  if (!valid) return false;
  run_softmax(self, wrapped, out);
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
