// Running a test under every Highway target: each SIMD kernel is compiled
// once per target and dispatched at run time to the best one the CPU has,
// so a machine with AVX-512 would otherwise never run the AVX2, SSE4 or
// scalar code that other users' machines take. Highway's dispatch state is
// process-wide (libhwy.so), so forcing a target here also forces it inside
// the kernel libraries.
#ifndef ET_OPS_TEST_KERNELS_SIMD_TARGETS_H
#define ET_OPS_TEST_KERNELS_SIMD_TARGETS_H

#include <catch2/catch.hpp>
#include <hwy/targets.h>

#include <cstdint>
#include <vector>

namespace et_ops::test {

// Restricts dispatch to `target` for its lifetime.
class TargetOverride {
 public:
  explicit TargetOverride(int64_t target) { hwy::SetSupportedTargetsForTest(target); }
  ~TargetOverride() { hwy::SetSupportedTargetsForTest(0); }
  TargetOverride(const TargetOverride&) = delete;
  TargetOverride& operator=(const TargetOverride&) = delete;
};

// Every target compiled into the kernels that this CPU can run, best first,
// ending with the scalar fallback.
inline std::vector<int64_t> simd_targets() { return hwy::SupportedAndGeneratedTargets(); }

// Runs f once per target of simd_targets(), dispatching only to that target.
template <typename F>
void for_each_simd_target(F&& f) {
  const std::vector<int64_t> targets = simd_targets();
  REQUIRE(!targets.empty());
  for (int64_t target : targets) {
    const TargetOverride only(target);
    INFO("Highway target " << hwy::TargetName(target));
    f();
  }
}

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_KERNELS_SIMD_TARGETS_H
