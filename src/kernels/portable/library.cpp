// The library face of libet_kernels_portable.so: C-ABI kernels that unpack
// their arguments (schema order, out arguments last) and call the typed
// entry points, the manifest, explicit registration and the
// loadable-library entry point.
#include <iterator>

#include "common/args.h"
#include "common/library.h"
#include "et_ops/kernels/portable.h"
#include "et_ops/version.h"
#include "portable_fingerprint.h"

// aten's own parameter types, read from their et_ops_value form.
namespace et_ops::kernels::detail {

// An aten Scalar arrives as an int or a double value; which one matters
// (integral tensors reject a floating alpha), so it is kept.
template <>
struct ArgAs<portable::Scalar> {
  static portable::Scalar read(ArgReader& a, std::size_t i) {
    if (a.tag(i) == ET_OPS_VALUE_INT) return portable::Scalar(a.integer(i));
    return portable::Scalar(a.floating(i));
  }
};

template <>
struct ArgAs<portable::IntList> {
  static portable::IntList read(ArgReader& a, std::size_t i) { return portable::IntList(a.int_list(i)); }
};

}  // namespace et_ops::kernels::detail

namespace et_ops::kernels::portable {
namespace {

#define ET_OPS_OPERATOR ET_OPS_DETAIL_OPERATOR_TYPE
#include "operators.def"
#undef ET_OPS_OPERATOR

constexpr kernels::detail::OperatorEntry kOperators[] = {
#define ET_OPS_OPERATOR ET_OPS_DETAIL_OPERATOR_ENTRY
#include "operators.def"
#undef ET_OPS_OPERATOR
};

}  // namespace

const et_ops_manifest& manifest() {
  static const kernels::detail::StaticManifest instance(kComponent, ET_OPS_VERSION, ET_OPS_PORTABLE_DIGEST,
                                                        kOperators, std::size(kOperators));
  return instance.manifest();
}

RegistrationResult register_kernels() { return register_manifest(manifest()); }

}  // namespace et_ops::kernels::portable

#if !defined(ET_OPS_STATIC_KERNELS)
// The loadable-library entry point (see et_ops/abi.h). A private static copy
// of these kernels does not export it.
extern "C" ET_OPS_VISIBLE const et_ops_manifest* et_ops_kernel_library_manifest(void) {
  return &et_ops::kernels::portable::manifest();
}
#endif
