// libet_kernels_portable.so: the aten `.out` kernels the example models need
// (add, mul, mm, addmm, linear, relu, view_copy, permute_copy, convolution,
// max_pool2d_with_indices, _softmax).
//
// Call register_kernels() once (more calls are no-ops) to make them
// available to programs, or call a kernel directly through the typed entry
// points below. Every entry point reports errors through its KernelContext
// and returns ctx.ok(); none of them aborts or resizes its outputs: an out
// tensor must already have exactly the result's shape and dtype.
// See docs/kernels-portable.md for dtypes and semantics.
#ifndef ET_OPS_KERNELS_PORTABLE_H
#define ET_OPS_KERNELS_PORTABLE_H

#include <cstdint>
#include <optional>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/dtype.h"
#include "et_ops/export.h"
#include "et_ops/kernel_context.h"
#include "et_ops/registry.h"
#include "et_ops/tensor.h"

namespace et_ops::kernels::portable {

inline constexpr const char* kComponent = "kernels_portable";

// Registers every kernel of this library into the process registry, with
// this library's path as origin. Idempotent.
[[nodiscard]] ET_OPS_KERNELS_API RegistrationResult register_kernels();

// The library's manifest (component, version, records with schema and
// fingerprint), as the loadable-library entry point returns it.
ET_OPS_KERNELS_API const et_ops_manifest& manifest();

// An aten `Scalar` argument: an int or a double, kept as the caller gave it,
// because aten treats them differently (an integral tensor rejects a
// floating alpha; an int64 alpha must stay exact).
class Scalar {
 public:
  constexpr Scalar(int value) : Scalar(static_cast<int64_t>(value)) {}  // NOLINT: literals convert
  constexpr Scalar(int64_t value) : integral_(true), int_(value) {}      // NOLINT
  constexpr Scalar(double value) : integral_(false), double_(value) {}   // NOLINT

  constexpr bool is_integral() const { return integral_; }
  // The integer value; only meaningful when is_integral().
  constexpr int64_t to_int() const { return int_; }
  constexpr double to_double() const { return integral_ ? static_cast<double>(int_) : double_; }

 private:
  bool integral_;
  int64_t int_ = 0;
  double double_ = 0.0;
};

// A non-owning view of an int list argument (sizes, strides, dims...). The
// elements must outlive the call it is passed to.
class IntList {
 public:
  constexpr IntList() = default;
  constexpr IntList(const int64_t* data, int64_t size) : data_(data), size_(size) {}
  IntList(const std::vector<int64_t>& values)  // NOLINT
      : data_(values.data()), size_(static_cast<int64_t>(values.size())) {}
  constexpr IntList(et_ops_int_list raw) : data_(raw.data), size_(raw.size) {}  // NOLINT

  constexpr int64_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const int64_t* data() const { return data_; }
  constexpr int64_t operator[](int64_t i) const { return data_[i]; }
  constexpr const int64_t* begin() const { return data_; }
  constexpr const int64_t* end() const { return data_ + size_; }

 private:
  const int64_t* data_ = nullptr;
  int64_t size_ = 0;
};

// ---- elementwise (float32, float64, int8, uint8, int16, int32, int64) ----

// out = self + alpha * other, with PyTorch broadcasting of self and other.
ET_OPS_KERNELS_API bool add_out(KernelContext& ctx, TensorRef self, TensorRef other, Scalar alpha, TensorRef out);
// out = self * other, with PyTorch broadcasting.
ET_OPS_KERNELS_API bool mul_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out);
// out = max(self, 0); NaN and -0.0 pass through as in PyTorch.
ET_OPS_KERNELS_API bool relu_out(KernelContext& ctx, TensorRef self, TensorRef out);

// ---- matrix products (float32, accumulated in float32) ----

// out[n, m] = self[n, k] @ mat2[k, m].
ET_OPS_KERNELS_API bool mm_out(KernelContext& ctx, TensorRef self, TensorRef mat2, TensorRef out);
// out = beta * self + alpha * (mat1 @ mat2); self broadcasts to [n, m]; beta == 0 ignores self.
ET_OPS_KERNELS_API bool addmm_out(KernelContext& ctx, TensorRef self, TensorRef mat1, TensorRef mat2, Scalar beta,
                                  Scalar alpha, TensorRef out);
// out[..., j] = input[..., :] . weight[j, :] + bias[j]: input [*, in_features], weight [out_features,
// in_features], optional bias [out_features] (or one value), out [*, out_features].
ET_OPS_KERNELS_API bool linear_out(KernelContext& ctx, TensorRef input, TensorRef weight,
                                   std::optional<TensorRef> bias, TensorRef out);

// ---- copies (every dtype) ----

// out = self.reshape(size): elements in logical row-major order; one size may be -1.
ET_OPS_KERNELS_API bool view_copy_out(KernelContext& ctx, TensorRef self, IntList size, TensorRef out);
// out = self.permute(dims), materialised in out's layout.
ET_OPS_KERNELS_API bool permute_copy_out(KernelContext& ctx, TensorRef self, IntList dims, TensorRef out);

// ---- convolution, pooling, softmax (float32) ----

// 2-D convolution of input [N, C_in, H, W] with weight [C_out, C_in / groups, kH, kW], optional bias [C_out].
// stride, padding and dilation hold 1 or 2 values; transposed convolution is not supported.
ET_OPS_KERNELS_API bool convolution_out(KernelContext& ctx, TensorRef input, TensorRef weight,
                                        std::optional<TensorRef> bias, IntList stride, IntList padding,
                                        IntList dilation, bool transposed, IntList output_padding, int64_t groups,
                                        TensorRef out);
// Max pooling of self [C, H, W] or [N, C, H, W]; indices (int64) are flat positions within each H * W plane.
// An empty stride means stride = kernel_size.
ET_OPS_KERNELS_API bool max_pool2d_with_indices_out(KernelContext& ctx, TensorRef self, IntList kernel_size,
                                                    IntList stride, IntList padding, IntList dilation,
                                                    bool ceil_mode, TensorRef out, TensorRef indices);
// Softmax of self along dim; half_to_float must be false.
ET_OPS_KERNELS_API bool softmax_out(KernelContext& ctx, TensorRef self, int64_t dim, bool half_to_float,
                                    TensorRef out);

}  // namespace et_ops::kernels::portable

#endif  // ET_OPS_KERNELS_PORTABLE_H
