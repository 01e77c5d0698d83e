// Helpers for kernel tests: tensors that own their elements, bit-exact
// comparison of floating results, and a seeded random source.
#ifndef ET_OPS_TEST_KERNELS_QUANTIZED_TEST_UTIL_H
#define ET_OPS_TEST_KERNELS_QUANTIZED_TEST_UTIL_H

#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "et_ops/dtype.h"
#include "et_ops/half.h"
#include "et_ops/kernel_context.h"
#include "et_ops/tensor.h"

namespace et_ops::test {

template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::Float32;
  else if constexpr (std::is_same_v<T, double>) return DType::Float64;
  else if constexpr (std::is_same_v<T, Half>) return DType::Float16;
  else if constexpr (std::is_same_v<T, BFloat16>) return DType::BFloat16;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::Int8;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::UInt8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::Int16;
  else if constexpr (std::is_same_v<T, uint16_t>) return DType::UInt16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::Int32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::Int64;
  else static_assert(sizeof(T) == 0, "unsupported element type");
}

// A tensor that owns its elements. `dtype` may differ from dtype_of<T>() to
// build deliberately mistyped tensors for error tests.
template <typename T>
struct Owned {
  std::vector<T> values;
  Tensor tensor;

  Owned(std::vector<int64_t> sizes, std::vector<T> init, std::vector<uint8_t> dim_order = {})
      : values(std::move(init)), tensor(dtype_of<T>(), nullptr, std::move(sizes), std::move(dim_order)) {
    tensor.raw()->data = values.data();
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  // An owned tensor of `sizes`, every element `fill`.
  static std::vector<T> filled(const std::vector<int64_t>& sizes, T fill) {
    int64_t n = 1;
    for (auto s : sizes) n *= s;
    return std::vector<T>(static_cast<std::size_t>(n), fill);
  }

  operator TensorRef() const { return tensor.ref(); }  // NOLINT
  TensorRef ref() const { return tensor.ref(); }
  void retype(DType d) { tensor.raw()->dtype = static_cast<int32_t>(d); }
};

// Bit pattern of a floating value, so NaNs and signed zeros compare exactly.
template <typename T>
uint64_t bits_of(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return v.bits;
  } else {
    uint64_t out = 0;
    std::memcpy(&out, &v, sizeof(T));
    return out;
  }
}

inline std::mt19937_64 seeded_rng(uint64_t seed) { return std::mt19937_64(seed); }

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_KERNELS_QUANTIZED_TEST_UTIL_H
