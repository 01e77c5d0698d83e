// Calling the xnnpack kernel set's operators in tests: tensors with the
// padding XNNPACK may read past an input, argument lists in schema order,
// and the one-call C-ABI kernel of each record (prepare, run, release).
#ifndef ET_OPS_TEST_KERNELS_XNNPACK_TEST_UTIL_H
#define ET_OPS_TEST_KERNELS_XNNPACK_TEST_UTIL_H

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "et_ops/kernel_context.h"
#include "et_ops/kernels/xnnpack.h"
#include "et_ops/registry.h"
#include "et_ops/tensor.h"
#include "et_ops/value.h"

namespace et_ops::test {

// A tensor over its own bytes, 64 spare bytes after them (XNNPACK reads up
// to XNN_EXTRA_BYTES past an input).
struct OwnedTensor {
  std::vector<uint8_t> bytes;
  std::unique_ptr<Tensor> tensor;
  OwnedTensor(DType dtype, std::vector<int64_t> sizes, std::vector<uint8_t> dim_order = {}) {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    bytes.assign(static_cast<std::size_t>(n) * dtype_size(dtype) + 64, 0);
    tensor = std::make_unique<Tensor>(dtype, bytes.data(), std::move(sizes), std::move(dim_order));
  }
  template <typename T>
  T* data() { return reinterpret_cast<T*>(bytes.data()); }
};

// Builds the argument list of one call, in schema order.
class Call {
 public:
  Call& tensor(OwnedTensor& t) { return add(tensor_value(*t.tensor)); }
  Call& real(double v) { return add(double_value(v)); }
  Call& integer(int64_t v) { return add(int_value(v)); }
  Call& boolean(bool v) { return add(bool_value(v)); }
  Call& list(std::vector<int64_t> v) {
    lists_.push_back(std::move(v));
    return add(int_list_value(lists_.back().data(), static_cast<int64_t>(lists_.back().size())));
  }
  Call& none() { return add(none_value()); }

  // Runs `op`'s registered kernel; returns the context.
  KernelContext run(const char* op) {
    static const bool registered = kernels::xnnpack::register_kernels().ok();
    REQUIRE(registered);
    const et_ops_kernel_fn fn = lookup(op);
    REQUIRE(fn != nullptr);
    std::vector<et_ops_value*> args;
    for (et_ops_value& v : values_) args.push_back(&v);
    KernelContext ctx;
    fn(ctx.raw(), args.data(), args.size());
    return ctx;
  }

 private:
  Call& add(et_ops_value v) {
    values_.push_back(v);
    return *this;
  }
  std::deque<et_ops_value> values_;
  std::deque<std::vector<int64_t>> lists_;
};

// Round half to even, then clamp: how the reference requantizes.
inline int8_t requantize(double value, int64_t zero_point, int64_t low = -128, int64_t high = 127) {
  const double q = std::nearbyint(value) + double(zero_point);
  return static_cast<int8_t>(std::fmin(std::fmax(q, double(low)), double(high)));
}

inline void fill_random(int8_t* data, std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-128, 127);
  for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<int8_t>(d(rng));
}

// Outputs agree with the reference within one step, and nearly all exactly
// (XNNPACK requantizes in float32; the reference in float64).
inline void check_close(const int8_t* got, const std::vector<int8_t>& expected) {
  std::size_t exact = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::abs(int(got[i]) - int(expected[i])) <= 1);
    exact += got[i] == expected[i];
  }
  CHECK(double(exact) >= 0.99 * double(expected.size()));
}

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_KERNELS_XNNPACK_TEST_UTIL_H
