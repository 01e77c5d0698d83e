// The order in which aten's CPU `sum` (and so `mean`, and
// adaptive_avg_pool2d to 1 x 1, which calls mean) adds a contiguous row of
// float32: vectors of 8 lanes, 4 interleaved vector accumulators each
// summed in a 4-level cascade of blocks, then the row's tail and the 8
// lanes in order, all in float32. That is the order of PyTorch's `default`
// and `avx2` CPU capabilities (their vectors hold 8 floats); `avx512` uses
// 16 lanes and can differ in the last bit.
//
// Following it, a mean over trailing contiguous dimensions gives PyTorch's
// bits on those capabilities: a quantized model's global average pooling
// then lands on the same quantization step as the reference model, where
// a more accurate sum would round the other way now and then, and one
// flipped step at a squeeze-and-excitation gate moves a whole channel.
// The code is plain scalar C++ (each lane a float), so the result is the
// same on every CPU.
#ifndef ET_OPS_SRC_KERNELS_PORTABLE_CASCADE_SUM_H
#define ET_OPS_SRC_KERNELS_PORTABLE_CASCADE_SUM_H

#include <algorithm>
#include <array>
#include <cstdint>

namespace et_ops::kernels::portable::detail {

constexpr int kCascadeLanes = 8;
constexpr int kCascadeInterleave = 4;
constexpr int kCascadeLevels = 4;

// Eight float lanes added lane by lane.
struct FloatLanes {
  float lane[kCascadeLanes] = {};
  FloatLanes& operator+=(const FloatLanes& other) {
    for (int i = 0; i < kCascadeLanes; ++i) lane[i] += other.lane[i];
    return *this;
  }
};

// ceil(log2(x)), and 1 for x <= 2.
inline int64_t cascade_ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  int64_t bits = 0;
  for (uint64_t v = static_cast<uint64_t>(x - 1); v != 0; v >>= 1) ++bits;
  return bits;
}

// Sums rows 0..size-1 of kCascadeInterleave columns, column by column
// (load(i, k) is row i, column k): rows are added in blocks of
// 2^level_power into the first level, and each finished block is carried
// into the next level, so only sums of similar size meet.
template <typename T, typename Load>
std::array<T, kCascadeInterleave> cascade_columns(int64_t size, const Load& load) {
  const int64_t level_power = std::max<int64_t>(4, cascade_ceil_log2(size) / kCascadeLevels);
  const int64_t level_step = int64_t{1} << level_power;
  const int64_t level_mask = level_step - 1;
  T acc[kCascadeLevels][kCascadeInterleave] = {};
  int64_t i = 0;
  while (i + level_step <= size) {
    for (int64_t j = 0; j < level_step; ++j, ++i)
      for (int k = 0; k < kCascadeInterleave; ++k) acc[0][k] += load(i, k);
    for (int level = 1; level < kCascadeLevels; ++level) {
      for (int k = 0; k < kCascadeInterleave; ++k) {
        acc[level][k] += acc[level - 1][k];
        acc[level - 1][k] = T{};
      }
      if ((i & (level_mask << (level * level_power))) != 0) break;
    }
  }
  for (; i < size; ++i)
    for (int k = 0; k < kCascadeInterleave; ++k) acc[0][k] += load(i, k);
  for (int level = 1; level < kCascadeLevels; ++level)
    for (int k = 0; k < kCascadeInterleave; ++k) acc[0][k] += acc[level][k];
  std::array<T, kCascadeInterleave> sums;
  for (int k = 0; k < kCascadeInterleave; ++k) sums[k] = acc[0][k];
  return sums;
}

// Elements 0..size-1 (load(i)) read as rows of kCascadeInterleave, each
// column cascaded; the leftover elements join the first column, then the
// columns are added in order.
template <typename T, typename Load>
T cascade_row(int64_t size, const Load& load) {
  const int64_t rows = size / kCascadeInterleave;
  auto sums = cascade_columns<T>(rows, [&](int64_t i, int k) { return load(i * kCascadeInterleave + k); });
  for (int64_t i = rows * kCascadeInterleave; i < size; ++i) sums[0] += load(i);
  for (int k = 1; k < kCascadeInterleave; ++k) sums[0] += sums[k];
  return sums[0];
}

// The float32 sum of x[0..n) in aten's order (see the top of the file).
inline float cascade_sum(const float* x, int64_t n) {
  if (n < kCascadeLanes) return 0.0f + cascade_row<float>(n, [&](int64_t i) { return x[i]; });
  const int64_t vectors = n / kCascadeLanes;
  const FloatLanes lanes = cascade_row<FloatLanes>(vectors, [&](int64_t v) {
    FloatLanes vector;
    for (int i = 0; i < kCascadeLanes; ++i) vector.lane[i] = x[v * kCascadeLanes + i];
    return vector;
  });
  float sum = 0.0f;
  for (int64_t i = vectors * kCascadeLanes; i < n; ++i) sum += x[i];
  for (int i = 0; i < kCascadeLanes; ++i) sum += lanes.lane[i];
  return 0.0f + sum;
}

}  // namespace et_ops::kernels::portable::detail

#endif  // ET_OPS_SRC_KERNELS_PORTABLE_CASCADE_SUM_H
