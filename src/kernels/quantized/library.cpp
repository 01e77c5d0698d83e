// The library face of libet_kernels_quantized.so: its kernels on the kernel library
// kit (one row of operators.def each, checked against its schema at compile
// time), explicit registration and the loadable-library entry points.
#include <iterator>
#include <type_traits>

#include "et_ops/kernel_library.h"
#include "et_ops/kernels/quantized.h"
#include "et_ops/version.h"
#include "lowbit_linear.h"

namespace et_ops::kernels::quantized {
namespace {

// A row's kernel: a plain kernel function, or a prepared kernel's object.
template <auto Kernel>
constexpr KernelDefinition definition(const char* schema) {
  if constexpr (std::is_function_v<std::remove_pointer_t<decltype(Kernel)>>) {
    return kernel<Kernel>(schema);
  } else {
    using Functions = std::remove_cv_t<std::remove_pointer_t<decltype(Kernel)>>;
    return prepared_kernel<Functions::prepare, Functions::instantiate, Functions::run>(schema);
  }
}

constexpr KernelDefinition kKernels[] = {
#define ET_OPS_OPERATOR(function, schema) definition<&function>(schema),
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

}  // namespace et_ops::kernels::quantized

ET_OPS_LOADABLE_KERNEL_LIBRARY(et_ops::kernels::quantized::library);
