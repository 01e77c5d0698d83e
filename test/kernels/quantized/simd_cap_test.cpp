// ET_OPS_SIMD_MAX_ISA caps the SIMD targets the kernel libraries dispatch
// to (src/kernels/common/simd_cap.cpp, applied when a library loads).
// Run as `simd_cap_test CAP` with the variable set to CAP by meson: avx2 and
// avx512 leave no better target, anything else leaves every target the CPU
// has. Exit status 0 when the dispatch state is what CAP promises.
#include <hwy/targets.h>

#include <cstdint>
#include <cstdio>
#include <string_view>

#include "et_ops/kernels/quantized.h"

namespace {

// The targets this x86-64 CPU runs natively that the cap must keep.
int64_t expected_best(std::string_view cap) {
  if (cap == "avx2") return __builtin_cpu_supports("avx2") ? HWY_AVX2 : 0;
  if (cap == "avx512") return __builtin_cpu_supports("avx512bw") ? HWY_AVX3 : 0;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: simd_cap_test CAP\n");
    return 2;
  }
  // Linking the library is what applies the cap; registering proves it loaded.
  if (!et_ops::kernels::quantized::register_kernels().ok()) return 1;
  const std::string_view cap = argv[1];
  const int64_t targets = hwy::SupportedTargets();
  const int64_t best = targets & -targets;  // the lowest bit: the best target
  bool ok = true;
  if (cap == "avx2" || cap == "avx512") {
    const int64_t limit = cap == "avx2" ? HWY_AVX2 : HWY_AVX3;
    ok = best >= limit && (expected_best(cap) == 0 || best == expected_best(cap));
  } else {
    ok = !__builtin_cpu_supports("avx2") || (targets & HWY_AVX2) != 0;  // nothing removed
  }
  std::printf("%s=%s: best target %s\n", "ET_OPS_SIMD_MAX_ISA", argv[1], hwy::TargetName(best));
  return ok ? 0 : 1;
}
