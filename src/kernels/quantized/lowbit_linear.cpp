// et_quantized::linear_8da4w.out and et_quantized::linear_8da8w.out: a
// linear layer whose float32 activations are quantized per token inside the
// kernel (exactly choose_qparams_per_token_asymmetric, then
// quantize_per_token to int8) and multiplied with int4 group-wise or int8
// per-channel symmetric weights in integers. The fusion of the decomposed
// chain quantize -> dequantize_per_token -> dequantize weights -> linear.
//
// Per token t (scale s_t, zero point z_t, values q) and output channel n:
//   isum_g = sum over group g of (q[k] - z_t) * w[n][k]       (exact, int32)
//   acc    = 0; for g ascending: acc = fl32(acc + fl32(fl32(isum_g) * ws[n][g]))
//   out    = fl32(acc * s_t), then fl32(out + bias[n]) with a bias.
// One order for every target and thread count, so the same bytes everywhere.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "checks.h"
#include "per_token.h"
#include "et_ops/kernels/quantized.h"
#include "vector_kernels.h"

namespace et_ops::kernels::quantized {
namespace {

using detail::check_dtype;
using detail::check_tensor;
using detail::fail;
using detail::shape_string;

struct Overload {
  const char* op;
  bool four_bit;  // int4 weights two per byte (embedding_4bit's layout), else int8
};

constexpr Overload k8da4w{op_name::linear_8da4w_out, true};
constexpr Overload k8da8w{op_name::linear_8da8w_out, false};

struct Shape {
  int64_t tokens;      // T: input rows
  int64_t in;          // K
  int64_t out;         // N
  int64_t group_size;  // elements per weight scale
  int64_t groups;      // K / group_size
};

bool check_contiguous(KernelContext& ctx, const Overload& o, const char* what, TensorRef t) {
  if (t.is_contiguous()) return true;
  return fail(ctx, o.op, "{} must be contiguous (row-major), got shape {} in another dim order", what,
              shape_string(t));
}

std::optional<Shape> check_shapes(KernelContext& ctx, const Overload& o, TensorRef input, TensorRef weight,
                                  TensorRef scales, int64_t group_size) {
  if (input.dim() < 1 || input.size(input.dim() - 1) < 1) {
    fail(ctx, o.op, "input must have at least one dimension and a non-empty last one, got shape {}",
         shape_string(input));
    return std::nullopt;
  }
  const int64_t in = input.size(input.dim() - 1);
  if (weight.dim() != 2 || weight.size(1) * (o.four_bit ? 2 : 1) != in) {
    fail(ctx, o.op, "weight must be [N, {}] for an input of {} features, got shape {}",
         o.four_bit ? in / 2 : in, in, shape_string(weight));
    return std::nullopt;
  }
  if (group_size < 1 || in % group_size != 0) {
    fail(ctx, o.op, "group_size {} must be >= 1 and divide the {} input features", group_size, in);
    return std::nullopt;
  }
  const Shape shape{input.numel() / in, in, weight.size(0), group_size, in / group_size};
  if (scales.numel() != shape.out * shape.groups) {
    fail(ctx, o.op, "weight_scales has {} elements (shape {}), expected N * K / group_size = {} * {}",
         scales.numel(), shape_string(scales), shape.out, shape.groups);
    return std::nullopt;
  }
  return shape;
}

bool check_out(KernelContext& ctx, const Overload& o, TensorRef input, const Shape& shape, TensorRef out) {
  bool matches = out.dim() == input.dim() && out.size(out.dim() - 1) == shape.out;
  for (int64_t d = 0; matches && d + 1 < input.dim(); ++d) matches = out.size(d) == input.size(d);
  if (!matches)
    return fail(ctx, o.op, "out has shape {}, expected the input's shape {} with the last dim {}; outputs are never "
                "resized", shape_string(out), shape_string(input), shape.out);
  return check_dtype(ctx, o.op, "out", out, DType::Float32) && check_contiguous(ctx, o, "out", out);
}

bool check_scale_values(KernelContext& ctx, const Overload& o, TensorRef scales) {
  const float* s = scales.data_as<const float>();
  for (int64_t i = 0; i < scales.numel(); ++i)
    if (!(std::isfinite(s[i]) && s[i] > 0.0f))
      return fail(ctx, o.op, "weight_scales[{}] must be finite and > 0, got {}", i, s[i]);
  return true;
}

std::optional<Shape> check_arguments(KernelContext& ctx, const Overload& o, TensorRef input, TensorRef weight,
                                     TensorRef scales, int64_t group_size, std::optional<TensorRef> bias,
                                     TensorRef out) {
  if (!check_tensor(ctx, o.op, "input", input) || !check_tensor(ctx, o.op, "weight", weight) ||
      !check_tensor(ctx, o.op, "weight_scales", scales) || (bias && !check_tensor(ctx, o.op, "bias", *bias)) ||
      !check_tensor(ctx, o.op, "out", out))
    return std::nullopt;
  if (!check_dtype(ctx, o.op, "input", input, DType::Float32) ||
      !check_dtype(ctx, o.op, "weight", weight, o.four_bit ? DType::UInt8 : DType::Int8) ||
      !check_dtype(ctx, o.op, "weight_scales", scales, DType::Float32))
    return std::nullopt;
  const std::optional<Shape> shape = check_shapes(ctx, o, input, weight, scales, group_size);
  if (!shape || !check_out(ctx, o, input, *shape, out)) return std::nullopt;
  if (bias && (!check_dtype(ctx, o.op, "bias", *bias, DType::Float32) || bias->numel() != shape->out)) {
    if (ctx.ok()) fail(ctx, o.op, "bias has shape {}, expected [{}]", shape_string(*bias), shape->out);
    return std::nullopt;
  }
  if (!check_contiguous(ctx, o, "input", input) || !check_contiguous(ctx, o, "weight", weight) ||
      !check_contiguous(ctx, o, "weight_scales", scales) || (bias && !check_contiguous(ctx, o, "bias", *bias)))
    return std::nullopt;
  if (!check_scale_values(ctx, o, scales)) return std::nullopt;
  return shape;
}

// ---- activations: the reference's per-token quantization, then q - z ----

struct Activations {
  std::vector<int16_t> shifted;  // [T, K]: q - z_t
  std::vector<double> scales;    // [T]: s_t (a binary32 value)
};

std::optional<Activations> quantize_activations(KernelContext& ctx, TensorRef input, const Shape& shape) {
  const auto tokens = static_cast<std::size_t>(shape.tokens);
  const auto elements = static_cast<std::size_t>(shape.tokens * shape.in);
  Activations a{std::vector<int16_t>(elements), std::vector<double>(tokens)};
  std::vector<int64_t> zero_points(tokens);
  std::vector<int8_t> q(elements);
  const Tensor rows(DType::Float32, const_cast<void*>(input.data()), {shape.tokens, shape.in});
  const Tensor scale_out(DType::Float64, a.scales.data(), {shape.tokens, 1});
  const Tensor zp_out(DType::Int64, zero_points.data(), {shape.tokens, 1});
  const Tensor q_out(DType::Int8, q.data(), {shape.tokens, shape.in});
  if (!detail::choose_qparams_per_token(ctx, rows.ref(), scale_out.ref(), zp_out.ref()) ||
      !detail::quantize_per_token(ctx, rows.ref(), scale_out.ref(), zp_out.ref(), -128, 127, DType::Int8, q_out.ref()))
    return std::nullopt;
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t k = 0; k < static_cast<std::size_t>(shape.in); ++k) {
      const std::size_t i = t * static_cast<std::size_t>(shape.in) + k;
      a.shifted[i] = static_cast<int16_t>(q[i] - zero_points[t]);
    }
  return a;
}

// ---- the product ----

// Rows of weights taken together: their float sums are independent chains,
// interleaved so that one row's additions do not wait for the previous
// one's (each row still adds its groups in ascending order).
constexpr int64_t kRowBlock = 8;

void multiply(const Overload& o, const Activations& a, TensorRef weight, TensorRef scales,
              std::optional<TensorRef> bias, const Shape& shape, TensorRef out) {
  const auto in = static_cast<std::size_t>(shape.in);
  const auto groups = static_cast<std::size_t>(shape.groups);
  std::vector<int8_t> unpacked(kRowBlock * in);
  std::vector<int32_t> sums(kRowBlock * groups);
  const float* ws = scales.data_as<const float>();
  const float* b = bias ? bias->data_as<const float>() : nullptr;
  float* y = out.data_as<float>();
  for (int64_t n0 = 0; n0 < shape.out; n0 += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, shape.out - n0);
    const int8_t* w[kRowBlock];
    for (int64_t r = 0; r < rows; ++r) {
      const auto* row = static_cast<const uint8_t*>(weight.data()) + (n0 + r) * weight.size(1);
      int8_t* dst = unpacked.data() + static_cast<std::size_t>(r) * in;
      if (o.four_bit) simd::unpack_nibbles(row, static_cast<std::size_t>(weight.size(1)), dst);
      w[r] = o.four_bit ? dst : reinterpret_cast<const int8_t*>(row);
    }
    for (int64_t t = 0; t < shape.tokens; ++t) {
      const int16_t* x = a.shifted.data() + static_cast<std::size_t>(t) * in;
      for (int64_t r = 0; r < rows; ++r)
        simd::group_dots(x, w[r], groups, static_cast<std::size_t>(shape.group_size),
                         sums.data() + static_cast<std::size_t>(r) * groups);
      float acc[kRowBlock] = {};
      const float* block_scales = ws + n0 * shape.groups;
      for (std::size_t g = 0; g < groups; ++g)
        for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r)
          acc[r] = acc[r] + static_cast<float>(sums[r * groups + g]) * block_scales[r * groups + g];
      const auto s_t = static_cast<float>(a.scales[static_cast<std::size_t>(t)]);
      for (int64_t r = 0; r < rows; ++r) {
        float v = acc[r] * s_t;
        if (b) v = v + b[n0 + r];
        y[t * shape.out + n0 + r] = v;
      }
    }
  }
}

bool linear(KernelContext& ctx, const Overload& o, TensorRef input, TensorRef weight, TensorRef scales,
            int64_t group_size, std::optional<TensorRef> bias, TensorRef out) {
  const std::optional<Shape> shape = check_arguments(ctx, o, input, weight, scales, group_size, bias, out);
  if (!shape) return false;
  if (out.numel() == 0) return true;
  const std::optional<Activations> activations = quantize_activations(ctx, input, *shape);
  if (!activations) return false;
  multiply(o, *activations, weight, scales, bias, *shape, out);
  return true;
}

}  // namespace

bool linear_8da4w_out(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef weight_scales,
                      int64_t group_size, std::optional<TensorRef> bias, TensorRef out) {
  return linear(ctx, k8da4w, input, weight, weight_scales, group_size, bias, out);
}

bool linear_8da8w_out(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef weight_scales,
                      std::optional<TensorRef> bias, TensorRef out) {
  const int64_t in = input.dim() >= 1 ? input.size(input.dim() - 1) : 0;
  return linear(ctx, k8da8w, input, weight, weight_scales, in, bias, out);
}

}  // namespace et_ops::kernels::quantized
