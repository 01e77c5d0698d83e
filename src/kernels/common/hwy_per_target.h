// What a kernel source compiled once per Highway target includes first,
// after naming itself, in place of hwy/foreach_target.h and hwy/highway.h:
//
//   #define HWY_TARGET_INCLUDE "this_file.cpp"
//   #include "common/hwy_per_target.h"
//   ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::SET::simd)
//   ... this target's code, in NS::HWY_NAMESPACE, with hn for Highway's ops
//   ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::SET::simd)
//   #if HWY_ONCE
//   ... HWY_EXPORT and the dispatching functions, compiled once
//   #endif
//
// No include guard: foreach_target.h includes the source again for each
// target, and the source includes this again.
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

// Opens NS::HWY_NAMESPACE (NS a namespace name such as a::b) for the
// target being compiled, with its code generation flags.
#define ET_OPS_HWY_NAMESPACE_BEGIN(NS) \
  HWY_BEFORE_NAMESPACE();              \
  namespace NS {                       \
  namespace HWY_NAMESPACE {            \
  namespace hn = hwy::HWY_NAMESPACE;
// Closes what ET_OPS_HWY_NAMESPACE_BEGIN(NS) opened.
#define ET_OPS_HWY_NAMESPACE_END(NS) \
  } /* namespace HWY_NAMESPACE */    \
  } /* namespace NS */               \
  HWY_AFTER_NAMESPACE();
