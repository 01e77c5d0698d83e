// Vectorised integer dot products of the dynamically quantized linears (see
// vector_kernels.h), compiled once per Highway target and dispatched at run
// time. int16 x int16 -> int32 multiply-adds (vpmaddwd on x86): exact, so
// every target gives the same sums.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "lowbit_dot_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "vector_kernels.h"

HWY_BEFORE_NAMESPACE();
namespace et_ops::kernels::quantized::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// |a| <= 255 and |w| <= 128: each pairwise sum is at most 65280, and a group
// of n elements at most 32640 * n, well inside int32 for any row length the
// callers accept.
int32_t GroupDot(const int16_t* a, const int8_t* w, std::size_t n) {
  const hn::ScalableTag<int16_t> d16;
  const hn::Repartition<int32_t, decltype(d16)> d32;
  const hn::Rebind<int8_t, decltype(d16)> d8;
  const std::size_t lanes = hn::Lanes(d16);
  auto sum0 = hn::Zero(d32);
  auto sum1 = hn::Zero(d32);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto wv = hn::PromoteTo(d16, hn::LoadU(d8, w + i));
    sum0 = hn::ReorderWidenMulAccumulate(d32, hn::LoadU(d16, a + i), wv, sum0, sum1);
  }
  int32_t total = hn::GetLane(hn::SumOfLanes(d32, hn::Add(sum0, sum1)));
  for (; i < n; ++i) total += static_cast<int32_t>(a[i]) * w[i];
  return total;
}

void GroupDots(const int16_t* a, const int8_t* w, std::size_t groups, std::size_t group_size, int32_t* sums) {
  for (std::size_t g = 0; g < groups; ++g) sums[g] = GroupDot(a + g * group_size, w + g * group_size, group_size);
}

}  // namespace HWY_NAMESPACE
}  // namespace et_ops::kernels::quantized::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace et_ops::kernels::quantized::simd {

HWY_EXPORT(GroupDots);

void group_dots(const int16_t* a, const int8_t* w, std::size_t groups, std::size_t group_size, int32_t* sums) {
  HWY_DYNAMIC_DISPATCH(GroupDots)(a, w, groups, group_size, sums);
}

}  // namespace et_ops::kernels::quantized::simd
#endif  // HWY_ONCE
