// Repacking the low-bit linears' weights at load time (lowbit_layout.h).
#include "lowbit_layout.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace et_ops::kernels::quantized::lowbit {
namespace {

// Weight k of row n as a signed integer.
int weight_at(const Geometry& g, const uint8_t* weight, std::size_t n, std::size_t k) {
  if (!g.four_bit) return static_cast<int8_t>(weight[n * g.in + k]);
  const uint8_t byte = weight[n * (g.in / 2) + k / 2];
  return (k % 2 == 0 ? byte >> 4 : byte & 0x0F) - 8;
}

// Where weight element i of a group (i < padded_group) of row r goes in the
// group's chunks, and the bits it occupies.
struct Slot {
  std::size_t byte;
  int shift;
};

Slot slot_of(const Geometry& g, std::size_t i, std::size_t r) {
  const std::size_t per_chunk = g.four_bit ? 8 : 4;
  const std::size_t chunk = i / per_chunk, within = i % per_chunk;
  return {chunk * kChunkBytes + 4 * r + within % 4, g.four_bit ? static_cast<int>(4 * (within / 4)) : 0};
}

}  // namespace

Geometry make_geometry(std::size_t in, std::size_t out, std::size_t group_size, bool four_bit) {
  Geometry g;
  g.in = in;
  g.out = out;
  g.group_size = group_size;
  g.groups = in / group_size;
  g.four_bit = four_bit;
  const std::size_t per_chunk = four_bit ? 8 : 4;
  g.chunks = (group_size + per_chunk - 1) / per_chunk;
  g.padded_group = g.chunks * per_chunk;
  g.blocks = (out + kBlockRows - 1) / kBlockRows;
  return g;
}

PackedWeights pack_weights(const Geometry& g, const uint8_t* weight, const float* scales) {
  PackedWeights p;
  p.geometry = g;
  const std::size_t record = record_bytes(g), weight_bytes = g.chunks * kChunkBytes;
  const unsigned offset = g.four_bit ? 8 : 128;
  const std::size_t total = g.blocks * g.groups * record;
  p.records = hwy::AllocateAligned<uint8_t>(std::max<std::size_t>(total, 1));
  if (!p.records) throw std::bad_alloc();
  std::memset(p.records.get(), 0, total);
  // Padding holds zero weights: w + offset.
  for (std::size_t b = 0; b < g.blocks; ++b)
    for (std::size_t grp = 0; grp < g.groups; ++grp) {
      uint8_t* at = p.records.get() + (b * g.groups + grp) * record;
      float block_scales[kBlockRows] = {};
      int32_t block_wsums[kBlockRows] = {};
      for (std::size_t r = 0; r < kBlockRows; ++r) {
        const std::size_t n = b * kBlockRows + r;
        for (std::size_t i = 0; i < g.padded_group; ++i) {
          const Slot s = slot_of(g, i, r);
          const int w = n < g.out && i < g.group_size ? weight_at(g, weight, n, grp * g.group_size + i) : 0;
          at[s.byte] = static_cast<uint8_t>(at[s.byte] | ((static_cast<unsigned>(w) + offset) & 0xFF) << s.shift);
          block_wsums[r] += w;
        }
        if (n < g.out) block_scales[r] = scales[n * g.groups + grp];
      }
      std::memcpy(at + weight_bytes, block_scales, sizeof block_scales);
      std::memcpy(at + weight_bytes + sizeof block_scales, block_wsums, sizeof block_wsums);
    }
  return p;
}

BlockView block_view(const PackedWeights& p, std::size_t block, const float* bias) {
  const Geometry& g = p.geometry;
  return {p.records.get() + block * g.groups * record_bytes(g), bias, g.groups, g.chunks, g.padded_group,
          record_bytes(g), g.four_bit};
}

}  // namespace et_ops::kernels::quantized::lowbit
