// Runs a test body once per Highway target: every kernel that dispatches
// at run time must give the same bits on each of them, and a machine with
// AVX-512 must prove the AVX2, SSE4, SSSE3 and scalar paths that other
// machines take.
#ifndef ET_OPS_TEST_KERNELS_COMMON_SIMD_TARGETS_H
#define ET_OPS_TEST_KERNELS_COMMON_SIMD_TARGETS_H

#include <catch2/catch.hpp>
#include <hwy/targets.h>

#include <cstdint>
#include <vector>

namespace et_ops::test {

// Runs f once per Highway target compiled into the libraries and supported
// by this CPU, forcing the dispatch to that target, then restores the default.
template <typename F>
void for_each_simd_target(F&& f) {
  struct Restore {
    ~Restore() { hwy::SetSupportedTargetsForTest(0); }
  } restore;
  const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  REQUIRE(!targets.empty());
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    INFO("Highway target " << hwy::TargetName(target));
    f();
  }
}

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_KERNELS_COMMON_SIMD_TARGETS_H
