// libet_kernels_portable.so: the aten `.out` kernels the example models need
// (add, mul, mm, addmm, relu, view_copy, permute_copy, convolution,
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

#include "et_ops/abi.h"
#include "et_ops/dtype.h"
#include "et_ops/export.h"
#include "et_ops/int_list.h"
#include "et_ops/kernel_context.h"
#include "et_ops/registry.h"
#include "et_ops/scalar.h"
#include "et_ops/tensor.h"

namespace et_ops::kernels::portable {

inline constexpr const char* kComponent = "kernels_portable";

// Registers every kernel of this library into the process registry, with
// this library's path as origin. Idempotent.
[[nodiscard]] ET_OPS_KERNELS_API RegistrationResult register_kernels();

// The library's manifest (component, version, records with schema and
// fingerprint), as the loadable-library entry point returns it.
ET_OPS_KERNELS_API const et_ops_manifest& manifest();

// The argument types of the aten kernels (et_ops/scalar.h, et_ops/int_list.h).
using Scalar = ::et_ops::Scalar;
using IntList = ::et_ops::IntList;

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
