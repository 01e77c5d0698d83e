// for_each_simd_target (simd_targets.h) really runs every SIMD path: the
// targets it visits include the scalar fallback and every x86 target this
// CPU supports, and forcing one makes dynamic dispatch take exactly that
// target's code, in this executable and, through libhwy's process-wide
// state, in the kernel libraries.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd_targets_test.cpp"
#include <hwy/foreach_target.h>  // must precede highway.h
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace et_ops::test::probe {
namespace HWY_NAMESPACE {
int64_t CompiledTarget() { return HWY_TARGET; }
}  // namespace HWY_NAMESPACE
}  // namespace et_ops::test::probe
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <catch2/catch.hpp>
#include <sys/auxv.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "simd_targets.h"

namespace et_ops::test::probe {
HWY_EXPORT(CompiledTarget);
}  // namespace et_ops::test::probe

namespace {

bool contains(const std::vector<int64_t>& targets, int64_t target) {
  return std::find(targets.begin(), targets.end(), target) != targets.end();
}

TEST_CASE("every SIMD path this CPU can run is visited, down to the scalar fallback") {
  const std::vector<int64_t> targets = et_ops::test::simd_targets();
  CHECK(contains(targets, HWY_SCALAR));
#if HWY_ARCH_X86
  // Every x86-64 CPU the project supports has SSSE3 and SSE4; AVX2 and
  // AVX-512 only when this CPU has them.
  __builtin_cpu_init();
  CHECK(contains(targets, HWY_SSSE3) == bool(__builtin_cpu_supports("ssse3")));
  CHECK(contains(targets, HWY_SSE4) == bool(__builtin_cpu_supports("sse4.2")));
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  CHECK(contains(targets, HWY_AVX2) == avx2);
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  CHECK(contains(targets, HWY_AVX3) == avx512);
#endif
}

TEST_CASE("forcing a target makes dynamic dispatch run that target's code") {
  std::vector<int64_t> visited;
  et_ops::test::for_each_simd_target([&] {
    const int64_t ran = HWY_DYNAMIC_DISPATCH(et_ops::test::probe::CompiledTarget)();
    visited.push_back(ran);
  });
  CHECK(visited == et_ops::test::simd_targets());
  // Afterwards the best target is chosen again.
  CHECK(HWY_DYNAMIC_DISPATCH(et_ops::test::probe::CompiledTarget)() == et_ops::test::simd_targets().front());
}

}  // namespace
#endif  // HWY_ONCE
