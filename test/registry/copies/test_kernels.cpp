// A tiny kernel library used to test duplicate handling, written with the
// kernel library kit: the build compiles it into several shared objects
// (identical copies), and test_kernels_modified.cpp compiles it with a
// changed kernel (a different copy, with a different fingerprint).
#include <cstdint>

#include "et_ops/kernel_library.h"

#ifndef TEST_KERNEL_OFFSET
#define TEST_KERNEL_OFFSET 1
#endif

namespace {

// Adds TEST_KERNEL_OFFSET to every int64 element of self into out.
bool add_offset(et_ops::KernelContext& ctx, et_ops::TensorRef self, et_ops::TensorRef out) {
  if (self.dtype() != et_ops::DType::Int64 || out.dtype() != et_ops::DType::Int64 || self.numel() != out.numel()) {
    ctx.fail("et_test::add_offset.out: expected two int64 tensors of equal size");
    return false;
  }
  for (int64_t i = 0; i < self.numel(); ++i) out.data_as<int64_t>()[i] = self.data_as<int64_t>()[i] + TEST_KERNEL_OFFSET;
  return true;
}

bool negate(et_ops::KernelContext& ctx, et_ops::TensorRef self, et_ops::TensorRef out) {
  if (self.dtype() != et_ops::DType::Int64 || out.dtype() != et_ops::DType::Int64 || self.numel() != out.numel()) {
    ctx.fail("et_test::negate.out: expected two int64 tensors of equal size");
    return false;
  }
  for (int64_t i = 0; i < self.numel(); ++i) out.data_as<int64_t>()[i] = -self.data_as<int64_t>()[i];
  return true;
}

bool identity(et_ops::KernelContext& ctx, et_ops::TensorRef, et_ops::TensorRef) { return ctx.ok(); }

const et_ops::KernelLibrary& library() {
  static const et_ops::KernelLibrary instance("test_kernels", "1.0", {
      et_ops::kernel<&add_offset>("et_test::add_offset.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"),
      et_ops::kernel<&negate>("et_test::negate.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"),
      et_ops::kernel<&identity>("et_test::identity.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"),
  });
  return instance;
}

}  // namespace

ET_OPS_LOADABLE_KERNEL_LIBRARY(library);
