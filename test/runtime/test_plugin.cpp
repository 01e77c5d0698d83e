// A kernel library loaded by path by the runtime and CLI tests, written
// with the kernel library kit: it exports only the loadable-library entry
// points.
//   et_test_plugin::negate.out(Tensor a, *, Tensor(a!) out)   float32 -a
#include "et_ops/kernel_library.h"

namespace {

bool negate(et_ops::KernelContext& ctx, et_ops::TensorRef a, et_ops::TensorRef out) {
  if (a.dtype() != et_ops::DType::Float32 || out.dtype() != et_ops::DType::Float32 || a.numel() != out.numel()) {
    ctx.fail("et_test_plugin::negate.out: expected two float32 tensors of equal size");
    return false;
  }
  for (int64_t i = 0; i < a.numel(); ++i) out.data_as<float>()[i] = -a.data_as<float>()[i];
  return true;
}

const et_ops::KernelLibrary& library() {
  static const et_ops::KernelLibrary instance(
      "test_plugin", "1.0",
      {et_ops::kernel<&negate>("et_test_plugin::negate.out(Tensor a, *, Tensor(a!) out) -> Tensor(a!)")},
      "0000000000000000000000000000beef");
  return instance;
}

}  // namespace

ET_OPS_LOADABLE_KERNEL_LIBRARY(library);
