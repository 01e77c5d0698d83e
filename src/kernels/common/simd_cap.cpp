// ET_OPS_SIMD_MAX_ISA: the best SIMD path the kernel sets' own (Highway)
// kernels may take, so that one machine can measure what another gets:
//   avx2    an AVX2 machine's code on an AVX-512 one;
//   avx512  AVX-512 without the VNNI dot-product instructions;
//   native  (or unset) every target the CPU has.
// The kernels give the same bytes on every target, so this changes speed
// only. Highway's dispatch state is process-wide (libhwy.so): each kernel
// library applies the same cap when it loads.
#include <hwy/targets.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace et_ops::kernels {
namespace {

constexpr const char* kSimdCapVariable = "ET_OPS_SIMD_MAX_ISA";

// The targets better than `best` (a lower bit is a better target).
constexpr int64_t better_than(int64_t best) { return best - 1; }

bool apply_simd_cap() {
  const char* value = std::getenv(kSimdCapVariable);
  const std::string_view cap = value != nullptr ? value : "";
  int64_t removed = 0;
  if (cap == "avx2")
    removed = better_than(HWY_AVX2);
  else if (cap == "avx512")
    removed = better_than(HWY_AVX3);
  else if (!cap.empty() && cap != "native") {
    std::fprintf(stderr, "et_ops: %s='%s' is not valid (avx2, avx512 or native): the kernels take every SIMD "
                 "path this CPU has\n", kSimdCapVariable, value);
    return false;
  }
  if (removed == 0) return true;
  const int64_t supported = hwy::SupportedTargets() & ~removed;
  if (supported != 0) hwy::SetSupportedTargetsForTest(supported);
  return true;
}

[[maybe_unused]] const bool simd_cap_applied = apply_simd_cap();

}  // namespace
}  // namespace et_ops::kernels
