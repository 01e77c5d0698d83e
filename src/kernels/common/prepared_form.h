// Prepared forms of kernel functions. A set of kernel functions (each row
// of its operators.def names a typed kernel function) may run some of its
// operators as prepared kernels in programs (et_ops/kernel_library.h): its
// private prepared_forms.h specializes PreparedForm for those operators'
// names, and common/library.cpp registers them with the prepared kernel's
// functions. Direct callers keep calling the typed entry point.
#ifndef ET_OPS_SRC_KERNELS_COMMON_PREPARED_FORM_H
#define ET_OPS_SRC_KERNELS_COMMON_PREPARED_FORM_H

#include "et_ops/kernel_library.h"

namespace et_ops::kernels {

// The prepared form of the operator named `Operator` (op_name::KERNEL): a
// specialization has `exists = true` and the functions prepare,
// instantiate (or nullptr) and run of et_ops::prepared_kernel.
template <const char* Operator>
struct PreparedForm {
  static constexpr bool exists = false;
};

// The registered kernel of a row: its prepared form, else the function.
template <const char* Operator, auto Function>
constexpr KernelDefinition function_kernel(const char* schema) {
  using Form = PreparedForm<Operator>;
  if constexpr (Form::exists)
    return prepared_kernel<Form::prepare, Form::instantiate, Form::run>(schema);
  else
    return kernel<Function>(schema);
}

}  // namespace et_ops::kernels

#endif  // ET_OPS_SRC_KERNELS_COMMON_PREPARED_FORM_H
