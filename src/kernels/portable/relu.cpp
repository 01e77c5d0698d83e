// aten::relu.out: max(self, 0), bit-exact with PyTorch.
#include <cstdint>
#include <type_traits>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

constexpr const char* kReluOp = "aten::relu.out";

// PyTorch's relu is clamp_min(self, 0): NaN stays NaN and -0.0 stays -0.0,
// which `v < 0 ? 0 : v` reproduces. Unsigned values pass unchanged.
template <typename T>
T relu_value(T v) {
  if constexpr (std::is_unsigned_v<T>) return v;
  else return v < T(0) ? T(0) : v;
}

template <typename T>
void run_relu(TensorRef self, TensorRef out) {
  const TensorRef operands[2] = {out, self};
  const auto loop = detail::broadcast_loop(detail::shape_of(out), operands);
  T* o = out.data_as<T>();
  const T* a = self.data_as<const T>();
  detail::for_each_row(loop, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    T* o_row = o + offset[0];
    const T* a_row = a + offset[1];
    if (step[0] == 1 && step[1] == 1) {
      for (int64_t j = 0; j < length; ++j) o_row[j] = relu_value(a_row[j]);
    } else {
      for (int64_t j = 0; j < length; ++j) o_row[j * step[0]] = relu_value(a_row[j * step[1]]);
    }
  });
}

}  // namespace

bool relu_out(KernelContext& ctx, TensorRef self, TensorRef out) {
  const char* op = kReluOp;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                     detail::check_arithmetic_dtype(ctx, op, "self", self) &&
                     detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
                     detail::check_out_shape(ctx, op, "out", out, detail::shape_of(self), "the shape of self") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::ExactAllowed);
  if (!valid) return false;
  detail::dispatch_arithmetic(self.dtype(), [&](auto tag) { run_relu<typename decltype(tag)::type>(self, out); });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
