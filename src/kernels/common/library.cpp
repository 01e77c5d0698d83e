// The library face of every kernel set (libet_kernels_NAME.so): its kernels
// on the kernel library kit, one per row of operators.def this build
// selected (each checked against its schema at compile time), explicit
// registration and the loadable-library entry points. src/kernels/meson.build
// compiles it into each set with
//   ET_OPS_KERNEL_SET           the set's name (its namespace et_ops::kernels::NAME)
//   ET_OPS_KERNEL_SET_HEADER    its public header
//   ET_OPS_SELECTED_OPERATORS   the generated file of the rows it keeps
//   ET_OPS_PREPARED_KERNELS     when its rows name prepared kernels (the
//                               set's kernels.h declares them) instead of functions
//   ET_OPS_PREPARED_FORMS       when some of its functions have a prepared form
//                               (the set's prepared_forms.h; common/prepared_form.h)
#include <iterator>

#include "et_ops/kernel_library.h"
#include "et_ops/version.h"
#include ET_OPS_KERNEL_SET_HEADER
#if defined(ET_OPS_PREPARED_KERNELS)
#include "kernels.h"
#define ET_OPS_KERNEL_DEFINITION(kernel, schema) \
  prepared_kernel<kernel::prepare, kernel::instantiate, kernel::run>(schema)
#else
#include "common/prepared_form.h"
#if defined(ET_OPS_PREPARED_FORMS)
#include "prepared_forms.h"
#endif
#define ET_OPS_KERNEL_DEFINITION(function, schema) function_kernel<op_name::function, &function>(schema)
#endif

namespace et_ops::kernels::ET_OPS_KERNEL_SET {
namespace {

// The kernels, then an empty definition: a selection that keeps none of
// this set's operators still makes an array.
constexpr KernelDefinition kKernels[] = {
#define ET_OPS_OPERATOR(function, schema) ET_OPS_KERNEL_DEFINITION(function, schema),
#include ET_OPS_SELECTED_OPERATORS
#undef ET_OPS_OPERATOR
    KernelDefinition{},
};

const KernelLibrary& library() {
  static const KernelLibrary instance(kComponent, ET_OPS_VERSION, kKernels, std::size(kKernels) - 1);
  return instance;
}

}  // namespace

const et_ops_manifest& manifest() { return library().manifest(); }

RegistrationResult register_kernels() { return library().register_kernels(); }

}  // namespace et_ops::kernels::ET_OPS_KERNEL_SET

ET_OPS_LOADABLE_KERNEL_LIBRARY(et_ops::kernels::ET_OPS_KERNEL_SET::library);
