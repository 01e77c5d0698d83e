// et_xnnpack::convert_layout.out: copies a tensor into one of the same
// dtype and sizes in another dim order (contiguous <-> channels-last at the
// edges of an int8 region of a program).
#include "kernels.h"

namespace et_ops::kernels::xnnpack {
namespace {

bool check_layout_tensors(KernelContext& ctx, TensorRef self, TensorRef out) {
  using namespace detail;
  if (out.dtype() != self.dtype())
    return fail(ctx, op_name::convert_layout_kernel, "out must have self's dtype {}, got {}", dtype_name(self.dtype()), dtype_name(out.dtype()));
  if (!self.same_shape(out))
    return fail(ctx, op_name::convert_layout_kernel, "out has sizes {}, but self has {}", shape_string(out), shape_string(self));
  if (!kernels::detail::is_dense(self) || !kernels::detail::is_dense(out))
    return fail(ctx, op_name::convert_layout_kernel, "self and out must be dense layouts, got strides {} and {}",
                kernels::detail::list_string(self.strides(), self.dim()),
                kernels::detail::list_string(out.strides(), out.dim()));
  return true;
}

// Copies the elements of self to out's layout, the innermost dimension in
// a tight loop.
template <typename T>
void copy_strided(TensorRef self, TensorRef out) {
  const int64_t dims = self.dim();
  if (self.numel() == 0) return;
  if (dims == 0) {
    *out.data_as<T>() = *self.data_as<const T>();
    return;
  }
  const int64_t inner = self.size(dims - 1), in_step = self.stride(dims - 1), out_step = out.stride(dims - 1);
  int64_t index[ET_OPS_MAX_DIMS] = {};
  const T* in = self.data_as<const T>();
  T* dst = out.data_as<T>();
  for (int64_t n = 0; n < self.numel(); n += inner) {
    int64_t from = 0, to = 0;
    for (int64_t d = 0; d + 1 < dims; ++d) from += index[d] * self.stride(d), to += index[d] * out.stride(d);
    for (int64_t i = 0; i < inner; ++i) dst[to + i * out_step] = in[from + i * in_step];
    for (int64_t d = dims - 1; d-- > 0;) {
      if (++index[d] < self.size(d)) break;
      index[d] = 0;
    }
  }
}

void copy_strided(TensorRef self, TensorRef out) {
  switch (dtype_size(self.dtype())) {
    case 1: return copy_strided<uint8_t>(self, out);
    case 2: return copy_strided<uint16_t>(self, out);
    case 4: return copy_strided<uint32_t>(self, out);
    default: return copy_strided<uint64_t>(self, out);
  }
}

}  // namespace

std::unique_ptr<LayoutState> convert_layout_prepare(KernelContext& ctx, TensorRef self, TensorRef out) {
  if (!check_layout_tensors(ctx, self, out)) return nullptr;
  auto state = std::make_unique<LayoutState>();
  state->numel = self.numel();
  return state;
}

bool convert_layout_run(KernelContext& ctx, const LayoutState& state, const RunEnvironment&, TensorRef self,
                        TensorRef out) {
  if (!detail::check_tensor(ctx, op_name::convert_layout_kernel, "self", self) || !detail::check_tensor(ctx, op_name::convert_layout_kernel, "out", out) ||
      !check_layout_tensors(ctx, self, out))
    return false;
  if (self.numel() != state.numel)
    return detail::fail(ctx, op_name::convert_layout_kernel, "self is not the tensor the kernel was prepared for");
  copy_strided(self, out);
  return true;
}

}  // namespace et_ops::kernels::xnnpack
