// Repacking the low-bit linears' weights at load time (lowbit_layout.h).
#include "lowbit_layout.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

namespace et_ops::kernels::quantized::lowbit {
namespace {

// Weight k of row n as a signed integer.
int weight_at(const Geometry& g, const uint8_t* weight, std::size_t n, std::size_t k) {
  if (!g.four_bit) return static_cast<int8_t>(weight[n * g.in + k]);
  const uint8_t byte = weight[n * (g.in / 2) + k / 2];
  return (k % 2 == 0 ? byte >> 4 : byte & 0x0F) - 8;
}

// The group_size signed weights of group grp of row n.
void group_weights(const Geometry& g, const uint8_t* weight, std::size_t n, std::size_t grp, int* values) {
  const std::size_t k0 = grp * g.group_size;
  if (g.four_bit && k0 % 2 == 0) {  // whole bytes: the even element in the high nibble
    const uint8_t* bytes = weight + n * (g.in / 2) + k0 / 2;
    std::size_t i = 0;
    for (; i + 1 < g.group_size; i += 2) {
      values[i] = (bytes[i / 2] >> 4) - 8;
      values[i + 1] = (bytes[i / 2] & 0x0F) - 8;
    }
    if (i < g.group_size) values[i] = (bytes[i / 2] >> 4) - 8;
    return;
  }
  for (std::size_t i = 0; i < g.group_size; ++i) values[i] = weight_at(g, weight, n, k0 + i);
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

namespace {

// Row r of one group's chunks (see lowbit_layout.h): `values` holds the
// group's padded_group signed weights of that row.
void pack_row(const Geometry& g, const int* values, std::size_t r, uint8_t* chunks) {
  const unsigned offset = g.four_bit ? 8 : 128;
  for (std::size_t c = 0; c < g.chunks; ++c)
    for (std::size_t e = 0; e < 4; ++e) {
      uint8_t& byte = chunks[c * kChunkBytes + 4 * r + e];
      if (g.four_bit)
        byte = static_cast<uint8_t>((values[8 * c + e] + offset) | (values[8 * c + 4 + e] + offset) << 4);
      else
        byte = static_cast<uint8_t>(values[4 * c + e] + offset);
    }
}

}  // namespace

PackedWeights pack_weights(const Geometry& g, const uint8_t* weight, const float* scales) {
  PackedWeights p;
  p.geometry = g;
  const std::size_t record = record_bytes(g), weight_bytes = g.chunks * kChunkBytes;
  const std::size_t total = g.blocks * g.groups * record;
  p.records = hwy::AllocateAligned<uint8_t>(std::max<std::size_t>(total, 1));
  p.scaled_sums = hwy::AllocateAligned<float>(g.blocks * kBlockRows);
  if (!p.records || !p.scaled_sums) throw std::bad_alloc();
  std::fill(p.scaled_sums.get(), p.scaled_sums.get() + g.blocks * kBlockRows, 0.0f);
  std::vector<int> values(g.padded_group, 0);  // zero weights in the padding and past N
  for (std::size_t b = 0; b < g.blocks; ++b)
    for (std::size_t grp = 0; grp < g.groups; ++grp) {
      uint8_t* at = p.records.get() + (b * g.groups + grp) * record;
      float block_scales[kBlockRows] = {};
      for (std::size_t r = 0; r < kBlockRows; ++r) {
        const std::size_t n = b * kBlockRows + r;
        if (n < g.out)
          group_weights(g, weight, n, grp, values.data());
        else
          std::fill(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(g.group_size), 0);
        pack_row(g, values.data(), r, at);
        if (n >= g.out) continue;
        block_scales[r] = scales[n * g.groups + grp];
        int64_t sum = 0;  // at most 128 * 65536 in magnitude: exact in float32
        for (std::size_t i = 0; i < g.group_size; ++i) sum += values[i];
        float& c = p.scaled_sums[b * kBlockRows + r];
        c = c + static_cast<float>(sum) * block_scales[r];
      }
      std::memcpy(at + weight_bytes, block_scales, sizeof block_scales);
    }
  return p;
}

BlockView block_view(const PackedWeights& p, std::size_t block, const float* bias) {
  const Geometry& g = p.geometry;
  return {p.records.get() + block * g.groups * record_bytes(g), p.scaled_sums.get() + block * kBlockRows, bias,
          g.groups, g.chunks, g.padded_group, record_bytes(g), g.four_bit};
}

}  // namespace et_ops::kernels::quantized::lowbit
