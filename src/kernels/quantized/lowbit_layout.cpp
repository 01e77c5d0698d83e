// Repacking the low-bit linears' weights at load time (lowbit_layout.h).
#include "lowbit_layout.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

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

// Row r of one group's chunks straight from the program's bytes, where the
// group fills whole chunks (no padding) and starts on a whole byte: 4-bit
// chunk bytes from the two source bytes that hold elements e and e + 4
// (sources keep w + 8 already), 8-bit ones with the offset's bit flipped.
// Returns the sum of the row's weights over the group.
int64_t pack_row_direct(const Geometry& g, const uint8_t* source, std::size_t r, uint8_t* chunks) {
  if (g.four_bit) {
    // A 32-bit word of four source bytes s0..s3 (elements 8c .. 8c + 7, the
    // even one of each pair in the high nibble) becomes the chunk's four
    // bytes of the row: byte e holds element e low and e + 4 high, i.e.
    // (s0 >> 4 | s2 & 0xF0), (s0 & 0xF | s2 << 4), (s1 >> 4 | s3 & 0xF0),
    // (s1 & 0xF | s3 << 4).
    int64_t nibbles = 0;
    for (std::size_t c = 0; c < g.chunks; ++c) {
      uint32_t w;
      std::memcpy(&w, source + 4 * c, sizeof w);
      const uint32_t high = (w >> 4) & 0x0F0F0F0Fu, low = w & 0x0F0F0F0Fu;  // per byte: element 2j, 2j + 1
      const uint32_t out = (high & 0xFFu) | ((low & 0xFFu) << 8) | (((high >> 8) & 0xFFu) << 16) |
                           (((low >> 8) & 0xFFu) << 24) | ((high >> 16) & 0xFFu) << 4 | ((low >> 16) & 0xFFu) << 12 |
                           ((high >> 24) & 0xFFu) << 20 | ((low >> 24) & 0xFFu) << 28;
      std::memcpy(chunks + c * kChunkBytes + 4 * r, &out, sizeof out);
      nibbles += ((high + low) * 0x01010101u) >> 24;  // the word's 8 nibbles (per byte at most 30)
    }
    return nibbles - 8 * static_cast<int64_t>(g.group_size);
  }
  int64_t sum = 0;
  for (std::size_t c = 0; c < g.chunks; ++c) {
    const uint8_t* s = source + 4 * c;
    uint8_t* out = chunks + c * kChunkBytes + 4 * r;
    for (std::size_t e = 0; e < 4; ++e) {
      out[e] = static_cast<uint8_t>(s[e] ^ 0x80);
      sum += static_cast<int8_t>(s[e]);
    }
  }
  return sum;
}

// Asks the kernel to map every page of a fresh allocation at once, not one
// fault at a time as the repacking first writes each (best effort).
void populate(void* data, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (first < end) (void)::madvise(reinterpret_cast<void*>(first), end - first, MADV_POPULATE_WRITE);
#else
  (void)data;
  (void)bytes;
#endif
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
  populate(p.records.get(), total);
  // Rows past N: zero weights (stored w + off) and zero scales.
  std::fill(p.scaled_sums.get(), p.scaled_sums.get() + g.blocks * kBlockRows, 0.0f);
  const bool direct = g.padded_group == g.group_size && (!g.four_bit || g.group_size % 2 == 0);
  const std::size_t row_bytes = g.four_bit ? g.in / 2 : g.in, group_bytes = g.four_bit ? g.group_size / 2 : g.group_size;
  std::vector<int> values(g.padded_group, 0);  // the generic path's padded group, zeros past group_size
  for (std::size_t b = 0; b < g.blocks; ++b) {
    uint8_t* block = p.records.get() + b * g.groups * record;
    for (std::size_t r = 0; r < kBlockRows; ++r) {
      const std::size_t n = b * kBlockRows + r;
      float& c = p.scaled_sums[b * kBlockRows + r];
      for (std::size_t grp = 0; grp < g.groups; ++grp) {
        uint8_t* at = block + grp * record;
        float* block_scales = reinterpret_cast<float*>(at + weight_bytes);
        if (n >= g.out) {
          std::fill(values.begin(), values.end(), 0);
          pack_row(g, values.data(), r, at);
          block_scales[r] = 0.0f;
          continue;
        }
        int64_t sum = 0;  // at most 128 * 65536 in magnitude: exact in float32
        if (direct) {
          sum = pack_row_direct(g, weight + n * row_bytes + grp * group_bytes, r, at);
        } else {
          group_weights(g, weight, n, grp, values.data());
          pack_row(g, values.data(), r, at);
          for (std::size_t i = 0; i < g.group_size; ++i) sum += values[i];
        }
        block_scales[r] = scales[n * g.groups + grp];
        c = c + static_cast<float>(sum) * block_scales[r];
      }
    }
  }
  return p;
}

BlockView block_view(const PackedWeights& p, std::size_t block, const float* bias) {
  const Geometry& g = p.geometry;
  return {p.records.get() + block * g.groups * record_bytes(g), p.scaled_sums.get() + block * kBlockRows, bias,
          g.groups, g.chunks, g.padded_group, record_bytes(g), g.four_bit};
}

}  // namespace et_ops::kernels::quantized::lowbit
