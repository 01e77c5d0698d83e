// A convolution's int8 input as the uint8 bytes oneDNN's kernels read:
// out[i] = uint8(clamp(in[i], start, high) - start). With start = -128 and
// high = 127 that is value + 128, which kernels with int8 dot products
// (vpdpbusd) take exactly. Kernels without them add pairs of uint8 x int8
// products into a saturating int16 (vpmaddubsw), exact only while every
// uint8 is at most 127: there [start, high] is a window of at most 128
// values, and the bytes outside it (clamped into it) are found and their
// outputs computed again (onednn_convolution.h). Vectorised with Highway
// (integer operations only: every target gives the same bytes).
#ifndef ET_OPS_SRC_KERNELS_XNNPACK_INPUT_BYTES_H
#define ET_OPS_SRC_KERNELS_XNNPACK_INPUT_BYTES_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace et_ops::kernels::xnnpack::detail {

// The smallest and largest of some int8 values.
struct ByteRange {
  int8_t min = INT8_MAX, max = INT8_MIN;
  bool within(int8_t low, int8_t high) const { return min >= low && max <= high; }
  void add(ByteRange other) {
    if (other.min < min) min = other.min;
    if (other.max > max) max = other.max;
  }
};

// Writes out[i] = uint8(clamp(in[i], start, high) - start) for i < n;
// returns the range of in (before the clamp).
ByteRange shift_bytes(const int8_t* in, uint8_t* out, std::size_t n, int8_t start, int8_t high);

// Appends to `positions` the index of every in[i] outside [low, high], in
// order, until it holds more than `limit`; returns whether it holds at most
// `limit`.
bool find_outside(const int8_t* in, std::size_t n, int8_t low, int8_t high, std::size_t limit,
                  std::vector<std::size_t>& positions);

}  // namespace et_ops::kernels::xnnpack::detail

#endif  // ET_OPS_SRC_KERNELS_XNNPACK_INPUT_BYTES_H
