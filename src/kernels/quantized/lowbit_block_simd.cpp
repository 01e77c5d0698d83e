// The microkernels of the prepared low-bit linears (see lowbit_layout.h):
// one block of kBlockRows output channels, one token at a time, the SIMD
// lanes being the block's output channels. Compiled once per Highway target
// and dispatched at run time.
//
// Integer products: u8 weights (w + offset) times s8 activations summed in
// fours per 32-bit lane. AVX-512 VNNI: vpdpbusd (no intermediate
// saturation); other x86 targets: vpmaddubsw + vpmaddwd for 4-bit weights
// (|15 * 128 * 2| < 2^15: never saturates), the bytes split into int16
// halves + vpmaddwd for 8-bit weights; the scalar and emulated targets loop.
// All exact, so every target gives the same int32 sums. The float steps are
// lane-wise Mul and Add (no fused multiply-add), in the same order as the
// scalar loop: the same bytes everywhere.
#define HWY_TARGET_INCLUDE "lowbit_block_simd.cpp"
#define HWY_WANT_AVX3_DL  // the AVX-512 VNNI target (vpdpbusd)
#include "common/hwy_per_target.h"

#include <cstring>

#include "lowbit_layout.h"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

#include "common/hwy_vnni_begin.h"
namespace et_ops::kernels::quantized::lowbit {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Integer sums wrap in uint32: the corrected group sum is exact in int32
// (docs/kernels-quantized.md) even where a partial term is not.
inline int32_t wrap(uint32_t v) {
  int32_t r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}

inline int32_t quad_of(const int8_t* q) {
  int32_t v;
  std::memcpy(&v, q, sizeof v);
  return v;
}

// dots[r] = sum of (u8 weight byte) * (s8 activation) over one group of
// block row r, wrapping in uint32.
void ScalarGroupDots(const uint8_t* chunk, std::size_t chunks, bool four_bit, const int8_t* q, uint32_t* dots) {
  for (std::size_t r = 0; r < kBlockRows; ++r) dots[r] = 0;
  for (std::size_t c = 0; c < chunks; ++c, chunk += kChunkBytes) {
    const int8_t* a = q + c * (four_bit ? 8 : 4);
    for (std::size_t r = 0; r < kBlockRows; ++r)
      for (std::size_t e = 0; e < 4; ++e) {
        const uint8_t byte = chunk[r * 4 + e];
        if (four_bit) {
          dots[r] += static_cast<uint32_t>((byte & 0x0F) * a[e]);
          dots[r] += static_cast<uint32_t>((byte >> 4) * a[4 + e]);
        } else {
          dots[r] += static_cast<uint32_t>(byte * a[e]);
        }
      }
  }
}

#undef ET_OPS_LOWBIT_X86_SIMD  // set again for each target that has it
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3 && HWY_TARGET != HWY_EMU128 && HWY_TARGET != HWY_SCALAR
#define ET_OPS_LOWBIT_X86_SIMD 1

using D32 = hn::ScalableTag<int32_t>;
using V32 = hn::Vec<D32>;

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
using Raw = __m512i;
inline Raw madd16(Raw a, Raw b) { return _mm512_madd_epi16(a, b); }
inline Raw maddubs(Raw u, Raw s) { return _mm512_maddubs_epi16(u, s); }
#elif HWY_TARGET == HWY_AVX2
using Raw = __m256i;
inline Raw madd16(Raw a, Raw b) { return _mm256_madd_epi16(a, b); }
inline Raw maddubs(Raw u, Raw s) { return _mm256_maddubs_epi16(u, s); }
#else
using Raw = __m128i;
inline Raw madd16(Raw a, Raw b) { return _mm_madd_epi16(a, b); }
inline Raw maddubs(Raw u, Raw s) { return _mm_maddubs_epi16(u, s); }
#endif

// sum + (the four u8 x s8 products of each 32-bit lane of w and a).
template <bool kFourBit>
HWY_INLINE V32 QuadDot(V32 sum, V32 w, V32 a) {
#if HWY_TARGET == HWY_AVX3_DL
  (void)kFourBit;
  return V32{_mm512_dpbusd_epi32(sum.raw, w.raw, a.raw)};
#else
  if constexpr (kFourBit) {
    const Raw ones = hn::Set(hn::Repartition<int16_t, D32>(), int16_t{1}).raw;
    return hn::Add(sum, V32{madd16(maddubs(w.raw, a.raw), ones)});
  } else {
    // Even and odd bytes of each 16-bit half: w zero-extended, a sign-extended.
    const hn::Repartition<int16_t, D32> d16;
    const auto w16 = hn::BitCast(d16, w);
    const auto a16 = hn::BitCast(d16, a);
    const auto w_even = hn::And(w16, hn::Set(d16, int16_t{0x00FF}));
    const auto w_odd = hn::BitCast(d16, hn::ShiftRight<8>(hn::BitCast(hn::Repartition<uint16_t, D32>(), w16)));
    const auto a_even = hn::ShiftRight<8>(hn::ShiftLeft<8>(a16));
    const auto a_odd = hn::ShiftRight<8>(a16);
    return hn::Add(hn::Add(sum, V32{madd16(w_even.raw, a_even.raw)}), V32{madd16(w_odd.raw, a_odd.raw)});
  }
#endif
}

constexpr std::size_t kVectors = kBlockRows / (HWY_MAX_BYTES / 4);

template <bool kFourBit>
void SimdGroupDots(const uint8_t* chunk, std::size_t chunks, const int8_t* q, uint32_t* dots) {
  const D32 d;
  V32 sum[kVectors];
  for (std::size_t v = 0; v < kVectors; ++v) sum[v] = hn::Zero(d);
  const auto low_mask = hn::Set(d, 0x0F0F0F0F);
  for (std::size_t c = 0; c < chunks; ++c, chunk += kChunkBytes) {
    if constexpr (kFourBit) {
      const auto a_low = hn::Set(d, quad_of(q + 8 * c));
      const auto a_high = hn::Set(d, quad_of(q + 8 * c + 4));
      for (std::size_t v = 0; v < kVectors; ++v) {
        const auto bytes = hn::LoadU(d, reinterpret_cast<const int32_t*>(chunk) + v * hn::Lanes(d));
        sum[v] = QuadDot<true>(sum[v], hn::And(bytes, low_mask), a_low);
        const auto high = hn::BitCast(d, hn::ShiftRight<4>(hn::BitCast(hn::Repartition<uint32_t, D32>(), bytes)));
        sum[v] = QuadDot<true>(sum[v], hn::And(high, low_mask), a_high);
      }
    } else {
      const auto a = hn::Set(d, quad_of(q + 4 * c));
      for (std::size_t v = 0; v < kVectors; ++v)
        sum[v] = QuadDot<false>(sum[v], hn::LoadU(d, reinterpret_cast<const int32_t*>(chunk) + v * hn::Lanes(d)), a);
    }
  }
  for (std::size_t v = 0; v < kVectors; ++v)
    hn::StoreU(sum[v], d, reinterpret_cast<int32_t*>(dots) + v * hn::Lanes(d));
}
#endif

void GroupDots(const uint8_t* chunk, std::size_t chunks, bool four_bit, const int8_t* q, uint32_t* dots) {
#ifdef ET_OPS_LOWBIT_X86_SIMD
  if (four_bit) return SimdGroupDots<true>(chunk, chunks, q, dots);
  return SimdGroupDots<false>(chunk, chunks, q, dots);
#else
  ScalarGroupDots(chunk, chunks, four_bit, q, dots);
#endif
}

// out[r] = the documented float chain of output channel r of the block for
// one token (see lowbit_layout.h).
void DynamicBlock(const BlockView& b, const TokenView& t, float* out) {
  const hn::ScalableTag<float> df;
  const hn::ScalableTag<int32_t> di;
  const std::size_t lanes = hn::Lanes(df);
  HWY_ALIGN uint32_t dots[kBlockRows];
  HWY_ALIGN int32_t sums[kBlockRows];
  HWY_ALIGN float acc[kBlockRows] = {};
  const uint32_t offset = b.four_bit ? 8u : 128u;
  for (std::size_t g = 0; g < b.groups; ++g) {
    GroupDots(b.bytes + g * b.chunks * kChunkBytes, b.chunks, b.four_bit, t.q + g * b.padded_group, dots);
    const uint32_t shift = offset * static_cast<uint32_t>(t.qsums[g]);
    const int32_t* wsum = b.wsums + g * kBlockRows;
    for (std::size_t r = 0; r < kBlockRows; ++r)
      sums[r] = wrap(dots[r] - shift - static_cast<uint32_t>(t.zero_point) * static_cast<uint32_t>(wsum[r]));
    const float* scale = b.scales + g * kBlockRows;
    for (std::size_t r = 0; r < kBlockRows; r += lanes) {
      const auto product = hn::Mul(hn::ConvertTo(df, hn::Load(di, sums + r)), hn::LoadU(df, scale + r));
      hn::Store(hn::Add(hn::Load(df, acc + r), product), df, acc + r);
    }
  }
  const auto s = hn::Set(df, t.scale);
  for (std::size_t r = 0; r < kBlockRows; r += lanes) {
    auto v = hn::Mul(hn::Load(df, acc + r), s);
    if (b.bias != nullptr) v = hn::Add(v, hn::LoadU(df, b.bias + r));
    hn::StoreU(v, df, out + r);
  }
}

// The block's weights as floats, [K][kBlockRows]: fl32(fl32(w) * scale),
// the reference's dequantize.
void DequantizeBlock(const BlockView& b, std::size_t group_size, float* out) {
  const hn::ScalableTag<float> df;
  const hn::ScalableTag<int32_t> di;
  const hn::ScalableTag<uint32_t> du;
  const std::size_t lanes = hn::Lanes(di);
  const int32_t offset = b.four_bit ? 8 : 128;
  const auto off = hn::Set(di, offset);
  const auto byte_mask = hn::Set(di, b.four_bit ? 0x0F : 0xFF);
  const std::size_t per_chunk = b.four_bit ? 8 : 4;
  for (std::size_t g = 0; g < b.groups; ++g) {
    const uint8_t* chunk = b.bytes + g * b.chunks * kChunkBytes;
    const float* scale = b.scales + g * kBlockRows;
    for (std::size_t k = 0; k < group_size; ++k) {
      const std::size_t c = k / per_chunk, e = k % 4, high = (k % per_chunk) / 4;
      const int shift = static_cast<int>(8 * e + 4 * high);
      float* row = out + (g * group_size + k) * kBlockRows;
      for (std::size_t r = 0; r < kBlockRows; r += lanes) {
        const auto bytes = hn::LoadU(di, reinterpret_cast<const int32_t*>(chunk + c * kChunkBytes) + r);
        const auto shifted = hn::BitCast(di, hn::ShiftRightSame(hn::BitCast(du, bytes), shift));
        const auto w = hn::Sub(hn::And(shifted, byte_mask), off);
        hn::StoreU(hn::Mul(hn::ConvertTo(df, w), hn::LoadU(df, scale + r)), df, row + r);
      }
    }
  }
}

// out[r] = sum over k ascending of x[k] * w[k][r], then + bias[r].
void FloatBlock(const float* w, std::size_t in, const float* x, const float* bias, float* out) {
  const hn::ScalableTag<float> df;
  const std::size_t lanes = hn::Lanes(df);
  for (std::size_t r0 = 0; r0 < kBlockRows; r0 += lanes) {
    auto acc = hn::Zero(df);
    for (std::size_t k = 0; k < in; ++k) acc = hn::Add(acc, hn::Mul(hn::Set(df, x[k]), hn::LoadU(df, w + k * kBlockRows + r0)));
    if (bias != nullptr) acc = hn::Add(acc, hn::LoadU(df, bias + r0));
    hn::StoreU(acc, df, out + r0);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace et_ops::kernels::quantized::lowbit
#include "common/hwy_vnni_end.h"

#if HWY_ONCE
namespace et_ops::kernels::quantized::lowbit {

HWY_EXPORT(DynamicBlock);
HWY_EXPORT(DequantizeBlock);
HWY_EXPORT(FloatBlock);

void dynamic_block(const BlockView& block, const TokenView& token, float* out) {
  HWY_DYNAMIC_DISPATCH(DynamicBlock)(block, token, out);
}

void dequantize_block(const BlockView& block, std::size_t group_size, float* out) {
  HWY_DYNAMIC_DISPATCH(DequantizeBlock)(block, group_size, out);
}

void float_block(const float* weights, std::size_t in, const float* x, const float* bias, float* out) {
  HWY_DYNAMIC_DISPATCH(FloatBlock)(weights, in, x, bias, out);
}

}  // namespace et_ops::kernels::quantized::lowbit
#endif  // HWY_ONCE
