// aten::mean.out: the mean over some dimensions (or all), with every element
// converted to the computation dtype first (as aten does).
//
// A float32 mean over a contiguous run of elements (the trailing
// dimensions of a contiguous tensor: global average pooling) is aten's:
// the float32 sum in aten's order (cascade_sum.h), divided by the count
// in float32, so it has PyTorch's bits under its default and avx2 CPU
// capabilities. Every other mean is summed in binary64 with Neumaier's
// compensation in logical (row-major) order and divided once: within an
// ulp or so of the exact mean, whatever the layout; PyTorch sums those in
// other orders, so the two agree to a documented tolerance.
#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "cascade_sum.h"
#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Shape;

// Which dimensions of self are reduced: none or an empty list means all.
struct Reduction {
  bool reduced[ET_OPS_MAX_DIMS] = {};
};

bool resolve_dims(KernelContext& ctx, TensorRef self, std::optional<IntList> dim, Reduction& r) {
  const char* op = op_name::mean_out;
  if (!dim || dim->empty()) {
    for (int64_t d = 0; d < self.dim(); ++d) r.reduced[d] = true;
    return true;
  }
  if (!detail::check_int_list(ctx, op, "dim", *dim)) return false;
  for (int64_t i = 0; i < dim->size(); ++i) {
    int64_t wrapped = 0;
    if (!detail::wrap_dim(ctx, op, "dim", (*dim)[i], self.dim(), wrapped)) return false;
    if (self.dim() == 0) continue;  // a 0-dim self reduces over its one element
    if (r.reduced[wrapped])
      return detail::fail(ctx, op, "dim {} names dimension {} more than once", detail::list_string(*dim), wrapped);
    r.reduced[wrapped] = true;
  }
  return true;
}

// The shape of the mean: reduced dimensions become 1 (keepdim) or go.
Shape reduced_shape(TensorRef self, const Reduction& r, bool keepdim) {
  Shape shape;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!r.reduced[d]) shape.sizes[shape.dim++] = self.size(d);
    else if (keepdim) shape.sizes[shape.dim++] = 1;
  }
  return shape;
}

// The computation dtype: `dtype` when given (out must have it), else out's;
// either way float32 or float64. Without `dtype`, self must be floating
// too (aten cannot infer a floating result from integers).
bool resolve_dtype(KernelContext& ctx, TensorRef self, std::optional<DType> dtype, TensorRef out) {
  const char* op = op_name::mean_out;
  if (dtype) {
    if (*dtype != DType::Float32 && *dtype != DType::Float64)
      return detail::fail(ctx, op, "dtype = {} is not supported; expected float32 or float64 (or none)",
                          dtype_name(*dtype));
    return detail::check_dtype(ctx, op, "out", out, *dtype);
  }
  if (!is_floating(self.dtype()))
    return detail::fail(ctx, op, "self has dtype {} and dtype is none; the mean of an integral self needs dtype "
                        "float32 or float64", dtype_name(self.dtype()));
  return detail::check_floating_dtype(ctx, op, "out", out);
}

// A binary64 sum with Neumaier's compensation; infinities and NaN give the
// plain sum's result.
class CompensatedSum {
 public:
  void add(double x) {
    const double t = sum_ + x;
    compensation_ += std::fabs(sum_) >= std::fabs(x) ? (sum_ - t) + x : (x - t) + sum_;
    sum_ = t;
  }
  double value() const { return std::isfinite(sum_) ? sum_ + compensation_ : sum_; }

 private:
  double sum_ = 0.0;
  double compensation_ = 0.0;
};

// One loop over the kept dimensions (operands: out, self) and one over the
// reduced dimensions of self, both in logical order.
struct MeanLoops {
  detail::StridedLoop<2> kept;
  detail::StridedLoop<1> reduced;
};

MeanLoops mean_loops(TensorRef self, const Reduction& r, bool keepdim, TensorRef out) {
  MeanLoops loops;
  int64_t out_dim = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (r.reduced[d]) {
      loops.reduced.sizes[loops.reduced.dim] = self.size(d);
      loops.reduced.strides[0][loops.reduced.dim++] = self.stride(d);
      if (keepdim) ++out_dim;
      continue;
    }
    loops.kept.sizes[loops.kept.dim] = self.size(d);
    loops.kept.strides[0][loops.kept.dim] = out.stride(out_dim++);
    loops.kept.strides[1][loops.kept.dim++] = self.stride(d);
  }
  loops.kept.coalesce();
  loops.reduced.coalesce();
  return loops;
}

// Whether aten sums each mean of float32 `self` as one contiguous row.
template <typename In, typename Out>
bool is_contiguous_float_row(const MeanLoops& loops) {
  return std::is_same_v<In, float> && std::is_same_v<Out, float> && loops.reduced.dim == 1 &&
         loops.reduced.strides[0][0] == 1;
}

template <typename In, typename Out>
void run_mean(TensorRef self, const Reduction& r, bool keepdim, TensorRef out) {
  const MeanLoops loops = mean_loops(self, r, keepdim, out);
  const double count = static_cast<double>(loops.reduced.numel());
  const In* in = self.data_as<const In>();
  Out* o = out.data_as<Out>();
  const bool aten_order = is_contiguous_float_row<In, Out>(loops);
  const auto mean_at = [&](const In* base) {
    if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float>) {
      if (aten_order) {
        const int64_t n = loops.reduced.sizes[0];
        return detail::cascade_sum(base, n) / static_cast<float>(n);
      }
    }
    CompensatedSum sum;
    detail::for_each_row(loops.reduced, [&](const int64_t* offset, int64_t length, const int64_t* step) {
      for (int64_t j = 0; j < length; ++j) sum.add(static_cast<double>(static_cast<Out>(base[offset[0] + j * step[0]])));
    });
    return static_cast<Out>(sum.value() / count);
  };
  // for_each_row visits nothing for an empty loop; an empty reduction
  // still has outputs (the mean of nothing is NaN, 0 / 0).
  detail::for_each_row(loops.kept, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    for (int64_t j = 0; j < length; ++j) o[offset[0] + j * step[0]] = mean_at(in + offset[1] + j * step[1]);
  });
}

}  // namespace

bool mean_out(KernelContext& ctx, TensorRef self, std::optional<IntList> dim, bool keepdim,
              std::optional<DType> dtype, TensorRef out) {
  const char* op = op_name::mean_out;
  Reduction r;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                     detail::check_arithmetic_dtype(ctx, op, "self", self) &&
                     resolve_dtype(ctx, self, dtype, out) && resolve_dims(ctx, self, dim, r) &&
                     detail::check_out_shape(ctx, op, "out", out, reduced_shape(self, r, keepdim),
                                             keepdim ? "self's shape with the reduced dimensions 1"
                                                     : "self's shape without the reduced dimensions") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden);
  if (!valid) return false;
  detail::dispatch_arithmetic(self.dtype(), [&](auto in_tag) {
    detail::dispatch_floating(out.dtype(), [&](auto out_tag) {
      run_mean<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(self, r, keepdim, out);
    });
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
