// aten::mean.out and aten::sum.IntList_out: the mean or sum over some
// dimensions (or all), with every element converted to the computation
// dtype first (as aten does); and aten::max.dim_max: the maximum along one
// dimension and its index.
//
// A float32 mean over a contiguous run of elements (the trailing
// dimensions of a contiguous tensor: global average pooling) is aten's:
// the float32 sum in aten's order (cascade_sum.h), divided by the count
// in float32, so it has PyTorch's bits under its default and avx2 CPU
// capabilities. Every other mean is summed in binary64 with Neumaier's
// compensation in logical (row-major) order and divided once: within an
// ulp or so of the exact mean, whatever the layout; PyTorch sums those in
// other orders, so the two agree to a documented tolerance. A sum is
// computed the same way without the division (an int64 sum wraps modulo
// 2^64, as PyTorch's).
#include <cmath>
#include <cstdint>
#include <limits>
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

bool resolve_dims(KernelContext& ctx, const char* op, TensorRef self, std::optional<IntList> dim, Reduction& r) {
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

enum class Total { Mean, Sum };

template <typename In, typename Out>
void run_mean(TensorRef self, const Reduction& r, bool keepdim, TensorRef out, Total total = Total::Mean) {
  const MeanLoops loops = mean_loops(self, r, keepdim, out);
  const double count = static_cast<double>(loops.reduced.numel());
  const In* in = self.data_as<const In>();
  Out* o = out.data_as<Out>();
  const bool aten_order = is_contiguous_float_row<In, Out>(loops);
  const auto mean_at = [&](const In* base) {
    if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float>) {
      if (aten_order) {
        const int64_t n = loops.reduced.sizes[0];
        const float sum = detail::cascade_sum(base, n);
        return total == Total::Sum ? sum : sum / static_cast<float>(n);
      }
    }
    CompensatedSum sum;
    detail::for_each_row(loops.reduced, [&](const int64_t* offset, int64_t length, const int64_t* step) {
      for (int64_t j = 0; j < length; ++j)
        sum.add(static_cast<double>(static_cast<Out>(detail::load(base + offset[0] + j * step[0]))));
    });
    return static_cast<Out>(total == Total::Sum ? sum.value() : sum.value() / count);
  };
  // for_each_row visits nothing for an empty loop; an empty reduction
  // still has outputs (the mean of nothing is NaN, 0 / 0). Its self is
  // empty and may have no data, so it is never offset.
  if (loops.reduced.numel() == 0) {
    detail::for_each_row(loops.kept, [&](const int64_t* offset, int64_t length, const int64_t* step) {
      for (int64_t j = 0; j < length; ++j) o[offset[0] + j * step[0]] = std::numeric_limits<Out>::quiet_NaN();
    });
    return;
  }
  detail::for_each_row(loops.kept, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    for (int64_t j = 0; j < length; ++j) o[offset[0] + j * step[0]] = mean_at(in + offset[1] + j * step[1]);
  });
}

// An integral sum (int64 computation dtype): elements converted to int64
// and added modulo 2^64.
template <typename In>
void run_integral_sum(TensorRef self, const Reduction& r, bool keepdim, TensorRef out) {
  const MeanLoops loops = mean_loops(self, r, keepdim, out);
  const In* in = self.data_as<const In>();
  int64_t* o = out.data_as<int64_t>();
  detail::for_each_row(loops.kept, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    for (int64_t j = 0; j < length; ++j) {
      const In* base = in + offset[1] + j * step[1];
      uint64_t sum = 0;
      detail::for_each_row(loops.reduced, [&](const int64_t* e, int64_t n, const int64_t* s) {
        for (int64_t k = 0; k < n; ++k)
          sum += static_cast<uint64_t>(static_cast<int64_t>(detail::load(base + e[0] + k * s[0])));
      });
      o[offset[0] + j * step[0]] = static_cast<int64_t>(sum);
    }
  });
}

// sum's computation dtype: `dtype` when given (out must have it), else
// out's; float32, float64 or int64. A floating self needs a floating one.
bool resolve_sum_dtype(KernelContext& ctx, TensorRef self, std::optional<DType> dtype, TensorRef out) {
  const char* op = op_name::sum_out;
  const DType computed = dtype ? *dtype : out.dtype();
  if (computed != DType::Float32 && computed != DType::Float64 && computed != DType::Int64)
    return detail::fail(ctx, op, "{} = {} is not supported; expected float32, float64 or int64",
                        dtype ? "dtype" : "out's dtype (dtype is none)", dtype_name(computed));
  if (is_floating(self.dtype()) && !is_floating(computed))
    return detail::fail(ctx, op, "self has dtype {}; its sum cannot be computed in {}", dtype_name(self.dtype()),
                        dtype_name(computed));
  return detail::check_dtype(ctx, op, "out", out, computed);
}

template <typename T>
void run_max(TensorRef self, int64_t dim, bool keepdim, TensorRef max, TensorRef indices) {
  const int64_t length = self.dim() > 0 ? self.size(dim) : 1;
  const int64_t stride = self.dim() > 0 ? self.stride(dim) : 0;
  // The kept loop walks max; indices has the same shape, its own strides.
  detail::StridedLoop<3> kept;
  kept.dim = 0;
  int64_t out_dim = 0;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == dim) {
      if (keepdim) ++out_dim;
      continue;
    }
    kept.sizes[kept.dim] = self.size(d);
    kept.strides[0][kept.dim] = max.stride(out_dim);
    kept.strides[1][kept.dim] = indices.stride(out_dim++);
    kept.strides[2][kept.dim++] = self.stride(d);
  }
  kept.coalesce();
  const T* in = self.data_as<const T>();
  T* values = max.data_as<T>();
  int64_t* where = indices.data_as<int64_t>();
  detail::for_each_row(kept, [&](const int64_t* offset, int64_t count, const int64_t* step) {
    for (int64_t j = 0; j < count; ++j) {
      const T* lane = in + offset[2] + j * step[2];
      // PyTorch's rule: the first strictly greater value wins, and the first NaN ends the search.
      T best = detail::load(lane);
      int64_t index = 0;
      for (int64_t i = 0; i < length; ++i) {
        const T value = detail::load(lane + i * stride);
        if (!(value <= best)) {
          best = value;
          index = i;
          if (value != value) break;
        }
      }
      values[offset[0] + j * step[0]] = best;
      where[offset[1] + j * step[1]] = index;
    }
  });
}

// What mean and sum check alike once self's dtype and the computation
// dtype are: the dims, out's shape, and out apart from self.
bool check_reduced_out(KernelContext& ctx, const char* op, TensorRef self, std::optional<IntList> dim, bool keepdim,
                       TensorRef out, Reduction& r) {
  return resolve_dims(ctx, op, self, dim, r) &&
         detail::check_out_shape(ctx, op, "out", out, reduced_shape(self, r, keepdim),
                                 keepdim ? "self's shape with the reduced dimensions 1"
                                         : "self's shape without the reduced dimensions") &&
         detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden);
}

}  // namespace

bool mean_out(KernelContext& ctx, TensorRef self, std::optional<IntList> dim, bool keepdim,
              std::optional<DType> dtype, TensorRef out) {
  const char* op = op_name::mean_out;
  Reduction r;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                     detail::check_arithmetic_dtype(ctx, op, "self", self) &&
                     resolve_dtype(ctx, self, dtype, out) && check_reduced_out(ctx, op, self, dim, keepdim, out, r);
  if (!valid) return false;
  detail::dispatch_arithmetic(self.dtype(), [&](auto in_tag) {
    detail::dispatch_floating(out.dtype(), [&](auto out_tag) {
      run_mean<typename decltype(in_tag)::type, typename decltype(out_tag)::type>(self, r, keepdim, out);
    });
  });
  return ctx.ok();
}

bool sum_out(KernelContext& ctx, TensorRef self, std::optional<IntList> dim, bool keepdim, std::optional<DType> dtype,
             TensorRef out) {
  const char* op = op_name::sum_out;
  Reduction r;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                     detail::check_comparable_dtype(ctx, op, "self", self) &&
                     resolve_sum_dtype(ctx, self, dtype, out) && check_reduced_out(ctx, op, self, dim, keepdim, out, r);
  if (!valid) return false;
  detail::dispatch_comparable(self.dtype(), [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    if (out.dtype() == DType::Int64) {
      if constexpr (!std::is_floating_point_v<In>) run_integral_sum<In>(self, r, keepdim, out);
      return;
    }
    detail::dispatch_floating(out.dtype(), [&](auto out_tag) {
      run_mean<In, typename decltype(out_tag)::type>(self, r, keepdim, out, Total::Sum);
    });
  });
  return ctx.ok();
}

bool max_dim_out(KernelContext& ctx, TensorRef self, int64_t dim, bool keepdim, TensorRef max,
                 TensorRef max_values) {
  const char* op = op_name::max_dim_out;
  int64_t wrapped = 0;
  Reduction r;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "max", max) &&
                     detail::check_tensor(ctx, op, "max_values", max_values) &&
                     detail::check_comparable_dtype(ctx, op, "self", self) &&
                     detail::check_same_dtype(ctx, op, "max", max, "self", self) &&
                     detail::check_dtype(ctx, op, "max_values (the indices)", max_values, DType::Int64) &&
                     detail::wrap_dim(ctx, op, "dim", dim, self.dim(), wrapped);
  if (!valid) return false;
  if (self.dim() > 0) r.reduced[wrapped] = true;
  const Shape shape = reduced_shape(self, r, keepdim);
  const char* what = keepdim ? "self's shape with dimension dim 1" : "self's shape without dimension dim";
  if (!detail::check_out_shape(ctx, op, "max", max, shape, what) ||
      !detail::check_out_shape(ctx, op, "max_values", max_values, shape, what) ||
      !detail::check_no_overlap(ctx, op, "max", max, "self", self, detail::Alias::Forbidden) ||
      !detail::check_no_overlap(ctx, op, "max_values", max_values, "self", self, detail::Alias::Forbidden) ||
      !detail::check_no_overlap(ctx, op, "max", max, "max_values", max_values, detail::Alias::Forbidden))
    return false;
  if (self.dim() > 0 && self.size(wrapped) == 0 && self.numel() == 0 && shape.numel() > 0)
    return detail::fail(ctx, op, "dim {} of self (shape {}) is empty; the maximum of nothing is undefined", dim,
                        detail::shape_string(self));
  if (self.numel() == 0) return ctx.ok();
  detail::dispatch_comparable(self.dtype(), [&](auto tag) {
    run_max<typename decltype(tag)::type>(self, self.dim() > 0 ? wrapped : 0, keepdim, max, max_values);
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
