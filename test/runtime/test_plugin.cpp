// A kernel library loaded with dlopen by the runtime and CLI tests: it
// exports only the loadable-library entry point.
//   et_test_plugin::negate.out(Tensor a, *, Tensor(a!) out)   float32 -a
#include <cstddef>
#include <cstring>

#include "et_ops/abi.h"
#include "et_ops/export.h"

namespace {

void negate(et_ops_kernel_context* c, et_ops_value* const* args, std::size_t count) {
  if (count != 2 || args[0]->tag != ET_OPS_VALUE_TENSOR || args[1]->tag != ET_OPS_VALUE_TENSOR ||
      args[0]->u.tensor->dtype != ET_OPS_DTYPE_FLOAT32 || args[1]->u.tensor->dtype != ET_OPS_DTYPE_FLOAT32 ||
      args[0]->u.tensor->numel != args[1]->u.tensor->numel) {
    c->failed = 1;
    std::strcpy(c->message, "et_test_plugin::negate.out: expected two float32 tensors of equal size");
    return;
  }
  const auto* in = static_cast<const float*>(args[0]->u.tensor->data);
  auto* out = static_cast<float*>(args[1]->u.tensor->data);
  for (int64_t i = 0; i < args[0]->u.tensor->numel; ++i) out[i] = -in[i];
}

const et_ops_kernel_record kRecords[] = {
    {"et_test_plugin::negate.out", "", &negate,
     "et_test_plugin::negate.out(Tensor a, *, Tensor(a!) out) -> Tensor(a!)", "0000000000000000000000000000beef"},
};

const et_ops_manifest kManifest = {ET_OPS_ABI_VERSION, sizeof(et_ops_kernel_record), "test_plugin", "1.0", kRecords,
                                   1};

}  // namespace

extern "C" ET_OPS_VISIBLE const et_ops_manifest* et_ops_kernel_library_manifest(void) { return &kManifest; }
