// The library face of libet_kernels_quantized.so: C-ABI kernels that unpack
// their arguments and call the typed entry points, the manifest, explicit
// registration and the loadable-library entry point.
#include <iterator>

#include "common/args.h"
#include "common/library.h"
#include "et_ops/kernels/quantized.h"
#include "et_ops/version.h"
#include "quantized_fingerprint.h"

namespace et_ops::kernels::quantized {
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
  static const kernels::detail::StaticManifest instance(kComponent, ET_OPS_VERSION, ET_OPS_QUANTIZED_DIGEST,
                                                        kOperators, std::size(kOperators));
  return instance.manifest();
}

RegistrationResult register_kernels() { return register_manifest(manifest()); }

}  // namespace et_ops::kernels::quantized

#if !defined(ET_OPS_STATIC_KERNELS)
// The loadable-library entry point (see et_ops/abi.h). A private static copy
// of these kernels does not export it.
extern "C" ET_OPS_VISIBLE const et_ops_manifest* et_ops_kernel_library_manifest(void) {
  return &et_ops::kernels::quantized::manifest();
}
#endif
