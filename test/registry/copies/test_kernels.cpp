// A tiny kernel library used to test duplicate handling: the build compiles
// it into several shared objects (identical copies), and
// test_kernels_modified.cpp compiles it with a changed kernel (a different
// copy, with a different fingerprint).
#include <cstddef>
#include <cstdint>

#include "common/library.h"
#include "et_ops/abi.h"
#include "et_ops/export.h"
#include FINGERPRINT_HEADER

#ifndef TEST_KERNEL_OFFSET
#define TEST_KERNEL_OFFSET 1
#endif

namespace {

// Adds TEST_KERNEL_OFFSET to every int64 element of argument 0 into argument 1.
void add_offset(et_ops_kernel_context* ctx, et_ops_value* const* args, std::size_t count) {
  if (count != 2 || args[0]->tag != ET_OPS_VALUE_TENSOR || args[1]->tag != ET_OPS_VALUE_TENSOR) {
    ctx->failed = 1;
    return;
  }
  const auto* in = static_cast<const int64_t*>(args[0]->u.tensor->data);
  auto* out = static_cast<int64_t*>(args[1]->u.tensor->data);
  for (int64_t i = 0; i < args[0]->u.tensor->numel; ++i) out[i] = in[i] + TEST_KERNEL_OFFSET;
}

void negate(et_ops_kernel_context*, et_ops_value* const* args, std::size_t) {
  const auto* in = static_cast<const int64_t*>(args[0]->u.tensor->data);
  auto* out = static_cast<int64_t*>(args[1]->u.tensor->data);
  for (int64_t i = 0; i < args[0]->u.tensor->numel; ++i) out[i] = -in[i];
}

void identity(et_ops_kernel_context*, et_ops_value* const*, std::size_t) {}

const et_ops::kernels::detail::OperatorEntry kOperators[] = {
    {"et_test::add_offset.out", "et_test::add_offset.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", &add_offset},
    {"et_test::negate.out", "et_test::negate.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", &negate},
    {"et_test::identity.out", "et_test::identity.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", &identity},
};

}  // namespace

extern "C" ET_OPS_VISIBLE const et_ops_manifest* et_ops_kernel_library_manifest(void) {
  static const et_ops::kernels::detail::StaticManifest manifest("test_kernels", "1.0", ET_OPS_TEST_DIGEST, kOperators,
                                                                 3);
  return &manifest.manifest();
}
