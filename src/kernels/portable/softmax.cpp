// aten::_softmax.out and aten::_log_softmax.out on float32 along any one
// dimension: exp(x - max) / sum and (x - max) - log(sum), with the sum of
// exp(x - max) accumulated in float32 in index order, the library's own exp
// (activation_simd.h) and log (binary64, below), so the bits are the same on
// every CPU. PyTorch's vectorised exp and summation order differ, so results
// agree with it to rounding.
#include <cmath>
#include <cstdint>
#include <limits>

#include "softmax.h"

#include "activation_simd.h"
#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

// ln(x) for a finite x >= 1 (a sum of exponentials whose largest is 1), in
// binary64 without libm (whose result may depend on the CPU): x = m 2^e with
// m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(z), z = (m - 1) / (m + 1), |z| <
// 0.172, by its series to z^41 (the rest is below 2^-60), plus e ln 2.
double log_of_sum(double x) {
  int exponent = 0;
  double m = std::frexp(x, &exponent);  // exact: m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    --exponent;
  }
  const double z = (m - 1.0) / (m + 1.0);
  const double z2 = z * z;
  double series = 0.0;
  for (int k = 41; k >= 1; k -= 2) series = series * z2 + 1.0 / k;
  constexpr double kLn2 = 0.69314718055994530942;
  return 2.0 * z * series + exponent * kLn2;
}

enum class Kind { Softmax, LogSoftmax };

// Softmax of `length` elements `in_step` apart into elements `out_step`
// apart. A NaN anywhere makes the whole lane NaN, as in PyTorch; so does
// an infinite maximum (inf - inf).
void softmax_lane(Kind kind, const float* in, int64_t in_step, float* out, int64_t out_step, int64_t length) {
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
    simd::apply<simd::Unary::Exp>(buffer, buffer, static_cast<std::size_t>(n), simd::UnaryParams{});
    for (int64_t j = 0; j < n; ++j) {
      if (kind == Kind::Softmax) out[(start + j) * out_step] = buffer[j];
      sum += buffer[j];
    }
  }
  if (kind == Kind::Softmax) {
    for (int64_t i = 0; i < length; ++i) out[i * out_step] /= sum;
    return;
  }
  // log_softmax: NaN or an infinite maximum makes every element NaN, as the
  // exponentials do for softmax; in is read again (out may be in).
  const float log_sum = std::isfinite(max_value) ? static_cast<float>(log_of_sum(sum))
                                                 : std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 0; i < length; ++i) out[i * out_step] = (in[i * in_step] - max_value) - log_sum;
}

void run_softmax(Kind kind, TensorRef self, int64_t dim, TensorRef out) {
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
      softmax_lane(kind, in + offset[0] + j * step[0], in_step, o + offset[1] + j * step[1], out_step, length);
  });
}

bool softmax_family(KernelContext& ctx, const char* op, Kind kind, TensorRef self, int64_t dim, bool half_to_float,
                    TensorRef out) {
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
  run_softmax(kind, self, wrapped, out);
  return ctx.ok();
}

}  // namespace

void detail::softmax_row(const float* in, float* out, int64_t length) {
  softmax_lane(Kind::Softmax, in, 1, out, 1, length);
}

bool softmax_out(KernelContext& ctx, TensorRef self, int64_t dim, bool half_to_float, TensorRef out) {
  return softmax_family(ctx, op_name::softmax_out, Kind::Softmax, self, dim, half_to_float, out);
}

bool log_softmax_out(KernelContext& ctx, TensorRef self, int64_t dim, bool half_to_float, TensorRef out) {
  return softmax_family(ctx, op_name::log_softmax_out, Kind::LogSoftmax, self, dim, half_to_float, out);
}

}  // namespace et_ops::kernels::portable
