// aten::native_layer_norm.out and aten::native_group_norm.out on float32.
//
// Each normalized set of elements (a row of layer norm's trailing
// dimensions; a (sample, group) block of group norm) gets its mean and
// variance in binary64, in two passes over the elements in logical
// (row-major) order: mean = sum / n, variance = sum((x - mean)^2) / n (the
// biased variance, as PyTorch). rstd = 1 / sqrt(variance + eps) in binary64.
// Each result (x - mean) * rstd * weight + bias is computed in binary64 and
// rounded once; the saved mean and rstd are rounded once too. PyTorch sums
// in float32 in other orders, so results agree with it to rounding.
#include <cmath>
#include <cstdint>
#include <optional>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::Shape;
using detail::StridedLoop;


// The loops of one normalization: `sets` walks the sets (operands: input,
// out0, out1, out2, weight, bias: group norm's groups start at their own
// channels), `elements` walks one set (operands: input, out0, weight, bias;
// a missing weight or bias has stride 0).
struct NormLoops {
  StridedLoop<6> sets;
  StridedLoop<4> elements;
};

struct Affine {
  const float* weight;  // never null: a missing weight reads one 1.0
  const float* bias;    // never null: a missing bias reads one 0.0
};

void normalize(const NormLoops& loops, TensorRef input, TensorRef out0, TensorRef out1, TensorRef out2,
               const Affine& affine, double eps) {
  const float* in = input.data_as<const float>();
  float* y = out0.data_as<float>();
  float* means = out1.data_as<float>();
  float* rstds = out2.data_as<float>();
  const double count = static_cast<double>(loops.elements.numel());
  detail::for_each_row(loops.sets, [&](const int64_t* set, int64_t sets, const int64_t* set_step) {
    for (int64_t s = 0; s < sets; ++s) {
      const float* x = in + set[0] + s * set_step[0];
      const auto each = [&](auto&& f) {
        detail::for_each_row(loops.elements, [&](const int64_t* e, int64_t length, const int64_t* step) {
          for (int64_t j = 0; j < length; ++j)
            f(e[0] + j * step[0], e[1] + j * step[1], e[2] + j * step[2], e[3] + j * step[3]);
        });
      };
      double sum = 0.0;
      each([&](int64_t i, int64_t, int64_t, int64_t) { sum += x[i]; });
      const double mean = sum / count;
      double squares = 0.0;
      each([&](int64_t i, int64_t, int64_t, int64_t) {
        const double d = x[i] - mean;
        squares += d * d;
      });
      const double rstd = 1.0 / std::sqrt(squares / count + eps);
      float* row = y + set[1] + s * set_step[1];
      const float* weight = affine.weight + set[4] + s * set_step[4];
      const float* bias = affine.bias + set[5] + s * set_step[5];
      each([&](int64_t i, int64_t o, int64_t w, int64_t b) {
        row[o] = static_cast<float>((static_cast<double>(x[i]) - mean) * rstd * weight[w] + bias[b]);
      });
      means[set[2] + s * set_step[2]] = static_cast<float>(mean);
      rstds[set[3] + s * set_step[3]] = static_cast<float>(rstd);
    }
  });
}

// The tensors every normalization checks alike: float32 and sound; out0
// shaped like input (possibly input itself), the statistics shaped
// `stats` and apart from everything.
bool check_norm_tensors(KernelContext& ctx, const char* op, TensorRef input, std::optional<TensorRef> weight,
                        std::optional<TensorRef> bias, TensorRef out0, TensorRef out1, TensorRef out2,
                        const Shape& stats, const char* stats_what) {
  const TensorRef outputs[3] = {out0, out1, out2};
  const char* names[3] = {"out0", "out1", "out2"};
  if (!detail::check_layer_tensors(ctx, op, input, weight ? *weight : input, bias, out0)) return false;
  for (int k = 1; k < 3; ++k)
    if (!detail::check_tensor(ctx, op, names[k], outputs[k]) ||
        !detail::check_dtype(ctx, op, names[k], outputs[k], DType::Float32))
      return false;
  if (!detail::check_out_shape(ctx, op, "out0", out0, detail::shape_of(input), "the shape of input") ||
      !detail::check_out_shape(ctx, op, "out1", out1, stats, stats_what) ||
      !detail::check_out_shape(ctx, op, "out2", out2, stats, stats_what) ||
      !detail::check_no_overlap(ctx, op, "out0", out0, "input", input, Alias::ExactAllowed))
    return false;
  const TensorRef reads[3] = {input, weight ? *weight : input, bias ? *bias : input};
  const char* read_names[3] = {"input", "weight", "bias"};
  for (int k = 0; k < 3; ++k)
    for (int o = 1; o < 3; ++o)
      if (!detail::check_no_overlap(ctx, op, names[o], outputs[o], read_names[k], reads[k], Alias::Forbidden))
        return false;
  if (!detail::check_no_overlap(ctx, op, "out1", out1, "out2", out2, Alias::Forbidden) ||
      !detail::check_no_overlap(ctx, op, "out1", out1, "out0", out0, Alias::Forbidden) ||
      !detail::check_no_overlap(ctx, op, "out2", out2, "out0", out0, Alias::Forbidden))
    return false;
  if (weight && !detail::check_no_overlap(ctx, op, "out0", out0, "weight", *weight, Alias::Forbidden)) return false;
  return !bias || detail::check_no_overlap(ctx, op, "out0", out0, "bias", *bias, Alias::Forbidden);
}

constexpr float kOne = 1.0f;
constexpr float kZero = 0.0f;

Affine affine_of(std::optional<TensorRef> weight, std::optional<TensorRef> bias) {
  return Affine{weight ? weight->data_as<const float>() : &kOne, bias ? bias->data_as<const float>() : &kZero};
}

// ---- layer norm ----

bool check_layer_norm_parameter(KernelContext& ctx, const char* name, std::optional<TensorRef> t, IntList shape) {
  if (!t) return true;
  bool same = t->dim() == shape.size();
  for (int64_t d = 0; same && d < shape.size(); ++d) same = t->size(d) == shape[d];
  if (same) return true;
  return detail::fail(ctx, op_name::native_layer_norm_out, "{} has shape {}, expected normalized_shape {}", name,
                      detail::shape_string(*t), detail::list_string(shape));
}

NormLoops layer_norm_loops(TensorRef input, int64_t axis, std::optional<TensorRef> weight,
                           std::optional<TensorRef> bias, TensorRef out0, TensorRef out1, TensorRef out2) {
  NormLoops loops;
  for (int64_t d = 0; d < axis; ++d) {
    const int64_t k = loops.sets.dim++;
    loops.sets.sizes[k] = input.size(d);
    loops.sets.strides[0][k] = input.stride(d);
    loops.sets.strides[1][k] = out0.stride(d);
    loops.sets.strides[2][k] = out1.stride(d);
    loops.sets.strides[3][k] = out2.stride(d);
  }
  for (int64_t d = axis; d < input.dim(); ++d) {
    const int64_t k = loops.elements.dim++;
    loops.elements.sizes[k] = input.size(d);
    loops.elements.strides[0][k] = input.stride(d);
    loops.elements.strides[1][k] = out0.stride(d);
    loops.elements.strides[2][k] = weight ? weight->stride(d - axis) : 0;
    loops.elements.strides[3][k] = bias ? bias->stride(d - axis) : 0;
  }
  loops.sets.coalesce();
  loops.elements.coalesce();
  return loops;
}

// ---- group norm ----

bool check_group_norm_arguments(KernelContext& ctx, TensorRef input, std::optional<TensorRef> weight,
                                std::optional<TensorRef> bias, int64_t N, int64_t C, int64_t HxW, int64_t group) {
  const char* op = op_name::native_group_norm_out;
  if (input.dim() < 2)
    return detail::fail(ctx, op, "input must have at least 2 dimensions [N, C, *], got shape {}",
                        detail::shape_string(input));
  int64_t spatial = 1;
  for (int64_t d = 2; d < input.dim(); ++d) spatial *= input.size(d);
  if (N != input.size(0) || C != input.size(1) || HxW != spatial)
    return detail::fail(ctx, op, "N = {}, C = {}, HxW = {} do not describe input of shape {} (expected {}, {}, {})", N,
                        C, HxW, detail::shape_string(input), input.size(0), input.size(1), spatial);
  if (group <= 0 || C % group != 0)
    return detail::fail(ctx, op, "group = {} must be positive and divide C = {}", group, C);
  const std::optional<TensorRef> parameters[2] = {weight, bias};
  const char* names[2] = {"weight", "bias"};
  for (int k = 0; k < 2; ++k)
    if (parameters[k] && !(parameters[k]->dim() == 1 && parameters[k]->size(0) == C))
      return detail::fail(ctx, op, "{} has shape {}, expected [{}] (C)", names[k], detail::shape_string(*parameters[k]), C);
  return true;
}

// Sets: (sample, group); elements: (channel within the group, spatial...).
NormLoops group_norm_loops(TensorRef input, int64_t group, std::optional<TensorRef> weight,
                           std::optional<TensorRef> bias, TensorRef out0, TensorRef out1, TensorRef out2) {
  NormLoops loops;
  const int64_t per_group = input.size(1) / group;
  loops.sets.dim = 2;
  loops.sets.sizes[0] = input.size(0);
  loops.sets.sizes[1] = group;
  const TensorRef stats[2] = {out1, out2};
  for (int k = 0; k < 2; ++k) {
    loops.sets.strides[0][k] = input.stride(k) * (k == 1 ? per_group : 1);
    loops.sets.strides[1][k] = out0.stride(k) * (k == 1 ? per_group : 1);
  }
  for (int s = 0; s < 2; ++s)
    for (int k = 0; k < 2; ++k) loops.sets.strides[2 + s][k] = stats[s].stride(k);
  loops.sets.strides[4][1] = weight ? weight->stride(0) * per_group : 0;
  loops.sets.strides[5][1] = bias ? bias->stride(0) * per_group : 0;
  loops.elements.dim = input.dim() - 1;
  for (int64_t d = 1; d < input.dim(); ++d) {
    const int64_t k = d - 1;
    loops.elements.sizes[k] = d == 1 ? per_group : input.size(d);
    loops.elements.strides[0][k] = input.stride(d);
    loops.elements.strides[1][k] = out0.stride(d);
    loops.elements.strides[2][k] = d == 1 && weight ? weight->stride(0) : 0;
    loops.elements.strides[3][k] = d == 1 && bias ? bias->stride(0) : 0;
  }
  loops.sets.coalesce();
  loops.elements.coalesce();
  return loops;
}

}  // namespace

bool native_layer_norm_out(KernelContext& ctx, TensorRef input, IntList normalized_shape,
                           std::optional<TensorRef> weight, std::optional<TensorRef> bias, double eps, TensorRef out0,
                           TensorRef out1, TensorRef out2) {
  const char* op = op_name::native_layer_norm_out;
  if (!detail::check_tensor(ctx, op, "input", input) ||
      !detail::check_int_list(ctx, op, "normalized_shape", normalized_shape))
    return false;
  const int64_t axis = input.dim() - normalized_shape.size();
  bool matches = normalized_shape.size() >= 1 && axis >= 0;
  for (int64_t i = 0; matches && i < normalized_shape.size(); ++i) matches = input.size(axis + i) == normalized_shape[i];
  if (!matches)
    return detail::fail(ctx, op, "normalized_shape {} must be non-empty and end input's shape {}",
                        detail::list_string(normalized_shape), detail::shape_string(input));
  Shape stats = detail::shape_of(input);
  for (int64_t d = axis; d < input.dim(); ++d) stats.sizes[d] = 1;
  if (!check_norm_tensors(ctx, op, input, weight, bias, out0, out1, out2, stats,
                          "input's leading dimensions, then 1 per normalized dimension") ||
      !check_layer_norm_parameter(ctx, "weight", weight, normalized_shape) ||
      !check_layer_norm_parameter(ctx, "bias", bias, normalized_shape))
    return false;
  if (input.numel() == 0) return ctx.ok();
  normalize(layer_norm_loops(input, axis, weight, bias, out0, out1, out2), input, out0, out1, out2,
            affine_of(weight, bias), eps);
  return ctx.ok();
}

bool native_group_norm_out(KernelContext& ctx, TensorRef input, std::optional<TensorRef> weight,
                           std::optional<TensorRef> bias, int64_t N, int64_t C, int64_t HxW, int64_t group, double eps,
                           TensorRef out0, TensorRef out1, TensorRef out2) {
  const char* op = op_name::native_group_norm_out;
  if (!detail::check_tensor(ctx, op, "input", input) ||
      !check_group_norm_arguments(ctx, input, weight, bias, N, C, HxW, group))
    return false;
  Shape stats;
  stats.dim = 2;
  stats.sizes[0] = N;
  stats.sizes[1] = group;
  if (!check_norm_tensors(ctx, op, input, weight, bias, out0, out1, out2, stats, "[N, group]")) return false;
  if (input.numel() == 0) return ctx.ok();
  normalize(group_norm_loops(input, group, weight, bias, out0, out1, out2), input, out0, out1, out2,
            affine_of(weight, bias), eps);
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
