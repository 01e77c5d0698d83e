// The microkernels of the prepared low-bit linears (see lowbit_layout.h):
// one block of kBlockRows output channels, the SIMD lanes being the block's
// output channels. Compiled once per Highway target and dispatched at run
// time.
//
// 8da*: tiles of up to kTokenTile tokens per block, each chunk's weights
// loaded and unpacked once for the tile, the integer sums, their
// corrections and the float chain in registers. Integer products: u8
// weights (w + offset) times s8 activations summed in fours per 32-bit
// lane. AVX-512 VNNI: vpdpbusd (no intermediate saturation); other x86
// targets: vpmaddubsw (|15 * 128 * 2| < 2^15: never saturates) for 4-bit
// weights, its pairs summed in int16 over a few chunks then widened by
// vpmaddwd; the bytes split into int16 halves + vpmaddwd for 8-bit
// weights; the scalar and emulated targets loop. All exact, so every target
// gives the same int32 sums.
//
// Weight-only: with many tokens, a block dequantized once, then tiles of
// kFloatTile tokens (independent add chains interleaved); with one or two
// tokens, kBlockTile blocks at once, dequantized from their bytes as the
// chains go.
//
// The float steps are lane-wise Mul and Add (no fused multiply-add), in
// the documented order per output: the same bytes everywhere.
#define HWY_TARGET_INCLUDE "lowbit_block_simd.cpp"
#define HWY_WANT_AVX3_DL  // the AVX-512 VNNI target (vpdpbusd)
#include "common/hwy_per_target.h"

#include <algorithm>
#include <cstring>

#include <hwy/cache_control.h>
#include <utility>

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
// block row r, wrapping in uint32; weights[r] = the sum of its u8 weights.
void ScalarGroupDots(const uint8_t* chunk, std::size_t chunks, bool four_bit, const int8_t* q, uint32_t* dots,
                     uint32_t* weights) {
  for (std::size_t r = 0; r < kBlockRows; ++r) dots[r] = weights[r] = 0;
  for (std::size_t c = 0; c < chunks; ++c, chunk += kChunkBytes) {
    const int8_t* a = q + c * (four_bit ? 8 : 4);
    for (std::size_t r = 0; r < kBlockRows; ++r)
      for (std::size_t e = 0; e < 4; ++e) {
        const uint8_t byte = chunk[r * 4 + e];
        if (four_bit) {
          dots[r] += static_cast<uint32_t>((byte & 0x0F) * a[e]);
          dots[r] += static_cast<uint32_t>((byte >> 4) * a[4 + e]);
          weights[r] += static_cast<uint32_t>((byte & 0x0F) + (byte >> 4));
        } else {
          dots[r] += static_cast<uint32_t>(byte * a[e]);
          weights[r] += byte;
        }
      }
  }
}

// The group's correction that does not depend on the weights,
// off * (sum q - z * P) (lowbit_layout.h), wrapping in uint32.
inline uint32_t TokenShift(const TokenView& t, std::size_t group, std::size_t padded_group, bool four_bit) {
  const uint32_t offset = four_bit ? 8u : 128u;
  return offset * (static_cast<uint32_t>(t.qsums[group]) -
                   static_cast<uint32_t>(t.zero_point) * static_cast<uint32_t>(padded_group));
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

#endif

// A block's rows take kRowVectors vectors of int32 or float lanes (fixed
// sizes: the tiles keep arrays of vectors).
static_assert(HWY_LANES(int32_t) <= kBlockRows && kBlockRows % HWY_LANES(int32_t) == 0,
              "a block's rows fill whole vectors");
constexpr std::size_t kRowVectors = kBlockRows / HWY_LANES(int32_t);
using DF = hn::ScalableTag<float>;
using DI = hn::ScalableTag<int32_t>;
using VF = hn::Vec<DF>;
using VI = hn::Vec<DI>;

// Tokens per tile of the 8da* kernel and of the weight-only prefill: as
// many accumulators as the registers hold beside the weights (32 vectors on
// AVX-512, 16 on AVX2).
[[maybe_unused]] constexpr std::size_t kTokenTile = HWY_MAX_BYTES >= 64 ? 8 : HWY_MAX_BYTES >= 32 ? 4 : 2;
[[maybe_unused]] constexpr std::size_t kFloatTile = HWY_MAX_BYTES >= 64 ? 8 : HWY_MAX_BYTES >= 32 ? 6 : 3;
// Blocks interleaved by the weight-only decode (independent add chains).
[[maybe_unused]] constexpr std::size_t kBlockTile = HWY_MAX_BYTES >= 64 ? 6 : HWY_MAX_BYTES >= 32 ? 3 : 2;

// acc[m][v] = the float chain of M tokens' rows (see lowbit_layout.h) after
// one more group: fl32(acc + fl32(fl32(isum) * scale)).
template <std::size_t M>
HWY_INLINE void AddGroup(const VI (&isum)[M][kRowVectors], const float* scale, VF (&acc)[M][kRowVectors]) {
  const DF df;
  for (std::size_t v = 0; v < kRowVectors; ++v) {
    const VF s = hn::LoadU(df, scale + v * hn::Lanes(df));
    for (std::size_t m = 0; m < M; ++m) acc[m][v] = hn::Add(acc[m][v], hn::Mul(hn::ConvertTo(df, isum[m][v]), s));
  }
}

// out[m][r] = fl32(acc * token scale) (8da*: t not null), then fl32(+ bias).
template <std::size_t M>
HWY_INLINE void FinishTokens(const VF (&acc)[M][kRowVectors], const TokenView* t, const float* bias, float* out) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t v = 0; v < kRowVectors; ++v) {
      VF y = acc[m][v];
      if (t != nullptr) y = hn::Mul(y, hn::Set(df, t[m].scale));
      if (bias != nullptr) y = hn::Add(y, hn::LoadU(df, bias + v * lanes));
      hn::StoreU(y, df, out + m * kBlockRows + v * lanes);
    }
}

// Asks for the bytes kPrefetchBytes past `at`, one record's worth (they may
// lie past the layer: a prefetch never faults).
HWY_INLINE void PrefetchRecord(const BlockView& b, const uint8_t* at) {
  for (std::size_t line = 0; line < b.record_bytes; line += 64) hwy::Prefetch(at + kPrefetchBytes + line);
}

#ifdef ET_OPS_LOWBIT_X86_SIMD
// Vector v of a 4-bit chunk: the low nibbles (elements 0-3 of each row) and
// the high ones (4-7), one u8 each.
HWY_INLINE void UnpackNibbles(const uint8_t* chunk, std::size_t v, VI (&w)[2]) {
  const DI d;
  const VI low_mask = hn::Set(d, 0x0F0F0F0F);
  const VI bytes = hn::LoadU(d, reinterpret_cast<const int32_t*>(chunk) + v * hn::Lanes(d));
  w[0] = hn::And(bytes, low_mask);
  w[1] = hn::And(hn::BitCast(d, hn::ShiftRight<4>(hn::BitCast(hn::Repartition<uint32_t, DI>(), bytes))), low_mask);
}

// Without VNNI, 4-bit products go through vpmaddubsw, whose int16 lanes
// (two products, |.| <= 2 * 15 * 128 = 3840) are summed in int16 over up to
// kSpanChunks chunks (8 of them: |.| <= 30720, no wrap) before one vpmaddwd
// widens them: a third of the instructions of widening every pair.
#if HWY_TARGET == HWY_AVX3_DL
constexpr bool kPairSums = false;
#else
constexpr bool kPairSums = true;
#endif
constexpr std::size_t kSpanChunks = 4;
using D16 = hn::Repartition<int16_t, DI>;
using V16 = hn::Vec<D16>;

HWY_INLINE V16 PairDot(V16 pairs, VI w, VI a) { return hn::Add(pairs, V16{maddubs(w.raw, a.raw)}); }

HWY_INLINE VI WidenPairs(VI sum, V16 pairs) {
  return hn::Add(sum, VI{madd16(pairs.raw, hn::Set(D16(), int16_t{1}).raw)});
}

// The u8 weights of a chunk's vector, summed in fours per 32-bit lane
// like the products: the two nibbles of a byte (at most 30) added first.
template <bool kFourBit>
HWY_INLINE VI ChunkWeights(const VI (&w)[2]) {
  return kFourBit ? hn::Add(w[0], w[1]) : w[0];
}

// sums[g][r] = the sum of group g's u8 weights of block row r, for a
// block's tiles of several tokens: computed once, not in every tile's
// loop, where they would take registers the tile needs.
template <bool kFourBit>
void BlockWeights(const BlockView& b, int32_t* sums) {
  const DI d;
  const VI ones = hn::Set(d, 0x01010101);
  for (std::size_t g = 0; g < b.groups; ++g) {
    const uint8_t* chunk = b.chunks_of(g);
    VI weights[kRowVectors];
    for (std::size_t v = 0; v < kRowVectors; ++v) weights[v] = hn::Zero(d);
    for (std::size_t c = 0; c < b.chunks; ++c, chunk += kChunkBytes)
      for (std::size_t v = 0; v < kRowVectors; ++v) {
        VI w[2];
        if constexpr (kFourBit)
          UnpackNibbles(chunk, v, w);
        else
          w[0] = hn::LoadU(d, reinterpret_cast<const int32_t*>(chunk) + v * hn::Lanes(d));
        weights[v] = QuadDot<kFourBit>(weights[v], ChunkWeights<kFourBit>(w), ones);
      }
    for (std::size_t v = 0; v < kRowVectors; ++v) hn::StoreU(weights[v], d, sums + g * kBlockRows + v * hn::Lanes(d));
  }
}

// M tokens against one block, out [M][kBlockRows]: each chunk's weight
// vectors unpacked once for the M tokens. The group's correction
// z * sum (w + off) + off * (sum q - z * P) is subtracted after the
// products (all in uint32, wrapping: the same int32 as the scalar order);
// its weight sums come from `sums` (BlockWeights) or, with kSumInLoop
// (one token: no second pass over the bytes), from the products' loop.
template <bool kFourBit, std::size_t M, bool kSumInLoop = false>
void DynamicTile(const BlockView& b, const TokenView* t, const int32_t* sums, float* out) {
  const DI d;
  const DF df;
  const VI ones = hn::Set(d, 0x01010101);
  VF acc[M][kRowVectors];
  VI zero_point[M];
  for (std::size_t m = 0; m < M; ++m) {
    zero_point[m] = hn::Set(d, t[m].zero_point);
    for (std::size_t v = 0; v < kRowVectors; ++v) acc[m][v] = hn::Zero(df);
  }
  for (std::size_t g = 0; g < b.groups; ++g) {
    const uint8_t* chunk = b.chunks_of(g);
    PrefetchRecord(b, chunk);
    VI isum[M][kRowVectors];
    VI weights[kRowVectors];
    for (std::size_t v = 0; v < kRowVectors; ++v) weights[v] = hn::Zero(d);
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t v = 0; v < kRowVectors; ++v) isum[m][v] = hn::Zero(d);
    const std::size_t q0 = g * b.padded_group;
    // chunks >= 1: loops that always run keep the sums in their registers.
    std::size_t c = 0;
    if constexpr (kFourBit && kPairSums) {
      do {
        const std::size_t span_end = std::min(c + kSpanChunks, b.chunks);
        V16 pairs[M][kRowVectors], weight_pairs[kRowVectors];
        for (std::size_t v = 0; v < kRowVectors; ++v) weight_pairs[v] = hn::Zero(D16());
        for (std::size_t m = 0; m < M; ++m)
          for (std::size_t v = 0; v < kRowVectors; ++v) pairs[m][v] = hn::Zero(D16());
        do {
          VI w[kRowVectors][2];
          for (std::size_t v = 0; v < kRowVectors; ++v) {
            UnpackNibbles(chunk, v, w[v]);
            if constexpr (kSumInLoop) weight_pairs[v] = PairDot(weight_pairs[v], ChunkWeights<true>(w[v]), ones);
          }
          for (std::size_t m = 0; m < M; ++m) {
            const int8_t* a = t[m].q + q0 + c * 8;
            const VI a_low = hn::Set(d, quad_of(a)), a_high = hn::Set(d, quad_of(a + 4));
            for (std::size_t v = 0; v < kRowVectors; ++v)
              pairs[m][v] = PairDot(PairDot(pairs[m][v], w[v][0], a_low), w[v][1], a_high);
          }
          chunk += kChunkBytes;
        } while (++c < span_end);
        if constexpr (kSumInLoop)
          for (std::size_t v = 0; v < kRowVectors; ++v) weights[v] = WidenPairs(weights[v], weight_pairs[v]);
        for (std::size_t m = 0; m < M; ++m)
          for (std::size_t v = 0; v < kRowVectors; ++v) isum[m][v] = WidenPairs(isum[m][v], pairs[m][v]);
      } while (c < b.chunks);
    } else {
      do {
        VI w[kRowVectors][2];
        for (std::size_t v = 0; v < kRowVectors; ++v) {
          if constexpr (kFourBit)
            UnpackNibbles(chunk, v, w[v]);
          else
            w[v][0] = hn::LoadU(d, reinterpret_cast<const int32_t*>(chunk) + v * hn::Lanes(d));
          if constexpr (kSumInLoop) weights[v] = QuadDot<kFourBit>(weights[v], ChunkWeights<kFourBit>(w[v]), ones);
        }
        for (std::size_t m = 0; m < M; ++m) {
          const int8_t* a = t[m].q + q0 + c * (kFourBit ? 8 : 4);
          const VI a_low = hn::Set(d, quad_of(a));
          for (std::size_t v = 0; v < kRowVectors; ++v) isum[m][v] = QuadDot<kFourBit>(isum[m][v], w[v][0], a_low);
          if constexpr (kFourBit) {
            const VI a_high = hn::Set(d, quad_of(a + 4));
            for (std::size_t v = 0; v < kRowVectors; ++v) isum[m][v] = QuadDot<true>(isum[m][v], w[v][1], a_high);
          }
        }
        chunk += kChunkBytes;
      } while (++c < b.chunks);
    }
    if constexpr (!kSumInLoop)
      for (std::size_t v = 0; v < kRowVectors; ++v) weights[v] = hn::LoadU(d, sums + g * kBlockRows + v * hn::Lanes(d));
    for (std::size_t m = 0; m < M; ++m) {
      const VI shift = hn::Set(d, wrap(TokenShift(t[m], g, b.padded_group, kFourBit)));
      for (std::size_t v = 0; v < kRowVectors; ++v)
        isum[m][v] = hn::Sub(isum[m][v], hn::Add(shift, hn::Mul(zero_point[m], weights[v])));
    }
    AddGroup<M>(isum, b.scales_of(g), acc);
  }
  FinishTokens<M>(acc, t, b.bias, out);
}

// `count` tokens in tiles of M, then the rest in smaller tiles.
template <bool kFourBit, std::size_t M>
void DynamicTokens(const BlockView& b, const TokenView* t, std::size_t count, const int32_t* sums, float* out) {
  for (; count >= M; count -= M, t += M, out += M * kBlockRows) DynamicTile<kFourBit, M>(b, t, sums, out);
  if constexpr (M > 1)
    if (count > 0) DynamicTokens<kFourBit, M - 1>(b, t, count, sums, out);
}

template <bool kFourBit>
void DynamicTokens(const BlockView& b, const TokenView* t, std::size_t count, int32_t* sums, float* out) {
  if (count == 1) return DynamicTile<kFourBit, 1, true>(b, t, nullptr, out);
  BlockWeights<kFourBit>(b, sums);
  DynamicTokens<kFourBit, kTokenTile>(b, t, count, sums, out);
}
#endif

// out[r] = the documented float chain of output channel r of the block for
// one token (see lowbit_layout.h), the scalar targets' loop.
void ScalarDynamicBlock(const BlockView& b, const TokenView& t, float* out) {
  uint32_t dots[kBlockRows], weights[kBlockRows];
  float acc[kBlockRows] = {};
  for (std::size_t g = 0; g < b.groups; ++g) {
    ScalarGroupDots(b.chunks_of(g), b.chunks, b.four_bit, t.q + g * b.padded_group, dots, weights);
    const uint32_t shift = TokenShift(t, g, b.padded_group, b.four_bit);
    const float* scale = b.scales_of(g);
    for (std::size_t r = 0; r < kBlockRows; ++r) {
      const int32_t sum = wrap(dots[r] - shift - static_cast<uint32_t>(t.zero_point) * weights[r]);
      const float product = static_cast<float>(sum) * scale[r];
      acc[r] = acc[r] + product;
    }
  }
  for (std::size_t r = 0; r < kBlockRows; ++r) {
    float v = acc[r] * t.scale;
    if (b.bias != nullptr) v = v + b.bias[r];
    out[r] = v;
  }
}

// out [count][kBlockRows]: the block's rows for `count` tokens.
void DynamicBlock(const BlockView& b, const TokenView* t, std::size_t count, int32_t* weight_sums, float* out) {
#ifdef ET_OPS_LOWBIT_X86_SIMD
  if (b.four_bit) return DynamicTokens<true>(b, t, count, weight_sums, out);
  return DynamicTokens<false>(b, t, count, weight_sums, out);
#else
  (void)weight_sums;
  for (std::size_t i = 0; i < count; ++i) ScalarDynamicBlock(b, t[i], out + i * kBlockRows);
#endif
}

// ---- the weight-only operators ----

// The weights' bytes with offset 8 (or 128) flipped to two's complement
// fields: (w + 8) ^ 8 is w's 4-bit pattern, (w + 128) ^ 128 its byte.
template <bool kFourBit>
HWY_INLINE VI SignedFields(VI bytes) {
  return hn::Xor(bytes, hn::Set(DI(), kFourBit ? static_cast<int32_t>(0x88888888u) : static_cast<int32_t>(0x80808080u)));
}

// Element `within` (< 8 or 4) of a chunk's lane: its bits sign-extended.
template <bool kFourBit, std::size_t kWithin>
HWY_INLINE VI FieldAt(VI fields) {
  constexpr int kWidth = kFourBit ? 4 : 8;
  constexpr int kBit = kFourBit ? static_cast<int>(8 * (kWithin % 4) + 4 * (kWithin / 4)) : static_cast<int>(8 * kWithin);
  if constexpr (kBit + kWidth == 32) {
    return hn::ShiftRight<32 - kWidth>(fields);
  } else {
    return hn::ShiftRight<32 - kWidth>(hn::ShiftLeft<32 - kWidth - kBit>(fields));
  }
}

HWY_INLINE VI FieldAt(VI fields, bool four_bit, std::size_t within) {
  const int width = four_bit ? 4 : 8;
  const int bit = four_bit ? static_cast<int>(8 * (within % 4) + 4 * (within / 4)) : static_cast<int>(8 * within);
  return hn::ShiftRightSame(hn::ShiftLeftSame(fields, 32 - width - bit), 32 - width);
}

// The block's weights as floats, [K][kBlockRows]: fl32(fl32(w) * scale),
// the reference's dequantize.
void DequantizeBlock(const BlockView& b, std::size_t group_size, float* out) {
  const DF df;
  const DI di;
  const std::size_t lanes = hn::Lanes(di);
  const std::size_t per_chunk = b.four_bit ? 8 : 4;
  for (std::size_t g = 0; g < b.groups; ++g) {
    const uint8_t* chunk = b.chunks_of(g);
    const float* scale = b.scales_of(g);
    for (std::size_t k = 0; k < group_size; ++k) {
      const std::size_t c = k / per_chunk;
      float* row = out + (g * group_size + k) * kBlockRows;
      for (std::size_t r = 0; r < kBlockRows; r += lanes) {
        const VI bytes = hn::LoadU(di, reinterpret_cast<const int32_t*>(chunk + c * kChunkBytes) + r);
        const VI fields = b.four_bit ? SignedFields<true>(bytes) : SignedFields<false>(bytes);
        const VI w = FieldAt(fields, b.four_bit, k % per_chunk);
        hn::StoreU(hn::Mul(hn::ConvertTo(df, w), hn::LoadU(df, scale + r)), df, row + r);
      }
    }
  }
}

// M tokens (x rows `stride` apart) against a dequantized block [K][kBlockRows]:
// out [M][kBlockRows], each lane's chain in k order, M * kRowVectors chains
// interleaved.
template <std::size_t M>
void FloatTile(const float* w, std::size_t in, const float* x, std::size_t stride, const float* bias, float* out) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  VF acc[M][kRowVectors];
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t v = 0; v < kRowVectors; ++v) acc[m][v] = hn::Zero(df);
  for (std::size_t k = 0; k < in; ++k, w += kBlockRows) {
    VF wk[kRowVectors];
    for (std::size_t v = 0; v < kRowVectors; ++v) wk[v] = hn::LoadU(df, w + v * lanes);
    for (std::size_t m = 0; m < M; ++m) {
      const VF xm = hn::Set(df, x[m * stride + k]);
      for (std::size_t v = 0; v < kRowVectors; ++v) acc[m][v] = hn::Add(acc[m][v], hn::Mul(xm, wk[v]));
    }
  }
  FinishTokens<M>(acc, nullptr, bias, out);
}

template <std::size_t M>
void FloatTokens(const float* w, std::size_t in, const float* x, std::size_t count, const float* bias, float* out) {
  for (; count >= M; count -= M, x += M * in, out += M * kBlockRows) FloatTile<M>(w, in, x, in, bias, out);
  if constexpr (M > 1)
    if (count > 0) FloatTokens<M - 1>(w, in, x, count, bias, out);
}

// out [count][kBlockRows] for `count` tokens of x [count][in].
void FloatBlock(const float* w, std::size_t in, const float* x, std::size_t count, const float* bias, float* out) {
  FloatTokens<kFloatTile>(w, in, x, count, bias, out);
}

// One token against B blocks, dequantizing from the packed bytes as it
// goes: out [B][kBlockRows], B * kRowVectors chains interleaved.
template <bool kFourBit, std::size_t B>
struct DecodeTile {
  static constexpr std::size_t kPerChunk = kFourBit ? 8 : 4;
  VF acc[B][kRowVectors];
  VF scale[B][kRowVectors];
  VI fields[B][kRowVectors];

  // One k: acc = fl32(acc + fl32(x * fl32(fl32(w) * scale))).
  HWY_INLINE void Step(std::size_t j, std::size_t v, VI w, VF x) {
    const VF dequantized = hn::Mul(hn::ConvertTo(DF(), w), scale[j][v]);
    acc[j][v] = hn::Add(acc[j][v], hn::Mul(x, dequantized));
  }

  template <std::size_t kWithin>
  HWY_INLINE void Element(float x) {
    const VF xv = hn::Set(DF(), x);
    for (std::size_t j = 0; j < B; ++j)
      for (std::size_t v = 0; v < kRowVectors; ++v) Step(j, v, FieldAt<kFourBit, kWithin>(fields[j][v]), xv);
  }

  template <std::size_t... kWithin>
  HWY_INLINE void Chunk(const float* x, std::index_sequence<kWithin...>) {
    (Element<kWithin>(x[kWithin]), ...);
  }

  // The first `count` elements of a group's last, part-filled chunk.
  HWY_INLINE void Tail(const float* x, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      const VF xv = hn::Set(DF(), x[i]);
      for (std::size_t j = 0; j < B; ++j)
        for (std::size_t v = 0; v < kRowVectors; ++v) Step(j, v, FieldAt(fields[j][v], kFourBit, i), xv);
    }
  }

  HWY_INLINE void LoadChunk(const BlockView* b, std::size_t g, std::size_t c) {
    const DI di;
    for (std::size_t j = 0; j < B; ++j)
      for (std::size_t v = 0; v < kRowVectors; ++v)
        fields[j][v] = SignedFields<kFourBit>(hn::LoadU(
            di, reinterpret_cast<const int32_t*>(b[j].chunks_of(g) + c * kChunkBytes) + v * hn::Lanes(di)));
  }

  void Run(const BlockView* b, std::size_t group_size, const float* x, float* out) {
    const DF df;
    const std::size_t lanes = hn::Lanes(df);
    for (std::size_t j = 0; j < B; ++j)
      for (std::size_t v = 0; v < kRowVectors; ++v) acc[j][v] = hn::Zero(df);
    const std::size_t full = group_size / kPerChunk, rest = group_size % kPerChunk;
    for (std::size_t g = 0; g < b[0].groups; ++g, x += group_size) {
      for (std::size_t j = 0; j < B; ++j) {
        PrefetchRecord(b[j], b[j].chunks_of(g));
        for (std::size_t v = 0; v < kRowVectors; ++v) scale[j][v] = hn::LoadU(df, b[j].scales_of(g) + v * lanes);
      }
      for (std::size_t c = 0; c < full; ++c) {
        LoadChunk(b, g, c);
        Chunk(x + c * kPerChunk, std::make_index_sequence<kPerChunk>());
      }
      if (rest > 0) {
        LoadChunk(b, g, full);
        Tail(x + full * kPerChunk, rest);
      }
    }
    for (std::size_t j = 0; j < B; ++j)
      for (std::size_t v = 0; v < kRowVectors; ++v) {
        VF y = acc[j][v];
        if (b[j].bias != nullptr) y = hn::Add(y, hn::LoadU(df, b[j].bias + v * lanes));
        hn::StoreU(y, df, out + j * kBlockRows + v * lanes);
      }
  }
};

template <bool kFourBit, std::size_t B>
void DecodeBlocks(const BlockView* b, std::size_t count, std::size_t group_size, const float* x, float* out) {
  for (; count >= B; count -= B, b += B, out += B * kBlockRows) DecodeTile<kFourBit, B>().Run(b, group_size, x, out);
  if constexpr (B > 1)
    if (count > 0) DecodeBlocks<kFourBit, B - 1>(b, count, group_size, x, out);
}

// One token x [K] against `count` blocks: out [count][kBlockRows].
void FloatDecode(const BlockView* b, std::size_t count, std::size_t group_size, const float* x, float* out) {
  if (count == 0) return;
  if (b[0].four_bit) return DecodeBlocks<true, kBlockTile>(b, count, group_size, x, out);
  DecodeBlocks<false, kBlockTile>(b, count, group_size, x, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace et_ops::kernels::quantized::lowbit
#include "common/hwy_vnni_end.h"

#if HWY_ONCE
namespace et_ops::kernels::quantized::lowbit {

HWY_EXPORT(DynamicBlock);
HWY_EXPORT(DequantizeBlock);
HWY_EXPORT(FloatBlock);
HWY_EXPORT(FloatDecode);

void dynamic_block(const BlockView& block, const TokenView* tokens, std::size_t count, int32_t* weight_sums,
                   float* out) {
  HWY_DYNAMIC_DISPATCH(DynamicBlock)(block, tokens, count, weight_sums, out);
}

void float_decode(const BlockView* blocks, std::size_t count, std::size_t group_size, const float* x, float* out) {
  HWY_DYNAMIC_DISPATCH(FloatDecode)(blocks, count, group_size, x, out);
}

void dequantize_block(const BlockView& block, std::size_t group_size, float* out) {
  HWY_DYNAMIC_DISPATCH(DequantizeBlock)(block, group_size, out);
}

void float_block(const float* weights, std::size_t in, const float* x, std::size_t count, const float* bias,
                 float* out) {
  HWY_DYNAMIC_DISPATCH(FloatBlock)(weights, in, x, count, bias, out);
}

}  // namespace et_ops::kernels::quantized::lowbit
#endif  // HWY_ONCE
