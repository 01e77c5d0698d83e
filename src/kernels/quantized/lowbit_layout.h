// The load-time layout of the low-bit linears' weights (prepared kernels):
// output channels in blocks of kBlockRows, so that a SIMD lane is an output
// channel and a block's bytes stream in the order the microkernel reads
// them.
//
// Per block, per group g (its group_size elements padded with zero weights
// to padded_group, a multiple of 8 for int4 and 4 for int8), chunks of
// kChunkBytes bytes; byte 4 * r + e of chunk c of block row r holds
//   int4: w[k0 + e] + 8 in its low nibble, w[k0 + 4 + e] + 8 in its high
//         one (k0 = 8c within the group): the two quads of a byte's lanes;
//   int8: w[k0 + e] + 128 (k0 = 4c): an unsigned byte.
// After a group's chunks, its rows' float32 scales: one record per group,
// so that a block, and a layer, is one stream of bytes in the order the
// kernels read it, and no more bytes than the program's (a decode step is
// bound by the bytes it reads). Rows past N are zero weights.
//
// For an int8 token q with zero point z (activations padded with zeros
// like the weights), the exact integer product of group g is
//   P_g = sum q * w = sum q * (w + off) - off * sum q,
// off = 8 or 128: u8 x s8 products, what vpdpbusd / vpmaddubsw multiply.
// The zero point's term, z * sum over g of the scaled weight sums
// fl32(W_g * scale_g) (W_g = sum of the row's weights over g), does not
// depend on the token but through z: each block keeps those sums per row
// (`scaled_sums`), made when the layout is, so the kernels never add up
// weights.
#ifndef ET_OPS_SRC_KERNELS_QUANTIZED_LOWBIT_LAYOUT_H
#define ET_OPS_SRC_KERNELS_QUANTIZED_LOWBIT_LAYOUT_H

#include <cstddef>
#include <cstdint>

#include <hwy/aligned_allocator.h>

namespace et_ops::kernels::quantized::lowbit {

inline constexpr std::size_t kBlockRows = 16;
inline constexpr std::size_t kChunkBytes = 64;  // 4 bytes of each of the block's rows

struct Geometry {
  std::size_t in = 0;            // K
  std::size_t out = 0;           // N
  std::size_t group_size = 0;    // elements per scale
  std::size_t groups = 0;        // K / group_size
  std::size_t padded_group = 0;  // group_size rounded up to a whole chunk's elements
  std::size_t chunks = 0;        // chunks per group
  std::size_t blocks = 0;        // ceil(N / kBlockRows)
  bool four_bit = false;
};

Geometry make_geometry(std::size_t in, std::size_t out, std::size_t group_size, bool four_bit);

// The bytes of one group's record: its chunks, then kBlockRows float32
// scales (whole cache lines).
inline std::size_t record_bytes(const Geometry& g) { return g.chunks * kChunkBytes + kBlockRows * sizeof(float); }

// The repacked weights of one linear layer.
struct PackedWeights {
  Geometry geometry;
  hwy::AlignedFreeUniquePtr<uint8_t[]> records;  // [blocks][groups][record_bytes], cache-line aligned
  // [blocks][kBlockRows]: per row, C = 0; for g ascending:
  // C = fl32(C + fl32(fl32(W_g) * scale_g)); zero past N.
  hwy::AlignedFreeUniquePtr<float[]> scaled_sums;
};

// weight: int4 [N, K/2] in embedding_4bit's layout (even element in the high
// nibble, value = nibble - 8) or int8 [N, K]; scales [N, groups] row-major.
PackedWeights pack_weights(const Geometry& geometry, const uint8_t* weight, const float* scales);

// One block's part of the packed weights.
struct BlockView {
  const uint8_t* records;      // [groups][record_bytes]
  const float* scaled_sums;    // kBlockRows values (PackedWeights::scaled_sums)
  const float* bias;           // kBlockRows values, or null
  std::size_t groups, chunks, padded_group, record_bytes;
  bool four_bit;

  const uint8_t* chunks_of(std::size_t group) const { return records + group * record_bytes; }
  const float* scales_of(std::size_t group) const {
    return reinterpret_cast<const float*>(chunks_of(group) + chunks * kChunkBytes);
  }
};

// How far ahead of the group they read the decode kernels ask for a
// block's bytes (software prefetch): a layer streams from memory, and the
// hardware prefetchers alone leave the bus idle between bursts.
inline constexpr std::size_t kPrefetchBytes = 4096;

BlockView block_view(const PackedWeights& weights, std::size_t block, const float* bias);

// One token's quantized activations.
struct TokenView {
  const int8_t* q;        // [groups][padded_group], zeros in the padding
  const int32_t* shifts;  // [groups]: off * sum of q over each group, wrapping (off = 8 or 128)
  int32_t zero_point;
  float scale;
};

// out[j * block_stride + i * stride + r], j < block_count, i < count, r <
// kBlockRows: the documented chain of row r of blocks[j] (blocks of one
// layer) for token i: acc = 0; for g ascending: acc = fl32(acc +
// fl32(fl32(P_g) * scale_g)); then fl32(fl32(acc - fl32(fl32(z) * C)) *
// token scale), then fl32(+ block.bias[r]) (C: the row's scaled_sums).
void dynamic_blocks(const BlockView* blocks, std::size_t block_count, const TokenView* tokens, std::size_t count,
                    float* out, std::size_t block_stride, std::size_t stride);

// The block's weights as float32 [K][kBlockRows], unscaled: fl32(w).
void integer_weights(const BlockView& block, std::size_t group_size, float* out);

// The weight-only chain of block row r for each of the `count` tokens of
// x [count][in], from the block's integer weights [K][kBlockRows]: per
// group g, S = 0; S = fl32(S + fl32(x[k] * w[k][r])) for k ascending over
// the group; acc = fl32(acc + fl32(S * scale_g)) for g ascending from
// acc = 0; then fl32(acc + bias[r]) (bias may be null). Token i's rows at
// out + i * stride.
void float_block(const BlockView& block, const float* weights, std::size_t group_size, const float* x,
                 std::size_t count, const float* bias, float* out, std::size_t stride);

// The same chain for one token x [K] against `count` blocks, the weights
// read from their packed bytes as it goes (each block's bias its own):
// out [count][kBlockRows].
void float_decode(const BlockView* blocks, std::size_t count, std::size_t group_size, const float* x, float* out);

}  // namespace et_ops::kernels::quantized::lowbit

#endif  // ET_OPS_SRC_KERNELS_QUANTIZED_LOWBIT_LAYOUT_H
