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

using ::et_ops::dtype_of;

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

// Floating storage values widened exactly to float, and float values
// rounded once to a storage type.
inline float widen(float v) { return v; }
inline float widen(Half v) { return v.to_float(); }
inline float widen(BFloat16 v) { return v.to_float(); }

template <typename T>
T from_float(float v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else return T::from_float(v);
}

inline std::mt19937_64 seeded_rng(uint64_t seed) { return std::mt19937_64(seed); }

// ---- tensors in any dim order ----

inline int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (auto s : sizes) n *= s;
  return n;
}

inline std::vector<uint8_t> default_order(std::size_t dim) {
  std::vector<uint8_t> order(dim);
  std::iota(order.begin(), order.end(), uint8_t{0});
  return order;
}

inline std::vector<uint8_t> random_order(std::size_t dim, std::mt19937_64& rng) {
  auto order = default_order(dim);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// Logical (row-major) position -> memory offset for sizes laid out in order.
inline std::vector<int64_t> memory_offsets(const std::vector<int64_t>& sizes, const std::vector<uint8_t>& order) {
  const auto strides = detail::strides_for(sizes, order.empty() ? default_order(sizes.size()) : order);
  std::vector<int64_t> offsets(static_cast<std::size_t>(numel_of(sizes)));
  std::vector<int64_t> index(sizes.size(), 0);
  for (auto& offset : offsets) {
    offset = 0;
    for (std::size_t d = 0; d < sizes.size(); ++d) offset += index[d] * strides[d];
    for (std::size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

// An owned tensor holding `logical` (row-major values) in dim order `order`.
template <typename T>
std::unique_ptr<Owned<T>> make_tensor(const std::vector<int64_t>& sizes, const std::vector<T>& logical,
                                      const std::vector<uint8_t>& order = {}) {
  REQUIRE(static_cast<int64_t>(logical.size()) == numel_of(sizes));
  const auto offsets = memory_offsets(sizes, order);
  std::vector<T> memory(logical.size());
  for (std::size_t i = 0; i < logical.size(); ++i) memory[static_cast<std::size_t>(offsets[i])] = logical[i];
  return std::make_unique<Owned<T>>(sizes, std::move(memory), order);
}

// An owned tensor of `sizes` in `order`, every element `fill`.
template <typename T>
std::unique_ptr<Owned<T>> make_filled(const std::vector<int64_t>& sizes, T fill, const std::vector<uint8_t>& order = {}) {
  return std::make_unique<Owned<T>>(sizes, Owned<T>::filled(sizes, fill), order);
}

// The elements of t in logical (row-major) order.
template <typename T>
std::vector<T> logical_values(const Owned<T>& t) {
  const TensorRef ref = t.ref();
  std::vector<T> out(static_cast<std::size_t>(ref.numel()));
  std::vector<int64_t> index(static_cast<std::size_t>(ref.dim()), 0);
  for (auto& v : out) {
    int64_t offset = 0;
    for (int64_t d = 0; d < ref.dim(); ++d) offset += index[static_cast<std::size_t>(d)] * ref.stride(d);
    v = t.values[static_cast<std::size_t>(offset)];
    for (int64_t d = ref.dim(); d-- > 0;) {
      if (++index[static_cast<std::size_t>(d)] < ref.size(d)) break;
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  return out;
}

// Integer elements widened for comparison, so Catch prints numbers rather
// than characters for int8 / uint8.
template <typename T>
std::vector<int64_t> as_ints(const std::vector<T>& values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

// ---- error assertions ----

inline void require_error(const KernelContext& ctx, std::initializer_list<std::string_view> fragments) {
  REQUIRE_FALSE(ctx.ok());
  const std::string message(ctx.message());
  INFO("message: " << message);
  CHECK(!message.empty());
  for (auto fragment : fragments) CHECK_THAT(message, Catch::Contains(std::string(fragment)));
}

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_KERNELS_QUANTIZED_TEST_UTIL_H
