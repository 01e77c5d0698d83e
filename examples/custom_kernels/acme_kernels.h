// acme_kernels: a kernel library from outside et_ops, built with the
// installed headers alone. A C++ host that links it registers its kernels
// with acme::register_kernels(); et-ops and Python load it by path.
#ifndef ACME_KERNELS_H
#define ACME_KERNELS_H

#include <et_ops/kernel_library.h>

namespace acme {

// The library: component "acme_kernels", its kernels and their manifest.
const et_ops::KernelLibrary& library();

// Registers every kernel of the library into the process registry.
et_ops::RegistrationResult register_kernels();

}  // namespace acme

#endif  // ACME_KERNELS_H
