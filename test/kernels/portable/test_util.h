// Helpers for the portable kernel tests: tensors that own their elements
// (in any dim order), reading them back in logical order, bit patterns of
// floats, and a seeded random source.
#ifndef ET_OPS_TEST_KERNELS_PORTABLE_TEST_UTIL_H
#define ET_OPS_TEST_KERNELS_PORTABLE_TEST_UTIL_H

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "et_ops/dtype.h"
#include "et_ops/kernel_context.h"
#include "et_ops/kernels/portable.h"
#include "et_ops/tensor.h"

namespace et_ops::test {

using ::et_ops::dtype_of;

inline int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// A tensor that owns its elements. `logical` lists the elements in logical
// (row-major) order whatever the dim order; they are stored in memory
// order. retype() builds deliberately mistyped tensors for error tests.
template <typename T>
struct Owned {
  std::vector<T> values;
  Tensor tensor;

  Owned(std::vector<int64_t> sizes, const std::vector<T>& logical, std::vector<uint8_t> dim_order = {})
      : values(logical.size()), tensor(dtype_of<T>(), nullptr, std::move(sizes), std::move(dim_order)) {
    tensor.raw()->data = values.data();
    const et_ops_tensor& raw = *tensor.raw();
    for (std::size_t i = 0; i < logical.size(); ++i) values[memory_offset(raw, static_cast<int64_t>(i))] = logical[i];
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  // A tensor of `sizes` with every element `fill`.
  static std::vector<T> filled(const std::vector<int64_t>& sizes, T fill) {
    return std::vector<T>(static_cast<std::size_t>(numel_of(sizes)), fill);
  }

  operator TensorRef() const { return tensor.ref(); }  // NOLINT
  TensorRef ref() const { return tensor.ref(); }
  et_ops_tensor* raw() { return tensor.raw(); }
  void retype(DType d) { tensor.raw()->dtype = static_cast<int32_t>(d); }

  // The elements in logical order.
  std::vector<T> logical() const {
    std::vector<T> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i)
      out[i] = values[memory_offset(*tensor.raw(), static_cast<int64_t>(i))];
    return out;
  }

  static int64_t memory_offset(const et_ops_tensor& t, int64_t flat) {
    int64_t offset = 0;
    for (int64_t d = t.dim - 1; d >= 0; --d) {
      offset += (flat % t.sizes[d]) * t.strides[d];
      flat /= t.sizes[d];
    }
    return offset;
  }
};

// Bit pattern of a float, so NaNs and signed zeros compare exactly.
template <typename T>
uint64_t bits_of(T v) {
  uint64_t out = 0;
  std::memcpy(&out, &v, sizeof(T));
  return out;
}

template <typename T>
std::vector<uint64_t> bits_of(const std::vector<T>& values) {
  std::vector<uint64_t> out;
  for (T v : values) out.push_back(bits_of(v));
  return out;
}

// A bool tensor: bytes, retyped (std::vector<bool> has no data()).
struct BoolTensor : Owned<uint8_t> {
  BoolTensor(std::vector<int64_t> sizes, const std::vector<uint8_t>& values, std::vector<uint8_t> dim_order = {})
      : Owned<uint8_t>(std::move(sizes), values, std::move(dim_order)) {
    retype(DType::Bool);
  }
};

// The index of the first element whose bits differ, any NaN matching any
// NaN (kernels do not specify NaN payloads); -1 when all match, 0 when the
// sizes differ.
inline int64_t first_difference(const std::vector<float>& got, const std::vector<float>& expected) {
  if (got.size() != expected.size()) return 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) && std::isnan(expected[i])) continue;
    if (bits_of(got[i]) != bits_of(expected[i])) return static_cast<int64_t>(i);
  }
  return -1;
}

inline std::mt19937_64 seeded_rng(uint64_t seed) { return std::mt19937_64(seed); }

inline std::vector<float> random_floats(std::mt19937_64& rng, int64_t count) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> out(static_cast<std::size_t>(count));
  for (float& v : out) v = dist(rng);
  return out;
}

inline std::vector<int64_t> iota_values(int64_t count) {
  std::vector<int64_t> out(static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = i;
  return out;
}

// True when the context failed with a message containing every fragment.
inline bool failed_with(const KernelContext& ctx, const std::vector<std::string>& fragments) {
  if (ctx.ok()) return false;
  for (const std::string& f : fragments)
    if (ctx.message().find(f) == std::string_view::npos) return false;
  return true;
}

}  // namespace et_ops::test

// Checks that `ctx` failed with a message containing every fragment, and
// shows the message when it did not.
#define CHECK_ERROR(ctx, ...)                                               \
  do {                                                                      \
    INFO("kernel message: " << std::string((ctx).message()));               \
    CHECK(::et_ops::test::failed_with((ctx), {__VA_ARGS__}));               \
  } while (0)

// The names the portable kernel tests use unqualified, in one place.
namespace et_ops::test::portable_prelude {
namespace portable = et_ops::kernels::portable;
using et_ops::DType;
using et_ops::KernelContext;
using et_ops::TensorRef;
using et_ops::kernels::portable::Scalar;
using et_ops::test::bits_of;
using et_ops::test::failed_with;
using et_ops::test::first_difference;
using et_ops::test::iota_values;
using et_ops::test::Owned;
using Mask = et_ops::test::BoolTensor;
using Sizes = std::vector<int64_t>;
}  // namespace et_ops::test::portable_prelude
using namespace et_ops::test::portable_prelude;  // NOLINT: test sources only

#endif  // ET_OPS_TEST_KERNELS_PORTABLE_TEST_UTIL_H
