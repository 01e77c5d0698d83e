// The microkernels of the prepared low-bit linears (see lowbit_layout.h):
// one block of kBlockRows output channels, the SIMD lanes being the block's
// output channels. Compiled once per Highway target and dispatched at run
// time.
//
// 8da*: tiles of up to kTokenTile tokens per block (with VNNI and enough
// tokens, kPairTokenTile tokens against two blocks), each chunk's weights
// loaded and unpacked once for the tile, the integer sums, their
// corrections and the float chain in registers; the zero point enters once
// per row, through the block's scaled weight sums. Integer products: u8
// weights (w + offset) times s8 activations summed in fours per 32-bit
// lane. AVX-512 VNNI: vpdpbusd (no intermediate saturation); other x86
// targets: vpmaddubsw (|15 * 128 * 2| < 2^15: never saturates) for 4-bit
// weights, its pairs summed in int16 over a few chunks then widened by
// vpmaddwd; the bytes split into int16 halves + vpmaddwd for 8-bit
// weights; the scalar and emulated targets loop. All exact, so every target
// gives the same int32 sums.
//
// Weight-only: with many tokens, a block's weights converted to floats
// once, then tiles of kFloatTile tokens (independent add chains
// interleaved); with one or two tokens, a few blocks at a time, the weights
// read from their bytes as the chains go (on AVX-512, a 4-bit weight's product
// is looked up in a table of the 16 products of x). Each group's products
// are summed, then scaled into the output's chain: one multiply per group,
// not per weight.
//
// The float steps are lane-wise Mul and Add (no fused multiply-add), in
// the documented order per output: the same bytes everywhere.
#define HWY_TARGET_INCLUDE "lowbit_block_simd.cpp"
#define HWY_WANT_AVX3_DL  // the AVX-512 VNNI target (vpdpbusd)
#include "common/hwy_per_target.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

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

// off * sum q over the group (lowbit_layout.h), wrapping in uint32: what
// the products of the stored bytes w + off hold beyond P_g.
inline uint32_t TokenShift(const TokenView& t, std::size_t group) { return static_cast<uint32_t>(t.shifts[group]); }

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
// Blocks interleaved by the weight-only decode (independent chains), for
// 4-bit and 8-bit weights. A block is one stream of bytes: several at once
// run faster in cache but streamed 4-bit layers slower from memory; 8-bit
// ones, with twice the instructions per byte, gain from the chains
// (measured in et-ops generate: B = 1, 2, 3, 6). 4-bit layers sum groups
// two at a time instead, chains of one stream (lowbit_bench: G = 1 to 4;
// 3 and 4 no faster on AVX-512, slower on AVX2, whose registers they fill).
[[maybe_unused]] constexpr std::size_t kBlockTile4 = 1;
[[maybe_unused]] constexpr std::size_t kBlockTile8 = 3;
[[maybe_unused]] constexpr std::size_t kGroupTile4 = 2;

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

// out[m][r] = fl32(fl32(acc - fl32(fl32(z) * C)) * token scale) (8da*:
// t not null; C the block's scaled weight sums), then fl32(+ bias).
template <std::size_t M>
HWY_INLINE void FinishTokens(const VF (&acc)[M][kRowVectors], const TokenView* t, const BlockView& b,
                             const float* bias, float* out, std::size_t stride) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t v = 0; v < kRowVectors; ++v) {
      VF y = acc[m][v];
      if (t != nullptr) {
        const VF zero_point_term =
            hn::Mul(hn::Set(df, static_cast<float>(t[m].zero_point)), hn::LoadU(df, b.scaled_sums + v * lanes));
        y = hn::Mul(hn::Sub(y, zero_point_term), hn::Set(df, t[m].scale));
      }
      if (bias != nullptr) y = hn::Add(y, hn::LoadU(df, bias + v * lanes));
      hn::StoreU(y, df, out + m * stride + v * lanes);
    }
}

// Asks for the cache line kPrefetchBytes past `line` (it may lie past the
// layer: a prefetch never faults). The kernels ask once per line they
// read, as they read it: a chunk is one line, a group's scales one more.
static_assert(kChunkBytes == 64, "a chunk is one cache line");
HWY_INLINE void PrefetchAhead(const void* line) { hwy::Prefetch(static_cast<const uint8_t*>(line) + kPrefetchBytes); }

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
// kSpanChunks chunks (8 products of pairs: |.| <= 30720, no wrap) before one
// vpmaddwd widens them: a third of the instructions of widening every pair.
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

// isum[m][v] += the products of the group's chunks [c, span end) with the
// tile's tokens, summed in int16 pairs first (4-bit weights without VNNI).
template <std::size_t M>
HWY_INLINE void PairSpan(const uint8_t*& chunk, std::size_t& c, std::size_t chunks, const TokenView* t,
                         std::size_t q0, VI (&isum)[M][kRowVectors]) {
  const DI d;
  const std::size_t span_end = std::min(c + kSpanChunks, chunks);
  V16 pairs[M][kRowVectors];
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t v = 0; v < kRowVectors; ++v) pairs[m][v] = hn::Zero(D16());
  do {
    PrefetchAhead(chunk);
    VI w[kRowVectors][2];
    for (std::size_t v = 0; v < kRowVectors; ++v) UnpackNibbles(chunk, v, w[v]);
    for (std::size_t m = 0; m < M; ++m) {
      const int8_t* a = t[m].q + q0 + c * 8;
      const VI a_low = hn::Set(d, quad_of(a)), a_high = hn::Set(d, quad_of(a + 4));
      for (std::size_t v = 0; v < kRowVectors; ++v)
        pairs[m][v] = PairDot(PairDot(pairs[m][v], w[v][0], a_low), w[v][1], a_high);
    }
    chunk += kChunkBytes;
  } while (++c < span_end);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t v = 0; v < kRowVectors; ++v) isum[m][v] = WidenPairs(isum[m][v], pairs[m][v]);
}

// isum[i][m][v] += the products of all the group's chunks of blocks i < NB,
// four per 32-bit lane at a time (QuadDot): each token's activations are
// broadcast once for the NB blocks.
template <bool kFourBit, std::size_t NB, std::size_t M>
HWY_INLINE void QuadChunks(std::array<const uint8_t*, NB> chunk, std::size_t chunks, const TokenView* t,
                           std::size_t q0, VI (&isum)[NB][M][kRowVectors]) {
  const DI d;
  std::size_t c = 0;
  do {
    VI w[NB][kRowVectors][2];
    for (std::size_t i = 0; i < NB; ++i) {
      PrefetchAhead(chunk[i]);
      for (std::size_t v = 0; v < kRowVectors; ++v) {
        if constexpr (kFourBit)
          UnpackNibbles(chunk[i], v, w[i][v]);
        else
          w[i][v][0] = hn::LoadU(d, reinterpret_cast<const int32_t*>(chunk[i]) + v * hn::Lanes(d));
      }
      chunk[i] += kChunkBytes;
    }
    for (std::size_t m = 0; m < M; ++m) {
      const int8_t* a = t[m].q + q0 + c * (kFourBit ? 8 : 4);
      const VI a_low = hn::Set(d, quad_of(a));
      for (std::size_t i = 0; i < NB; ++i)
        for (std::size_t v = 0; v < kRowVectors; ++v)
          isum[i][m][v] = QuadDot<kFourBit>(isum[i][m][v], w[i][v][0], a_low);
      if constexpr (kFourBit) {
        const VI a_high = hn::Set(d, quad_of(a + 4));
        for (std::size_t i = 0; i < NB; ++i)
          for (std::size_t v = 0; v < kRowVectors; ++v)
            isum[i][m][v] = QuadDot<true>(isum[i][m][v], w[i][v][1], a_high);
      }
    }
  } while (++c < chunks);
}

// M tokens against NB blocks (of the same layer: the same groups), each
// chunk's weights loaded and unpacked once for the tile; per group, the
// products of the stored bytes less the token's shift off * sum q (uint32,
// wrapping: the exact P_g) go into the float chain; the zero point's term
// comes last (FinishTokens). Block i's outputs are at out + i * block_stride.
template <bool kFourBit, std::size_t NB, std::size_t M>
void DynamicTile(const BlockView* b, const TokenView* t, float* out, std::size_t block_stride, std::size_t stride) {
  const DI d;
  const DF df;
  VF acc[NB][M][kRowVectors];
  for (std::size_t i = 0; i < NB; ++i)
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t v = 0; v < kRowVectors; ++v) acc[i][m][v] = hn::Zero(df);
  for (std::size_t g = 0; g < b[0].groups; ++g) {
    std::array<const uint8_t*, NB> chunk;
    for (std::size_t i = 0; i < NB; ++i) {
      chunk[i] = b[i].chunks_of(g);
      PrefetchAhead(b[i].scales_of(g));
    }
    VI isum[NB][M][kRowVectors];
    for (std::size_t i = 0; i < NB; ++i)
      for (std::size_t m = 0; m < M; ++m)
        for (std::size_t v = 0; v < kRowVectors; ++v) isum[i][m][v] = hn::Zero(d);
    const std::size_t q0 = g * b[0].padded_group;
    if constexpr (kFourBit && kPairSums) {
      static_assert(NB == 1, "pair sums take one block at a time");
      std::size_t c = 0;
      do PairSpan<M>(chunk[0], c, b[0].chunks, t, q0, isum[0]);
      while (c < b[0].chunks);
    } else {
      if (M > 1 && b[0].chunks == 4)  // groups of 32 (4-bit) or 16 (8-bit): a loop the compiler unrolls
        QuadChunks<kFourBit, NB, M>(chunk, 4, t, q0, isum);
      else
        QuadChunks<kFourBit, NB, M>(chunk, b[0].chunks, t, q0, isum);
    }
    for (std::size_t m = 0; m < M; ++m) {
      const VI shift = hn::Set(d, t[m].shifts[g]);
      for (std::size_t i = 0; i < NB; ++i)
        for (std::size_t v = 0; v < kRowVectors; ++v) isum[i][m][v] = hn::Sub(isum[i][m][v], shift);
    }
    for (std::size_t i = 0; i < NB; ++i) AddGroup<M>(isum[i], b[i].scales_of(g), acc[i]);
  }
  for (std::size_t i = 0; i < NB; ++i) FinishTokens<M>(acc[i], t, b[i], b[i].bias, out + i * block_stride, stride);
}

// `count` tokens in tiles of M, then the rest in smaller tiles.
template <bool kFourBit, std::size_t NB, std::size_t M>
void DynamicTokens(const BlockView* b, const TokenView* t, std::size_t count, float* out, std::size_t block_stride,
                   std::size_t stride) {
  for (; count >= M; count -= M, t += M, out += M * stride) DynamicTile<kFourBit, NB, M>(b, t, out, block_stride, stride);
  if constexpr (M > 1)
    if (count > 0) DynamicTokens<kFourBit, NB, M - 1>(b, t, count, out, block_stride, stride);
}

// Blocks per tile of the 8da* kernel and the tokens of such a tile: with
// VNNI, two blocks share each token's broadcast activations (the integer
// sums and float chains of 6 tokens x 2 blocks fill 24 of the 32
// registers: a prompt's products 1.2x as fast as one block's tiles of 8,
// lowbit_bench); elsewhere one block. Fewer tokens than a tile (decode)
// take one block at a time: one stream of bytes from memory is faster.
#if HWY_TARGET == HWY_AVX3_DL
constexpr std::size_t kDynamicBlockTile = 2;
constexpr std::size_t kPairTokenTile = 6;
#else
constexpr std::size_t kDynamicBlockTile = 1;
constexpr std::size_t kPairTokenTile = kTokenTile;
#endif

template <bool kFourBit>
void DynamicBlocksOf(const BlockView* b, std::size_t blocks, const TokenView* t, std::size_t count, float* out,
                     std::size_t block_stride, std::size_t stride) {
  std::size_t i = 0;
  if constexpr (kDynamicBlockTile == 2)
    for (; i + 2 <= blocks && count >= kPairTokenTile; i += 2)
      DynamicTokens<kFourBit, 2, kPairTokenTile>(b + i, t, count, out + i * block_stride, block_stride, stride);
  for (; i < blocks; ++i) DynamicTokens<kFourBit, 1, kTokenTile>(b + i, t, count, out + i * block_stride, block_stride, stride);
}
#endif

// out[r] = the documented float chain of output channel r of the block for
// one token (see lowbit_layout.h), the scalar targets' loop.
void ScalarDynamicBlock(const BlockView& b, const TokenView& t, float* out) {
  uint32_t dots[kBlockRows];
  float acc[kBlockRows] = {};
  for (std::size_t g = 0; g < b.groups; ++g) {
    ScalarGroupDots(b.chunks_of(g), b.chunks, b.four_bit, t.q + g * b.padded_group, dots);
    const uint32_t shift = TokenShift(t, g);
    const float* scale = b.scales_of(g);
    for (std::size_t r = 0; r < kBlockRows; ++r) {
      const float product = static_cast<float>(wrap(dots[r] - shift)) * scale[r];
      acc[r] = acc[r] + product;
    }
  }
  for (std::size_t r = 0; r < kBlockRows; ++r) {
    const float zero_point_term = static_cast<float>(t.zero_point) * b.scaled_sums[r];
    float v = (acc[r] - zero_point_term) * t.scale;
    if (b.bias != nullptr) v = v + b.bias[r];
    out[r] = v;
  }
}

// The rows of `blocks` blocks for `count` tokens: token i's outputs of
// block j at out + j * block_stride + i * stride.
void DynamicBlocks(const BlockView* b, std::size_t blocks, const TokenView* t, std::size_t count, float* out,
                   std::size_t block_stride, std::size_t stride) {
#ifdef ET_OPS_LOWBIT_X86_SIMD
  if (b[0].four_bit) return DynamicBlocksOf<true>(b, blocks, t, count, out, block_stride, stride);
  DynamicBlocksOf<false>(b, blocks, t, count, out, block_stride, stride);
#else
  for (std::size_t j = 0; j < blocks; ++j)
    for (std::size_t i = 0; i < count; ++i) ScalarDynamicBlock(b[j], t[i], out + j * block_stride + i * stride);
#endif
}

// ---- the weight-only operators ----

// The weights' bytes with offset 8 (or 128) flipped to two's complement
// fields: (w + 8) ^ 8 is w's 4-bit pattern, (w + 128) ^ 128 its byte.
template <bool kFourBit>
HWY_INLINE VI SignedFields(VI bytes) {
  return hn::Xor(bytes, hn::Set(DI(), kFourBit ? static_cast<int32_t>(0x88888888u) : static_cast<int32_t>(0x80808080u)));
}

// The bit at which element `within` (< 8 or 4) of a chunk's lane starts.
constexpr int FieldBit(bool four_bit, std::size_t within) {
  return four_bit ? static_cast<int>(8 * (within % 4) + 4 * (within / 4)) : static_cast<int>(8 * within);
}

// Element `within` of a chunk's lane of signed fields, sign-extended.
HWY_INLINE VI FieldAt(VI fields, bool four_bit, std::size_t within) {
  const int width = four_bit ? 4 : 8;
  return hn::ShiftRightSame(hn::ShiftLeftSame(fields, 32 - width - FieldBit(four_bit, within)), 32 - width);
}

// The block's weights as floats, [K][kBlockRows], unscaled: fl32(w).
void IntegerWeights(const BlockView& b, std::size_t group_size, float* out) {
  const DF df;
  const DI di;
  const std::size_t lanes = hn::Lanes(di);
  const std::size_t per_chunk = b.four_bit ? 8 : 4;
  for (std::size_t g = 0; g < b.groups; ++g) {
    const uint8_t* chunk = b.chunks_of(g);
    for (std::size_t k = 0; k < group_size; ++k) {
      const std::size_t c = k / per_chunk;
      float* row = out + (g * group_size + k) * kBlockRows;
      for (std::size_t r = 0; r < kBlockRows; r += lanes) {
        const VI bytes = hn::LoadU(di, reinterpret_cast<const int32_t*>(chunk + c * kChunkBytes) + r);
        const VI fields = b.four_bit ? SignedFields<true>(bytes) : SignedFields<false>(bytes);
        hn::StoreU(hn::ConvertTo(df, FieldAt(fields, b.four_bit, k % per_chunk)), df, row + r);
      }
    }
  }
}

// sum[m][v] += fl32(x[m * stride] * w[v lanes]): one element of M tokens.
template <std::size_t M>
HWY_INLINE void FloatStep(const float* w, const float* x, std::size_t stride, VF (&sum)[M][kRowVectors]) {
  const DF df;
  VF wk[kRowVectors];
  for (std::size_t v = 0; v < kRowVectors; ++v) wk[v] = hn::LoadU(df, w + v * hn::Lanes(df));
  for (std::size_t m = 0; m < M; ++m) {
    const VF xm = hn::Set(df, x[m * stride]);
    for (std::size_t v = 0; v < kRowVectors; ++v) sum[m][v] = hn::Add(sum[m][v], hn::Mul(xm, wk[v]));
  }
}

// M tokens (x rows `stride` apart) against the block's integer weights
// w [K][kBlockRows]: out [M][kBlockRows]. Per group, M * kRowVectors
// chains interleaved, then scaled into the output's chains, which wait in
// `out` between groups (the group's chains have the registers).
template <std::size_t M>
void FloatTile(const BlockView& b, const float* w, std::size_t group_size, const float* x, std::size_t stride,
               const float* bias, float* out, std::size_t out_stride) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t r = 0; r < kBlockRows; r += lanes) hn::StoreU(hn::Zero(df), df, out + m * out_stride + r);
  for (std::size_t g = 0; g < b.groups; ++g) {
    VF sum[M][kRowVectors];
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t v = 0; v < kRowVectors; ++v) sum[m][v] = hn::Zero(df);
    const float* xg = x + g * group_size;
#pragma GCC unroll 8
    for (std::size_t i = 0; i < group_size; ++i) FloatStep<M>(w + i * kBlockRows, xg + i, stride, sum);
    w += group_size * kBlockRows;
    for (std::size_t v = 0; v < kRowVectors; ++v) {
      const VF scale = hn::LoadU(df, b.scales_of(g) + v * lanes);
      for (std::size_t m = 0; m < M; ++m) {
        float* acc = out + m * out_stride + v * lanes;
        hn::StoreU(hn::Add(hn::LoadU(df, acc), hn::Mul(sum[m][v], scale)), df, acc);
      }
    }
  }
  if (bias == nullptr) return;
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t r = 0; r < kBlockRows; r += lanes) {
      float* y = out + m * out_stride + r;
      hn::StoreU(hn::Add(hn::LoadU(df, y), hn::LoadU(df, bias + r)), df, y);
    }
}

template <std::size_t M>
void FloatTokens(const BlockView& b, const float* w, std::size_t group_size, const float* x, std::size_t count,
                 const float* bias, float* out, std::size_t out_stride) {
  const std::size_t in = b.groups * group_size;
  for (; count >= M; count -= M, x += M * in, out += M * out_stride)
    FloatTile<M>(b, w, group_size, x, in, bias, out, out_stride);
  if constexpr (M > 1)
    if (count > 0) FloatTokens<M - 1>(b, w, group_size, x, count, bias, out, out_stride);
}

// Token i's kBlockRows outputs at out + i * stride, for `count` tokens of
// x [count][K].
void FloatBlock(const BlockView& b, const float* weights, std::size_t group_size, const float* x, std::size_t count,
                const float* bias, float* out, std::size_t stride) {
  FloatTokens<kFloatTile>(b, weights, group_size, x, count, bias, out, stride);
}

// How the weight-only decode forms a product fl32(x * fl32(w)) from a
// chunk's bytes; all three give the same bits.
// - kTable (AVX-512, 4-bit weights): AVX-512 has a 16-entry float table
//   lookup by the low 4 bits of each lane (vpermps): the product is entry
//   w + 8 of the table fl32(x * (j - 8)), j < 16, one multiply per element
//   for a block's 16 rows. (The zero-masking form of the intrinsic: GCC 12
//   warns that the plain one's undefined pass-through operand may be used
//   uninitialised.)
// - kMasked: the field at bit p of a lane, masked in place less the
//   offset's field, is the integer w * 2^p, exact in int32 and in float32;
//   times x * 2^-p (the activations scaled once per call) it is the real
//   x * w, so it rounds to the same float. An and and an integer subtract
//   instead of two shifts: x86 vector shifts issue once a cycle, and they,
//   not the float adds, bounded the shifted form. Exact while x * 2^-p is:
//   for |x| >= 2^-98 (and 0, infinities, NaN), which a call checks first.
// - kShifted: the field shifted to the lane's top and back, sign-extended:
//   the calls whose activations have a magnitude below 2^-98.
enum class Products { kTable, kMasked, kShifted };

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define ET_OPS_LOWBIT_PRODUCT_TABLE 1
#else
#undef ET_OPS_LOWBIT_PRODUCT_TABLE
#endif

// The least magnitude of a nonzero activation that kMasked scales exactly:
// times 2^-28 (the top field's bit), still a normal float.
constexpr float kLeastScaled = 0x1p-98f;
static_assert(kLeastScaled * 0x1p-28f >= 0x1p-126f, "scaled activations stay normal");

// xs [K]: x[k] * 2^-p, p the bit of k's field in its chunk (k counted from
// its group's start); false (xs unfinished) when some x cannot be scaled
// exactly.
constexpr float kFieldScale[8] = {1.0f, 0x1p-4f, 0x1p-8f, 0x1p-12f, 0x1p-16f, 0x1p-20f, 0x1p-24f, 0x1p-28f};
bool ScaleActivations(const float* x, std::size_t groups, std::size_t group_size, bool four_bit, float* xs) {
  const std::size_t per_chunk = four_bit ? 8 : 4;
  for (std::size_t k = 0, g = 0; g < groups; ++g)
    for (std::size_t i = 0; i < group_size; ++i, ++k) {
      const float magnitude = std::fabs(x[k]);
      if (magnitude < kLeastScaled && magnitude != 0.0f) return false;
      xs[k] = x[k] * kFieldScale[FieldBit(four_bit, i % per_chunk) / 4];
    }
  return true;
}

// Per element e of a chunk, a vector of its field's mask and one of its
// offset's field ((w + off) at bit p, less off << p: w << p).
template <bool kFourBit>
const uint32_t* MaskTable() {
  constexpr std::size_t kElements = kFourBit ? 8 : 4, kLanes = HWY_LANES(uint32_t);
  alignas(HWY_ALIGNMENT) static const auto table = [] {
    std::array<uint32_t, 2 * kElements * kLanes> t{};
    for (std::size_t e = 0; e < kElements; ++e)
      for (std::size_t l = 0; l < kLanes; ++l) {
        t[2 * e * kLanes + l] = (kFourBit ? 0xFu : 0xFFu) << FieldBit(kFourBit, e);
        t[(2 * e + 1) * kLanes + l] = (kFourBit ? 8u : 128u) << FieldBit(kFourBit, e);
      }
    return t;
  }();
  return table.data();
}

// One token against B blocks, reading the weights from the packed bytes
// as it goes: out [B][kBlockRows]. G consecutive groups of each block are
// summed at once: their sums are independent chains (G * B * kRowVectors
// of them, as many as the add's latency asks for), scaled into each row's
// chain in ascending group order afterwards, while the bytes are still read
// in the order they lie. The chains live in local arrays (held in
// registers: members would be stored back at every step, since a float
// load of x might read them).
template <bool kFourBit, std::size_t B, Products kForm>
struct DecodeTile {
  static constexpr std::size_t kPerChunk = kFourBit ? 8 : 4;
  using Acc = VF[B][kRowVectors];
  template <std::size_t G>
  using Sums = VF[G][B][kRowVectors];
  template <std::size_t G>
  using Fields = VI[G][B][kRowVectors];  // a chunk's bytes: as stored, or signed fields (kShifted)

  // fl32(w) * 2^p for kMasked (p = bit), fl32(w) for kShifted.
  static HWY_INLINE VF Weight(VI fields, int bit) {
    const DF df;
    const hn::RebindToUnsigned<DI> du;
    if constexpr (kForm == Products::kMasked) {
      const uint32_t mask = (kFourBit ? 0xFu : 0xFFu) << bit, offset = (kFourBit ? 8u : 128u) << bit;
      const auto field = hn::Sub(hn::And(hn::BitCast(du, fields), hn::Set(du, mask)), hn::Set(du, offset));
      return hn::ConvertTo(df, hn::BitCast(DI(), field));
    } else {
      const int width = kFourBit ? 4 : 8;
      return hn::ConvertTo(df, hn::ShiftRightSame(hn::ShiftLeftSame(fields, 32 - width - bit), 32 - width));
    }
  }

  // Element kWithin of a chunk of each of the G groups (xs[i]: group i's).
  template <std::size_t kWithin, std::size_t G>
  static HWY_INLINE void Element(const float (&xs)[G][kPerChunk], const Fields<G>& fields, Sums<G>& sum) {
    const DF df;
    constexpr int kBit = FieldBit(kFourBit, kWithin);
    for (std::size_t i = 0; i < G; ++i) {
      const VF xv = hn::Set(df, xs[i][kWithin]);
#ifdef ET_OPS_LOWBIT_PRODUCT_TABLE
      if constexpr (kForm == Products::kTable) {
        const VF table = hn::Mul(xv, hn::Sub(hn::Iota(df, 0.0f), hn::Set(df, 8.0f)));
        for (std::size_t j = 0; j < B; ++j)
          for (std::size_t v = 0; v < kRowVectors; ++v) {
            const VI index = hn::ShiftRight<kBit>(fields[i][j][v]);
            sum[i][j][v] = hn::Add(sum[i][j][v], VF{_mm512_maskz_permutexvar_ps(0xFFFF, index.raw, table.raw)});
          }
        continue;
      }
#endif
      for (std::size_t j = 0; j < B; ++j)
        for (std::size_t v = 0; v < kRowVectors; ++v)
          sum[i][j][v] = hn::Add(sum[i][j][v], hn::Mul(xv, Weight(fields[i][j][v], kBit)));
    }
  }

  // One whole chunk of each group; x at the chunk's first element of the
  // first group.
  template <std::size_t G, std::size_t... kWithin>
  static HWY_INLINE void Chunk(const float* x, std::size_t group_size, const Fields<G>& fields, Sums<G>& sum,
                               std::index_sequence<kWithin...>) {
    if constexpr (kForm == Products::kMasked) {
      // A loop over the chunk's elements reading each one's mask and
      // offset from a table: unrolled with constants, GCC computes every
      // element's weights ahead of their products and spills them.
      const DF df;
      const hn::RebindToUnsigned<DI> du;
      const std::size_t lanes = hn::Lanes(du);
      const uint32_t* masks = MaskTable<kFourBit>();
#pragma GCC unroll 1
      for (std::size_t e = 0; e < kPerChunk; ++e) {
        const auto mask = hn::Load(du, masks + 2 * e * lanes);
        const auto offset = hn::Load(du, masks + (2 * e + 1) * lanes);
        for (std::size_t i = 0; i < G; ++i) {
          const VF xv = hn::Set(df, x[i * group_size + e]);
          for (std::size_t j = 0; j < B; ++j)
            for (std::size_t v = 0; v < kRowVectors; ++v) {
              const auto field = hn::Sub(hn::And(hn::BitCast(du, fields[i][j][v]), mask), offset);
              sum[i][j][v] = hn::Add(sum[i][j][v], hn::Mul(xv, hn::ConvertTo(df, hn::BitCast(DI(), field))));
            }
        }
      }
    } else {
      float xs[G][kPerChunk];
      for (std::size_t i = 0; i < G; ++i) std::memcpy(xs[i], x + i * group_size, sizeof xs[i]);
      (Element<kWithin>(xs, fields, sum), ...);
    }
  }

  // The first `count` elements of each group's last, part-filled chunk
  // (the table's bytes taken as signed fields).
  template <std::size_t G>
  static HWY_INLINE void Tail(const float* x, std::size_t group_size, std::size_t count, const Fields<G>& fields,
                              Sums<G>& sum) {
    const DF df;
    using Shifted = DecodeTile<kFourBit, B, Products::kShifted>;
    for (std::size_t e = 0; e < count; ++e)
      for (std::size_t i = 0; i < G; ++i) {
        const VF xv = hn::Set(df, x[i * group_size + e]);
        const int bit = FieldBit(kFourBit, e);
        for (std::size_t j = 0; j < B; ++j)
          for (std::size_t v = 0; v < kRowVectors; ++v) {
            const VF w = kForm == Products::kTable ? Shifted::Weight(SignedFields<kFourBit>(fields[i][j][v]), bit)
                                                   : Weight(fields[i][j][v], bit);
            sum[i][j][v] = hn::Add(sum[i][j][v], hn::Mul(xv, w));
          }
      }
  }

  template <std::size_t G>
  static HWY_INLINE void LoadChunk(const BlockView* b, std::size_t g, std::size_t c, Fields<G>& fields) {
    const DI di;
    for (std::size_t i = 0; i < G; ++i)
      for (std::size_t j = 0; j < B; ++j) {
        const uint8_t* chunk = b[j].chunks_of(g + i) + c * kChunkBytes;
        PrefetchAhead(chunk);
        for (std::size_t v = 0; v < kRowVectors; ++v) {
          const VI bytes = hn::LoadU(di, reinterpret_cast<const int32_t*>(chunk) + v * hn::Lanes(di));
          fields[i][j][v] = kForm == Products::kShifted ? SignedFields<kFourBit>(bytes) : bytes;
        }
      }
  }

  // Groups g to g + G - 1 into the rows' chains; x at group g's first
  // element.
  template <std::size_t G>
  static HWY_INLINE void Groups(const BlockView* b, std::size_t g, std::size_t group_size, const float* x, Acc& acc) {
    const DF df;
    const std::size_t lanes = hn::Lanes(df);
    Sums<G> sum;
    Fields<G> fields;
    for (std::size_t i = 0; i < G; ++i)
      for (std::size_t j = 0; j < B; ++j) {
        PrefetchAhead(b[j].scales_of(g + i));
        for (std::size_t v = 0; v < kRowVectors; ++v) sum[i][j][v] = hn::Zero(df);
      }
    const std::size_t full = group_size / kPerChunk, rest = group_size % kPerChunk;
    for (std::size_t c = 0; c < full; ++c) {
      LoadChunk<G>(b, g, c, fields);
      Chunk<G>(x + c * kPerChunk, group_size, fields, sum, std::make_index_sequence<kPerChunk>());
    }
    if (rest > 0) {
      LoadChunk<G>(b, g, full, fields);
      Tail<G>(x + full * kPerChunk, group_size, rest, fields, sum);
    }
    for (std::size_t i = 0; i < G; ++i)
      for (std::size_t j = 0; j < B; ++j)
        for (std::size_t v = 0; v < kRowVectors; ++v)
          acc[j][v] = hn::Add(acc[j][v], hn::Mul(sum[i][j][v], hn::LoadU(df, b[j].scales_of(g + i) + v * lanes)));
  }

  template <std::size_t G>
  static void Run(const BlockView* b, std::size_t group_size, const float* x, float* out) {
    const DF df;
    const std::size_t lanes = hn::Lanes(df);
    Acc acc;
    for (std::size_t j = 0; j < B; ++j)
      for (std::size_t v = 0; v < kRowVectors; ++v) acc[j][v] = hn::Zero(df);
    const std::size_t groups = b[0].groups;
    std::size_t g = 0;
    for (; g + G <= groups; g += G) Groups<G>(b, g, group_size, x + g * group_size, acc);
    for (; g < groups; ++g) Groups<1>(b, g, group_size, x + g * group_size, acc);
    for (std::size_t j = 0; j < B; ++j)
      for (std::size_t v = 0; v < kRowVectors; ++v) {
        VF y = acc[j][v];
        if (b[j].bias != nullptr) y = hn::Add(y, hn::LoadU(df, b[j].bias + v * lanes));
        hn::StoreU(y, df, out + j * kBlockRows + v * lanes);
      }
  }
};

template <bool kFourBit, Products kForm, std::size_t B, std::size_t G>
void DecodeBlocks(const BlockView* b, std::size_t count, std::size_t group_size, const float* x, float* out) {
  for (; count >= B; count -= B, b += B, out += B * kBlockRows)
    DecodeTile<kFourBit, B, kForm>::template Run<G>(b, group_size, x, out);
  if constexpr (B > 1)
    if (count > 0) DecodeBlocks<kFourBit, kForm, B - 1, G>(b, count, group_size, x, out);
}

template <bool kFourBit, std::size_t B, std::size_t G>
void DecodeIn(Products form, const BlockView* b, std::size_t count, std::size_t group_size, const float* x,
              float* out) {
  switch (form) {
#ifdef ET_OPS_LOWBIT_PRODUCT_TABLE
    case Products::kTable:
      if constexpr (kFourBit) return DecodeBlocks<kFourBit, Products::kTable, B, G>(b, count, group_size, x, out);
      break;
#endif
    case Products::kMasked:
      return DecodeBlocks<kFourBit, Products::kMasked, B, G>(b, count, group_size, x, out);
    default:
      break;
  }
  DecodeBlocks<kFourBit, Products::kShifted, B, G>(b, count, group_size, x, out);
}

// One token x [K] against `count` blocks: out [count][kBlockRows].
void FloatDecode(const BlockView* b, std::size_t count, std::size_t group_size, const float* x, float* out) {
  if (count == 0) return;
  const bool four_bit = b[0].four_bit;
  Products form = Products::kShifted;
#ifdef ET_OPS_LOWBIT_PRODUCT_TABLE
  if (four_bit) form = Products::kTable;
#endif
  // The calling thread's scaled activations, kept from call to call.
  thread_local std::vector<float> scaled;
  if (form != Products::kTable) {
    scaled.resize(b[0].groups * group_size);
    if (ScaleActivations(x, b[0].groups, group_size, four_bit, scaled.data())) {
      form = Products::kMasked;
      x = scaled.data();
    }
  }
  if (four_bit) return DecodeIn<true, kBlockTile4, kGroupTile4>(form, b, count, group_size, x, out);
  DecodeIn<false, kBlockTile8, 1>(form, b, count, group_size, x, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace et_ops::kernels::quantized::lowbit
#include "common/hwy_vnni_end.h"

#if HWY_ONCE
namespace et_ops::kernels::quantized::lowbit {

HWY_EXPORT(DynamicBlocks);
HWY_EXPORT(IntegerWeights);
HWY_EXPORT(FloatBlock);
HWY_EXPORT(FloatDecode);

void dynamic_blocks(const BlockView* blocks, std::size_t block_count, const TokenView* tokens, std::size_t count,
                    float* out, std::size_t block_stride, std::size_t stride) {
  HWY_DYNAMIC_DISPATCH(DynamicBlocks)(blocks, block_count, tokens, count, out, block_stride, stride);
}

void float_decode(const BlockView* blocks, std::size_t count, std::size_t group_size, const float* x, float* out) {
  HWY_DYNAMIC_DISPATCH(FloatDecode)(blocks, count, group_size, x, out);
}

void integer_weights(const BlockView& block, std::size_t group_size, float* out) {
  HWY_DYNAMIC_DISPATCH(IntegerWeights)(block, group_size, out);
}

void float_block(const BlockView& block, const float* weights, std::size_t group_size, const float* x,
                 std::size_t count, const float* bias, float* out, std::size_t stride) {
  HWY_DYNAMIC_DISPATCH(FloatBlock)(block, weights, group_size, x, count, bias, out, stride);
}

}  // namespace et_ops::kernels::quantized::lowbit
#endif  // HWY_ONCE
