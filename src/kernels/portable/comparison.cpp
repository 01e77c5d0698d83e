// Comparisons (aten::eq, ne, lt, le, gt, ge with a Scalar or a Tensor
// other) and aten::logical_not: bool results, exact (no rounding happens
// but the conversions PyTorch itself makes).
#include <cstdint>
#include <type_traits>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::Shape;

enum class Relation { Eq, Ne, Lt, Le, Gt, Ge };

template <Relation R, typename C>
bool holds(C a, C b) {
  if constexpr (R == Relation::Eq) return a == b;
  else if constexpr (R == Relation::Ne) return a != b;
  else if constexpr (R == Relation::Lt) return a < b;
  else if constexpr (R == Relation::Le) return a <= b;
  else if constexpr (R == Relation::Gt) return a > b;
  else return a >= b;
}

// out[i] = relation(C(self[i]), C(other[i])) over out's shape, both operands broadcast.
template <Relation R, typename C, typename A, typename B>
void run_compare(TensorRef self, const A* a, TensorRef other, const B* b, TensorRef out) {
  const TensorRef operands[3] = {out, self, other};
  const auto loop = detail::broadcast_loop(detail::shape_of(out), operands);
  bool* o = out.data_as<bool>();
  detail::for_each_row(loop, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    for (int64_t j = 0; j < length; ++j)
      o[offset[0] + j * step[0]] = holds<R>(static_cast<C>(detail::load(a + offset[1] + j * step[1])),
                                            static_cast<C>(detail::load(b + offset[2] + j * step[2])));
  });
}

bool check_bool_out(KernelContext& ctx, const char* op, TensorRef out, const Shape& shape, const char* what) {
  return detail::check_dtype(ctx, op, "out", out, DType::Bool) &&
         detail::check_out_shape(ctx, op, "out", out, shape, what);
}

// Tensor other: both of one dtype (dtypes are not promoted), compared in it.
template <Relation R>
bool compare_tensors(KernelContext& ctx, const char* op, TensorRef self, TensorRef other, TensorRef out) {
  Shape shape;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "other", other) &&
                     detail::check_tensor(ctx, op, "out", out) &&
                     detail::check_comparable_dtype(ctx, op, "self", self) &&
                     detail::check_same_dtype(ctx, op, "other", other, "self", self) &&
                     detail::broadcast_shape(ctx, op, "self", self, "other", other, shape) &&
                     check_bool_out(ctx, op, out, shape, "the broadcast shape of self and other") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::ExactAllowed) &&
                     detail::check_no_overlap(ctx, op, "out", out, "other", other, Alias::ExactAllowed);
  if (!valid) return false;
  detail::dispatch_comparable(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_compare<R, T>(self, self.data_as<const T>(), other, other.data_as<const T>(), out);
  });
  return ctx.ok();
}

// The type PyTorch compares a tensor of T with a Scalar in: T when both are
// floating or both integral (the integer wraps to T), float32 for an
// integral tensor and a floating scalar, int64 for a bool tensor and an
// integral scalar.
template <Relation R, typename T>
void compare_with_scalar(TensorRef self, Scalar other, TensorRef out) {
  const T* a = self.data_as<const T>();
  const auto run = [&](auto value) {
    using C = decltype(value);
    const detail::ScalarTensor<C> operand(value);
    run_compare<R, C>(self, a, operand.ref(), operand.ref().template data_as<const C>(), out);
  };
  if constexpr (std::is_floating_point_v<T>) {
    run(other.is_integral() ? static_cast<T>(other.to_int()) : static_cast<T>(other.to_double()));
  } else if (!other.is_integral()) {
    run(static_cast<float>(other.to_double()));
  } else if constexpr (std::is_same_v<T, bool>) {
    run(other.to_int());
  } else {
    run(static_cast<T>(static_cast<uint64_t>(other.to_int())));
  }
}

// A bool out of self's shape, out = f(self) (comparisons with a Scalar, logical_not).
bool check_elementwise_bool(KernelContext& ctx, const char* op, TensorRef self, TensorRef out) {
  return detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
         detail::check_comparable_dtype(ctx, op, "self", self) &&
         check_bool_out(ctx, op, out, detail::shape_of(self), "the shape of self") &&
         detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::ExactAllowed);
}

template <Relation R>
bool compare_scalar(KernelContext& ctx, const char* op, TensorRef self, Scalar other, TensorRef out) {
  if (!check_elementwise_bool(ctx, op, self, out)) return false;
  detail::dispatch_comparable(self.dtype(), [&](auto tag) {
    compare_with_scalar<R, typename decltype(tag)::type>(self, other, out);
  });
  return ctx.ok();
}

}  // namespace

bool eq_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out) {
  return compare_scalar<Relation::Eq>(ctx, op_name::eq_scalar_out, self, other, out);
}
bool ne_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out) {
  return compare_scalar<Relation::Ne>(ctx, op_name::ne_scalar_out, self, other, out);
}
bool lt_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out) {
  return compare_scalar<Relation::Lt>(ctx, op_name::lt_scalar_out, self, other, out);
}
bool le_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out) {
  return compare_scalar<Relation::Le>(ctx, op_name::le_scalar_out, self, other, out);
}
bool gt_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out) {
  return compare_scalar<Relation::Gt>(ctx, op_name::gt_scalar_out, self, other, out);
}
bool ge_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out) {
  return compare_scalar<Relation::Ge>(ctx, op_name::ge_scalar_out, self, other, out);
}

bool eq_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out) {
  return compare_tensors<Relation::Eq>(ctx, op_name::eq_tensor_out, self, other, out);
}
bool ne_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out) {
  return compare_tensors<Relation::Ne>(ctx, op_name::ne_tensor_out, self, other, out);
}
bool lt_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out) {
  return compare_tensors<Relation::Lt>(ctx, op_name::lt_tensor_out, self, other, out);
}
bool le_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out) {
  return compare_tensors<Relation::Le>(ctx, op_name::le_tensor_out, self, other, out);
}
bool gt_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out) {
  return compare_tensors<Relation::Gt>(ctx, op_name::gt_tensor_out, self, other, out);
}
bool ge_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out) {
  return compare_tensors<Relation::Ge>(ctx, op_name::ge_tensor_out, self, other, out);
}

// logical_not is self == 0 (NaN is true, so not NaN is false).
bool logical_not_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  if (!check_elementwise_bool(ctx, op_name::logical_not_out, self, out)) return false;
  detail::dispatch_comparable(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const detail::ScalarTensor<T> zero(T(0));
    run_compare<Relation::Eq, T>(self, self.data_as<const T>(), zero.ref(), zero.ref().template data_as<const T>(),
                                 out);
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
