// The library face of libet_kernels_xnnpack.so: its prepared kernels on the
// kernel library kit (one row of operators.def each, checked against its
// schema at compile time), explicit registration and the loadable-library
// entry points.
#include <iterator>

#include "et_ops/kernel_library.h"
#include "et_ops/kernels/xnnpack.h"
#include "et_ops/version.h"
#include "kernels.h"

namespace et_ops::kernels::xnnpack {
namespace {

constexpr KernelDefinition kKernels[] = {
#define ET_OPS_OPERATOR(kernel, schema) prepared_kernel<kernel::prepare, kernel::instantiate, kernel::run>(schema),
#include "operators.def"
#undef ET_OPS_OPERATOR
};

const KernelLibrary& library() {
  static const KernelLibrary instance(kComponent, ET_OPS_VERSION, kKernels, std::size(kKernels));
  return instance;
}

}  // namespace

const et_ops_manifest& manifest() { return library().manifest(); }

RegistrationResult register_kernels() { return library().register_kernels(); }

}  // namespace et_ops::kernels::xnnpack

ET_OPS_LOADABLE_KERNEL_LIBRARY(et_ops::kernels::xnnpack::library);
