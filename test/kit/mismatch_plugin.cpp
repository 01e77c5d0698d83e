// A loadable kernel library whose kernel does not match its schema (a
// definition checked at run time): loading it must fail with the kit's
// message and leave nothing registered.
#include "et_ops/kernel_library.h"

namespace {

bool scale(et_ops::KernelContext& ctx, et_ops::TensorRef, int64_t, et_ops::TensorRef) { return ctx.ok(); }

const et_ops::KernelLibrary& library() {
  static const et_ops::KernelLibrary instance(
      "mismatch_plugin", "1.0",
      {et_ops::kernel<&scale>("kit_test::scale.out(Tensor self, float factor, *, Tensor(a!) out) -> Tensor(a!)")});
  return instance;
}

}  // namespace

ET_OPS_LOADABLE_KERNEL_LIBRARY(library);
