// libet_kernels_portable.so: the aten `.out` kernels that exported models
// need around their quantized layers: elementwise arithmetic (add, sub, mul,
// div), activations (relu, hardtanh, clamp, leaky_relu, hardswish,
// hardsigmoid, sigmoid, tanh), matrix products, convolution, pooling
// (max, average, adaptive average), mean, sum, max, softmax, log_softmax,
// normalization (layer, group), unary math (sqrt, rsqrt, exp, neg, pow),
// comparisons, selection (where, masked_fill), indexing (embedding, index,
// index_select, index_put, index_copy) and copies (view, permute, slice,
// select, expand, cat, constant padding, nearest upsampling, dtype casts).
//
// Call register_kernels() once (more calls are no-ops) to make them
// available to programs, or call a kernel directly through the typed entry
// points below: the context first, then the schema's arguments in order, out
// arguments last. Every entry point reports errors through its KernelContext
// and returns ctx.ok(); none of them aborts or resizes its outputs: an out
// tensor must already have exactly the result's shape and dtype.
// The kernels-portable page of the documentation lists dtypes, semantics and
// tolerances.
#ifndef ET_OPS_KERNELS_PORTABLE_H
#define ET_OPS_KERNELS_PORTABLE_H

#include <cstdint>
#include <optional>
#include <string_view>

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

// ---- elementwise arithmetic (float32, float64, int8, uint8, int16, int32, int64; div: float32, float64) ----
// Tensor operands broadcast as in PyTorch; a Scalar `other` converts to
// self's dtype as aten converts a wrapped number. Dtypes are never promoted.

// out = self + alpha * other.
ET_OPS_KERNELS_API bool add_out(KernelContext& ctx, TensorRef self, TensorRef other, Scalar alpha, TensorRef out);
ET_OPS_KERNELS_API bool add_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, Scalar alpha,
                                       TensorRef out);
// out = self - alpha * other.
ET_OPS_KERNELS_API bool sub_out(KernelContext& ctx, TensorRef self, TensorRef other, Scalar alpha, TensorRef out);
ET_OPS_KERNELS_API bool sub_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, Scalar alpha,
                                       TensorRef out);
// out = self * other.
ET_OPS_KERNELS_API bool mul_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out);
ET_OPS_KERNELS_API bool mul_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out);
// out = self / other (true division).
ET_OPS_KERNELS_API bool div_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out);
ET_OPS_KERNELS_API bool div_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out);

// ---- activations (relu, hardtanh, clamp: as arithmetic; the others: float32, float64) ----

// out = max(self, 0); NaN and -0.0 pass through as in PyTorch.
ET_OPS_KERNELS_API bool relu_out(KernelContext& ctx, TensorRef self, TensorRef out);
// out = clamp(self, min_val, max_val); ReLU6 is hardtanh(0, 6).
ET_OPS_KERNELS_API bool hardtanh_out(KernelContext& ctx, TensorRef self, Scalar min_val, Scalar max_val,
                                     TensorRef out);
// out = min(max(self, min), max) with either bound optional (not both none).
ET_OPS_KERNELS_API bool clamp_out(KernelContext& ctx, TensorRef self, std::optional<Scalar> min,
                                  std::optional<Scalar> max, TensorRef out);
// out = self > 0 ? self : self * negative_slope.
ET_OPS_KERNELS_API bool leaky_relu_out(KernelContext& ctx, TensorRef self, Scalar negative_slope, TensorRef out);
// out = self * min(max(self + 3, 0), 6) / 6.
ET_OPS_KERNELS_API bool hardswish_out(KernelContext& ctx, TensorRef self, TensorRef out);
// out = min(max(self + 3, 0), 6) / 6.
ET_OPS_KERNELS_API bool hardsigmoid_out(KernelContext& ctx, TensorRef self, TensorRef out);
// out = 1 / (1 + exp(-self)).
ET_OPS_KERNELS_API bool sigmoid_out(KernelContext& ctx, TensorRef self, TensorRef out);
// out = tanh(self).
ET_OPS_KERNELS_API bool tanh_out(KernelContext& ctx, TensorRef self, TensorRef out);
// out = self * 0.5 * (1 + erf(self / sqrt(2))) (approximate "none") or the "tanh" approximation.
ET_OPS_KERNELS_API bool gelu_out(KernelContext& ctx, TensorRef self, std::string_view approximate, TensorRef out);
// out = self / (1 + exp(-self)).
ET_OPS_KERNELS_API bool silu_out(KernelContext& ctx, TensorRef self, TensorRef out);

// ---- unary math (floating; neg: arithmetic) ----

ET_OPS_KERNELS_API bool sqrt_out(KernelContext& ctx, TensorRef self, TensorRef out);
// out = 1 / sqrt(self).
ET_OPS_KERNELS_API bool rsqrt_out(KernelContext& ctx, TensorRef self, TensorRef out);
ET_OPS_KERNELS_API bool exp_out(KernelContext& ctx, TensorRef self, TensorRef out);
ET_OPS_KERNELS_API bool neg_out(KernelContext& ctx, TensorRef self, TensorRef out);
// out = self ** exponent; exponent broadcasts (Tensor overload) and has self's dtype.
ET_OPS_KERNELS_API bool pow_tensor_scalar_out(KernelContext& ctx, TensorRef self, Scalar exponent, TensorRef out);
ET_OPS_KERNELS_API bool pow_tensor_tensor_out(KernelContext& ctx, TensorRef self, TensorRef exponent,
                                              TensorRef out);

// ---- comparisons and logic (self, other: float32, float64, int32, int64, bool, ...; out: bool) ----
// Operands are compared in their promoted type (floating if either is).

ET_OPS_KERNELS_API bool eq_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out);
ET_OPS_KERNELS_API bool ne_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out);
ET_OPS_KERNELS_API bool lt_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out);
ET_OPS_KERNELS_API bool le_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out);
ET_OPS_KERNELS_API bool gt_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out);
ET_OPS_KERNELS_API bool ge_scalar_out(KernelContext& ctx, TensorRef self, Scalar other, TensorRef out);
ET_OPS_KERNELS_API bool eq_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out);
ET_OPS_KERNELS_API bool ne_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out);
ET_OPS_KERNELS_API bool lt_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out);
ET_OPS_KERNELS_API bool le_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out);
ET_OPS_KERNELS_API bool gt_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out);
ET_OPS_KERNELS_API bool ge_tensor_out(KernelContext& ctx, TensorRef self, TensorRef other, TensorRef out);
// out = (self == 0).
ET_OPS_KERNELS_API bool logical_not_out(KernelContext& ctx, TensorRef self, TensorRef out);

// ---- selection (every dtype; condition and mask: bool) ----

// out = condition ? self : other, all three broadcast to out's shape.
ET_OPS_KERNELS_API bool where_self_out(KernelContext& ctx, TensorRef condition, TensorRef self, TensorRef other,
                                       TensorRef out);
// out = mask ? value : self, mask broadcast to self's shape.
ET_OPS_KERNELS_API bool masked_fill_scalar_out(KernelContext& ctx, TensorRef self, TensorRef mask, Scalar value,
                                               TensorRef out);

// ---- matrix products (float32, accumulated in float64, rounded once) ----

// out[n, m] = self[n, k] @ mat2[k, m].
ET_OPS_KERNELS_API bool mm_out(KernelContext& ctx, TensorRef self, TensorRef mat2, TensorRef out);
// out[b] = self[b] @ mat2[b] for 3-D operands.
ET_OPS_KERNELS_API bool bmm_out(KernelContext& ctx, TensorRef self, TensorRef mat2, TensorRef out);
// out[b] = beta * self + alpha * (batch1[b] @ batch2[b]); self broadcasts to [B, n, m]; beta == 0 ignores self.
ET_OPS_KERNELS_API bool baddbmm_out(KernelContext& ctx, TensorRef self, TensorRef batch1, TensorRef batch2,
                                    Scalar beta, Scalar alpha, TensorRef out);
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
// out = self[..., start:end:step, ...] along dim; start and end as Python slices (none: the ends).
ET_OPS_KERNELS_API bool slice_copy_out(KernelContext& ctx, TensorRef self, int64_t dim, std::optional<int64_t> start,
                                       std::optional<int64_t> end, int64_t step, TensorRef out);
// out = self padded (or, for negative entries, cropped) by pad = [last_begin, last_end, previous_begin, ...],
// new elements equal to value.
ET_OPS_KERNELS_API bool constant_pad_nd_out(KernelContext& ctx, TensorRef self, IntList pad, Scalar value,
                                            TensorRef out);
// out = self broadcast to size (-1 keeps a size; new leading dimensions may be added); implicit is ignored.
ET_OPS_KERNELS_API bool expand_copy_out(KernelContext& ctx, TensorRef self, IntList size, bool implicit,
                                        TensorRef out);
// out = self[..., index, ...] along dim (index may be negative), one dimension fewer.
ET_OPS_KERNELS_API bool select_copy_int_out(KernelContext& ctx, TensorRef self, int64_t dim, int64_t index,
                                            TensorRef out);
// out (shaped like self) = src broadcast to self's shape, converted to out's dtype (float32, float64, int32,
// int64, bool and the other arithmetic dtypes). When out is self, self is overwritten in place.
ET_OPS_KERNELS_API bool copy_out(KernelContext& ctx, TensorRef self, TensorRef src, bool non_blocking,
                                 TensorRef out);
// out = the tensors joined along dim (sizes equal elsewhere); 1-D tensors of size 0 are skipped, as in aten.
ET_OPS_KERNELS_API bool cat_out(KernelContext& ctx, TensorList tensors, int64_t dim, TensorRef out);
// Nearest-neighbour upsampling of self [N, C, H, W] to output_size [H_out, W_out]; a positive scale
// replaces H / H_out (or W / W_out) in the source index.
ET_OPS_KERNELS_API bool upsample_nearest2d_out(KernelContext& ctx, TensorRef self, IntList output_size,
                                               std::optional<double> scales_h, std::optional<double> scales_w,
                                               TensorRef out);

// ---- convolution, pooling, reduction, softmax ----

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
// Average pooling of self [C, H, W] or [N, C, H, W] (float32, float64, int64). An empty stride means
// stride = kernel_size; divisor_override, when given, replaces the window size as divisor.
ET_OPS_KERNELS_API bool avg_pool2d_out(KernelContext& ctx, TensorRef self, IntList kernel_size, IntList stride,
                                       IntList padding, bool ceil_mode, bool count_include_pad,
                                       std::optional<int64_t> divisor_override, TensorRef out);
// Adaptive average pooling of self [C, H, W] or [N, C, H, W] (float32, float64) to output_size:
// output row i averages input rows floor(i * H / H_out) to ceil((i + 1) * H / H_out) - 1, columns alike.
ET_OPS_KERNELS_API bool adaptive_avg_pool2d_out(KernelContext& ctx, TensorRef self, IntList output_size,
                                                TensorRef out);
// Mean of self over dim (none or empty: every dimension), computed in dtype (or out's dtype when none).
ET_OPS_KERNELS_API bool mean_out(KernelContext& ctx, TensorRef self, std::optional<IntList> dim, bool keepdim,
                                 std::optional<DType> dtype, TensorRef out);
// Softmax of self along dim (negative counts from the end); half_to_float must be false.
ET_OPS_KERNELS_API bool softmax_out(KernelContext& ctx, TensorRef self, int64_t dim, bool half_to_float,
                                    TensorRef out);
// log(softmax(self)) along dim, as x - max - log(sum(exp(x - max))).
ET_OPS_KERNELS_API bool log_softmax_out(KernelContext& ctx, TensorRef self, int64_t dim, bool half_to_float,
                                        TensorRef out);
// Sum of self over dim (none or empty: every dimension), in dtype (or out's dtype when none).
ET_OPS_KERNELS_API bool sum_out(KernelContext& ctx, TensorRef self, std::optional<IntList> dim, bool keepdim,
                                std::optional<DType> dtype, TensorRef out);
// The maximum of self along dim into max, and its first index (int64) into max_values (aten's name).
ET_OPS_KERNELS_API bool max_dim_out(KernelContext& ctx, TensorRef self, int64_t dim, bool keepdim, TensorRef max,
                                    TensorRef max_values);

// ---- normalization (float32) ----

// Layer norm over the trailing normalized_shape dimensions of input: out0 the result, out1 the means and
// out2 the reciprocal standard deviations (input's leading shape, then 1 per normalized dimension).
ET_OPS_KERNELS_API bool native_layer_norm_out(KernelContext& ctx, TensorRef input, IntList normalized_shape,
                                              std::optional<TensorRef> weight, std::optional<TensorRef> bias,
                                              double eps, TensorRef out0, TensorRef out1, TensorRef out2);
// Group norm of input [N, C, *] (HxW elements per channel) in `group` groups: out0 the result, out1 the
// means and out2 the reciprocal standard deviations, both [N, group].
ET_OPS_KERNELS_API bool native_group_norm_out(KernelContext& ctx, TensorRef input, std::optional<TensorRef> weight,
                                              std::optional<TensorRef> bias, int64_t N, int64_t C, int64_t HxW,
                                              int64_t group, double eps, TensorRef out0, TensorRef out1,
                                              TensorRef out2);

// ---- indexing (self: every dtype; indices: int64 or int32, negative ones wrap; out of range is an error) ----

// out[*, :] = weight[indices[*], :]; padding_idx, scale_grad_by_freq and sparse only affect gradients.
ET_OPS_KERNELS_API bool embedding_out(KernelContext& ctx, TensorRef weight, TensorRef indices, int64_t padding_idx,
                                      bool scale_grad_by_freq, bool sparse, TensorRef out);
// out = self[indices...] (advanced indexing: None keeps a dimension, index tensors broadcast together;
// bool masks are not supported).
ET_OPS_KERNELS_API bool index_out(KernelContext& ctx, TensorRef self, OptionalTensorList indices, TensorRef out);
// out = self.index_select(dim, index).
ET_OPS_KERNELS_API bool index_select_out(KernelContext& ctx, TensorRef self, int64_t dim, TensorRef index,
                                         TensorRef out);
// out = self with out[indices...] = values (or += with accumulate). When out is self only the indexed
// elements are written.
ET_OPS_KERNELS_API bool index_put_out(KernelContext& ctx, TensorRef self, OptionalTensorList indices,
                                      TensorRef values, bool accumulate, TensorRef out);
// out = self with out.select(dim, index[i]) = source.select(dim, i). When out is self only those slices are
// written.
ET_OPS_KERNELS_API bool index_copy_out(KernelContext& ctx, TensorRef self, int64_t dim, TensorRef index,
                                       TensorRef source, TensorRef out);

}  // namespace et_ops::kernels::portable

#endif  // ET_OPS_KERNELS_PORTABLE_H
