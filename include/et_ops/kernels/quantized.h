// libet_kernels_quantized.so: the 19 quantized_decomposed overloads,
// the group-wise weight dequantizes and the fused low-bit linear kernels.
//
// Call register_kernels() once (more calls are no-ops) to make them
// available to programs, or call a kernel directly through the typed entry
// points below. Every entry point reports errors through its KernelContext
// and returns ctx.ok(); none of them aborts or resizes its outputs.
#ifndef ET_OPS_KERNELS_QUANTIZED_H
#define ET_OPS_KERNELS_QUANTIZED_H

#include <cstddef>
#include <cstdint>
#include <optional>

#include "et_ops/abi.h"
#include "et_ops/dtype.h"
#include "et_ops/export.h"
#include "et_ops/kernel_context.h"
#include "et_ops/registry.h"
#include "et_ops/tensor.h"

namespace et_ops::kernels::quantized {

inline constexpr const char* kComponent = "kernels_quantized";

// Registers every kernel of this library into the process registry, with
// this library's path as origin. Idempotent.
[[nodiscard]] ET_OPS_KERNELS_API RegistrationResult register_kernels();

// The library's manifest (component, version, records with schema and
// fingerprint), as the loadable-library entry point returns it.
ET_OPS_KERNELS_API const et_ops_manifest& manifest();

// ---- quantize (reference §3) ----
ET_OPS_KERNELS_API bool quantize_per_tensor_out(KernelContext& ctx, TensorRef input, double scale, int64_t zero_point,
                                                int64_t quant_min, int64_t quant_max, DType dtype, TensorRef out);
ET_OPS_KERNELS_API bool quantize_per_tensor_tensor_out(KernelContext& ctx, TensorRef input, TensorRef scale,
                                                       TensorRef zero_point, int64_t quant_min, int64_t quant_max,
                                                       DType dtype, TensorRef out);
ET_OPS_KERNELS_API bool quantize_per_channel_out(KernelContext& ctx, TensorRef input, TensorRef scales,
                                                 TensorRef zero_points, int64_t axis, int64_t quant_min,
                                                 int64_t quant_max, DType dtype, TensorRef out);
ET_OPS_KERNELS_API bool quantize_per_token_out(KernelContext& ctx, TensorRef input, TensorRef scales,
                                               TensorRef zero_points, int64_t quant_min, int64_t quant_max,
                                               DType dtype, TensorRef out);

// ---- dequantize (reference §4) ----
ET_OPS_KERNELS_API bool dequantize_per_tensor_out(KernelContext& ctx, TensorRef input, double scale,
                                                  int64_t zero_point, int64_t quant_min, int64_t quant_max,
                                                  DType dtype, std::optional<DType> out_dtype, TensorRef out);
ET_OPS_KERNELS_API bool dequantize_per_tensor_tensor_out(KernelContext& ctx, TensorRef input, TensorRef scale,
                                                         TensorRef zero_point, int64_t quant_min, int64_t quant_max,
                                                         DType dtype, std::optional<DType> out_dtype, TensorRef out);
ET_OPS_KERNELS_API bool dequantize_per_channel_out(KernelContext& ctx, TensorRef input, TensorRef scales,
                                                   std::optional<TensorRef> zero_points, int64_t axis,
                                                   int64_t quant_min, int64_t quant_max, DType dtype,
                                                   std::optional<DType> out_dtype, TensorRef out);
ET_OPS_KERNELS_API bool dequantize_per_token_out(KernelContext& ctx, TensorRef input, TensorRef scales,
                                                 TensorRef zero_points, int64_t quant_min, int64_t quant_max,
                                                 DType dtype, DType output_dtype, TensorRef out);

// ---- group-wise weight dequantize (PyTorch's dequantize_per_channel_group) ----
// input [N, K] of int8/uint8 (dtype must match), or for the 4-bit overload
// uint8 [N, K/2] with two int4 values per byte in embedding_4bit's layout;
// scales (f32/f16/bf16) and optional integer zero_points of N * K/group_size
// elements in row-major order; out [N, K] of output_dtype (f32/f16/bf16):
// out = O(P(fl32(fl32(q - zp) * s))), P the scales' dtype.
ET_OPS_KERNELS_API bool dequantize_per_channel_group_out(KernelContext& ctx, TensorRef input, TensorRef scales,
                                                         std::optional<TensorRef> zero_points, int64_t quant_min,
                                                         int64_t quant_max, DType dtype, int64_t group_size,
                                                         DType output_dtype, TensorRef out);
ET_OPS_KERNELS_API bool dequantize_per_channel_group_4bit_out(KernelContext& ctx, TensorRef input, TensorRef scales,
                                                              std::optional<TensorRef> zero_points,
                                                              int64_t quant_min, int64_t quant_max,
                                                              int64_t group_size, DType output_dtype, TensorRef out);

// ---- dynamically quantized low-bit linears (et_quantized::) ----
// Prepared kernels in the registry: the weights are repacked once when a
// program loads, and runs split output channels over the run state's
// threads. These typed entry points prepare and run in one call.
// input float32 [..., K] quantized per token inside the kernel exactly as
// choose_qparams_per_token_asymmetric + quantize_per_token (int8); weight
// uint8 [N, K/2] of int4 values in embedding_4bit's layout with float32
// weight_scales [N, K/group_size] (8da4w), or int8 [N, K] with one float32
// scale per row (8da8w); symmetric weights; optional float32 bias [N]; out
// float32 [..., N]. Integer dot products per group, then a fixed float
// order (docs/kernels-quantized.md).
ET_OPS_KERNELS_API bool linear_8da4w_out(KernelContext& ctx, TensorRef input, TensorRef weight,
                                         TensorRef weight_scales, int64_t group_size, std::optional<TensorRef> bias,
                                         TensorRef out);
ET_OPS_KERNELS_API bool linear_8da8w_out(KernelContext& ctx, TensorRef input, TensorRef weight,
                                         TensorRef weight_scales, std::optional<TensorRef> bias, TensorRef out);

// ---- weight-only low-bit linears (et_quantized::) ----
// The same weights and arguments as linear_8da4w / linear_8da8w, float32
// activations: out = input times the weights as the reference dequantizes
// them (fl32(fl32(w) * scale)), added in one fixed order, plus bias.
ET_OPS_KERNELS_API bool linear_int4_out(KernelContext& ctx, TensorRef input, TensorRef weight,
                                        TensorRef weight_scales, int64_t group_size, std::optional<TensorRef> bias,
                                        TensorRef out);
ET_OPS_KERNELS_API bool linear_int8_out(KernelContext& ctx, TensorRef input, TensorRef weight,
                                        TensorRef weight_scales, std::optional<TensorRef> bias, TensorRef out);

// ---- choose_qparams (reference §5) ----
ET_OPS_KERNELS_API bool choose_qparams_tensor_out(KernelContext& ctx, TensorRef input, int64_t quant_min,
                                                  int64_t quant_max, double eps, DType dtype, TensorRef scale_out,
                                                  TensorRef zero_point_out);
ET_OPS_KERNELS_API bool choose_qparams_per_token_asymmetric_out(KernelContext& ctx, TensorRef input, DType dtype,
                                                                TensorRef scale_out, TensorRef zero_point_out);

// ---- embeddings (reference §6) ----
ET_OPS_KERNELS_API bool embedding_byte_out(KernelContext& ctx, TensorRef weight, TensorRef weight_scales,
                                           std::optional<TensorRef> weight_zero_points, int64_t weight_quant_min,
                                           int64_t weight_quant_max, TensorRef indices, TensorRef out);
ET_OPS_KERNELS_API bool embedding_byte_dtype_out(KernelContext& ctx, TensorRef weight, TensorRef weight_scales,
                                                 std::optional<TensorRef> weight_zero_points,
                                                 int64_t weight_quant_min, int64_t weight_quant_max,
                                                 TensorRef indices, std::optional<DType> dtype, TensorRef out);
ET_OPS_KERNELS_API bool embedding_2bit_out(KernelContext& ctx, TensorRef weight, TensorRef weight_scales,
                                           std::optional<TensorRef> weight_zero_points, int64_t weight_quant_min,
                                           int64_t weight_quant_max, TensorRef indices, TensorRef out);
ET_OPS_KERNELS_API bool embedding_2bit_dtype_out(KernelContext& ctx, TensorRef weight, TensorRef weight_scales,
                                                 std::optional<TensorRef> weight_zero_points,
                                                 int64_t weight_quant_min, int64_t weight_quant_max,
                                                 TensorRef indices, std::optional<DType> dtype, TensorRef out);
ET_OPS_KERNELS_API bool embedding_4bit_out(KernelContext& ctx, TensorRef weight, TensorRef weight_scales,
                                           std::optional<TensorRef> weight_zero_points, int64_t weight_quant_min,
                                           int64_t weight_quant_max, TensorRef indices, TensorRef out);
ET_OPS_KERNELS_API bool embedding_4bit_dtype_out(KernelContext& ctx, TensorRef weight, TensorRef weight_scales,
                                                 std::optional<TensorRef> weight_zero_points,
                                                 int64_t weight_quant_min, int64_t weight_quant_max,
                                                 TensorRef indices, std::optional<DType> dtype, TensorRef out);

// ---- mixed-precision matmul (reference §7) ----
ET_OPS_KERNELS_API bool mixed_mm_out(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef weight_scales,
                                     std::optional<TensorRef> weight_zero_points, TensorRef out);
ET_OPS_KERNELS_API bool mixed_linear_out(KernelContext& ctx, TensorRef input, TensorRef weight,
                                         TensorRef weight_scales, std::optional<TensorRef> weight_zero_points,
                                         std::optional<DType> dtype, TensorRef out);

// ---- add (reference §8) ----
ET_OPS_KERNELS_API bool add_out(KernelContext& ctx, TensorRef a, double a_scale, int64_t a_zero_point,
                                int64_t a_quant_min, int64_t a_quant_max, TensorRef b, double b_scale,
                                int64_t b_zero_point, int64_t b_quant_min, int64_t b_quant_max, double out_scale,
                                int64_t out_zero_point, int64_t out_quant_min, int64_t out_quant_max, TensorRef out);

// ---- non-temporal stores ----
// quantize, dequantize and add write their output with non-temporal stores
// once one contiguous run of a call moves at least streaming_threshold_bytes()
// (bytes read plus bytes written): data that large cannot stay in the cache
// for the next operator anyway, and streaming saves reading every destination
// line before writing it. Smaller outputs use ordinary stores, which leave
// them in the cache for the next operator. The results are the same bits
// either way. By default the threshold is half the size of the machine's
// last-level cache, as the operating system reports it.

// The size in bytes of the largest cache the operating system reports for
// this machine (/sys/devices/system/cpu/cpu0/cache, else sysconf), or 0 when
// it reports none.
ET_OPS_KERNELS_API std::size_t last_level_cache_bytes();

// The threshold in effect: set_streaming_threshold_bytes()'s value, else
// last_level_cache_bytes() / 2, else 16 MiB when the machine reports no cache.
ET_OPS_KERNELS_API std::size_t streaming_threshold_bytes();

// Overrides the threshold for the whole process (0 streams every run that
// is at least one vector long; SIZE_MAX never streams). Thread-safe.
ET_OPS_KERNELS_API void set_streaming_threshold_bytes(std::size_t bytes);

// Returns to the default threshold.
ET_OPS_KERNELS_API void reset_streaming_threshold_bytes();

}  // namespace et_ops::kernels::quantized

#endif  // ET_OPS_KERNELS_QUANTIZED_H
