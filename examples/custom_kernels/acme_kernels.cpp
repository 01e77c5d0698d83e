// Two operators written with the et_ops kernel library kit: one line per
// kernel, no hand-written glue.
//   acme::scale.out(Tensor self, float factor, *, Tensor(a!) out)       out = self * factor
//   acme::shift.out(Tensor self, Scalar? offset=None, *, Tensor(a!) out)  out = self + offset (0 when None)
#include "acme_kernels.h"

#include <optional>
#include <string>

namespace acme {
namespace {

// Both kernels take float32 tensors of one shape, in row-major order.
bool same_float32_shape(et_ops::KernelContext& ctx, const char* op, et_ops::TensorRef self, et_ops::TensorRef out) {
  if (self.dtype() != et_ops::DType::Float32 || out.dtype() != et_ops::DType::Float32)
    ctx.fail(std::string(op) + ": self and out must be float32");
  else if (!self.same_shape(out))
    ctx.fail(std::string(op) + ": out must have the shape of self");
  else if (!self.is_contiguous() || !out.is_contiguous())
    ctx.fail(std::string(op) + ": self and out must be contiguous");
  return ctx.ok();
}

bool scale_out(et_ops::KernelContext& ctx, et_ops::TensorRef self, double factor, et_ops::TensorRef out) {
  if (!same_float32_shape(ctx, "acme::scale.out", self, out)) return false;
  const auto f = static_cast<float>(factor);
  for (int64_t i = 0; i < self.numel(); ++i) out.data_as<float>()[i] = self.data_as<float>()[i] * f;
  return true;
}

bool shift_out(et_ops::KernelContext& ctx, et_ops::TensorRef self, std::optional<et_ops::Scalar> offset,
               et_ops::TensorRef out) {
  if (!same_float32_shape(ctx, "acme::shift.out", self, out)) return false;
  const auto d = static_cast<float>(offset ? offset->to_double() : 0.0);
  for (int64_t i = 0; i < self.numel(); ++i) out.data_as<float>()[i] = self.data_as<float>()[i] + d;
  return true;
}

// constexpr: a kernel whose signature does not match its schema does not compile.
constexpr et_ops::KernelDefinition kKernels[] = {
    et_ops::kernel<&scale_out>("acme::scale.out(Tensor self, float factor, *, Tensor(a!) out) -> Tensor(a!)"),
    et_ops::kernel<&shift_out>("acme::shift.out(Tensor self, Scalar? offset=None, *, Tensor(a!) out) -> Tensor(a!)"),
};

}  // namespace

const et_ops::KernelLibrary& library() {
  static const et_ops::KernelLibrary instance("acme_kernels", "1.2.0", kKernels, std::size(kKernels));
  return instance;
}

et_ops::RegistrationResult register_kernels() { return library().register_kernels(); }

}  // namespace acme

ET_OPS_LOADABLE_KERNEL_LIBRARY(acme::library);  // the entry point for --load-library and load_library()
