// Per-target building blocks shared by the vectorised kernels: widening
// loads of quantized integers, narrowing stores, and the saturation rule of
// reference §1.3 on vectors. Included once per Highway target (the guard
// toggles with HWY_TARGET_TOGGLE, as Highway's own -inl.h headers do).
#if defined(ET_OPS_VECTOR_OPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ET_OPS_VECTOR_OPS_INL_H_
#undef ET_OPS_VECTOR_OPS_INL_H_
#else
#define ET_OPS_VECTOR_OPS_INL_H_
#endif

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "et_ops/kernels/quantized.h"

HWY_BEFORE_NAMESPACE();
namespace et_ops::kernels::quantized::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Quantized integers (u8, i8, i16, u16, i32) widened exactly to i32 lanes.
template <typename Q, class DI>
HWY_INLINE hn::VFromD<DI> LoadAsI32(DI di, const Q* p) {
  if constexpr (std::is_same_v<Q, int32_t>) {
    return hn::LoadU(di, p);
  } else {
    const hn::Rebind<Q, DI> dq;
    return hn::PromoteTo(di, hn::LoadU(dq, p));
  }
}

// i32 lanes already within the bounds of Q, narrowed to Q lanes.
template <typename Q, class DI>
HWY_INLINE hn::VFromD<hn::Rebind<Q, DI>> DemoteFromI32(DI di, hn::VFromD<DI> v) {
  if constexpr (std::is_same_v<Q, int32_t>) {
    (void)di;
    return v;
  } else {
    return hn::DemoteTo(hn::Rebind<Q, DI>(), v);
  }
}

// Float bounds of a quantization range: lo is the least float >= quant_min,
// hi the greatest float <= quant_max. For an integer-valued (or infinite)
// float t, t > quant_max exactly when t > hi, and likewise for lo, so
// clamping to [lo, hi] decides saturation exactly.
enum class BoundsKind {
  kSmall,    // the integers themselves, all of magnitude < 2^22 (every dtype but i32)
  kExact,    // the integers themselves
  kInexact,  // a wide i32 range whose ends are not floats
};

struct FloatBounds {
  float lo;
  float hi;
  BoundsKind kind;
};

// clamp(t, lo, hi) with NaN -> lo. x86 max (like Highway's scalar Max)
// returns its second operand when the first is NaN, so there Max(t, lo)
// already maps NaN to lo; other architectures select explicitly.
template <class D>
HWY_INLINE hn::VFromD<D> ClampNaNToLow(D d, hn::VFromD<D> t, hn::VFromD<D> lo, hn::VFromD<D> hi) {
#if HWY_ARCH_X86
  (void)d;
  return hn::Min(hn::Max(t, lo), hi);
#else
  return hn::IfThenElse(hn::Eq(t, t), hn::Min(hn::Max(t, lo), hi), lo);
#endif
}

// Exact conversion of integer-valued f32 lanes of magnitude < 2^22: adding
// 1.5 * 2^23 puts the integer in the low mantissa bits, exactly, so two
// adds replace a conversion and its overflow fix-up.
template <class DF, class DI = hn::RebindToSigned<DF>>
HWY_INLINE hn::VFromD<DI> SmallIntegerToI32(DF df, hn::VFromD<DF> v) {
  const DI di;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23, bits 0x4B400000
  return hn::Sub(hn::BitCast(di, hn::Add(v, hn::Set(df, kMagic))), hn::Set(di, 0x4B400000));
}

// sat(t) of reference §1.3 for integer-valued f32 lanes: NaN -> quant_min,
// clamp in float, then an exact conversion. With inexact bounds the lanes
// beyond [lo, hi] are replaced by the integer bounds after conversion.
template <BoundsKind kKind, class DF, class DI = hn::RebindToSigned<DF>>
HWY_INLINE hn::VFromD<DI> SaturateF32(DF df, hn::VFromD<DF> t, const FloatBounds& bounds, int32_t quant_min,
                                      int32_t quant_max) {
  const DI di;
  const auto lo = hn::Set(df, bounds.lo);
  const auto hi = hn::Set(df, bounds.hi);
  const auto clamped = ClampNaNToLow(df, t, lo, hi);
  if constexpr (kKind == BoundsKind::kSmall) {
    return SmallIntegerToI32(df, clamped);
  } else if constexpr (kKind == BoundsKind::kExact) {
    return hn::ConvertTo(di, clamped);
  } else {
    auto q = hn::ConvertTo(di, clamped);
    q = hn::IfThenElse(hn::RebindMask(di, hn::Gt(t, hi)), hn::Set(di, quant_max), q);
    return hn::IfThenElse(hn::RebindMask(di, hn::Not(hn::Ge(t, lo))), hn::Set(di, quant_min), q);
  }
}

// sat(t) for integer-valued f64 lanes; every quantized bound is exact in
// binary64. Returns i32 lanes (half as many bytes as the f64 lanes).
template <class DD, class DI = hn::Rebind<int32_t, DD>>
HWY_INLINE hn::VFromD<DI> SaturateF64(DD dd, hn::VFromD<DD> t, double quant_min, double quant_max) {
  const DI di;
  const auto lo = hn::Set(dd, quant_min);
  const auto hi = hn::Set(dd, quant_max);
  return hn::DemoteTo(di, ClampNaNToLow(dd, t, lo, hi));
}

// Inputs are prefetched this far ahead: one core's read bandwidth from
// memory is bound by misses in flight, and the hardware prefetcher alone
// leaves a large read-mostly stream (f32 -> i8) well short of memcpy.
constexpr std::size_t kPrefetchBytes = 4096;

// Hints the line kPrefetchBytes past element i of in[0, n) (never past n)
// for a step that reads `count` elements from i: once per cache line, since
// a vector of narrow inputs covers a fraction of a line and a prefetch per
// vector would only cost issue slots.
template <typename T>
HWY_INLINE void PrefetchAhead(const T* in, std::size_t i, std::size_t n, std::size_t count) {
  constexpr std::size_t kAhead = kPrefetchBytes / sizeof(T);
  constexpr uintptr_t kLine = 64;
  if (i + kAhead >= n) return;
  const T* ahead = in + i + kAhead;
  const uintptr_t to_next_line = (kLine - reinterpret_cast<uintptr_t>(ahead) % kLine) % kLine;
  if (to_next_line < count * sizeof(T)) hwy::Prefetch(ahead + to_next_line / sizeof(T));
}

// Runs that move at least streaming_threshold_bytes() (read plus written;
// the machine's last-level cache by default) are written with non-temporal
// stores: they do not fit the cache that would keep them for a consumer
// anyway, and streaming skips the read-for-ownership of every destination
// line, the same traffic memcpy has (about a third of the bytes for
// i8 -> f32). Smaller ones stay in the cache for the next operator.
HWY_INLINE bool ShouldStream(std::size_t n, std::size_t bytes_per_element) {
  return n * bytes_per_element >= streaming_threshold_bytes();
}

#if HWY_TARGET != HWY_SCALAR  // single-lane vectors: nothing to assemble or stream

// One whole vector of `d_out` (Out lanes) for elements [i, i + Lanes(d_out)),
// concatenated in registers from compute(d, ...) results, which have as many
// lanes as `d` (a power-of-two fraction of d_out's).
template <class DOut, class D, class Compute>
HWY_INLINE hn::VFromD<DOut> Assemble(DOut d_out, D d, std::size_t i, const Compute& compute) {
  if constexpr (std::is_same_v<DOut, hn::Rebind<hn::TFromD<DOut>, D>>) {
    return compute(d, i);
  } else {
    const hn::Half<DOut> d_half;
    return hn::Combine(d_out, Assemble(d_half, d, i + hn::Lanes(d_half), compute), Assemble(d_half, d, i, compute));
  }
}

// The streaming part of WriteEach: single lanes up to an output address
// aligned to a whole vector of Out, then aligned non-temporal stores of
// whole vectors. Returns how many elements it wrote (a prefix of [0, n)).
template <class D, typename Out, class Compute>
HWY_INLINE std::size_t StreamEach(D d, std::size_t n, Out* out, const Compute& compute) {
  const hn::ScalableTag<Out> d_full;
  const hn::CappedTag<hn::TFromD<D>, 1> d1;
  const hn::Rebind<Out, decltype(d1)> d1_out;
  const std::size_t full = hn::Lanes(d_full);
  const std::size_t alignment = full * sizeof(Out);
  if (hn::Lanes(d) > full || reinterpret_cast<uintptr_t>(out) % sizeof(Out) != 0) return 0;
  std::size_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(out + i) % alignment != 0; ++i)
    hn::StoreU(compute(d1, i), d1_out, out + i);
  for (; i + full <= n; i += full) hn::Stream(Assemble(d_full, d, i, compute), d_full, out + i);
  hwy::FlushStream();
  return i;
}

#endif  // HWY_TARGET != HWY_SCALAR

// out[i] = compute(d, i) lane by lane over [0, n): whole vectors of `d`
// (streamed for large runs, see ShouldStream), then single lanes, so the
// tail performs the very same operations without touching memory past n.
// compute(d, i) loads its inputs (in_bytes_per_element in all) and returns
// the Out lanes for elements [i, i + Lanes(d)).
template <class D, typename Out, class Compute>
HWY_INLINE void WriteEach(D d, std::size_t n, [[maybe_unused]] std::size_t in_bytes_per_element, Out* out,
                          const Compute& compute) {
  const hn::Rebind<Out, D> d_out;
  const hn::CappedTag<hn::TFromD<D>, 1> d1;
  const hn::Rebind<Out, decltype(d1)> d1_out;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  if (ShouldStream(n, in_bytes_per_element + sizeof(Out))) i = StreamEach(d, n, out, compute);
#endif
  for (; i + lanes <= n; i += lanes) hn::StoreU(compute(d, i), d_out, out + i);
  for (; i < n; ++i) hn::StoreU(compute(d1, i), d1_out, out + i);
}

}  // namespace HWY_NAMESPACE
}  // namespace et_ops::kernels::quantized::simd
HWY_AFTER_NAMESPACE();

#endif  // ET_OPS_VECTOR_OPS_INL_H_
